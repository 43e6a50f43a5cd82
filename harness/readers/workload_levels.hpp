// The optimisation levels of whole workloads (a decoder's prefill and
// decode), as `compare --by backend` shows them after the per-entry table:
// one row per workload and level, where a level is a backend and the
// workload's dtype (naive f32 -> onednn f32 -> onednn bf16 -> onednn s8),
// and per phase its tokens/s with the speed-up against the baseline's first
// level. tokens/s is the entry's tokens per call over the one summary's
// median (measure/entry_summary.hpp), so it agrees with every other view.
#pragma once

#include "readers/result_set_reader.hpp"
#include "writers/writer.hpp"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace opbench {

// The table, and its rows as JSON (`workload_levels` in compare's JSON);
// nothing when the sets hold no workload entries.
struct WorkloadLevels {
    Table table;
    nlohmann::json rows = nlohmann::json::array();
};
[[nodiscard]] std::optional<WorkloadLevels> workload_levels(const std::vector<ResultSet> &sets,
                                                            const std::string &baseline);

} // namespace opbench
