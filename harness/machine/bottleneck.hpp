// Bottleneck analysis (issue 12): what limits one case on one backend, how
// much it matters, and what to do about it. Pure functions over an entry's
// figures; docs/bottlenecks.md documents every rule and threshold.
//
//   peaks_for()        the roofs an entry is judged against: the CPU peaks for
//                      the threads the backend actually uses, or a GPU
//                      backend's own device peaks (never the CPU's);
//   threads_used()     how many threads that is, from the case and the
//                      backend's reported facts;
//   analyse()          the verdict: {kind, severity, utilisation,
//                      description, suggestion} plus the headroom that ranks it.
#pragma once

#include "machine/device_roofs.hpp"
#include "machine/machine.hpp"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>

namespace opbench {

// The two roofs of a roofline, per second, and where they come from.
struct RoofPeaks {
    double flops_per_s = 0; // peak FLOP/s for the dtype
    double bytes_per_s = 0; // peak memory bandwidth: the roof of the level the working set fits
    std::string source;     // "CPU, 1 thread", "CPU, 2 threads, L2", "device (backend-reported)"
    std::string bandwidth_roof = "DRAM"; // that level: "L1d", "L2", "L3" or "DRAM" (a device's memory too)
};

// Threads a CPU backend uses for a case, in this order: the backend's fixed
// count (info key "threads": the naive backend says 1 and ignores the case's
// setting), the case's `threads` setting when > 0, the backend's default
// (info key "default_threads"), else every CPU the process may use.
[[nodiscard]] int threads_used(int case_threads, const nlohmann::json &backend_info, int machine_cores);

// Device peaks a backend reports in its info: "peak_f32_gflops" (and
// "peak_bf16_gflops", "peak_int8_gops") and "peak_bandwidth_gbps", as decimal strings or
// numbers. nullopt when either roof is missing or not positive.
[[nodiscard]] std::optional<RoofPeaks> device_peaks_from_info(const nlohmann::json &backend_info, PeakKind kind);

// The roofs for an entry. A CPU backend: the machine's peaks at `threads`
// (MachinePeaks::at_threads), its bandwidth the roof of the smallest cache
// level holding `working_set_bytes` (0: DRAM's), as classify() and so the
// run's `roofline` field choose it. A GPU backend: `device` only; without it
// there are no roofs (nullopt), because CPU peaks say nothing about a GPU.
// A CPU backend's compute roof follows the ISA it reports it ran
// (backend_isa(); compute_roof), named in `source`.
[[nodiscard]] std::optional<RoofPeaks> peaks_for(bool is_gpu, int threads, const MachinePeaks &machine,
                                                 const std::optional<RoofPeaks> &device, PeakKind kind,
                                                 double working_set_bytes = 0, std::string_view isa = {});

// The instruction set a CPU backend reports it runs (issue 28): info key
// "onednn_isa" (oneDNN's effective ISA, which ONEDNN_MAX_CPU_ISA caps) or
// the generic "cpu_isa"; "" when it names none.
[[nodiscard]] std::string backend_isa(const nlohmann::json &backend_info);

// What picks a GPU entry's roofs among its device's measured ones
// (machine/device_roofs.hpp): the op's and dtype's names, and whether the
// backend let tensor cores take f32 (the op's `tf32` variant).
struct RoofKey {
    std::string_view op, dtype, variant;
    [[nodiscard]] bool tf32() const { return variant == "tf32"; }
};

// The device roofs a GPU backend's context carries (`device_roofs`, written
// where the backend was probed: plugin/device_probe.hpp); nullopt when it
// has none (a plugin of ABI 1.4, a CPU backend) or they do not parse.
[[nodiscard]] std::optional<DeviceRoofs> context_device_roofs(const nlohmann::json &backend);

// A GPU entry's two roofs for analyse(): its device's measured compute roof
// for the entry (entry_roofs) and DRAM bandwidth when the context carries
// measured roofs, else the peaks the backend reports in its info
// (device_peaks_from_info). nullopt when neither gives both roofs; zero
// roofs, their `source` saying which was not measured, where the device's
// measured roofs lack the entry's.
[[nodiscard]] std::optional<RoofPeaks> device_peaks(const nlohmann::json &backend, const RoofKey &key, PeakKind kind);

// The result entry's `roofline` for a case on a backend, judged like
// analyse(): a CPU backend against the machine's peaks at threads_used();
// a GPU backend against its own device peaks, or "unknown" without them.
// `backend` is the backend's context (context.hpp backend_context: "device",
// "info"). `working_set_bytes` picks a CPU's cache roof (classify); 0: DRAM.
[[nodiscard]] Roofline roofline_for(double flops, double bytes, double seconds_per_call, const nlohmann::json &backend,
                                    int case_threads, const MachinePeaks &machine, double fixed_cost_seconds,
                                    PeakKind kind, double working_set_bytes = 0, const RoofKey &key = {});

// What analyse() looks at, all per call of the op.
struct EntryFigures {
    std::string op;      // the op's name in the op table (shapes the suggestion)
    std::string variant; // "composed", ...
    std::string backend;
    bool is_gpu = false;
    int threads = 1;                      // threads_used(), for the text
    double seconds = 0;                   // median time per call
    double flops = 0, bytes = 0;          // the op's (ops.hpp)
    std::optional<RoofPeaks> peaks;       // peaks_for(); nullopt: no roofline verdict
    double call_overhead_s = 0;           // the backend's fixed cost per call (0: not measured)
    double allocs = 0;                    // heap allocations per call (interposer)
    double alloc_bytes = 0;               // heap bytes allocated per call
    std::optional<double> device_seconds; // device timer's time per call
    std::optional<double> host_seconds;   // the host's time inside execute per call (ABI 1.5)
    // The host's wall time per call, from the launch to the end of its wait:
    // recorded beside a device timer, whose time is then `seconds`.
    std::optional<double> wall_seconds;
    std::string above_roof_cause;         // the run's Roofline::above_roof_cause ("" none)
};

struct Bottleneck {
    std::string kind;       // memory-bound | compute-bound | launch-bound | sync-bound | overhead |
                            // allocation-churn | unoptimised | unknown
    std::string severity;   // high | medium | low | none
    double utilisation = 0; // 0..1: the share of the binding resource in use (kind's own measure)
    double headroom = 0;    // 0..1: the share of the time that could be saved
    std::string description;
    std::string suggestion;

    // What a ranking sorts by: seconds per call x headroom.
    [[nodiscard]] double impact(double seconds) const { return seconds * headroom; }
};

// The thresholds, named once (docs/bottlenecks.md explains them).
struct BottleneckThresholds {
    double overhead_factor = 5.0;       // overhead when time < factor x fixed cost (as the roofline's rule)
    double overhead_high = 0.5;         // fixed cost >= this share of the call: high
    double device_busy_min = 0.5;       // sync-bound when the device is busy < this share of the call
    double alloc_seconds_each = 100e-9; // estimated cost of one malloc + free
    double alloc_share_min = 0.10;      // allocation churn when the estimate >= this share
    double alloc_share_high = 0.30;
    double unoptimised_below = 0.10; // under this share of the attainable roof: unoptimised
    double roof_high_below = 0.30;   // memory/compute-bound severity: high under this utilisation,
    double roof_medium_below = 0.60; //   medium under this one, low at or above it
};

[[nodiscard]] Bottleneck analyse(const EntryFigures &e, const BottleneckThresholds &t = {});

[[nodiscard]] nlohmann::json to_json(const Bottleneck &b);

} // namespace opbench
