// The kernel timeline (issue 42): the device work a backend recorded
// (ABI 1.6 activity_begin / activity_end; CUPTI on cuda) during a profiled
// sample, split per execute call: its kernels, the share of the call's device
// span the device was busy, and the idle gaps between its kernels.
//
// A call's device span runs from its first kernel's start to its last
// kernel's end; busy is the union of its kernels' intervals (overlapping
// kernels on two streams count once); the gaps are the idle intervals inside
// the span, so span = busy + the gaps. The launch latency before the first
// kernel is not a gap of the call (no device clock knows when the host
// launched it).
#pragma once

#include "measure/bottleneck_rules.hpp" // kGapBoundShare

#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace opbench {

// One record of device work, as the plugin handed it over (opb_activity).
struct DeviceActivity {
    std::string name;
    std::string scope; // the plugin scope it was launched in; empty: none
    int32_t kind = 0;  // opb_activity_kind
    int32_t call = -1; // the execute call of the sample that launched it; -1: unknown
    int64_t start_ns = 0, end_ns = 0; // the device's clock
    uint32_t stream = 0;
};

// What one call's device work did.
struct CallTimeline {
    int32_t call = -1;
    std::size_t sample = 0;                // the kept sample it ran in, from 0
    std::vector<DeviceActivity> kernels;   // in start order (only for the first calls kept; see KernelTimeline)
    std::size_t count = 0;                 // records of the call
    int64_t span_ns = 0, busy_ns = 0;      // first start to last end; union of the intervals
    std::vector<int64_t> gaps_ns;          // idle intervals inside the span, in order
    [[nodiscard]] int64_t gap_ns() const { return span_ns - busy_ns; }
    [[nodiscard]] double busy_share() const { return span_ns > 0 ? double(busy_ns) / double(span_ns) : 1.0; }
};

// The span, busy time and gaps of `records` (any order; one call's).
[[nodiscard]] CallTimeline call_timeline(std::vector<DeviceActivity> records);

// `records` of one sample grouped by their call (unknown calls: one group,
// call -1), each measured by call_timeline; in call order.
[[nodiscard]] std::vector<CallTimeline> split_calls(const std::vector<DeviceActivity> &records);

// The device clock aligned to the host's, once per sample: the offset that
// puts the sample's first record at `host_first_launch_ns` (the host's
// clock when the sample's first execute began). Later records keep their
// device spacing. 0 for no records.
[[nodiscard]] int64_t device_to_host_offset(const std::vector<DeviceActivity> &records, int64_t host_first_launch_ns);

// What one case x backend's kept samples recorded.
struct KernelTimeline {
    static constexpr std::size_t kExampleCalls = 4; // calls whose kernels the result set lists
    bool offered = false; // the backend has the entries (ABI 1.6)
    std::string refused;  // why the device or its profiler refused; empty: recorded
    std::size_t samples = 0;
    std::vector<CallTimeline> calls; // every call; kernels kept for the first kExampleCalls
    std::map<std::string, int64_t> scope_busy_ns; // summed record time per plugin scope ("" = none)

    // Adds one kept sample's records.
    void add_sample(const std::vector<DeviceActivity> &records);
    [[nodiscard]] bool empty() const { return calls.empty(); }
};

// A result entry's `kernel_timeline` object (results/README.md): status
// "recorded" with the per-call figures (medians over calls), "refused" with
// the reason, or "empty" (the backend recorded nothing).
[[nodiscard]] nlohmann::json kernel_timeline_json(const KernelTimeline &t);

// One line for the console, at most 100 columns: "3 kernels per call, busy
// 62% of 41 us, gaps 38% (max 9 us)" or "refused: <reason>".
[[nodiscard]] std::string kernel_timeline_line(const KernelTimeline &t);

} // namespace opbench
