// Assembling a result set: Google Benchmark's JSON read back, enriched with
// opbench's context and per-case fields (results.hpp), written through the
// writer table (writers/writer.hpp) atomically.
#pragma once

#include "backend_sessions.hpp"
#include "machine.hpp"
#include "results.hpp"
#include "writers/writer.hpp"

#include <map>
#include <string>
#include <vector>

namespace opbench {

// Everything the result set's `context.opbench` says about the run.
struct RunContext {
    const Suite *suite = nullptr;
    const std::vector<Case> *cases = nullptr; // after command-line overrides
    const BackendSessions *sessions = nullptr;
    std::string reference_backend;
    std::vector<std::string> benchmark_args;
    double timer_overhead_seconds = 0;
    const CachedMachinePeaks *machine = nullptr;
    std::map<std::string, double> call_overhead_seconds;
    std::vector<int> cpus;
    std::vector<std::string> warnings;
};

// The result set as a Document (data = Google Benchmark JSON + opbench fields).
[[nodiscard]] Document assemble_result_set(nlohmann::json gb, const std::vector<CaseResult> &results,
                                           const std::vector<const CaseResult *> &unmeasured,
                                           const RunContext &context);

// Reads Google Benchmark's JSON from `gb_json_path` (then removes it),
// assembles the result set and writes it to `out_path` with the writer named
// `format`. Throws std::runtime_error when the JSON is missing or the file
// cannot be written.
void write_result_set(const std::string &gb_json_path, const std::string &out_path, const std::string &format,
                      const std::vector<CaseResult> &results, const std::vector<const CaseResult *> &unmeasured,
                      const RunContext &context);

} // namespace opbench
