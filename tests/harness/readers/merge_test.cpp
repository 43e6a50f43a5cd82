#include "readers/merge.hpp"

#include "../parsed_fake_set.hpp"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <fstream>
#include <sys/file.h>
#include <unistd.h>

using namespace opbench;
using namespace opbench::test;

namespace {
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
// Shard `index` of `count` written to DIR/shard-INDEX.json; its path.
std::string part_file(const TempDir &dir, const std::string &op, int index, int count, bool complete = true) {
    nlohmann::json j = part(op, index, count, complete).raw;
    j["context"]["opbench"]["suite"]["path"] = "suites/quick.toml";
    j["context"]["opbench"]["measurement"]["benchmark_args"] = {"--benchmark_filter=add|silu"};
    const std::string path = (dir.path / ("shard-" + std::to_string(index) + ".json")).string();
    std::ofstream(path) << j.dump();
    return path;
}
// A run's journal beside `set_path`: its header (the run's args, with
// --shard INDEX/COUNT) and `entries` finished case lines.
void journal_file(const std::string &set_path, int index, int count, int entries) {
    std::ofstream out(set_path + ".journal");
    out << nlohmann::json{{"opbench_journal", 1},
                          {"suite", "suites/quick.toml"},
                          {"args", {"suites/quick.toml", "--shard", std::to_string(index) + "/" + std::to_string(count)}}}
               .dump()
        << "\n";
    for (int i = 0; i < entries; ++i) out << nlohmann::json{{"case", {{"name", "c" + std::to_string(i)}}}}.dump() << "\n";
}
// Holds the journal's lock as a live run does (run/journal.cpp) until destroyed.
struct LiveRun {
    int fd;
    explicit LiveRun(const std::string &set_path) : fd(::open((set_path + ".journal").c_str(), O_RDWR)) {
        EXPECT_EQ(::flock(fd, LOCK_EX | LOCK_NB), 0);
    }
    ~LiveRun() { ::close(fd); }
};
std::string merge_error(const MergeInputs &inputs) {
    try {
        (void)merge_result_sets(inputs, {});
    } catch (const MergeError &e) {
        return e.what();
    }
    return "merged";
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
    const nlohmann::json m = merge_result_sets({parsed_set(shard("add"), "a"), parsed_set(shard("silu"), "b")}, {});
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
    EXPECT_THROW((void)merge_result_sets({parsed_set(shard("add"), "a"), parsed_set(other_suite, "b")}, {}),
                 MergeError);
    FakeSet other_hash = shard("silu");
    other_hash.suite_sha = "ffff";
    try {
        (void)merge_result_sets({parsed_set(shard("add"), "a"), parsed_set(other_hash, "b")}, {});
        FAIL();
    } catch (const MergeError &e) {
        EXPECT_NE(std::string(e.what()).find("different versions of suite 'quick'"), std::string::npos) << e.what();
    }
    EXPECT_THROW((void)merge_result_sets({parsed_set(shard("add"), "a"), parsed_set(shard("add"), "b")}, {}),
                 MergeError);
    FakeSet elsewhere = shard("silu");
    elsewhere.cpu_model = "Intel Xeon";
    EXPECT_THROW((void)merge_result_sets({parsed_set(shard("add"), "a"), parsed_set(elsewhere, "b")}, {}), MergeError);
    MergeOptions mixed;
    mixed.allow_mixed_machines = true;
    EXPECT_NO_THROW((void)merge_result_sets({parsed_set(shard("add"), "a"), parsed_set(elsewhere, "b")}, mixed));
    EXPECT_THROW((void)merge_result_sets({parsed_set(shard("add"), "a")}, {}), MergeError);
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
    const std::string whole = merge_error({part("add", 1, 2), parsed_set(shard("silu"), "whole.json")});
    EXPECT_NE(whole.find("whole.json is a whole run"), std::string::npos) << whole;
    // The whole split in one set (--shards 1) merges; a lone whole run does not.
    EXPECT_EQ(merge_error({part("add", 1, 1)}), "merged");
    EXPECT_NE(merge_error({parsed_set(shard("add"), "a")}).find("at least two"), std::string::npos);
}

TEST(Merge, ADifferentMachineNamesTheShard) {
    nlohmann::json j = fake_set_json(shard("silu"));
    j["context"]["opbench"]["shard"] = {{"index", 2}, {"count", 2}};
    j["context"]["opbench"]["machine"]["cpu_model"] = "Intel Xeon";
    const std::string e = merge_error({part("add", 1, 2), parse_result_set(j.dump(), "shard-2.json")});
    EXPECT_NE(e.find("shard 2/2 (shard-2.json) was measured on machine intel-xeon"), std::string::npos) << e;
    EXPECT_NE(e.find("--allow-mixed-machines"), std::string::npos) << e;
}

// Issue 44: a merge started while shard 2 of 3 runs (its --out still the
// empty file the run reserved, its journal locked) and before shard 3 has
// a file said only "shard-2.json: is empty; expected a JSON file". Now one
// message names shard 2/3 as still running and shard 3/3 as missing; once
// the run is gone (killed), the same file is named as stopped, with the
// resume command.
TEST(Merge, AnEarlyMergeNamesTheRunningShardAndTheMissingOne) {
    TempDir dir;
    const std::string one = part_file(dir, "add", 1, 3);
    const std::string two = (dir.path / "shard-2.json").string();
    std::ofstream(two).close(); // the run's reservation
    journal_file(two, 2, 3, 4);
    {
        LiveRun live(two);
        const std::string e = merge_error(read_merge_inputs({one, two}));
        EXPECT_NE(e.find("shard 2/3 (" + two + ") is incomplete: still running (a run holds its journal, 4 entries"),
                  std::string::npos)
            << e;
        EXPECT_NE(e.find("shard 3/3 missing (given: 1/3 " + one + ", 2/3 " + two + ")"), std::string::npos) << e;
        EXPECT_NE(e.find("opbench run suites/quick.toml --shard 3/3"), std::string::npos) << e;
        EXPECT_NE(e.find("if --benchmark_filter=add|silu leaves it no case"), std::string::npos) << e;
        EXPECT_LT(e.find("shard 2/3"), e.find("shard 3/3")) << e; // a line each, in shard order
    }
    const std::string e = merge_error(read_merge_inputs({one, two}));
    EXPECT_NE(e.find("shard 2/3 (" + two + ") is incomplete: its run stopped before writing it"), std::string::npos)
        << e;
    EXPECT_NE(e.find("`opbench run --resume " + two + "`"), std::string::npos) << e;
}

// An incomplete set whose journal a run holds again (a shard requeued and
// resumed) is still running, not interrupted.
TEST(Merge, AResumedShardStillGoingIsNamedAsRunning) {
    TempDir dir;
    const std::string one = part_file(dir, "add", 1, 2), two = part_file(dir, "silu", 2, 2, false);
    journal_file(two, 2, 2, 1);
    LiveRun live(two);
    const std::string e = merge_error(read_merge_inputs({one, two}));
    EXPECT_NE(e.find("shard 2/2 (" + two + ") is incomplete: still running, resumed"), std::string::npos) << e;
}

// Without a journal a file says nothing of its shard: named by its path,
// as absent or empty; a non-empty file that is not a set is refused as
// before (ResultSetError), and complete shards merge from files.
TEST(Merge, AnAbsentOrEmptyFileIsNamedAndABrokenOneRefused) {
    TempDir dir;
    const std::string one = part_file(dir, "add", 1, 2), two = part_file(dir, "silu", 2, 2);
    EXPECT_EQ(merge_error(read_merge_inputs({one, two})), "merged");
    const std::string absent = (dir.path / "shard-3.json").string(), empty = (dir.path / "empty.json").string();
    std::ofstream(empty).close();
    const std::string e = merge_error(read_merge_inputs({one, absent, empty}));
    EXPECT_NE(e.find(absent + " does not exist"), std::string::npos) << e;
    EXPECT_NE(e.find(empty + " is empty and has no journal"), std::string::npos) << e;
    EXPECT_NE(e.find("shard 2/2 missing"), std::string::npos) << e;
    const std::string broken = (dir.path / "broken.json").string();
    std::ofstream(broken) << "{\"benchmarks\": [";
    EXPECT_THROW((void)read_merge_inputs({one, broken}), ResultSetError);
}
