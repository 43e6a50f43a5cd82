// What `opbench ab` adds to a result set written as `run`'s (set_file.hpp):
// each paired iteration's `pair`, and context.opbench's `paired` and
// `canary` (results/README.md, "Paired sets").
#pragma once

#include "plugin/plugin_loader.hpp"
#include "run/ab_run.hpp"
#include "run/abba_schedule.hpp"

#include <nlohmann/json.hpp>

#include <span>
#include <string>
#include <vector>

namespace opbench {

// Each paired iteration of one side's result-set entries (as the entry loop
// writes them, with `summary` and `metrics`) gets its `pair` {index, role,
// with (the other side's run name), base_time, new_time}. Block p holds
// repetitions 2p and 2p+1 of each side (abba_schedule.hpp); a block left
// out (a starved or throttled repetition) has no pair, and its iterations
// `pair_left_out`: "starved" or "throttled".
void add_pairs(std::vector<nlohmann::json> &records, const PairedTimes &times, PairSide side,
               const std::string &other_name);

// context.opbench.paired: the pair, its files, the order and the test's settings.
[[nodiscard]] nlohmann::json paired_context(const PairedRunOptions &options, const PluginSet &plugins);

} // namespace opbench
