// `opbench ab`'s order of repetitions (ABBA, BAAB, ... blocks, one pool per
// block in turn) and the pairs read back from the records that order left
// (run/abba_schedule.hpp): a starved or throttled repetition spoils only its
// block, an interrupted last block is no pair; a case with no pair left is
// starved or throttled, one with some blocks left out says how many.
#include "run/abba_schedule.hpp"

#include "measure/paired_stats.hpp"
#include "run/paired_console.hpp"

#include <gtest/gtest.h>

#include <string>

namespace opbench {
namespace {

std::string order_of(const std::vector<AbbaStep> &steps) {
    std::string s;
    for (const auto &st : steps) s += st.side == PairSide::base ? 'A' : 'B';
    return s;
}

RepetitionRecord rep(double median, bool starved = false, bool throttled = false) {
    RepetitionRecord r;
    r.summary.median = median;
    r.starved = starved;
    r.throttled = throttled;
    return r;
}

RepetitionRecord throttled_rep(double median) { return rep(median, false, true); }

TEST(AbbaSchedule, AlternatesAbbaAndBaabOverThePools) {
    const auto steps = abba_schedule(3, 2);
    EXPECT_EQ(order_of(steps), "ABBABAABABBA");
    for (std::size_t k = 0; k < steps.size(); ++k) {
        EXPECT_EQ(steps[k].block, k / 4);
        EXPECT_EQ(steps[k].pool, (k / 4) % 2);
    }
}

TEST(AbbaSchedule, EachSideHasTwoRepetitionsPerBlock) {
    const auto steps = abba_schedule(7, 4);
    ASSERT_EQ(steps.size(), 28u);
    for (std::size_t b = 0; b < 7; ++b) {
        int base = 0;
        for (std::size_t k = 4 * b; k < 4 * b + 4; ++k) base += steps[k].side == PairSide::base;
        EXPECT_EQ(base, 2) << "block " << b;
    }
}

TEST(PairedTimes, APairIsEachSidesMeanOverItsBlock) {
    const std::vector<RepetitionRecord> base = {rep(1.0), rep(3.0), rep(2.0), rep(2.0)};
    const std::vector<RepetitionRecord> next = {rep(4.0), rep(6.0), rep(1.0), rep(1.0)};
    const PairedTimes t = paired_times(base, next);
    EXPECT_EQ(t.base_times, (std::vector<double>{2.0, 2.0}));
    EXPECT_EQ(t.new_times, (std::vector<double>{5.0, 1.0}));
    EXPECT_EQ(t.pair_of_block, (std::vector<long>{0, 1}));
    EXPECT_EQ(t.starved_blocks, 0u);
}

TEST(PairedTimes, AStarvedRepetitionSpoilsOnlyItsBlock) {
    const std::vector<RepetitionRecord> base = {rep(1.0), rep(1.0, true), rep(2.0), rep(2.0)};
    const std::vector<RepetitionRecord> next = {rep(1.0), rep(1.0), rep(3.0), rep(3.0)};
    const PairedTimes t = paired_times(base, next);
    EXPECT_EQ(t.pair_of_block, (std::vector<long>{-1, 0}));
    EXPECT_EQ(t.starved_blocks, 1u);
    EXPECT_EQ(t.base_times, (std::vector<double>{2.0}));
    EXPECT_EQ(t.new_times, (std::vector<double>{3.0}));
}

// Issue 41: a throttled repetition timed the device's fallen clock; its block
// is left out as a starved one is, and says so.
TEST(PairedTimes, AThrottledRepetitionSpoilsOnlyItsBlock) {
    const std::vector<RepetitionRecord> base = {rep(1.0), rep(1.0), rep(2.0), rep(2.0), rep(5.0), rep(5.0, true)};
    const std::vector<RepetitionRecord> next = {rep(1.0), throttled_rep(9.0), rep(3.0), rep(3.0), rep(5.0),
                                                throttled_rep(5.0)};
    const PairedTimes t = paired_times(base, next);
    EXPECT_EQ(t.pair_of_block, (std::vector<long>{-1, 0, -1}));
    EXPECT_EQ(t.left_out, (std::vector<std::string>{"throttled", "", "starved"}));
    EXPECT_EQ(t.throttled_blocks, 1u);
    EXPECT_EQ(t.starved_blocks, 1u); // starved and throttled: counted once, as starved
    EXPECT_EQ(t.base_times, (std::vector<double>{2.0}));
    EXPECT_EQ(t.new_times, (std::vector<double>{3.0}));
}

TEST(BlocksStatus, ACaseWhoseEveryBlockWasThrottledIsThrottledWithoutAPair) {
    const std::vector<RepetitionRecord> base = {rep(1.0), throttled_rep(1.0), throttled_rep(2.0), rep(2.0)};
    const std::vector<RepetitionRecord> next = {rep(1.0), rep(1.0), rep(3.0), rep(3.0)};
    const PairedTimes t = paired_times(base, next);
    EXPECT_TRUE(t.base_times.empty());
    const BlocksStatus s = blocks_status(t.base_times.size(), t.starved_blocks, t.throttled_blocks, 2);
    EXPECT_EQ(s.status, "throttled");
    EXPECT_NE(s.reason.find("every one of its 2 blocks had a throttled repetition"), std::string::npos) << s.reason;
    EXPECT_EQ(s.reason.find('\n'), std::string::npos); // one line
}

TEST(BlocksStatus, StarvedWhenEveryBlockStarvedAndPassedWhileAPairIsLeft) {
    EXPECT_EQ(blocks_status(0, 3, 0, 2).status, "starved");
    EXPECT_NE(blocks_status(0, 3, 0, 2).reason.find("after 2 more tries"), std::string::npos);
    EXPECT_EQ(blocks_status(0, 1, 2, 2).status, "starved"); // some starved: the machine, not only the clock
    EXPECT_EQ(blocks_status(1, 3, 4, 2).status, "passed");
    EXPECT_EQ(blocks_status(1, 3, 4, 2).reason, "");
    EXPECT_EQ(blocks_status(0, 0, 0, 2).status, "passed"); // nothing measured: not this rule's to judge
}

TEST(BlocksStatus, ACaseWithSomeBlocksLeftOutSaysHowMany) {
    EXPECT_EQ(left_out_note(60, 0, 2), "2 of 60 blocks left out (2 throttled)");
    EXPECT_EQ(left_out_note(60, 1, 2), "3 of 60 blocks left out (1 starved, 2 throttled)");
    EXPECT_EQ(left_out_note(60, 1, 0), "1 of 60 blocks left out (1 starved)");
    EXPECT_EQ(left_out_note(60, 0, 0), "");
}

TEST(PairedConsole, AThrottledCaseHasNoRatioAndACompareCaseSaysWhatWasLeftOut) {
    PairedCaseResult throttled;
    throttled.label = "softmax/R:4/case:rows";
    const BlocksStatus s = blocks_status(0, 0, 6, 2);
    throttled.status = s.status, throttled.reason = s.reason;
    const std::string row = paired_console_row(throttled);
    EXPECT_NE(row.find(" throttled:\n"), std::string::npos) << row;
    for (const char *verdict : {"same", "slower", "faster", "noisy"}) EXPECT_EQ(row.find(verdict), std::string::npos);
    PairedCaseResult partly;
    partly.label = "gelu/case:x";
    partly.base_times = partly.new_times = {1e-6, 1e-6, 1e-6, 1e-6, 1e-6, 1e-6};
    partly.verdict.verdict = "same";
    partly.left_out = left_out_note(8, 0, 2);
    const std::string compared = paired_console_row(partly);
    EXPECT_NE(compared.find("\n    2 of 8 blocks left out (2 throttled)\n"), std::string::npos) << compared;
    PairedSummary summary;
    summary.cases = {throttled, partly};
    const std::string line = paired_summary_line(summary, PairedRunOptions{});
    EXPECT_NE(line.find("1 not compared: 1 throttled"), std::string::npos) << line;
    for (const std::string &text : {row, compared, line})
        for (std::size_t at = 0, next; at < text.size(); at = next + 1) {
            next = text.find('\n', at);
            if (next == std::string::npos) next = text.size();
            EXPECT_LE(next - at, 100u) << text.substr(at, next - at);
        }
}

TEST(PairedTimes, AnUnfinishedBlockIsNoPair) {
    // Interrupted after three of the second block's four repetitions.
    const std::vector<RepetitionRecord> base = {rep(1.0), rep(1.0), rep(1.0)};
    const std::vector<RepetitionRecord> next = {rep(2.0), rep(2.0), rep(2.0), rep(2.0)};
    const PairedTimes t = paired_times(base, next);
    EXPECT_EQ(t.blocks(), 1u);
    EXPECT_EQ(t.base_times.size(), 1u);
}

} // namespace
} // namespace opbench
