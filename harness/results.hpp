// Result sets: Google Benchmark's JSON, enriched with opbench's context and
// per-entry fields (see results/README.md for the schema and its version).
#pragma once

#include "atomic_file.hpp"
#include "machine.hpp"
#include "records.hpp"
#include "statistics.hpp"
#include "suite.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace opbench {

// Version of the fields opbench adds; bump on any incompatible change.
inline constexpr int kResultSchemaVersion = 1;

// The stable, filterable benchmark name of a case on a backend, e.g.
//   matmul/B:1/M:1024/N:1024/K:1024/dt:f32/be:onednn
//   attention/B:1/H:8/Sq:1/Skv:512/D:64/causal:1/variant:fused/dt:f32/be:naive
// The shape part (labels, and which parameters show) comes from the op's row
// in the SDK's op table (opbench/ops.hpp, ParamInfo::label / name_rule).
// A named case appends /case:<name>. Settings that change what is measured
// (threads when set, cold cache) appear too, so such entries never collide.
[[nodiscard]] std::string benchmark_name(const Case &c, const std::string &backend);

// Throws SuiteError at the later of two cases that would get the same
// benchmark name on the same backend (their results could not be told apart).
void check_unique_names(const std::vector<Case> &cases);

// The shape parameters of a description as a flat JSON object.
[[nodiscard]] nlohmann::json shape_params(const opb_op_desc &desc);

// Memory figures of one case on one backend, measured over its own prepare and
// execute (never the reference run).
struct MemoryFigures {
    uint64_t workspace_bytes = 0;      // the plan's workspace (prepare's report)
    uint64_t plugin_peak_bytes = 0;    // peak of memory the plugin owns (memory_stats)
    uint64_t host_accounted_peak = 0;  // peak reported through host services (host memory)
    uint64_t device_accounted_peak = 0;// peak reported through host services (device memory)
    uint64_t heap_peak_bytes = 0;      // process heap peak over prepare + execute (interposer)
    double allocs_per_call = 0;        // heap allocations per execute call
    double alloc_bytes_per_call = 0;   // heap bytes allocated per execute call
    uint64_t rss_peak_bytes = 0;       // process peak RSS during the case
    bool heap_tracked = false;         // the interposer was active
    bool rss_peak_reset = false;       // the RSS high-water mark was reset before the case
};

// Everything opbench knows about one case on one backend.
struct CaseResult {
    std::string name; // benchmark_name()
    const Case *source = nullptr;
    std::string backend;
    CaseStatus status = CaseStatus::passed;
    std::string reason;            // why failed or skipped
    bool is_reference = false;     // this backend produced the reference output
    double nmse = -1;              // < 0: not verified
    double nmse_threshold = 0;
    MemoryFigures memory;
    std::vector<RepetitionRecord> repetitions;
    std::optional<Roofline> roofline; // at the median of the repetitions' medians
};

// Add opbench's fields to Google Benchmark's JSON: `context.opbench` and, on
// every benchmark entry, the fields of its CaseResult (matched by run_name;
// repetition statistics by repetition_index). `unmeasured` cases (skipped
// before running, so unknown to Google Benchmark) get an entry each, in
// Google Benchmark's form with error_occurred set.
[[nodiscard]] nlohmann::json enrich_result_set(nlohmann::json gb,
                                               const std::vector<CaseResult> &results,
                                               const std::vector<const CaseResult *> &unmeasured,
                                               const nlohmann::json &opbench_context);

// A benchmark's run name without Google Benchmark's "/manual_time" suffix.
[[nodiscard]] std::string strip_manual_time(std::string name);

// The fields a CaseResult contributes to each of its entries.
[[nodiscard]] nlohmann::json case_fields(const CaseResult &r);

} // namespace opbench
