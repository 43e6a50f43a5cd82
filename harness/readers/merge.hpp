// opbench merge: shards of one suite (run on many machines of one kind, or
// in several jobs) into one result set.
#pragma once

#include "readers/result_set_reader.hpp"
#include "suite/shard.hpp"

#include <nlohmann/json.hpp>

#include <optional>
#include <stdexcept>
#include <string>
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

// A file given to merge that is not a result set (yet): the empty file a
// run reserved and has not replaced (still running, or killed), a file that
// does not exist, or an unreadable one beside a journal. `shard` comes from
// its journal's header (the run's `--shard i/n`), when it has a journal.
struct UnreadShard {
    std::string path;
    std::optional<Shard> shard;
    std::string state; // what merge says after the path: "is incomplete: still running (...)"
};

struct MergeInputs {
    std::vector<ResultSet> sets;
    std::vector<UnreadShard> unread;
};

// Reads `paths` for a merge: each a result set, or an UnreadShard when it is
// empty or missing, or unreadable with a journal beside it (a run's
// reservation; the journal says whether a run still holds it). Any other
// bad file throws ResultSetError as read_result_set does.
[[nodiscard]] MergeInputs read_merge_inputs(const std::vector<std::string> &paths);

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
// The same, refusing first, in one message with a line per shard, every
// shard that is not ready: each unread file (still running, stopped before
// it wrote its set, empty, absent), each incomplete set (a live journal:
// still running, resumed) and each index no input holds (missing).
[[nodiscard]] nlohmann::json merge_result_sets(const MergeInputs &inputs, const MergeOptions &options);

} // namespace opbench
