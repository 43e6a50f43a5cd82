#include "suite/shard.hpp"

#include <gtest/gtest.h>

#include <set>
#include <stdexcept>

using namespace opbench;

namespace {
std::vector<Case> numbered(int n) {
    std::vector<Case> cases(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) cases[static_cast<std::size_t>(i)].name = "c" + std::to_string(i);
    return cases;
}
} // namespace

TEST(Shard, Parse) {
    const Shard s = parse_shard("2/4");
    EXPECT_EQ(s.index, 2);
    EXPECT_EQ(s.count, 4);
    for (const char *bad : {"0/4", "5/4", "2", "2/", "/4", "a/b", "2/4x", "-1/4", "1/0"})
        EXPECT_THROW((void)parse_shard(bad), std::invalid_argument) << bad;
}

TEST(Shard, EveryCaseInExactlyOneShardRoundRobin) {
    const auto cases = numbered(10);
    std::multiset<std::string> seen;
    for (int i = 1; i <= 3; ++i)
        for (const auto &c : shard_cases(cases, {i, 3})) seen.insert(c.name);
    EXPECT_EQ(seen.size(), 10u);
    EXPECT_EQ(std::set<std::string>(seen.begin(), seen.end()).size(), 10u);
    const auto first = shard_cases(cases, {1, 3});
    ASSERT_EQ(first.size(), 4u); // c0 c3 c6 c9
    EXPECT_EQ(first[1].name, "c3");
    EXPECT_EQ(shard_cases(cases, {1, 1}).size(), 10u);
}

TEST(Shard, AnEmptyShardIsRefused) { EXPECT_THROW((void)shard_cases(numbered(2), {3, 4}), std::invalid_argument); }

// Workloads used to be in every shard (shard_cases cut only the cases), so
// the shards of a suite with a [[workload]] never merged: "case ... is in
// both". Cases and workloads are one list now, each item in one shard.
TEST(Shard, EachWorkloadRunsInExactlyOneShard) {
    Suite suite;
    suite.cases = numbered(4);
    for (const char *w : {"w0", "w1"}) {
        WorkloadCase wc;
        wc.name = w;
        suite.workloads.push_back(wc);
    }
    std::multiset<std::string> seen;
    for (int i = 1; i <= 4; ++i) {
        Suite part = suite;
        shard_suite(part, {i, 4});
        for (const auto &c : part.cases) seen.insert(c.name);
        for (const auto &w : part.workloads) seen.insert(w.name);
        if (i == 1) {
            // items c0 c1 c2 c3 w0 w1: shard 1 gets c0 and w0 (item 4)
            ASSERT_EQ(part.workloads.size(), 1u);
            EXPECT_EQ(part.workloads[0].name, "w0");
        }
    }
    EXPECT_EQ(seen.size(), 6u) << "every case and workload once";
    EXPECT_EQ(std::set<std::string>(seen.begin(), seen.end()).size(), 6u);
    // A shard of only a workload is a shard; one past every item is refused.
    Suite only_workloads = suite;
    only_workloads.cases.clear();
    shard_suite(only_workloads, {2, 2});
    EXPECT_EQ(only_workloads.workloads.size(), 1u);
    Suite too_many = suite;
    EXPECT_THROW(shard_suite(too_many, {7, 7}), std::invalid_argument);
}
