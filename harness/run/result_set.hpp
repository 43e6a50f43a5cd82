// The pieces of a result set: context.opbench of the run, and each case's
// entries (made from the entry's own records by entry/entry.hpp's
// result_entries, with opbench's per-case fields from results.hpp). The run log (run_log.hpp)
// puts them together, complete or not, and the runner writes the set
// through the writer table (writers/writer.hpp) atomically.
#pragma once

#include "plugin/backend_sessions.hpp"
#include "machine/machine.hpp"
#include "profile/profile_session.hpp"
#include "entry/results.hpp"
#include "suite/shard.hpp"
#include "writers/writer.hpp"

#include <map>
#include <string>
#include <vector>

namespace opbench {

// Everything the result set's `context.opbench` says about the run.
struct RunContext {
    const Suite *suite = nullptr;
    const std::vector<Case> *cases = nullptr;                        // after command-line overrides
    const std::map<std::string, nlohmann::json> *backends = nullptr; // context of each backend opened
    const std::map<std::string, std::string> *unavailable = nullptr; // backends that could not be: why
    std::string reference_backend;
    std::vector<std::string> benchmark_args;
    double timer_overhead_seconds = 0;
    const CachedMachinePeaks *machine = nullptr;
    std::map<std::string, double> call_overhead_seconds;
    std::vector<int> cpus;
    std::vector<std::string> warnings;
    const ProfileSession *profiling = nullptr; // set when the run profiled (--profile, --trace)
    std::optional<Shard> shard;                // this set holds one shard of the suite
};

// context.opbench of the run (without "complete", which the run log adds).
[[nodiscard]] nlohmann::json run_context_json(const RunContext &context);

// What the whole set needs once its entries are in: the per-case fields
// kept on each case's first entry only (store_case_fields_once). Each
// entry's summary, metrics, bottleneck and (profiling runs) profile are
// stamped on its records as it finishes (run/entry_loop.cpp).
void add_run_analysis(nlohmann::json &result_set);

} // namespace opbench
