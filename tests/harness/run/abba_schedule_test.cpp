// `opbench ab`'s order of repetitions (ABBA, BAAB, ... blocks, one pool per
// block in turn) and the pairs read back from the records that order left
// (run/abba_schedule.hpp): a starved repetition spoils only its block, an
// interrupted last block is no pair.
#include "run/abba_schedule.hpp"

#include <gtest/gtest.h>

#include <string>

namespace opbench {
namespace {

std::string order_of(const std::vector<AbbaStep> &steps) {
    std::string s;
    for (const auto &st : steps) s += st.side == PairSide::base ? 'A' : 'B';
    return s;
}

RepetitionRecord rep(double median, bool starved = false) {
    RepetitionRecord r;
    r.summary.median = median;
    r.starved = starved;
    return r;
}

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
