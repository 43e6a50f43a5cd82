#include "plugin/backend_work.hpp"
#include "plugin/device_probe.hpp"

#include "opbench/host_cpu.hpp"

#include <benchmark/benchmark.h>
#include <fmt/format.h>

namespace opbench {

BackendTensors::BackendTensors(BackendInstance &be, const HostTensors &host) : be_(be) {
    try {
        for (const auto &buf : host.buffers) {
            void *p = nullptr;
            opb_status s = be.api().alloc(be.handle(), buf.size(), &p);
            if (s != OPB_OK)
                throw MeasureFailure{CaseStatus::failed,
                                     fmt::format("alloc of {} bytes: {}", buf.size(), be.error_text(s))};
            ptrs_.push_back(p);
            s = be.api().copy_in(be.handle(), p, buf.data(), buf.size());
            if (s != OPB_OK) throw MeasureFailure{CaseStatus::failed, "copy_in: " + be.error_text(s)};
        }
    } catch (...) {
        for (void *p : ptrs_) be_.api().free(be_.handle(), p);
        throw;
    }
}

BackendTensors::~BackendTensors() {
    for (void *p : ptrs_) be_.api().free(be_.handle(), p);
}

PreparedPlan::PreparedPlan(BackendInstance &be, const opb_op_desc &desc) : be_(be) {
    opb_status s = be.api().prepare(be.handle(), &desc, &plan_, &workspace_bytes_);
    if (s == OPB_ERR_UNSUPPORTED || s == OPB_ERR_UNAVAILABLE)
        throw MeasureFailure{CaseStatus::skipped, be.error_text(s)};
    if (s != OPB_OK) throw MeasureFailure{CaseStatus::failed, "prepare: " + be.error_text(s)};
}

PreparedPlan::~PreparedPlan() {
    if (plan_) be_.api().release(be_.handle(), plan_);
}

void execute_once(BackendInstance &be, opb_plan *plan, const BackendTensors &t) {
    opb_status s = be.api().execute(be.handle(), plan, t.data(), t.count());
    if (s != OPB_OK) throw MeasureFailure{CaseStatus::failed, "execute: " + be.error_text(s)};
}

void synchronize(BackendInstance &be) {
    opb_status s = be.api().synchronize(be.handle());
    if (s != OPB_OK) throw MeasureFailure{CaseStatus::failed, "synchronize: " + be.error_text(s)};
}

std::vector<std::vector<uint8_t>> read_outputs(BackendInstance &be, const BackendTensors &t,
                                               const HostTensors &layout) {
    std::vector<std::vector<uint8_t>> out;
    for (std::size_t i = 0; i < layout.buffers.size(); ++i) {
        if (!layout.is_output[i]) continue;
        std::vector<uint8_t> buf = zeroed_host_buffer(layout.buffers[i].size());
        opb_status s = be.api().copy_out(be.handle(), buf.data(), t.at(i), buf.size());
        if (s != OPB_OK) throw MeasureFailure{CaseStatus::failed, "copy_out: " + be.error_text(s)};
        out.push_back(std::move(buf));
    }
    return out;
}

CacheEvictor::CacheEvictor() {
    const std::size_t llc = host::last_level_cache_bytes();
    buffer_.assign(llc ? 2 * llc : (256u << 20), 1);
}

void CacheEvictor::evict() {
    for (std::size_t i = 0; i < buffer_.size(); i += 64) buffer_[i] += 1;
    benchmark::DoNotOptimize(buffer_.data());
    benchmark::ClobberMemory();
}

BackendWork::BackendWork(BackendInstance &be, const opb_op_desc &desc, const HostTensors &host, CacheEvictor *evictor)
    : be_(be), desc_(desc), host_(host), evictor_(evictor) {}

void BackendWork::prepare() {
    tensors_ = std::make_unique<BackendTensors>(be_, host_);
    plan_ = std::make_unique<PreparedPlan>(be_, desc_);
}

void BackendWork::execute() { execute_once(be_, plan_->get(), *tensors_); }

void BackendWork::synchronize() { opbench::synchronize(be_); }

void BackendWork::flush_cache() {
    if (evictor_) evictor_->evict();
    if (be_.api().flush_cache) be_.api().flush_cache(be_.handle());
    synchronize();
}

bool BackendWork::has_device_timer() const { return be_.api().timer_start && be_.api().timer_stop; }

void BackendWork::device_timer_start() { be_.api().timer_start(be_.handle()); }

double BackendWork::device_timer_stop() {
    double seconds = -1;
    if (be_.api().timer_stop(be_.handle(), &seconds) != OPB_OK) return -1;
    return seconds;
}

double BackendWork::host_timer_seconds() { return device_host_seconds(be_); }

double BackendWork::sustained_clock_mhz() {
    if (sustained_mhz_ < 0) {
        sustained_mhz_ = opbench::sustained_clock_mhz(be_);
    }
    return sustained_mhz_;
}

void BackendWork::clock_begin() { device_clock_begin(be_); }

ClockReading BackendWork::clock_end() { return device_clock_end(be_); }

std::string BackendWork::graph_prepare(int calls) {
    const opb_backend_api &api = be_.api();
    if (!OPB_API_HAS(&api, graph_prepare) || !OPB_API_HAS(&api, graph_launch) || !OPB_API_HAS(&api, graph_release))
        return fmt::format("{} has no graph entries (ABI 1.6 graph_prepare)", api.name ? api.name : "the plugin");
    graph_release(); // one graph per instance: a second capture replaces the first
    const opb_status s = api.graph_prepare(be_.handle(), plan_->get(), tensors_->data(), tensors_->count(), calls);
    if (s == OPB_ERR_UNAVAILABLE || s == OPB_ERR_UNSUPPORTED) return be_.error_text(s);
    if (s != OPB_OK) throw MeasureFailure{CaseStatus::failed, "graph_prepare: " + be_.error_text(s)};
    graph_held_ = true;
    return {};
}

void BackendWork::graph_launch() {
    const opb_status s = be_.api().graph_launch(be_.handle());
    if (s != OPB_OK) throw MeasureFailure{CaseStatus::failed, "graph_launch: " + be_.error_text(s)};
}

void BackendWork::graph_release() {
    if (!graph_held_) return;
    graph_held_ = false;
    be_.api().graph_release(be_.handle());
}

std::vector<std::vector<uint8_t>> BackendWork::outputs() const { return read_outputs(be_, *tensors_, host_); }

BackendWork::~BackendWork() { graph_release(); }

void BackendWork::release() {
    graph_release(); // before the plan and tensors it replays
    plan_.reset();
    tensors_.reset();
}

} // namespace opbench
