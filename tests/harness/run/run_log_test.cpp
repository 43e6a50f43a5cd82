// Tests of harness/run_log: a result set can be made at any moment from what
// finished, in planned order; the journal mirrors every record, so a resumed
// run starts from exactly what the interrupted one had.
#include "run/run_log.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

using namespace opbench;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

class RunLogTest : public ::testing::Test {
protected:
    void SetUp() override {
        char tmpl[] = "/tmp/opbench-runlog-test-XXXXXX";
        ASSERT_NE(::mkdtemp(tmpl), nullptr);
        dir_ = tmpl;
        journal_ = (fs::path(dir_) / "r.json.journal").string();
    }
    void TearDown() override { fs::remove_all(dir_); }
    std::string dir_, journal_;
};

std::vector<json> entries_of(const std::string &name, int reps) {
    std::vector<json> e;
    for (int i = 0; i < reps; ++i) e.push_back(json{{"name", name + "/manual_time"}, {"repetition_index", i}});
    return e;
}

TEST_F(RunLogTest, MakesAResultSetOfWhatFinishedInPlannedOrder) {
    RunLog log(json{{"suite", "quick.toml"}}, std::nullopt);
    log.set_gb_context(json{{"num_cpus", 2}});
    log.set_opbench_context(json{{"schema_version", 1}});
    log.add_case(2, "c", "failed", entries_of("c", 1));
    log.add_case(0, "a", "passed", entries_of("a", 2));
    json rs = log.result_set(false);
    EXPECT_EQ(rs["context"]["num_cpus"], 2);
    EXPECT_EQ(rs["context"]["opbench"]["schema_version"], 1);
    EXPECT_EQ(rs["context"]["opbench"]["complete"], false);
    EXPECT_FALSE(rs["context"]["opbench"].contains("journal")) << "no journal without --out";
    ASSERT_EQ(rs["benchmarks"].size(), 3u);
    EXPECT_EQ(rs["benchmarks"][0]["name"], "a/manual_time");
    EXPECT_EQ(rs["benchmarks"][2]["name"], "c/manual_time");
    EXPECT_EQ(log.result_set(true)["context"]["opbench"]["complete"], true);
    EXPECT_EQ(log.counts(), (std::map<std::string, int>{{"failed", 1}, {"passed", 1}}));
    EXPECT_TRUE(log.has_case("a"));
    EXPECT_FALSE(log.has_case("b"));
}

TEST_F(RunLogTest, AResumedLogHoldsWhatTheJournalHad) {
    json before;
    {
        RunLog log(json{{"suite", "quick.toml"}, {"out", "r.json"}}, journal_);
        log.set_gb_context(json{{"num_cpus", 2}});
        log.set_opbench_context(json{{"schema_version", 1}});
        log.add_case(0, "a", "passed", entries_of("a", 2));
        log.add_case(1, "b", "skipped", entries_of("b", 1));
        before = log.result_set(false);
        EXPECT_EQ(before["context"]["opbench"]["journal"], journal_);
    } // the process ends here (interrupted): the journal stays
    ASSERT_TRUE(fs::exists(journal_));

    std::unique_ptr<RunLog> log = RunLog::resume(journal_);
    EXPECT_EQ(log->header()["suite"], "quick.toml");
    EXPECT_EQ(log->resumptions(), 1);
    json restored = log->result_set(false);
    EXPECT_EQ(restored["benchmarks"], before["benchmarks"]);
    EXPECT_EQ(restored["context"]["num_cpus"], 2);
    EXPECT_EQ(restored["context"]["opbench"]["resumed_at"].size(), 1u);

    log->add_case(2, "c", "passed", entries_of("c", 1));
    json done = log->result_set(true);
    EXPECT_EQ(done["benchmarks"].size(), 4u);
    EXPECT_FALSE(done["context"]["opbench"].contains("journal"));
    log->finish();
    EXPECT_FALSE(fs::exists(journal_)) << "the journal goes once the complete set is written";
}

