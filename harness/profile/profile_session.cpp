// One run's profiling; see profile_session.hpp.
#include "profile/profile_session.hpp"

#include "measure/alloc_tracker.hpp"

namespace opbench {

nlohmann::json ProfileOptions::context() const {
    return {{"enabled", enabled()},
            {"hot_path", hot_path},
            {"trace", trace_path.empty() ? nlohmann::json(nullptr) : nlohmann::json(trace_path)},
            {"schedule", to_string(schedule)},
            {"recorded_samples_in_statistics", false},
            {"note", "a profiling run: the samples recorded by the schedule (plugin scopes on) are left out of "
                     "the statistics; the others ran with the scopes off (one branch each). Compare timings "
                     "only with runs whose profiling.enabled matches."}};
}

ProfileSession::ProfileSession(ProfileOptions options) : options_(std::move(options)) {}

void ProfileSession::run_begin(nlohmann::json args) {
    profiler_.begin("run", SpanKind::host, std::move(args));
    sample_memory();
}

void ProfileSession::run_end() {
    sample_memory();
    profiler_.end();
}

void ProfileSession::sample_memory() {
    profiler_.memory(alloc_snapshot().current, device_bytes_ ? device_bytes_() : std::nullopt);
}

void ProfileSession::case_begin(const std::string &name, const std::string &backend, nlohmann::json args,
                                std::function<void(bool)> set_scope_recording,
                                std::function<std::optional<uint64_t>()> device_bytes) {
    if (in_case_) (void)case_end();
    in_case_ = true;
    case_name_ = name;
    case_backend_ = backend;
    set_scope_recording_ = std::move(set_scope_recording);
    device_bytes_ = std::move(device_bytes);
    step_ = 0;
    recorded_ = 0;
    activity_ = {};
    timeline_ = {};
    case_mark_ = profiler_.mark();
    profiler_.begin("case", SpanKind::host, std::move(args));
    case_depth_ = 1;
    sample_memory();
}

const CaseProfile &ProfileSession::case_end() {
    if (in_sample_) sample_end();
    // A failure can leave phases open: close them so the tree and trace stay whole.
    while (case_depth_ > 0) {
        profiler_.end();
        --case_depth_;
    }
    sample_memory();
    if (set_scope_recording_) set_scope_recording_(false);
    CaseProfile c;
    c.name = case_name_;
    c.backend = case_backend_;
    c.tree = build_scope_tree(profiler_, case_mark_, profiler_.mark());
    c.recorded_samples = recorded_;
    c.timeline = std::move(timeline_);
    timeline_ = {};
    activity_ = {};
    cases_.push_back(std::move(c));
    in_case_ = false;
    set_scope_recording_ = nullptr;
    device_bytes_ = nullptr;
    return cases_.back();
}

void ProfileSession::phase_begin(std::string_view name, nlohmann::json args) {
    profiler_.begin(name, SpanKind::host, std::move(args));
    if (in_case_) ++case_depth_;
}

void ProfileSession::phase_end() {
    profiler_.end();
    if (in_case_ && case_depth_ > 1) --case_depth_;
}

bool ProfileSession::sample_begin() {
    step_action_ = step_action(options_.schedule, step_++);
    in_sample_ = true;
    if (step_action_ == StepAction::none) return false;
    sample_mark_ = profiler_.mark();
    profiler_.begin("sample", SpanKind::host, nlohmann::json{{"step", step_ - 1}});
    ++case_depth_;
    sample_begin_ns_ = profiler_.now_ns();
    first_execute_ns_ = -1;
    if (activity_.offered() && timeline_.refused.empty()) {
        timeline_.refused = activity_.begin();
        activity_on_ = timeline_.refused.empty();
    }
    if (set_scope_recording_) set_scope_recording_(true);
    return true;
}

void ProfileSession::set_activity_source(ActivitySource source) {
    activity_ = std::move(source);
    timeline_.offered = activity_.offered();
}

// The sample's device work: kept (a recorded step) into the case's timeline
// and onto the GPU tracks, the device clock aligned once, the first record
// at the first execute's host start (kernel_timeline.hpp); else dropped.
void ProfileSession::end_activity(bool keep) {
    if (!activity_on_) return;
    activity_on_ = false;
    std::vector<DeviceActivity> records;
    if (std::string reason = activity_.end(records); !reason.empty()) {
        timeline_.refused = std::move(reason);
        return;
    }
    if (!keep) return;
    timeline_.add_sample(records);
    const int64_t offset =
        device_to_host_offset(records, first_execute_ns_ >= 0 ? first_execute_ns_ : sample_begin_ns_);
    for (const DeviceActivity &r : records) {
        nlohmann::json args = {{"call", r.call}};
        if (!r.scope.empty()) args["scope"] = r.scope;
        profiler_.kernel_span(r.name, r.start_ns + offset, r.end_ns + offset, r.stream, std::move(args));
    }
}

void ProfileSession::sample_end(std::optional<double> device_seconds) {
    if (!in_sample_) return;
    in_sample_ = false;
    if (step_action_ == StepAction::none) return;
    if (set_scope_recording_) set_scope_recording_(false);
    profiler_.end();
    --case_depth_;
    end_activity(step_action_ == StepAction::record);
    if (device_seconds && *device_seconds >= 0)
        profiler_.device_span("sample [device]", sample_begin_ns_, *device_seconds);
    if (step_action_ == StepAction::warmup) {
        profiler_.discard_since(sample_mark_); // recorded to pay its start-up cost, not kept
    } else {
        ++recorded_;
        sample_memory();
    }
    step_action_ = StepAction::none;
}

void ProfileSession::call_begin(const char *what) {
    if (!sample_recording()) return;
    // The span's own begin: the trace puts the sample's first kernel exactly
    // at the first execute span (a clock read of its own came 9 us earlier
    // under ASan).
    const int64_t begun = profiler_.begin(what, SpanKind::host);
    if (first_execute_ns_ < 0 && std::string_view(what) == "execute") first_execute_ns_ = begun;
}

void ProfileSession::call_end() {
    if (sample_recording()) profiler_.end();
}

Table ProfileSession::top_scopes(std::size_t limit) const {
    std::vector<BackendTree> trees;
    for (const auto &c : cases_) trees.push_back({c.backend, &c.tree});
    return top_scopes_table(trees, limit, "sample");
}

nlohmann::json ProfileSession::trace(const TraceInfo &info) const { return chrome_trace(profiler_, info); }

void attach_case_timeline(std::vector<nlohmann::json> &records, const CaseProfile &profile) {
    if (!profile.timeline.offered) return;
    const nlohmann::json timeline = kernel_timeline_json(profile.timeline);
    for (auto &r : records)
        if (r.is_object() && r.value("run_type", "iteration") != "aggregate") r["kernel_timeline"] = timeline;
}

void attach_case_profile(std::vector<nlohmann::json> &records, const CaseProfile &profile) {
    const nlohmann::json array = profile_json(profile.tree);
    for (auto &r : records)
        if (r.is_object() && r.value("run_type", "iteration") != "aggregate") r["profile"] = array;
}

} // namespace opbench
