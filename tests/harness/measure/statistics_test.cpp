// Tests for harness/measure/statistics.cpp: summaries and their edge cases, the
// median CI against an independent binomial computation, Tukey outliers, the
// NoiseCriterion stopping rule and batching arithmetic.
#include "measure/statistics.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <vector>

namespace opbench {
namespace {

TEST(Summarize, EmptyIsNaNWithInfiniteNoise) {
    const SampleSummary s = summarize({});
    EXPECT_EQ(s.n, 0u);
    EXPECT_TRUE(std::isnan(s.min));
    EXPECT_TRUE(std::isnan(s.median));
    EXPECT_TRUE(std::isnan(s.stddev));
    EXPECT_TRUE(std::isinf(s.noise));
    EXPECT_EQ(s.outliers_low + s.outliers_high, 0u);
}

TEST(Summarize, OneSampleIsEveryStatistic) {
    const std::vector<double> v{2.5};
    const SampleSummary s = summarize(v);
    EXPECT_EQ(s.n, 1u);
    for (double x : {s.min, s.max, s.mean, s.median, s.p90, s.p99}) EXPECT_DOUBLE_EQ(x, 2.5);
    EXPECT_EQ(s.stddev, 0.0);
    EXPECT_EQ(s.cv, 0.0);
    EXPECT_TRUE(std::isinf(s.noise)); // one sample says nothing about noise
    EXPECT_DOUBLE_EQ(s.median_ci_low, 2.5);
    EXPECT_DOUBLE_EQ(s.median_ci_high, 2.5);
}

TEST(Summarize, TwoSamplesInterpolate) {
    const std::vector<double> v{3.0, 1.0};
    const SampleSummary s = summarize(v);
    EXPECT_DOUBLE_EQ(s.min, 1.0);
    EXPECT_DOUBLE_EQ(s.max, 3.0);
    EXPECT_DOUBLE_EQ(s.median, 2.0);
    EXPECT_DOUBLE_EQ(s.p90, 2.8);
    EXPECT_DOUBLE_EQ(s.p99, 2.98);
    EXPECT_DOUBLE_EQ(s.stddev, std::sqrt(2.0));
    EXPECT_DOUBLE_EQ(s.cv, std::sqrt(2.0) / 2.0);
    EXPECT_TRUE(std::isinf(s.noise));
}

TEST(Summarize, KnownSampleMatchesHandComputedValues) {
    // 1..10: mean 5.5, sample variance 110/12, median 5.5, p90 = 9.1.
    std::vector<double> v;
    for (int i = 10; i >= 1; --i) v.push_back(i);
    const SampleSummary s = summarize(v);
    EXPECT_DOUBLE_EQ(s.mean, 5.5);
    EXPECT_DOUBLE_EQ(s.median, 5.5);
    EXPECT_DOUBLE_EQ(s.p90, 9.1);
    EXPECT_NEAR(s.stddev, std::sqrt(110.0 / 12.0), 1e-12);
    // n = 10: the 95% CI is [x(2), x(9)] = [2, 9], half-width 3.5.
    EXPECT_DOUBLE_EQ(s.median_ci_low, 2.0);
    EXPECT_DOUBLE_EQ(s.median_ci_high, 9.0);
    EXPECT_DOUBLE_EQ(s.noise, 3.5 / 5.5);
    EXPECT_EQ(s.outliers_low + s.outliers_high, 0u);
}

TEST(Summarize, IdenticalSamplesHaveZeroNoise) {
    const std::vector<double> v(50, 1e-6);
    const SampleSummary s = summarize(v);
    EXPECT_EQ(s.noise, 0.0);
    EXPECT_EQ(s.stddev, 0.0);
}

TEST(Percentile, LinearInterpolationBetweenClosestRanks) {
    const std::vector<double> v{1, 2, 3, 4};
    EXPECT_DOUBLE_EQ(percentile_sorted(v, 0.0), 1.0);
    EXPECT_DOUBLE_EQ(percentile_sorted(v, 0.25), 1.75);
    EXPECT_DOUBLE_EQ(percentile_sorted(v, 0.5), 2.5);
    EXPECT_DOUBLE_EQ(percentile_sorted(v, 1.0), 4.0);
    EXPECT_DOUBLE_EQ(percentile_sorted(v, 2.0), 4.0);  // clamped
    EXPECT_DOUBLE_EQ(percentile_sorted(v, -1.0), 1.0); // clamped
    EXPECT_TRUE(std::isnan(percentile_sorted({}, 0.5)));
}

TEST(Percentile, UnsortedInputIsSortedFirst) {
    const std::vector<double> v{4, 1, 3, 2};
    EXPECT_DOUBLE_EQ(percentile(v, 0.25), 1.75);
}

TEST(MedianCi, TooFewSamplesHaveNoInterval) {
    for (std::size_t n = 0; n < 6; ++n) EXPECT_EQ(median_ci_rank(n), 0u) << n;
    const std::vector<double> v{1, 2, 3, 4, 5};
    const MedianCi ci = median_ci(v);
    EXPECT_FALSE(ci.exists);
    EXPECT_DOUBLE_EQ(ci.low, 1.0);
    EXPECT_DOUBLE_EQ(ci.high, 5.0);
    EXPECT_TRUE(std::isinf(relative_half_width(ci, 3.0)));
}

TEST(MedianCi, RanksMatchPublishedTable) {
    EXPECT_EQ(median_ci_rank(6), 1u);
    EXPECT_EQ(median_ci_rank(10), 2u);
    EXPECT_EQ(median_ci_rank(20), 6u);
    EXPECT_EQ(median_ci_rank(100), 40u);
}

// Coverage from a binomial pmf computed by recurrence (not the log-gamma sum
// the implementation uses): the chosen rank reaches 95%, the next does not.
TEST(MedianCi, ExactRankIsTheTightestWith95PercentCoverage) {
    for (std::size_t n = 6; n <= 1000; n += (n < 60 ? 1 : 37)) {
        std::vector<double> cdf(n + 1);
        double pmf = std::pow(0.5, static_cast<double>(n));
        double acc = 0;
        for (std::size_t j = 0; j <= n; ++j) {
            acc += pmf;
            cdf[j] = acc;
            pmf = pmf * static_cast<double>(n - j) / static_cast<double>(j + 1);
        }
        const std::size_t k = median_ci_rank(n);
        ASSERT_GE(k, 1u) << n;
        EXPECT_GE(1 - 2 * cdf[k - 1], 0.95) << "n=" << n;
        EXPECT_LT(1 - 2 * cdf[k], 0.95) << "n=" << n;
    }
}

TEST(MedianCi, NormalApproximationAgreesWithExactAtTheSwitch) {
    const auto exact = static_cast<long>(median_ci_rank(1000));
    const auto approx = static_cast<long>(median_ci_rank(1001));
    EXPECT_LE(std::labs(exact - approx), 2);
    EXPECT_LT(median_ci_rank(1'000'000), 500'000u);
}

TEST(Outliers, TukeyFencesFlagWithoutDropping) {
    std::vector<double> v(20, 1.0);
    for (int i = 0; i < 20; ++i) v[i] += 0.01 * i;
    v.push_back(5.0);
    v.push_back(-3.0);
    const SampleSummary s = summarize(v);
    EXPECT_EQ(s.outliers_high, 1u);
    EXPECT_EQ(s.outliers_low, 1u);
    EXPECT_DOUBLE_EQ(s.max, 5.0);  // kept
    EXPECT_DOUBLE_EQ(s.min, -3.0); // kept
    EXPECT_EQ(s.n, 22u);
}

TEST(Outliers, NoFencesBelowFourSamples) {
    const std::vector<double> v{1.0, 1.0, 1000.0};
    const TukeyFences f = tukey_fences(v);
    EXPECT_TRUE(std::isinf(f.low));
    EXPECT_TRUE(std::isinf(f.high));
    EXPECT_EQ(summarize(v).outliers_high, 0u);
}

TEST(NoiseCriterion, RejectsInvalidSettingsAndSamples) {
    EXPECT_THROW(NoiseCriterion(0.0, 0, 1, 10), std::invalid_argument);
    EXPECT_THROW(NoiseCriterion(0.01, 2, 1, 10), std::invalid_argument);
    EXPECT_THROW(NoiseCriterion(0.01, -1, 1, 10), std::invalid_argument);
    NoiseCriterion c(0.01, 0, 1, 10);
    EXPECT_THROW(c.add(-1.0), std::invalid_argument);
    EXPECT_THROW(c.add(std::nan("")), std::invalid_argument);
    EXPECT_EQ(c.size(), 0u);
}

TEST(NoiseCriterion, StableSamplesMeetTargetAfterMinimums) {
    NoiseCriterion c(0.01, 0.5, 10.0, 8);
    for (int i = 0; i < 7; ++i) {
        c.add(0.1);
        EXPECT_FALSE(c.done()) << i; // fewer than min_samples
    }
    c.add(0.1); // 8 samples, 0.8 s
    EXPECT_TRUE(c.target_met());
    EXPECT_FALSE(c.timed_out());
    EXPECT_EQ(c.noise(), 0.0);
    EXPECT_NEAR(c.elapsed(), 0.8, 1e-12);
    EXPECT_EQ(c.samples().size(), 8u);
}

TEST(NoiseCriterion, MinTimeHoldsBackAQuietCase) {
    NoiseCriterion c(0.01, 1.0, 10.0, 1);
    for (int i = 0; i < 7; ++i) c.add(0.125); // binary fractions: exact sums
    EXPECT_FALSE(c.done());                   // 0.875 s < min_time
    c.add(0.125);
    EXPECT_TRUE(c.target_met());
}

TEST(NoiseCriterion, FewerThanSixSamplesNeverMeetTarget) {
    NoiseCriterion c(0.5, 0, 100, 1);
    for (int i = 0; i < 5; ++i) c.add(1.0);
    EXPECT_FALSE(c.target_met());
    c.add(1.0);
    EXPECT_TRUE(c.target_met());
}

TEST(NoiseCriterion, NoisyCaseTimesOutAndSaysSo) {
    NoiseCriterion c(0.01, 0, 2.0, 5);
    int i = 0;
    while (!c.done()) c.add((i++ % 2) ? 0.01 : 0.1); // two clusters, 10x apart
    EXPECT_TRUE(c.timed_out());
    EXPECT_FALSE(c.target_met());
    EXPECT_GT(c.noise(), 0.01);
    EXPECT_GE(c.elapsed(), 2.0);
}

TEST(NoiseCriterion, NoiseTracksSummaryOnLargeRuns) {
    NoiseCriterion c(1e-9, 0, 1e9, 1);
    std::vector<double> v;
    for (int i = 0; i < 5000; ++i) {
        const double golden = 0.6180339887498949 * i; // equidistributed in [0, 1)
        const double x = 1.0 + 0.1 * (golden - std::floor(golden));
        v.push_back(x);
        c.add(x);
    }
    // Recomputed on a geometric schedule: allow the lag, but it must be close.
    EXPECT_NEAR(c.noise(), summarize(v).noise, 0.1 * summarize(v).noise);
}

TEST(CallsPerSample, KeepsTimerOverheadBelowTheFraction) {
    const double overhead = 25e-9, call = 3e-9;
    const int k = calls_per_sample(call, overhead, 0.01);
    EXPECT_EQ(k, 834); // 25 / (0.01 * 3) = 833.3
    EXPECT_LT(overhead, 0.01 * k * call);
    EXPECT_GE(overhead, 0.01 * (k - 1) * call);
}

TEST(CallsPerSample, ExactBoundaryIsStrict) {
    // Powers of two: overhead / (fraction * call) is exactly 4096, and "below"
    // is strict, so 4096 calls is not enough.
    EXPECT_EQ(calls_per_sample(std::ldexp(1.0, -30), std::ldexp(1.0, -25), 1.0 / 128), 4097);
}

TEST(CallsPerSample, EdgeCases) {
    EXPECT_EQ(calls_per_sample(1.0, 20e-9), 1); // slow op: no batching
    EXPECT_EQ(calls_per_sample(1e-9, 0.0), 1);  // free timer
    EXPECT_EQ(calls_per_sample(0.0, 20e-9), kMaxCallsPerSample);
    EXPECT_EQ(calls_per_sample(1e-18, 1e-3), kMaxCallsPerSample);
    EXPECT_THROW((void)calls_per_sample(1e-9, 20e-9, 0.0), std::invalid_argument);
    EXPECT_THROW((void)calls_per_sample(1e-9, 20e-9, 1.0), std::invalid_argument);
    EXPECT_THROW((void)calls_per_sample(std::nan(""), 20e-9), std::invalid_argument);
}

TEST(TimerOverhead, IsPositiveAndFinite) {
    const double t = measure_timer_overhead();
    EXPECT_GT(t, 0.0);
    EXPECT_TRUE(std::isfinite(t));
}

} // namespace
} // namespace opbench

TEST(NoiseCriterion, WallClockCapEndsARepetitionAsTimedOut) {
    opbench::NoiseCriterion c(0.01, 0.1, 1.0, 10);
    EXPECT_DOUBLE_EQ(c.wall_cap(), opbench::NoiseCriterion::kWallCapFactor * 1.0);
    c.add(1e-3);
    c.note_wall_time(1.5);
    EXPECT_FALSE(c.done()) << "under the cap: keep sampling";
    c.note_wall_time(2.0);
    EXPECT_TRUE(c.wall_capped());
    EXPECT_TRUE(c.timed_out());
    EXPECT_TRUE(c.done());
    opbench::NoiseCriterion explicit_cap(0.01, 0.1, 1.0, 10, 5.0);
    explicit_cap.note_wall_time(4.0);
    EXPECT_FALSE(explicit_cap.done());
}