TEST_F(RunLogTest, ACaseRecordedTwiceKeepsTheLaterRecord) {
    {
        RunLog log(json::object(), journal_);
        log.add_case(0, "a", "failed", entries_of("a", 1));
        log.add_case(0, "a", "passed", entries_of("a", 3));
        EXPECT_EQ(log.result_set(true)["benchmarks"].size(), 3u);
    } // the run ends: its journal is no longer locked
    EXPECT_EQ(RunLog::resume(journal_)->counts(), (std::map<std::string, int>{{"passed", 1}}));
}

// Issue 32: a journal a live run holds (its flock) is not an interrupted
// run's; resuming it would measure the same cases twice.
TEST_F(RunLogTest, AJournalALiveRunHoldsIsNotResumed) {
    RunLog log(json::object(), journal_);
    log.add_case(0, "a", "passed", entries_of("a", 1));
    EXPECT_TRUE(journal_is_live(journal_));
    EXPECT_THROW(RunLog::resume(journal_), JournalError);
}

TEST_F(RunLogTest, EveryRecordIsInTheJournalWhenAddReturns) {
    RunLog log(json{{"suite", "s"}}, journal_);
    log.add_case(0, "a", "passed", entries_of("a", 1));
    // Another process (a resume after a SIGKILL) would see it now.
    JournalContents c = read_journal(journal_);
    ASSERT_EQ(c.entries.size(), 1u);
    EXPECT_EQ(c.entries[0]["case"], "a");
}

TEST_F(RunLogTest, AJournalFromAnotherRunIsNotOverwritten) {
    { RunLog first(json{{"suite", "s"}}, journal_); }
    EXPECT_THROW(RunLog(json{{"suite", "s"}}, journal_), JournalError);
}

TEST_F(RunLogTest, ResumeFindsTheJournalFromAnIncompleteResultSet) {
    const std::string out = (fs::path(dir_) / "r.json").string();
    RunLog log(json{{"suite", "s"}}, journal_);
    std::ofstream(out) << log.result_set(false).dump();
    EXPECT_EQ(journal_to_resume(out), journal_);
    EXPECT_EQ(journal_to_resume(journal_), journal_) << "the journal itself is accepted too";

    // A complete set with an unfinished run's journal beside it: an earlier
    // set that --force was about to replace when the run was killed. The
    // journal is what resumes.
    std::ofstream(out) << log.result_set(true).dump();
    EXPECT_EQ(journal_to_resume(out), journal_);
    std::ofstream(out) << log.result_set(false).dump();
    log.finish(); // the journal is gone
    EXPECT_THROW((void)journal_to_resume(out), JournalError);
    std::ofstream(out) << log.result_set(true).dump();
    try {
        (void)journal_to_resume(out);
        FAIL() << "a complete result set was resumed";
    } catch (const JournalError &e) {
        EXPECT_NE(std::string(e.what()).find("complete"), std::string::npos) << e.what();
    }
    std::ofstream(out) << "[1, 2]";
    EXPECT_THROW((void)journal_to_resume(out), JournalError);
}

// Hand-damaged journal lines used to yield a set marked complete without
// their cases. Now each line that fails validation is named with its line
// number and dropped, so its case is not finished and runs again.
TEST_F(RunLogTest, DamagedJournalLinesAreNamedAndTheirCasesRunAgain) {
    {
        RunLog log(json{{"suite", "s"}}, journal_);
        log.add_case(0, "a", "passed", entries_of("a", 2));
        log.add_case(1, "b", "passed", entries_of("b", 2));
    }
    std::ofstream(journal_, std::ios::app) << "garbage\n"
                                           << R"({"case": 5, "status": "passed", "entries": []})"
                                           << "\n"
                                           << R"({"case": "c", "status": "passed", "entries": []})"
                                           << "\n"
                                           << R"({"case": "d", "status": "great", "entries": [{"name": "d"}]})"
                                           << "\n";
    const JournalContents c = read_journal(journal_);
    ASSERT_EQ(c.dropped.size(), 4u);
    EXPECT_NE(c.dropped[0].find(journal_ + ":4: not a JSON object"), std::string::npos) << c.dropped[0];
    EXPECT_NE(c.dropped[1].find(":5: \"case\" is not a name"), std::string::npos) << c.dropped[1];
    EXPECT_NE(c.dropped[2].find(":6: no \"entries\""), std::string::npos) << c.dropped[2];
    EXPECT_NE(c.dropped[3].find(":7: \"status\" is 'great'"), std::string::npos) << c.dropped[3];
    const auto resumed = RunLog::resume(journal_);
    EXPECT_TRUE(resumed->has_case("a"));
    EXPECT_TRUE(resumed->has_case("b"));
    EXPECT_FALSE(resumed->has_case("c")) << "a damaged case line is not a finished case";
    EXPECT_FALSE(resumed->has_case("d"));
}

