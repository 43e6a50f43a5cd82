#include "plugin/memory_figures.hpp"

#include "measure/rss.hpp"

namespace opbench {

void MemoryObserver::on_phase_begin(std::string_view phase) {
    if (phase == phase::prepare) {
        be_.api().reset_peak(be_.handle());
        be_.accounting().reset_peaks();
        figures_.rss_peak_reset = reset_peak_rss();
        alloc_reset_peak();
        heap_before_ = alloc_snapshot();
    } else if (phase == phase::warmup) {
        warmup_before_ = alloc_snapshot();
    }
}

void MemoryObserver::on_phase_end(std::string_view phase) {
    if (phase == phase::warmup) warmup_after_ = alloc_snapshot();
}

void MemoryObserver::on_counted_calls_begin() { counted_before_ = alloc_snapshot(); }

void MemoryObserver::on_counted_calls_end(int calls) {
    counted_after_ = alloc_snapshot();
    counted_calls_ = calls;
}

void MemoryObserver::finish(const PreparationRecord &preparation, uint64_t workspace_bytes) {
    MemoryFigures &m = figures_;
    m.workspace_bytes = workspace_bytes;
    // Warm calls as measured; the warm-up's, when no sample was taken.
    const bool counted = counted_calls_ > 0;
    const AllocCounters &before = counted ? counted_before_ : warmup_before_;
    const AllocCounters &after = counted ? counted_after_ : warmup_after_;
    const double calls = double(std::max(1, counted ? counted_calls_ : preparation.warmup_calls));
    m.allocs_per_call = double(after.calls - before.calls) / calls;
    m.alloc_bytes_per_call = double(after.bytes - before.bytes) / calls;
    opb_memory_stats ms{};
    ms.struct_size = sizeof ms;
    ms.abi_version = OPB_ABI_VERSION;
    if (be_.api().memory_stats(be_.handle(), &ms) == OPB_OK) m.plugin_peak_bytes = ms.peak_bytes;
    m.host_accounted_peak = be_.accounting().host_peak;
    m.device_accounted_peak = be_.accounting().device_peak;
    m.heap_tracked = alloc_tracking_active();
    if (m.heap_tracked) {
        const AllocCounters now = alloc_snapshot();
        m.heap_peak_bytes = now.peak > heap_before_.current ? now.peak - heap_before_.current : 0;
    }
    m.rss_peak_bytes = peak_rss_bytes();
}

} // namespace opbench
