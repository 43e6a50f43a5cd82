// A suite's cases and workloads as one run measures them: the command line's
// setting overrides applied and checked, --backends applied, threads resolved.
#pragma once

#include "measure/settings.hpp"
#include "suite/suite.hpp"

#include <string>
#include <vector>

namespace opbench {

// What the command line changes in every case and workload.
struct CommandLineChanges {
    SettingOverrides overrides;        // --warmup, --min-time, ... --threads
    std::vector<std::string> backends; // --backends: replaces every list when non-empty
};

// One case's or workload's settings and backend list after `changes`
// (SuiteError at `where` when the overrides make the settings inconsistent).
// Returns the resolved thread count.
int apply_command_line(MeasureSettings &settings, std::vector<std::string> &backends, const SourceLocation &where,
                       const CommandLineChanges &changes);

// The suite's cases after `changes`, threads resolved into desc.threads.
// Throws SuiteError when two would get the same benchmark name.
[[nodiscard]] std::vector<Case> effective_cases(const Suite &suite, const CommandLineChanges &changes);

// The suite's workloads after `changes`, threads resolved into decoder.threads.
[[nodiscard]] std::vector<WorkloadCase> effective_workloads(const Suite &suite, const CommandLineChanges &changes);

} // namespace opbench
