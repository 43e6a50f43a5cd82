// Splitting a suite into shards that run on different machines or jobs and
// merge back (`opbench merge`): `opbench run --shard i/n` runs shard i of n.
#pragma once

#include "suite/suite.hpp"

#include <string>
#include <vector>

namespace opbench {

struct Shard {
    int index = 1; // 1-based, as "--shard 1/4" .. "--shard 4/4"
    int count = 1;
};

// "2/4" -> {2, 4}. Throws std::invalid_argument with what would be valid.
[[nodiscard]] Shard parse_shard(const std::string &text);

// The cases of shard `s`: the suite's expanded cases dealt round-robin
// (case k, counting from 0, goes to shard k mod n + 1), so every shard gets
// a share of every sweep and the split depends only on the suite's content.
// All backends of a case stay in one shard. Throws std::invalid_argument
// when the shard would be empty.
[[nodiscard]] std::vector<Case> shard_cases(const std::vector<Case> &cases, const Shard &s);

// Cuts `suite` to shard `s`: its cases, then its [[workload]]s, dealt
// round-robin as one list (item k, counting from 0 over cases then
// workloads, goes to shard k mod n + 1), so each workload runs in exactly
// one shard as each case does (merge refuses an item in two shards).
// Throws std::invalid_argument when the shard would be empty.
void shard_suite(Suite &suite, const Shard &s);

} // namespace opbench
