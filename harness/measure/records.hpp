// What a measurement produces, as plain data: records that the recipe
// (recipe.hpp) fills, results.cpp writes into result sets, and that convert
// to and from JSON so a worker process can hand them to its parent.
#pragma once

#include "measure/statistics.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace opbench {

// How a case on a backend ended. JSON: "passed" | "failed" | "skipped".
enum class CaseStatus { passed, failed, skipped };
[[nodiscard]] std::string_view case_status_name(CaseStatus s);
[[nodiscard]] std::optional<CaseStatus> case_status_from_name(std::string_view name);

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
};

// Conversions. Non-finite numbers travel as null and come back as NaN
// (noise as +infinity), the way JSON allows.
void to_json(nlohmann::json &j, const SampleSummary &s);
void from_json(const nlohmann::json &j, SampleSummary &s);
void to_json(nlohmann::json &j, const PreparationRecord &r);
void from_json(const nlohmann::json &j, PreparationRecord &r);
void to_json(nlohmann::json &j, const RepetitionRecord &r);
void from_json(const nlohmann::json &j, RepetitionRecord &r);

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

} // namespace opbench