// A run killed (SIGKILL) before it wrote a result set leaves its empty --out
// reservation and the journal beside it: --resume on the result path works.
TEST_F(RunLogTest, TheEmptyReservationOfAKilledRunResumesFromTheJournalBesideIt) {
    const std::string out = (fs::path(dir_) / "r.json").string();
    RunLog log(json{{"suite", "s"}}, journal_);
    std::ofstream(out).flush();
    EXPECT_EQ(journal_to_resume(out), journal_);
    log.finish();
    EXPECT_THROW((void)journal_to_resume(out), JournalError) << "no journal beside it: nothing to resume";
}

} // namespace

// Issue 32: a resumed journal's cases are checked against the run's own; an
// unknown case, another case's entries, a negative time or entries cut below
// their repetitions are forgotten (and measured again), the rest kept.
TEST(RunLogResume, ForgetsCasesThatAreNotTheRunsOwn) {
    auto reps = [](const std::string &name, int n, int recorded) {
        std::vector<json> e = entries_of(name, n);
        for (auto &x : e) {
            x["run_type"] = "iteration";
            x["repetitions"] = recorded;
            x["real_time"] = 1.5;
        }
        return e;
    };
    RunLog log(json::object(), std::nullopt);
    log.add_case(0, "a", "passed", reps("a", 2, 2));
    log.add_case(1, "b", "passed", reps("a", 2, 2));  // another case's entries
    auto negative = reps("c", 2, 2);
    negative[0]["real_time"] = -5;
    log.add_case(2, "c", "passed", negative);
    log.add_case(3, "d", "passed", reps("d", 1, 2));  // cut to one repetition
    log.add_case(4, "zz", "passed", reps("zz", 2, 2)); // not a case of this run
    const std::vector<std::string> why = log.forget_unplanned({"a", "b", "c", "d"});
    ASSERT_EQ(why.size(), 4u);
    EXPECT_NE(why[0].find("b: carries the entry 'a/manual_time'"), std::string::npos) << why[0];
    EXPECT_NE(why[1].find("real_time -5"), std::string::npos) << why[1];
    EXPECT_NE(why[2].find("has 1 of its 2 repetitions"), std::string::npos) << why[2];
    EXPECT_NE(why[3].find("zz: is not a case of this run"), std::string::npos) << why[3];
    EXPECT_TRUE(log.has_case("a"));
    EXPECT_FALSE(log.has_case("b"));
    EXPECT_EQ(log.counts(), (std::map<std::string, int>{{"passed", 1}}));
}

namespace {

// What the runner checks before calling a set complete (issue 32): every case
// the run was asked for has entries; a case logged with none counts as missing.
TEST_F(RunLogTest, NamesTheWantedCasesWithoutEntries) {
    RunLog log(json{{"suite", "quick.toml"}}, std::nullopt);
    log.add_case(0, "a", "passed", entries_of("a", 2));
    log.add_case(1, "b", "failed", {});
    EXPECT_EQ(log.without_entries({"a", "b", "c"}), (std::vector<std::string>{"b", "c"}));
    EXPECT_TRUE(log.without_entries({"a"}).empty());
    EXPECT_TRUE(log.without_entries({}).empty());
}

} // namespace
