// Paired A/B measurement (`opbench ab`): two builds of one backend, each in
// its own worker pool, measured next to each other so that both sides of
// every pair see the same machine state.
//
// For each case, both sides are activated (reference, prepare, check, warm
// up: each in its own worker host, make_worker_host in isolate/case_host.hpp),
// then measured in blocks of four short repetitions, ABBA then BAAB, and so
// on (A = base, B = new): a linear drift within a block adds the same to
// both sides, so it cancels in the block's pair (mean of the two A times,
// mean of the two B times). A reading of the drift canary
// (measure/canary.hpp) follows every block. The verdict per case is the
// paired test (measure/paired_stats.hpp) on the blocks' ratios.
//
// The result set is an ordinary one (Google Benchmark-shaped entries, one
// per repetition, per side), so compare.py and every reader read it; the
// pairs are extra fields: each iteration entry's `pair`, and
// context.opbench.paired and context.opbench.canary (results/README.md).
#pragma once

#include "check/verify.hpp"
#include "measure/paired_stats.hpp"
#include "plugin/plugin_loader.hpp"
#include "suite/suite.hpp"

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
    std::string out_path; // "" = no result set
    bool progress = true; // one line per case as it finishes
    std::vector<std::string> warnings; // already printed; recorded in context.opbench.warnings
    std::vector<int> cpus;             // the process was pinned to these (recorded)
    std::string benchmark_filter;      // as `opbench run`'s --benchmark_filter; "" = every case
};

struct PairedCaseResult {
    std::string label; // the benchmark name without its backend
    std::string status = "passed", reason;
    std::vector<double> base_times, new_times; // per pair, seconds per call
    PairedVerdict verdict;
};

struct PairedSummary {
    std::vector<PairedCaseResult> cases;
    double wall_seconds = 0;
    double canary_drift = 0; // relative, over the run
    bool complete = true;    // false: interrupted
    std::string out_path;
    [[nodiscard]] std::size_t count(const std::string &verdict) const;
    [[nodiscard]] std::size_t failed() const;
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
// what stops the whole run (an unwritable result set); a side that fails a
// case is data in the summary and the set.
[[nodiscard]] PairedSummary run_paired(const Suite &suite, const PluginSet &plugins, const PairedRunOptions &options);

// One console line of a case (100 columns): case, base and new medians
// (µs), ratio new / base, p, verdict (`opbench compare SET` adds the 95%
// interval); the header passes the titles.
[[nodiscard]] std::string paired_console_row(const std::string &label, const std::string &base,
                                             const std::string &next, const std::string &ratio, const std::string &p,
                                             const std::string &verdict);

// The summary, two lines: "opbench ab: 14 cases, naive@base -> naive@new (threshold 2%): 13 same,
// 1 slower, ..." and the canary's drift with the run's time.
[[nodiscard]] std::string paired_summary_line(const PairedSummary &s, const PairedRunOptions &options);

} // namespace opbench
