#include "profile/profile_observer.hpp"

#include "opbench/ops.hpp"
#include "suite/case_names.hpp"

#include <algorithm>
#include <cstddef>

namespace opbench {

namespace {

// Copies one opb_activity (valid only during the call) into the host's record.
void keep_activity(void *user, const opb_activity *a) {
    if (!a || a->struct_size < offsetof(opb_activity, scope) + sizeof(a->scope)) return;
    DeviceActivity r;
    r.name = a->name ? a->name : "(unnamed)";
    r.scope = a->scope ? a->scope : "";
    r.kind = a->kind;
    r.call = a->call;
    r.start_ns = int64_t(a->start_ns);
    r.end_ns = int64_t(std::max(a->end_ns, a->start_ns));
    r.stream = a->stream;
    static_cast<std::vector<DeviceActivity> *>(user)->push_back(std::move(r));
}

// The backend's kernel timeline when its table has ABI 1.6's entries.
ActivitySource activity_source(BackendInstance &be) {
    const opb_backend_api &api = be.api();
    if (!OPB_API_HAS(&api, activity_begin) || !OPB_API_HAS(&api, activity_end)) return {};
    ActivitySource s;
    s.begin = [&be]() -> std::string {
        const opb_status st = be.api().activity_begin(be.handle());
        return st == OPB_OK ? std::string() : be.error_text(st);
    };
    s.end = [&be](std::vector<DeviceActivity> &out) -> std::string {
        const opb_status st = be.api().activity_end(be.handle(), keep_activity, &out);
        return st == OPB_OK ? std::string() : be.error_text(st);
    };
    return s;
}

} // namespace

void ProfiledWork::execute() {
    session_.call_begin("execute");
    struct End {
        ProfileSession &s;
        ~End() { s.call_end(); } // also when execute throws
    } end{session_};
    inner_.execute();
}

void ProfiledWork::synchronize() {
    session_.call_begin("synchronize");
    struct End {
        ProfileSession &s;
        ~End() { s.call_end(); }
    } end{session_};
    inner_.synchronize();
}

double ProfiledWork::device_timer_stop() {
    last_device_seconds_ = inner_.device_timer_stop();
    return last_device_seconds_;
}

std::string_view span_name_of_phase(std::string_view phase) {
    return phase == phase::sample ? std::string_view("repetition") : phase;
}

void ProfilingObserver::on_phase_begin(std::string_view phase) {
    session_.phase_begin(span_name_of_phase(phase));
    if (next_) next_->on_phase_begin(phase);
}

void ProfilingObserver::on_phase_end(std::string_view phase) {
    if (next_) next_->on_phase_end(phase);
    session_.phase_end();
}

void ProfilingObserver::on_sample_begin(std::size_t index, int calls) {
    recorded_ = session_.sample_begin();
    if (next_) next_->on_sample_begin(index, calls);
}

void ProfilingObserver::on_sample_end(std::size_t index, double seconds_per_call) {
    if (next_) next_->on_sample_end(index, seconds_per_call);
    std::optional<double> device;
    if (recorded_ && work_ && work_->last_device_seconds() >= 0) device = work_->last_device_seconds();
    session_.sample_end(device);
    recorded_ = false;
}

void ProfilingObserver::on_sample_excluded(std::size_t index) {
    if (next_) next_->on_sample_excluded(index);
}

void ProfileInstrumentation::case_begin(const std::string &name, const std::string &backend_name,
                                        const opb_op_desc &d, BackendInstance &be) {
    begin(name, backend_name,
          {{"op", op_name(d.op)},
           {"backend", backend_name},
           {"dtype", dtype_name(d.dtype)},
           {"variant", variant_name(d.op, d.variant)},
           {"threads", d.threads},
           {"params", shape_params(d)}},
          be, nullptr);
}

void ProfileInstrumentation::begin(const std::string &name, const std::string &backend_name, nlohmann::json args,
                                   BackendInstance &be, std::function<void(bool)> on_recording) {
    session_.case_begin(
        name, backend_name, std::move(args),
        [&be, on_recording = std::move(on_recording)](bool on) {
            be.set_scope_recording(on);
            if (on_recording) on_recording(on);
        },
        [&be]() -> std::optional<uint64_t> {
            const HostAccounting &a = be.accounting();
            if (a.device_current == 0 && a.device_peak == 0) return std::nullopt; // a CPU backend
            return a.device_current;
        });
    session_.set_activity_source(activity_source(be));
}

MeasuredWork &ProfileInstrumentation::wrap_work(MeasuredWork &work) {
    work_ = std::make_unique<ProfiledWork>(work, session_);
    return *work_;
}

RecipeObserver &ProfileInstrumentation::wrap_observer(RecipeObserver &observer) {
    observer_ = std::make_unique<ProfilingObserver>(session_, &observer, work_.get());
    return *observer_;
}

const CaseProfile &ProfileInstrumentation::finish_case() {
    observer_.reset();
    work_.reset();
    return session_.case_end();
}

} // namespace opbench
