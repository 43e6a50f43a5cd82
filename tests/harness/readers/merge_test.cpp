#include "readers/merge.hpp"

#include "../result_set_fixture.hpp"

#include <gtest/gtest.h>

using namespace opbench;
using namespace opbench::test;

namespace {
ResultSet make(const FakeSet &s, const std::string &name) { return parse_result_set(fake_set_json(s).dump(), name); }
FakeSet shard(const std::string &op) {
    FakeSet s;
    FakeCase c;
    c.op = op;
    s.cases = {c};
    return s;
}
} // namespace

TEST(Merge, ShardsOfOneSuiteBecomeOneSet) {
    const nlohmann::json m = merge_result_sets({make(shard("add"), "a"), make(shard("silu"), "b")}, {});
    const ResultSet back = parse_result_set(m.dump(), "merged");
    ASSERT_EQ(back.cases.size(), 2u);
    EXPECT_EQ(back.cases[1].op, "silu");
    EXPECT_EQ(m["context"]["opbench"]["merged_from"].size(), 2u);
    EXPECT_EQ(m["context"]["opbench"]["merged_from"][1]["path"], "b");
}

TEST(Merge, RefusesDifferentSuitesHashesOverlapsAndMachines) {
    FakeSet other_suite = shard("silu");
    other_suite.suite = "norms";
    EXPECT_THROW((void)merge_result_sets({make(shard("add"), "a"), make(other_suite, "b")}, {}), MergeError);
    FakeSet other_hash = shard("silu");
    other_hash.suite_sha = "ffff";
    try {
        (void)merge_result_sets({make(shard("add"), "a"), make(other_hash, "b")}, {});
        FAIL();
    } catch (const MergeError &e) {
        EXPECT_NE(std::string(e.what()).find("different versions of suite 'quick'"), std::string::npos) << e.what();
    }
    EXPECT_THROW((void)merge_result_sets({make(shard("add"), "a"), make(shard("add"), "b")}, {}), MergeError);
    FakeSet elsewhere = shard("silu");
    elsewhere.cpu_model = "Intel Xeon";
    EXPECT_THROW((void)merge_result_sets({make(shard("add"), "a"), make(elsewhere, "b")}, {}), MergeError);
    MergeOptions mixed;
    mixed.allow_mixed_machines = true;
    EXPECT_NO_THROW((void)merge_result_sets({make(shard("add"), "a"), make(elsewhere, "b")}, mixed));
    EXPECT_THROW((void)merge_result_sets({make(shard("add"), "a")}, {}), MergeError);
}
