// Paired A/B measurement (`opbench ab`): two builds of one backend, each in
// its own worker pools (paired_sides.hpp), measured next to each other so
// that both sides of every pair see the same machine state.
//
// It is a schedule of the one entry loop (entry_loop.hpp): both sides'
// entries of a case (entry/entry.hpp, as `run` plans them) are one group,
// activated together and measured in the order abba_schedule.hpp gives
// (ABBA, BAAB, ... blocks); a reading of the drift canary
// (measure/canary.hpp) follows every block. The pairs are computed from the
// repetition records (paired_times), and the verdict per case is the paired
// test (measure/paired_stats.hpp) on them.
//
// The result set is written as `run` writes its own (run_log.hpp,
// set_file.hpp): Google Benchmark-shaped entries, one per repetition per
// side, each with its `summary` and `metrics`, so compare.py and every
// reader read it; the pairs are extra fields (paired_set.hpp).
#pragma once

#include "check/verify.hpp"
#include "measure/paired_stats.hpp"
#include "measure/throttle.hpp"
#include "plugin/plugin_loader.hpp"
#include "suite/suite.hpp"

#include <optional>
#include <string>
#include <vector>

namespace opbench {

struct PairedRunOptions {
    std::string base, next;          // backend instances, e.g. "naive@base" and "naive@new"
    std::string reference = "naive"; // backend whose output verifies both sides
    int pairs = 60;                  // ABBA blocks per case: one pair each
    double half_seconds = 0.002;     // each of a block's four repetitions samples this long (min_time)
    VerifyMode verify = VerifyMode::fast;
    PairedOptions verdict;
    std::string out_path;              // "" = no result set (nor a journal)
    // The journal (run_log.hpp, as `run` keeps it): `ab`'s own arguments
    // (after `ab`, without --out and --resume), for `ab --resume` to run the
    // same command again; and the journal a resumed run continues ("": a new one).
    std::vector<std::string> command_args;
    std::string resume_journal;
    double case_timeout = 0;           // seconds a case may take, probe included (--case-timeout); 0 = derived
    bool progress = true;              // one line per case as it finishes
    std::vector<std::string> warnings; // already printed; recorded in context.opbench.warnings
    std::vector<int> cpus;             // the process was pinned to these (recorded)
    std::string benchmark_filter;      // as `opbench run`'s --benchmark_filter; "" = every case
    // --allow-insecure-plugins: the files it let load, each "<path>: <why>"
    // (maybe none); recorded as context.opbench.insecure_plugins_allowed, as `run` does.
    std::optional<std::vector<std::string>> insecure_plugins_allowed;
    // context.opbench.code_under_test (run/code_under_test.hpp); null: none given.
    nlohmann::json code_under_test;
};

struct PairedCaseResult {
    std::string label; // the benchmark name without its backend
    std::string status = "passed", reason;
    std::vector<double> base_times, new_times; // per pair, seconds per call
    PairedVerdict verdict;
    std::string left_out; // compared with blocks left out: "2 of 60 blocks left out (2 throttled)"; "" none
};

struct PairedSummary {
    std::vector<PairedCaseResult> cases;
    double wall_seconds = 0;
    double canary_drift = 0; // relative, over the run
    // A device backend's SM clock over the repetitions this run measured:
    // the device's drift reading (the canary times the host). None on a CPU.
    std::optional<ClockRange> device_clock;
    bool complete = true;    // false: interrupted, or a case without entries
    std::size_t resumed = 0; // of `cases`, those a resumed run took from its journal
    std::string out_path;
    [[nodiscard]] std::size_t count(const std::string &verdict) const;
    [[nodiscard]] std::size_t failed() const; // cases not compared, whatever their status
    [[nodiscard]] std::size_t count_status(const std::string &status) const;
};

// The cases `ab` runs, with both instances as their backends: those of
// `suite` that list the pair's backend (NAME of NAME@base) or either
// instance, and whose entry name on either side matches
// options.benchmark_filter (gbench_args.hpp's NameFilter). Throws SuiteError
// (exit 2) when none is left, naming what matched nothing; std::regex_error
// for a filter that is no extended regex.
[[nodiscard]] std::vector<Case> paired_cases(const Suite &suite, const PairedRunOptions &options);

// Runs paired_cases(suite, options) (both instances
// must be in `plugins`: add_plugin_variants). Throws std::runtime_error for
// what stops the whole run (an unwritable result set), JournalError for a
// journal that cannot be started or continued (during_run(): a failed
// write); a side that fails a case is data in the summary and the set.
// With a result set, each finished case's two sides are journaled as they
// finish; resumed (options.resume_journal), the cases whose two sides the
// journal holds are kept as they were measured (their pairs and verdict),
// and the rest run.
[[nodiscard]] PairedSummary run_paired(const Suite &suite, const PluginSet &plugins, const PairedRunOptions &options);

} // namespace opbench
