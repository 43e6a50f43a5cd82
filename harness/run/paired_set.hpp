// What `opbench ab` adds to a result set written as `run`'s (set_file.hpp):
// each side's entries with `summary` and `metrics` as every `run` entry has,
// each paired iteration's `pair`, and context.opbench's `paired` and
// `canary` (results/README.md, "Paired sets").
#pragma once

#include "entry/entry.hpp"
#include "measure/canary.hpp"
#include "plugin/plugin_loader.hpp"
#include "run/ab_run.hpp"
#include "run/abba_schedule.hpp"

#include <nlohmann/json.hpp>

#include <span>
#include <string>
#include <vector>

namespace opbench {

// One side's result-set entries (entry/entry.hpp's result_entries). A
// passed entry's summary (from its repetition records, judged against the
// set's `context`) is stored on it and written with its metrics and its
// bottleneck (the rules `run` applies, on `facts`) on each iteration; an iteration of a paired block carries `pair` {index, role,
// with (the other side's run name), base_time, new_time}. Block p holds
// repetitions 2p and 2p+1 of each side (abba_schedule.hpp).
[[nodiscard]] std::vector<nlohmann::json> paired_entry_records(Entry &entry, const nlohmann::json &context,
                                                               const RunFacts &facts, const PairedTimes &times,
                                                               PairSide side,
                                                               const std::string &other_name);

// context.opbench.paired: the pair, its files, the order and the test's settings.
[[nodiscard]] nlohmann::json paired_context(const PairedRunOptions &options, const PluginSet &plugins);

} // namespace opbench
