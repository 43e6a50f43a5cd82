// Running a suite: one list of entries (entry/entry.hpp: every case on every
// backend, then every workload phase on every backend), each measured by the
// recipe in a worker process per backend or in opbench itself
// (isolate/case_host.hpp), its repetitions driven by Google Benchmark. Each
// finished entry goes to the run log and its journal (run_log.hpp) as the
// result-set entries made from opbench's own records; the result set is made
// from the log, complete or (interrupted) not.
#pragma once

#include "isolate/case_host.hpp"
#include "plugin/plugin_loader.hpp"
#include "profile/profile_session.hpp"
#include "entry/entry.hpp"
#include "entry/results.hpp"
#include "run/entry_loop.hpp"
#include "run/run_backends.hpp"
#include "run/run_log.hpp"
#include "measure/settings.hpp"
#include "suite/shard.hpp"
#include "suite/effective.hpp"
#include "suite/suite.hpp"
#include "check/verify.hpp"

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace opbench {
namespace workload {
class WorkloadEntry;
} // namespace workload

// Everything `opbench run` was asked, as the CLI fills it: the parts each
// room reads (the backends', the entry loop's, the log's) live in that room,
// and the rest is the runner's own.
struct RunOptions {
    BackendOptions backend; // the reference, isolation, --verify, the reference store (run_backends.hpp)
    LoopOptions loop;       // Google Benchmark's flags, progress, verbose, --mem-limit (entry_loop.hpp)
    LogOptions log;         // --out, --resume's journal, the command for --resume (run_log.hpp)
    std::vector<std::string> backends; // replaces every case's list when non-empty
    std::string out_format = "json";   // writer of the result set (writers/writer.hpp)
    SettingOverrides overrides;
    std::vector<int> cpus;      // CPUs the process was pinned to (empty: not pinned)
    ProfileOptions profile;     // --profile, --trace, --trace-schedule (cases then run in this process)
    std::optional<Shard> shard; // the suite's cases were cut to this shard (recorded in the set)
    // Values used other than given (a min_time raised to its floor), already
    // printed; recorded in context.opbench.warnings.
    std::vector<std::string> setting_warnings;
    // --allow-insecure-plugins given: the files it let load ("<path>: <why>",
    // maybe none); recorded as context.opbench.insecure_plugins_allowed.
    std::optional<std::vector<std::string>> insecure_plugins_allowed;
    // context.opbench.code_under_test (run/code_under_test.hpp); null: none given.
    nlohmann::json code_under_test;
};

struct RunSummary {
    int passed = 0, failed = 0, skipped = 0; // resumed runs: the earlier sessions' cases included
    int starved = 0; // ran and verified, but every repetition waited for a CPU: no time
    bool complete = true;                    // false: interrupted (SIGINT/SIGTERM)
    int unverified = 0;                      // passed entries whose outputs were not checked (--verify off)
    std::string out_path;                    // written result set, if any
    VerifyMode verify = VerifyMode::fast;
    // Where the run's time went: the whole run, and summed over its cases
    // the sampling loops, the checks (reference included), the prepares.
    double wall_seconds = 0, measure_seconds = 0, verify_seconds = 0, prepare_seconds = 0;
    // Of prepare_seconds: moving cases to their further worker processes
    // (settings.processes), which `--processes 1` saves.
    double process_start_seconds = 0;
    // Outputs besides the result set that could not be written (the trace),
    // each "what: why"; the result set was written regardless. Exit 3.
    std::vector<std::string> output_errors;
};

// The run's summary: counts and wall time, then where the time went, e.g.
//   "opbench: 12 passed, 0 failed, 0 skipped in 95.2 s\n  measuring 71.3 s (75%), verifying 3.1 s (3%, fast),
//   preparing 20.0 s (21%)", and a line naming --processes 1 where moving cases to further
// worker processes took a tenth of the run or more.
[[nodiscard]] std::string summary_line(const RunSummary &s);

// Each workload phase x backend entry made, with its index in the run order.
using WorkloadEntries = std::vector<std::pair<std::size_t, const workload::WorkloadEntry *>>;

// Every entry of the run, in run order, unmeasured: each case x backend,
// then each workload x phase x backend (also listed in `made`, if given).
[[nodiscard]] std::vector<std::unique_ptr<Entry>> planned_entries(const std::vector<Case> &cases,
                                                                  const std::vector<WorkloadCase> &workloads,
                                                                  const std::string &reference,
                                                                  WorkloadEntries *made = nullptr);

// The names of the entries this run measures, in run order: --benchmark_filter
// applied as the run applies it (to the names the console shows, `$`
// included). Throws SuiteError (bad input) when a filter matches none,
// naming the nearest entries.
[[nodiscard]] std::vector<std::string> entry_names(const Suite &suite, const RunOptions &options);

// Runs the suite; throws std::runtime_error for problems that stop the whole
// run (bad Google Benchmark flags, unwritable output). Failed and skipped
// cases are data in the summary and the result set, not exceptions.
[[nodiscard]] RunSummary run_suite(const Suite &suite, const PluginSet &plugins, const RunOptions &options);

} // namespace opbench
