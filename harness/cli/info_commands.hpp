// The subcommands that describe rather than measure: `list` (backends, ops,
// suites), `validate` (suite files) and `machine` (this machine's peaks).
#pragma once

#include "plugin/plugin_loader.hpp"

#include <string>
#include <vector>

namespace opbench {

// Each returns the exit status: 0, or 2 when a suite given to validate is
// invalid (its error printed on stderr).
[[nodiscard]] int list_command(const PluginSet &plugins);
[[nodiscard]] int validate_command(const std::vector<std::string> &paths, const PluginSet &plugins);
[[nodiscard]] int machine_command(bool refresh);
// `opbench machine --id`: the id a set measured here gets (readers'
// machine_id), for scripts that must know it before or without a set
// (scripts/slurm-run.sh records it per shard attempt).
[[nodiscard]] int machine_id_command();

} // namespace opbench
