// Running a suite: every case on every backend, each measured by the recipe
// (recipe.hpp) and handed to Google Benchmark for naming and reporting; the
// result set is written through result_set.hpp.
#pragma once

#include "plugin_loader.hpp"
#include "results.hpp"
#include "settings.hpp"
#include "suite.hpp"

#include <optional>
#include <string>
#include <vector>

namespace opbench {

struct RunOptions {
    std::vector<std::string> backends;  // replaces every case's list when non-empty
    std::string reference = "naive";    // backend whose output is the reference
    std::string out_path;               // result set; empty: none written
    std::string out_format = "json";    // writer of the result set (writers/writer.hpp)
    SettingOverrides overrides;
    std::vector<std::string> benchmark_args; // passed to Google Benchmark (--benchmark_*)
    bool progress = true;                    // on a terminal only
    std::vector<int> cpus;                   // CPUs the process was pinned to (empty: not pinned)
};

struct RunSummary {
    int passed = 0, failed = 0, skipped = 0;
    std::string out_path; // written result set, if any
};

// The suite's cases as this run measures them: command-line overrides
// applied, threads resolved into desc.threads, --backends applied. Throws
// SuiteError when two would get the same benchmark name.
[[nodiscard]] std::vector<Case> effective_cases(const Suite &suite, const RunOptions &options);

// One CaseResult per case x backend, in run order, unmeasured.
[[nodiscard]] std::vector<CaseResult> planned_results(const std::vector<Case> &cases, const std::string &reference);

// Runs the suite; throws std::runtime_error for problems that stop the whole
// run (bad Google Benchmark flags, unwritable output). Failed and skipped
// cases are data in the summary and the result set, not exceptions.
[[nodiscard]] RunSummary run_suite(const Suite &suite, const PluginSet &plugins, const RunOptions &options);

} // namespace opbench
