// A suite's [[workload]] tables: measured units made of several plugin calls
// (today: kind = "decoder"). Parsed here, beside suite.cpp, so the op-case
// parser stays about ops; suites/README.md documents the keys.
#pragma once

#include "suite/suite.hpp"

#include <toml++/toml.h>

#include <string>
#include <vector>

namespace opbench::workload {

// Parses every table of the suite's `workload` array into `out`. `defaults`
// is the suite's [defaults] table (null when absent): its `backends` and
// measurement keys apply to workloads as to cases. Throws SuiteError with
// file:line:column. A value used other than written (a min_time raised to
// its floor) adds a line to `warnings` (add_warning).
void parse_workloads(const toml::node &workload_array, const toml::table *defaults, const std::string &file,
                     const SuiteOptions &options, std::vector<WorkloadCase> &out, std::vector<std::string> &warnings);

} // namespace opbench::workload
