// What `bottleneck` a result set's entry carries (issue 29): the rules of
// machine/bottleneck.hpp applied to one entry, from typed facts. The run
// fills the facts from an entry's records (entry/entry.hpp) as the entry
// finishes; `opbench analyze` fills them from a result set's entries
// (readers/analyze.cpp). Both call entry_bottleneck(), so a set's verdict
// and a reader's agree by construction.
#pragma once

#include "machine/bottleneck.hpp"
#include "measure/entry_summary.hpp"

#include <nlohmann/json.hpp>

#include <map>
#include <optional>
#include <string>

namespace opbench {

// What the rules read of one entry (its first measured repetition's where
// they differ per repetition).
struct EntryFacts {
    std::string op, variant, backend;
    std::string dtype = "f32";
    double flops = 0, bytes = 0;                 // per call
    double allocs_per_call = 0, alloc_bytes_per_call = 0;
    std::string above_roof_cause;                // the roofline's ("" none)
    std::optional<double> device_seconds;        // the device timer's time per call
    std::optional<double> host_seconds;          // the host's time inside execute per call (ABI 1.5)
    std::optional<double> wall_seconds;          // the host's wall time per call, launch to wait's end (device timer)
    int case_threads = 0;                        // the `threads` setting (0: every CPU)
    bool cold_cache = false;                     // measured with a cold cache: bytes come from DRAM
};

// What the rules read of the run: each backend's context (context.hpp
// backend_context: "device", "info"), its measured fixed cost per call, the
// machine's peaks.
struct RunFacts {
    std::map<std::string, nlohmann::json> backends;
    std::map<std::string, double> call_overhead_seconds;
    MachinePeaks machine;
};

// A set's context.opbench as RunFacts; missing or foreign fields read as not
// measured (no roofs, no fixed cost).
[[nodiscard]] RunFacts run_facts(const nlohmann::json &opbench_context);

// analyse()'s figures for an entry whose time per call is `seconds`.
[[nodiscard]] EntryFigures entry_figures(const EntryFacts &entry, const RunFacts &run, double seconds);

// The verdict for an entry whose times show outside interference: never a
// kernel diagnosis, the remedy instead.
[[nodiscard]] Bottleneck disturbed_verdict(const EntrySummary &summary);

// The entry's verdict at its summary's median: disturbed_verdict() for a
// disturbed entry, else analyse(). nullopt when the summary has no median.
[[nodiscard]] std::optional<Bottleneck> entry_bottleneck(const EntrySummary &summary, const EntryFacts &entry,
                                                         const RunFacts &run);

// The kernel timeline's rule (issue 42, docs/profiling.md "The kernel
// timeline"): an op of two or more kernels per call whose device idles
// between them for more than this share of the call's device time (first
// kernel's start to last one's end) is gap-bound: fuse its steps, or capture
// the call in a CUDA graph.
inline constexpr double kGapBoundShare = 0.25;
[[nodiscard]] inline bool is_gap_bound(double kernels_per_call, double gap_share) {
    return kernels_per_call >= 2 && gap_share > kGapBoundShare;
}
// The verdict's sentence, with the fixes, for a gap-bound op.
[[nodiscard]] std::string gap_bound_text(double kernels_per_call, double gap_share, double gap_seconds_per_call);

} // namespace opbench
