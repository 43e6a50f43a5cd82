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
// Shard `index` of `count` (context.opbench.shard), as `run --shard` writes it.
ResultSet part(const std::string &op, int index, int count, bool complete = true) {
    nlohmann::json j = fake_set_json(shard(op));
    j["context"]["opbench"]["shard"] = {{"index", index}, {"count", count}};
    j["context"]["opbench"]["complete"] = complete;
    return parse_result_set(j.dump(), "shard-" + std::to_string(index) + ".json");
}
std::string merge_error(const std::vector<ResultSet> &sets) {
    try {
        (void)merge_result_sets(sets, {});
    } catch (const MergeError &e) {
        return e.what();
    }
    return "merged";
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

// gpu-check merges a cuda run and a naive run of one suite: each part's
// context knows only its own backend. The merged set keeps both backends'
// info (its threads decide the oversubscription note) and call overheads;
// where both parts have a backend, the first part's stays.
TEST(Merge, KeepsEveryPartsBackendInfoAndCallOverhead) {
    const auto with_backend = [](const std::string &op, const std::string &backend, const std::string &threads,
                                 const std::string &path) {
        nlohmann::json j = fake_set_json(shard(op));
        auto &ob = j["context"]["opbench"];
        ob["backends"] = {{backend, {{"info", {{"threads", threads}}}}}};
        ob["measurement"]["call_overhead_seconds"] = {{backend, 1e-7}};
        return parse_result_set(j.dump(), path);
    };
    const nlohmann::json m = merge_result_sets({with_backend("add", "cuda", "1", "a"),
                                                with_backend("silu", "naive", "1", "b"),
                                                with_backend("gelu", "cuda", "16", "c")},
                                               {});
    const auto &ob = m["context"]["opbench"];
    ASSERT_TRUE(ob["backends"].contains("naive"));
    EXPECT_EQ(ob["backends"]["naive"]["info"]["threads"], "1");
    EXPECT_EQ(ob["backends"]["cuda"]["info"]["threads"], "1"); // the first part's
    EXPECT_TRUE(ob["measurement"]["call_overhead_seconds"].contains("naive"));
    EXPECT_TRUE(ob["measurement"]["call_overhead_seconds"].contains("cuda"));
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

// What a job array leaves when a shard was cancelled, failed or has not run
// yet: the merge names that shard instead of writing a suite with holes.
TEST(Merge, RefusesAMissingOrIncompleteShardNamingIt) {
    EXPECT_EQ(merge_error({part("add", 1, 3), part("silu", 2, 3), part("gelu", 3, 3)}), "merged");
    const std::string missing = merge_error({part("add", 1, 3), part("gelu", 3, 3)});
    EXPECT_NE(missing.find("shard 2/3 missing"), std::string::npos) << missing;
    EXPECT_NE(missing.find("1/3 shard-1.json, 3/3 shard-3.json"), std::string::npos) << missing;
    const std::string two_missing = merge_error({part("gelu", 3, 4), part("add", 1, 4)});
    EXPECT_NE(two_missing.find("shards 2/4, 4/4 missing"), std::string::npos) << two_missing;
    const std::string incomplete = merge_error({part("add", 1, 3), part("silu", 2, 3, false), part("gelu", 3, 3)});
    EXPECT_NE(incomplete.find("shard 2/3 (shard-2.json) is incomplete"), std::string::npos) << incomplete;
    EXPECT_NE(incomplete.find("opbench run --resume shard-2.json"), std::string::npos) << incomplete;
    const std::string twice = merge_error({part("add", 1, 2), part("silu", 1, 2)});
    EXPECT_NE(twice.find("are both shard 1/2"), std::string::npos) << twice;
    const std::string counts = merge_error({part("add", 1, 2), part("silu", 2, 3)});
    EXPECT_NE(counts.find("of 3 shards but shard-1.json is of 2"), std::string::npos) << counts;
    const std::string whole = merge_error({part("add", 1, 2), make(shard("silu"), "whole.json")});
    EXPECT_NE(whole.find("whole.json is a whole run"), std::string::npos) << whole;
    // The whole split in one set (--shards 1) merges; a lone whole run does not.
    EXPECT_EQ(merge_error({part("add", 1, 1)}), "merged");
    EXPECT_NE(merge_error({make(shard("add"), "a")}).find("at least two"), std::string::npos);
}

TEST(Merge, ADifferentMachineNamesTheShard) {
    nlohmann::json j = fake_set_json(shard("silu"));
    j["context"]["opbench"]["shard"] = {{"index", 2}, {"count", 2}};
    j["context"]["opbench"]["machine"]["cpu_model"] = "Intel Xeon";
    const std::string e = merge_error({part("add", 1, 2), parse_result_set(j.dump(), "shard-2.json")});
    EXPECT_NE(e.find("shard 2/2 (shard-2.json) was measured on machine intel-xeon"), std::string::npos) << e;
    EXPECT_NE(e.find("--allow-mixed-machines"), std::string::npos) << e;
}
