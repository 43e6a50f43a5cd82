// What opbench knows about one entry (CaseResult) and the fields it
// contributes to each of its result-set entries (results/README.md for the
// schema and its version; entry.hpp makes the entries themselves).
#pragma once

#include "files/atomic_file.hpp"
#include "suite/case_names.hpp"
#include "writers/result_schema.hpp"
#include "machine/machine.hpp"
#include "measure/entry_summary.hpp"
#include "measure/records.hpp"
#include "measure/statistics.hpp"
#include "suite/suite.hpp"
#include "check/verify.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace opbench {

// Everything opbench knows about one case on one backend.
struct CaseResult {
    std::string name; // benchmark_name()
    const Case *source = nullptr;
    std::string backend;
    CaseStatus status = CaseStatus::passed;
    std::string reason;        // why failed or skipped
    bool is_reference = false; // this backend produced the reference output
    double nmse = -1;          // < 0: not compared with the reference
    double nmse_threshold = 0;
    bool checked = false; // reached the check step: `verification` says how it went
    Verification verification;
    double prepare_seconds = 0; // the recipe's prepare step (tensors, plan)
    double verify_seconds = 0;  // reference (computed or loaded) + the check step
    double measure_seconds = 0; // the sampling loops of all repetitions
    double inputs_seconds = 0;  // making the host inputs (0 where the reference made them: in verify_seconds)
    // Its further worker processes' start and preparation (inputs, plan,
    // warm-up calls) before their first repetitions; 0 in one process.
    double process_start_seconds = 0;
    // The launch mode that ran (LaunchMode's index; < 0: not prepared, the
    // setting's is recorded), and why graph fell back to batch ("": it did not).
    int launch_used = -1;
    std::string launch_fallback;
    MemoryFigures memory;
    std::vector<RepetitionRecord> repetitions;
    std::optional<Roofline> roofline; // at the median of the repetitions' medians
    std::optional<EntrySummary> summary; // median and quality, once finished (measure/entry_summary.hpp)
};

// The fields a CaseResult contributes to each of its entries.
[[nodiscard]] nlohmann::json case_fields(const CaseResult &r);

// The part of those fields that is about the measurement, not the op:
// status, reason, reference, nmse, settings, suite_location,
// repetition_spread, roofline, memory. Shared with workload entries
// (harness/workload/workload_entry.cpp).
[[nodiscard]] nlohmann::json measurement_fields(const CaseResult &r, const MeasureSettings &measured_with,
                                                int threads_resolved, const SourceLocation &where);

// The fields that are facts of the case x backend, not of one repetition
// (params, settings, verification, memory, roofline, bottleneck, ...): a set
// stores them on each case's first iteration entry only, the one every
// opbench reader takes them from (results/README.md, "Per-case fields").
[[nodiscard]] const std::vector<std::string> &per_case_keys();

// Drops per_case_keys() from every entry of `result_set` but the first
// iteration entry of each run name (so a case's other repetitions and its
// aggregates carry only their own figures and its identity: name, op,
// backend, dtype, variant, case, phase, status), and records the keys in
// context.opbench.per_case_fields. A set already stored so is unchanged.
void store_case_fields_once(nlohmann::json &result_set);

// The inverse, for readers that want every field on every entry (tests, a
// tool that reads entries one by one): copies each per-case key a case's
// first iteration entry has onto the case's other entries that lack it.
// Older sets, which repeat the fields, are unchanged.
void expand_case_fields(nlohmann::json &result_set);

// One repetition's statistics, the `stats` object of an iteration entry.
[[nodiscard]] nlohmann::json summary_json(const RepetitionRecord &r);

} // namespace opbench
