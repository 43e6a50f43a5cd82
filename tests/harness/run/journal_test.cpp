// Tests of harness/journal: finished cases survive in a JSON-lines file that
// a resumed run reads back, a torn last line is ignored, and a file that is
// not a journal is refused with its path and line.
#include "run/journal.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>

using namespace opbench;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

class JournalTest : public ::testing::Test {
protected:
    void SetUp() override {
        char tmpl[] = "/tmp/opbench-journal-test-XXXXXX";
        ASSERT_NE(::mkdtemp(tmpl), nullptr);
        dir_ = tmpl;
    }
    void TearDown() override { fs::remove_all(dir_); }
    std::string at(const std::string &name) const { return (fs::path(dir_) / name).string(); }
    static std::string slurp(const std::string &path) {
        std::ifstream in(path);
        return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    }
    std::string dir_;
};

TEST_F(JournalTest, SitsBesideTheResultSet) {
    EXPECT_EQ(journal_path_for("results/quick-1.json"), "results/quick-1.json.journal");
}

TEST_F(JournalTest, KeepsTheHeaderAndEveryEntryInOrder) {
    const std::string path = at("r.json.journal");
    {
        Journal j = Journal::create(path, json{{"suite", "quick.toml"}, {"sha256", "ab"}});
        j.append(json{{"name", "add/rows:1/be:naive"}, {"status", "passed"}});
        j.append(
            json{{"name", "add/rows:2/be:naive"}, {"status", "failed"}, {"reason", "crashed: SIGSEGV in execute"}});
    }
    JournalContents c = read_journal(path);
    EXPECT_EQ(c.header, (json{{"suite", "quick.toml"}, {"sha256", "ab"}}));
    ASSERT_EQ(c.entries.size(), 2u);
    EXPECT_EQ(c.entries[0]["name"], "add/rows:1/be:naive");
    EXPECT_EQ(c.entries[1]["reason"], "crashed: SIGSEGV in execute");
    EXPECT_FALSE(c.torn_tail);
    EXPECT_TRUE(looks_like_journal(path));
}

TEST_F(JournalTest, EachEntryIsOnDiskWhenAppendReturns) {
    const std::string path = at("r.json.journal");
    Journal j = Journal::create(path, json{{"suite", "s"}});
    j.append(json{{"name", "one"}});
    // Read by another reader while the journal is still open: nothing buffered.
    EXPECT_EQ(read_journal(path).entries.size(), 1u);
    j.append(json{{"name", "two"}});
    EXPECT_EQ(read_journal(path).entries.size(), 2u);
}

TEST_F(JournalTest, RefusesToStartOverAnExistingJournal) {
    const std::string path = at("r.json.journal");
    { Journal j = Journal::create(path, json{{"suite", "s"}}); }
    try {
        Journal again = Journal::create(path, json{{"suite", "s"}});
        FAIL() << "an existing journal was replaced";
    } catch (const JournalError &e) {
        EXPECT_NE(std::string(e.what()).find("--resume"), std::string::npos) << e.what();
    }
}

TEST_F(JournalTest, ATornLastLineIsIgnoredAndCutOffOnReopen) {
    const std::string path = at("r.json.journal");
    {
        Journal j = Journal::create(path, json{{"suite", "s"}});
        j.append(json{{"name", "done"}});
    }
    { std::ofstream(path, std::ios::app) << R"({"name": "half-writ)"; }
    JournalContents c = read_journal(path);
    EXPECT_TRUE(c.torn_tail);
    ASSERT_EQ(c.entries.size(), 1u);
    {
        Journal j = Journal::reopen(path);
        j.append(json{{"name", "after resume"}});
    }
    JournalContents after = read_journal(path);
    EXPECT_FALSE(after.torn_tail);
    ASSERT_EQ(after.entries.size(), 2u);
    EXPECT_EQ(after.entries[1]["name"], "after resume");
}

// A damaged line before the last is named with its line number and dropped
// (its case runs again), not trusted; the lines around it are kept.
TEST_F(JournalTest, DamageBeforeTheLastLineIsDroppedAndNamedWithItsLine) {
    const std::string path = at("bad.journal");
    std::ofstream(path) << R"({"opbench_journal": 1, "suite": "s"})"
                           "\n"
                           R"({"name": "a"})"
                           "\n"
                           "garbage\n"
                        << R"({"name": "b"})"
                           "\n";
    const JournalContents c = read_journal(path);
    ASSERT_EQ(c.dropped.size(), 1u);
    EXPECT_NE(c.dropped[0].find(path + ":3: not a JSON object"), std::string::npos) << c.dropped[0];
    ASSERT_EQ(c.entries.size(), 2u);
    EXPECT_EQ(c.entries[1]["name"], "b");
}

// A damaged first line is no journal at all.
TEST_F(JournalTest, ADamagedFirstLineIsAnError) {
    const std::string path = at("bad1.journal");
    std::ofstream(path) << "garbage\n"
                        << R"({"name": "b"})"
                           "\n";
    try {
        (void)read_journal(path);
        FAIL();
    } catch (const JournalError &e) {
        EXPECT_NE(std::string(e.what()).find(path + ":1:"), std::string::npos) << e.what();
    }
}

TEST_F(JournalTest, AResultSetIsNotAJournal) {
    const std::string path = at("r.json");
    std::ofstream(path) << R"({"context": {}, "benchmarks": []})"
                           "\n";
    EXPECT_FALSE(looks_like_journal(path));
    EXPECT_THROW((void)read_journal(path), JournalError);
    EXPECT_FALSE(looks_like_journal(at("missing")));
}

TEST_F(JournalTest, AnotherVersionIsRefused) {
    const std::string path = at("v2.journal");
    std::ofstream(path) << R"({"opbench_journal": 2})"
                           "\n";
    try {
        (void)read_journal(path);
        FAIL();
    } catch (const JournalError &e) {
        EXPECT_NE(std::string(e.what()).find("version 2"), std::string::npos) << e.what();
    }
}

TEST_F(JournalTest, NamesWithInvalidUtf8StillJournal) {
    const std::string path = at("r.json.journal");
    Journal j = Journal::create(path, json{{"suite", "s"}});
    j.append(json{{"name", std::string("bad\xff"
                                       "byte")}});
    EXPECT_EQ(read_journal(path).entries.size(), 1u);
}

TEST_F(JournalTest, RemoveDeletesTheFile) {
    const std::string path = at("r.json.journal");
    Journal j = Journal::create(path, json{{"suite", "s"}});
    j.remove();
    EXPECT_FALSE(fs::exists(path));
    EXPECT_THROW(j.append(json{{"name", "late"}}), JournalError);
}

} // namespace
