// opbench merge: shards of one suite (run on many machines of one kind, or
// in several jobs) into one result set.
#pragma once

#include "readers/result_set_reader.hpp"

#include <nlohmann/json.hpp>

#include <stdexcept>
#include <vector>

namespace opbench {

class MergeError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

struct MergeOptions {
    // Sets from different machine ids are refused unless this is set: one
    // context (and one set of machine peaks) would then describe entries
    // measured elsewhere. Each entry's roofline stays its own machine's.
    bool allow_mixed_machines = false;
};

// One Google Benchmark JSON holding every entry of `sets`, the first set's
// context plus context.opbench.merged_from (path, host, machine id,
// timestamp, commit and case count of each part). Refuses (MergeError),
// naming the shard (index/count and path): an incomplete set ("complete":
// false, an interrupted run), shards of different counts, a shard given
// twice, a missing shard index, a whole run among shards, sets of
// different suites or suite hashes, sets of different machine ids (unless
// allowed), and a case present in two sets. One set merges only when it is
// shard 1/1.
[[nodiscard]] nlohmann::json merge_result_sets(const std::vector<ResultSet> &sets, const MergeOptions &options);

} // namespace opbench
