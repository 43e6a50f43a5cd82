// Running a suite: every case on every backend, verified against the
// reference, measured through Google Benchmark, written as a result set.
#pragma once

#include "plugin_loader.hpp"
#include "suite.hpp"

#include <optional>
#include <string>
#include <vector>

namespace opbench {

// Command-line overrides of what the suite says; unset fields keep the suite's.
struct SettingOverrides {
    std::optional<int> warmup, min_samples, repetitions, threads;
    std::optional<double> min_time, max_time, noise;
    std::optional<std::string> cache;
    void apply(MeasureSettings &s) const;
};

struct RunOptions {
    std::vector<std::string> backends;  // replaces every case's list when non-empty
    std::string reference = "naive";    // backend whose output is the reference
    std::string out_path;               // result set; empty: none written
    SettingOverrides overrides;
    std::vector<std::string> benchmark_args; // passed to Google Benchmark (--benchmark_*)
    bool progress = true;                    // on a terminal only
    std::vector<int> cpus;                   // CPUs the process was pinned to (empty: not pinned)
};

struct RunSummary {
    int passed = 0, failed = 0, skipped = 0;
    std::string out_path; // written result set, if any
};

// Pins the whole process (and every thread it starts later) to `cpus`.
// Call before plugins are loaded: OpenMP runtimes read the mask when they load.
// Throws std::runtime_error naming the CPUs when the kernel refuses.
void pin_process_to_cpus(const std::vector<int> &cpus);

// Things that spoil numbers, in the spirit of Google Benchmark's warnings:
// a non-release build, CPU frequency scaling, a loaded machine.
[[nodiscard]] std::vector<std::string> measurement_warnings();

// Runs the suite; throws std::runtime_error for problems that stop the whole
// run (bad Google Benchmark flags, unwritable output). Failed and skipped
// cases are data in the summary and the result set, not exceptions.
[[nodiscard]] RunSummary run_suite(const Suite &suite, const PluginSet &plugins,
                                   const RunOptions &options);

} // namespace opbench
