// The paired A/B statistic (harness/measure/paired_stats.hpp): Wilcoxon's
// signed-rank test on hand-computed data (the values SciPy's
// scipy.stats.wilcoxon(d, correction=True, method="approx") gives), the
// Hodges-Lehmann estimate and interval, and the verdict rule on pairs
// whose both sides drift together by 2x.
#include "measure/paired_stats.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <stdexcept>
#include <vector>

using namespace opbench;

// d = 1..10 with 7 negative: W- = 7, W+ = 48; n = 10, mean 27.5, variance
// 96.25; z = (48 - 27.5 - 0.5) / sqrt(96.25); p = erfc(z / sqrt 2) = 0.0414911.
TEST(SignedRank, HandComputedExample) {
    const std::vector<double> d = {1, 2, 3, 4, 5, 6, -7, 8, 9, 10};
    const SignedRankResult r = wilcoxon_signed_rank(d);
    EXPECT_EQ(r.n, 10u);
    EXPECT_DOUBLE_EQ(r.w_plus, 48);
    EXPECT_DOUBLE_EQ(r.w_minus, 7);
    EXPECT_NEAR(r.p_value, 0.04149108738773157, 1e-12);
    EXPECT_GT(r.z, 0);
}

// Zeros dropped, ties averaged: |d| ranks 1.5 1.5 | 3 | 5 5 5 | 7; W+ = 18,
// W- = 10; variance 7*8*15/24 - (6 + 24)/48 = 34.375; p = 0.5505327.
TEST(SignedRank, TiesAndZeros) {
    const std::vector<double> d = {1, 1, -2, 3, 3, 3, -4, 0};
    const SignedRankResult r = wilcoxon_signed_rank(d);
    EXPECT_EQ(r.n, 7u);
    EXPECT_DOUBLE_EQ(r.w_plus, 18);
    EXPECT_DOUBLE_EQ(r.w_minus, 10);
    EXPECT_NEAR(r.p_value, 0.5505327476074469, 1e-12);
}

TEST(SignedRank, SymmetricInSign) {
    const std::vector<double> d = {1, 2, 3, 4, 5, 6, -7, 8, 9, 10};
    std::vector<double> neg;
    for (double v : d) neg.push_back(-v);
    EXPECT_DOUBLE_EQ(wilcoxon_signed_rank(d).p_value, wilcoxon_signed_rank(neg).p_value);
    EXPECT_LT(wilcoxon_signed_rank(neg).z, 0);
}

TEST(SignedRank, NothingToTest) {
    EXPECT_EQ(wilcoxon_signed_rank(std::vector<double>{}).p_value, 1);
    EXPECT_EQ(wilcoxon_signed_rank(std::vector<double>{0, 0, 0}).p_value, 1);
    EXPECT_THROW((void)wilcoxon_signed_rank(std::vector<double>{1, NAN}), std::invalid_argument);
}

// Walsh averages of the same d: 55 of them, median 4.5; the 95% interval
// from the 8th smallest to the 8th largest (k = floor(27.5 - 1.96 * 9.81) = 8): 0.5 .. 7.5.
TEST(HodgesLehmann, HandComputedExample) {
    const std::vector<double> d = {1, 2, 3, 4, 5, 6, -7, 8, 9, 10};
    const ShiftEstimate e = hodges_lehmann(d);
    EXPECT_DOUBLE_EQ(e.estimate, 4.5);
    EXPECT_DOUBLE_EQ(e.low, 0.5);
    EXPECT_DOUBLE_EQ(e.high, 7.5);
}

// The machine's speed drifts 2x over the run (a sawtooth) and each pair
// has 1% noise on each side: both sides move together, so the paired
// verdict still sees a 5% slowdown, and an A/A pair stays same.
struct DriftingPairs {
    std::vector<double> base, next;
};
DriftingPairs drifting(double slowdown, unsigned seed, int pairs = 16) {
    std::mt19937 rng(seed);
    std::normal_distribution<double> noise(0, 0.01);
    DriftingPairs p;
    for (int i = 0; i < pairs; ++i) {
        const double speed = 1.0 + double(i % 8) / 7.0; // 1x .. 2x
        p.base.push_back(40e-6 * speed * (1 + noise(rng)));
        p.next.push_back(40e-6 * speed * slowdown * (1 + noise(rng)));
    }
    return p;
}

TEST(PairedVerdict, FindsFivePercentUnderTwofoldDrift) {
    for (unsigned seed = 1; seed <= 20; ++seed) {
        const DriftingPairs p = drifting(1.05, seed);
        const PairedVerdict v = paired_verdict(p.base, p.next, PairedOptions{});
        EXPECT_EQ(v.verdict, "slower") << "seed " << seed;
        EXPECT_NEAR(v.ratio, 1.05, 0.01);
        EXPECT_LT(v.ratio_low, v.ratio);
        EXPECT_GT(v.ratio_high, v.ratio);
    }
}

TEST(PairedVerdict, SameUnderTwofoldDrift) {
    int same = 0;
    for (unsigned seed = 1; seed <= 20; ++seed) {
        const DriftingPairs p = drifting(1.0, seed);
        same += paired_verdict(p.base, p.next, PairedOptions{}).verdict == "same";
    }
    EXPECT_EQ(same, 20);
}

TEST(PairedVerdict, FasterAndThreshold) {
    const DriftingPairs p = drifting(0.9, 7);
    EXPECT_EQ(paired_verdict(p.base, p.next, PairedOptions{}).verdict, "faster");
    // A 10% change under a 15% threshold is same.
    EXPECT_EQ(paired_verdict(p.base, p.next, PairedOptions{0.15, 0.05}).verdict, "same");
}

// Too few pairs to reach alpha, or a change that is not consistent: noisy.
TEST(PairedVerdict, NoisyWhenNotSignificant) {
    const std::vector<double> base = {1, 1, 1, 1, 1, 1, 1, 1};
    const std::vector<double> next = {1.3, 0.8, 1.25, 0.85, 1.3, 0.9, 1.2, 1.1};
    EXPECT_EQ(paired_verdict(base, next, PairedOptions{}).verdict, "noisy");
    const std::vector<double> b3 = {1, 1, 1}, n3 = {1.2, 1.2, 1.2};
    EXPECT_EQ(paired_verdict(b3, n3, PairedOptions{}).verdict, "noisy");
    EXPECT_THROW((void)paired_verdict(b3, base, PairedOptions{}), std::invalid_argument);
}
