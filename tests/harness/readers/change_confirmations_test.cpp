// Confirmations of change points (issue 43, item 3): confirmation_of()
// matches a change by its case and backend and by the two commits, given in
// full or abbreviated to 7 characters or more, the newest record winning;
// read_change_confirmations() reads none from an archive without the file
// and names the file and field of a broken one.
#include "readers/archive.hpp"
#include "readers/change_confirmations.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <unistd.h>

using namespace opbench;

namespace {

Confirmation confirmed(const std::string &before, const std::string &after, const std::string &verdict) {
    Confirmation c;
    c.backend = "naive";
    c.case_name = "add/R:8";
    c.last_before = before;
    c.first_after = after;
    c.verdict = verdict;
    return c;
}

const std::string kBefore = "0123456789abcdef", kAfter = "fedcba9876543210";

TEST(ChangeConfirmations, MatchesCaseBackendAndBothCommits) {
    const std::vector<Confirmation> all{confirmed(kBefore, kAfter, "slower")};
    ASSERT_TRUE(confirmation_of(all, "add/R:8 [naive]", kBefore, kAfter));
    EXPECT_EQ(confirmation_of(all, "add/R:8 [naive]", kBefore, kAfter)->verdict, "slower");
    EXPECT_FALSE(confirmation_of(all, "add/R:8 [onednn]", kBefore, kAfter));   // another backend
    EXPECT_FALSE(confirmation_of(all, "add/R:16 [naive]", kBefore, kAfter));   // another case
    EXPECT_FALSE(confirmation_of(all, "add/R:8 [naive]", kAfter, kBefore));    // the commits swapped
    EXPECT_FALSE(confirmation_of(all, "add/R:8 [naive]", kBefore, "0000000")); // another change
}

TEST(ChangeConfirmations, AbbreviatedCommitsOfSevenOrMore) {
    EXPECT_TRUE(confirmation_of({confirmed("0123456", "fedcba98", "same")}, "add/R:8 [naive]", kBefore, kAfter));
    // Fewer than 7 characters name too many commits: only an exact match.
    EXPECT_FALSE(confirmation_of({confirmed("012345", kAfter, "same")}, "add/R:8 [naive]", kBefore, kAfter));
    EXPECT_FALSE(confirmation_of({confirmed("", kAfter, "same")}, "add/R:8 [naive]", kBefore, kAfter));
}

TEST(ChangeConfirmations, TheNewestRecordWins) {
    const std::vector<Confirmation> all{confirmed(kBefore, kAfter, "noisy"), confirmed(kBefore, kAfter, "slower")};
    EXPECT_EQ(confirmation_of(all, "add/R:8 [naive]", kBefore, kAfter)->verdict, "slower");
}

TEST(ChangeConfirmations, ReadsNoneOrNamesTheBrokenField) {
    const auto dir = std::filesystem::temp_directory_path() / ("opbench-confirmations-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    EXPECT_TRUE(read_change_confirmations(dir).empty());
    std::ofstream(dir / "confirmations.json")
        << R"({"schema_version": 1, "confirmations": [{"backend": "naive", "last_before": "a", "first_after": "b",
              "set": "s.json", "cases": [{"case": "add/R:8", "verdict": "slower", "ratio": 1.1,
              "ratio_ci95": [1.05, 1.15]}]}]})";
    const auto read = read_change_confirmations(dir);
    ASSERT_EQ(read.size(), 1u);
    EXPECT_EQ(read[0].verdict, "slower");
    EXPECT_DOUBLE_EQ(read[0].ratio_high, 1.15);
    std::ofstream(dir / "confirmations.json") << R"({"schema_version": 1, "confirmations": [{"backend": "naive",
        "last_before": "a", "first_after": "b", "set": "s.json", "cases": [{"case": 7}]}]})";
    try {
        (void)read_change_confirmations(dir);
        ADD_FAILURE() << "a case without a name was read";
    } catch (const ArchiveError &e) {
        EXPECT_NE(std::string(e.what()).find("confirmations.json: confirmations[0].cases[0]"), std::string::npos)
            << e.what();
    }
    std::filesystem::remove_all(dir);
}

} // namespace
