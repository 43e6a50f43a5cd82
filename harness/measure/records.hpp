// What a measurement produces, as plain data: records that the recipe
// (recipe.hpp) fills, results.cpp writes into result sets, and that convert
// to and from JSON so a worker process can hand them to its parent.
#pragma once

#include "measure/statistics.hpp"

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace opbench {

// How a case on a backend ended. JSON: "passed" | "failed" | "skipped" |
// "starved" (it ran and was verified, but every repetition's threads waited
// for a CPU: measure/starvation.hpp; it has no time of the op).
enum class CaseStatus { passed, failed, skipped, starved };
[[nodiscard]] std::string_view case_status_name(CaseStatus s);
[[nodiscard]] std::optional<CaseStatus> case_status_from_name(std::string_view name);
// The same names in JSON; a name not listed reads as failed (the first pair).
NLOHMANN_JSON_SERIALIZE_ENUM(CaseStatus, {{CaseStatus::failed, "failed"},
                                          {CaseStatus::passed, "passed"},
                                          {CaseStatus::skipped, "skipped"},
                                          {CaseStatus::starved, "starved"}})

// A failure inside a case: thrown by the parts of a measurement, caught and
// recorded on the case; never thrown out of a run.
struct MeasureFailure {
    CaseStatus status = CaseStatus::failed;
    std::string reason;
};

// What the recipe learnt before timing (prepare, check, warm up, choose batch).
struct PreparationRecord {
    double check_error = -1;        // the verifier's error figure (NMSE); < 0: not checked
    int warmup_calls = 0;           // executions during warm-up
    double batch_probe_seconds = 0; // one timed call used to choose the batch; 0: not probed
    int calls_per_sample = 1;
    // The launch mode that ran (LaunchMode's index, settings.hpp): the
    // setting's, or batch where graph was asked for and the work could not
    // capture its calls; `launch_fallback` then says why (empty otherwise).
    int launch = 0;
    std::string launch_fallback;
};

// One measured repetition (one Google Benchmark run entry).
struct RepetitionRecord {
    SampleSummary summary; // per-call seconds over the samples
    int calls_per_sample = 1;
    bool target_met = false; // noise target reached
    bool timed_out = false;  // stopped at max_time (or the wall-clock cap) before reaching it
    double cpu_seconds_per_call = 0;
    double device_seconds_per_call = -1; // < 0: no device timer
    std::vector<double> sample_times;    // every sample's time per call, in order taken
    int process = 0;                     // which of the case's worker processes took it (0-based; always 0 in process)
    // A workload entry's timed units of this repetition (a decode step each,
    // or the whole prefill): its ms per token. Empty for an op case.
    std::vector<double> unit_seconds;
    // Starvation (starvation.hpp): the run-queue wait of the process's
    // threads over the repetition, how many waits, how many threads ran, the
    // process's involuntary context switches; the wait's share of the
    // samples' time that the samples above the median do not explain, the
    // verdict, and how often this repetition was measured again because an
    // earlier try was starved. -1: not readable (no NaN, which plain JSON
    // cannot carry).
    double run_queue_wait_seconds = -1;
    std::int64_t run_queue_waits = 0;
    int threads_ran = 0;
    long involuntary_switches = -1;
    double starved_share = -1;
    bool starved = false;
    int remeasured = 0;
    // The device's clock over the repetition (throttle.hpp), from the
    // plugin's clock entries: SM clock MHz (-1 none), board power (W) and
    // temperature (C) at its end (-1000 none), NVML's clock-event reasons
    // over it (0 none or unknown), the clock's share of the sustained clock
    // (-1 unknown), the verdict. And the host's time per
    // call inside execute beside the device's (-1 none), and the host's wall
    // time per call from launch to the end of its wait (-1 none: without a
    // device timer the samples are that wall time).
    double sm_clock_mhz = -1;
    double power_watts = -1;
    double temperature_c = -1000;
    std::uint64_t clock_event_reasons = 0;
    double clock_share = -1;
    bool throttled = false;
    double host_seconds_per_call = -1;
    double wall_seconds_per_call = -1;
    // Set in opbench's own process, never on the worker pipe: the seconds
    // before this repetition's sampling that moving the case to a further
    // worker process took (its start, inputs, plan and warm-up calls), which
    // the entry loop keeps out of the case's measure_seconds.
    double process_start_seconds = 0;
};

// Conversions, each member under its own name, for the worker pipe
// (isolate/worker.hpp). Its CBOR carries NaN and infinity as they are, so a
// summary of no samples needs no rule of its own; result sets write their
// fields through entry/results.cpp instead. A repetition's `process` and
// `unit_seconds` may be missing (0 and none).
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(SampleSummary, n, min, max, mean, median, p90, p99, stddev, cv, median_ci_low,
                                   median_ci_high, noise, outliers_low, outliers_high)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(PreparationRecord, check_error, warmup_calls, batch_probe_seconds, calls_per_sample,
                                   launch, launch_fallback)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(RepetitionRecord, summary, calls_per_sample, target_met, timed_out,
                                                cpu_seconds_per_call, device_seconds_per_call, sample_times, process,
                                                unit_seconds, run_queue_wait_seconds, run_queue_waits, threads_ran,
                                                involuntary_switches, starved_share, starved, remeasured,
                                                sm_clock_mhz, power_watts, temperature_c, clock_share, throttled,
                                                host_seconds_per_call, wall_seconds_per_call, clock_event_reasons)

// Memory figures of one case on one backend, measured over its own prepare and
// execute (never the reference run).
struct MemoryFigures {
    uint64_t workspace_bytes = 0;       // the plan's workspace (prepare's report)
    uint64_t plugin_peak_bytes = 0;     // peak of memory the plugin owns (memory_stats)
    uint64_t host_accounted_peak = 0;   // peak reported through host services (host memory)
    uint64_t device_accounted_peak = 0; // peak reported through host services (device memory)
    uint64_t heap_peak_bytes = 0;       // process heap peak over prepare + execute (interposer)
    double allocs_per_call = 0;         // heap allocations per execute call
    double alloc_bytes_per_call = 0;    // heap bytes allocated per execute call
    uint64_t rss_peak_bytes = 0;        // process peak RSS during the case
    bool heap_tracked = false;          // the interposer was active
    bool rss_peak_reset = false;        // the RSS high-water mark was reset before the case
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(MemoryFigures, workspace_bytes, plugin_peak_bytes, host_accounted_peak,
                                   device_accounted_peak, heap_peak_bytes, allocs_per_call, alloc_bytes_per_call,
                                   rss_peak_bytes, heap_tracked, rss_peak_reset)

} // namespace opbench
