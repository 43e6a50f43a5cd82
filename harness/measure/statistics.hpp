// Sample statistics and the noise-aware stopping rule (issue 5, "Timing").
//
// Everything here is a pure function of its inputs except NoiseCriterion
// (which accumulates samples) and measure_timer_overhead() (which reads the
// clock). Samples are seconds per call; nothing assumes they are sorted.
//
// Edge cases, the same everywhere:
//   n == 0  every statistic is NaN, noise is +infinity, no outliers;
//   n == 1  min = max = mean = median = p90 = p99 = the sample, stddev = cv = 0;
//   n <  6  the 95% CI of the median is unknowable from order statistics (the
//           widest interval [x(1), x(n)] covers the median with probability
//           1 - 2^(1-n) < 95%), so the CI is reported as [min, max] and noise
//           is +infinity: a stopping rule can never be satisfied by too few
//           samples;
//   n <  4  no outliers are flagged (quartiles are not meaningful).
// NaN and infinity do not survive JSON (nlohmann writes null): writers must
// check std::isfinite.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

namespace opbench {

// Summary of a set of samples. Percentiles use the interpolation rule of
// percentile_sorted() below.
struct SampleSummary {
    std::size_t n = 0;
    double min = 0, max = 0, mean = 0, median = 0, p90 = 0, p99 = 0;
    double stddev = 0; // sample standard deviation (divides by n - 1)
    double cv = 0;     // stddev / mean (0 when the mean is 0)
    // Distribution-free 95% confidence interval of the median: see median_ci().
    double median_ci_low = 0, median_ci_high = 0;
    // Relative half-width of that interval: (high - low) / 2 / median.
    double noise = 0;
    // Samples outside the Tukey fences (see tukey_fences()): flagged and
    // counted, never dropped from any statistic above.
    std::size_t outliers_low = 0, outliers_high = 0;
};

// All statistics of `samples` in one pass over a sorted copy.
[[nodiscard]] SampleSummary summarize(std::span<const double> samples);

// The q-quantile (q in [0, 1], clamped) of ascending-sorted values by linear
// interpolation between closest ranks (Hyndman & Fan type 7, NumPy's default
// "linear"): h = (n - 1) q, result = x[floor h] + (h - floor h)(x[floor h + 1]
// - x[floor h]). Returns NaN for an empty span.
[[nodiscard]] double percentile_sorted(std::span<const double> sorted, double q);

// Same rule on unsorted values (sorts a copy).
[[nodiscard]] double percentile(std::span<const double> values, double q);

[[nodiscard]] double mean(std::span<const double> values);   // NaN when empty
[[nodiscard]] double stddev(std::span<const double> values); // n - 1; 0 when n < 2, NaN when empty

// A confidence interval given by two order statistics (1-based ranks into the
// sorted samples; both 0 when the interval does not exist).
struct MedianCi {
    double low = 0, high = 0;
    std::size_t rank_low = 0, rank_high = 0;
    bool exists = false; // false when n < 6 (then low/high are min/max)
};

// 95% confidence interval of the median from order statistics, making no
// assumption about the distribution: [x(k), x(n + 1 - k)] covers the median
// with probability P(k <= B <= n - k), B ~ Binomial(n, 1/2); k is the largest
// rank keeping that probability >= 95%. Exact binomial for n <= 1000, normal
// approximation above (k = floor(n/2 - 1.96 sqrt(n)/2), at least 1).
[[nodiscard]] MedianCi median_ci(std::span<const double> sorted);

// The rank k above, for callers that keep their own sorted buffer. 0 when
// n < 6 (no order-statistic interval reaches 95%).
[[nodiscard]] std::size_t median_ci_rank(std::size_t n);

// Relative half-width (high - low) / 2 / median. +infinity when the CI does
// not exist or the median is 0 with a non-zero width; 0 for a zero width.
[[nodiscard]] double relative_half_width(const MedianCi &ci, double median);

// Tukey's fences: outliers are samples < q1 - 1.5 IQR or > q3 + 1.5 IQR,
// quartiles by percentile_sorted(). With n < 4 the fences are -inf / +inf.
struct TukeyFences {
    double low = 0, high = 0;
};
[[nodiscard]] TukeyFences tukey_fences(std::span<const double> sorted);

// Stopping rule in the spirit of nvbench's stdrel criterion: keep sampling
// until the noise (relative half-width of the median's 95% CI) is at most
// `target`, with at least `min_samples` samples and `min_time` seconds of
// samples; give up once `max_time` seconds of samples have been taken.
//
// Time is the sum of the sample times (elapsed()), not wall time, so the rule
// does not depend on how much untimed work (cache flushes, syncs) surrounds
// the samples. That untimed work (cache eviction above all: milliseconds per
// sample against a microsecond op) is bounded separately by a wall-clock cap,
// by default kWallCapFactor * max_time: the caller reports the wall time
// since the repetition began through note_wall_time(), and the rule gives up
// (timed_out()) once it passes the cap, so a cold-cache repetition of a tiny
// op cannot run for minutes. add() is amortised O(log n): the CI is recomputed when the
// sample count has grown by 1/16 since the last computation (and on every
// sample while n < 32), so noise() may trail the newest samples by that much.
class NoiseCriterion {
public:
    // Throws std::invalid_argument unless target > 0, 0 <= min_time <=
    // max_time, and all are finite.
    // wall_cap < 0: kWallCapFactor * max_time.
    NoiseCriterion(double target, double min_time, double max_time, std::size_t min_samples, double wall_cap = -1);
    static constexpr double kWallCapFactor = 2.0;

    // One sample, in seconds. Throws std::invalid_argument for a negative or
    // non-finite sample (a timing bug upstream, never data).
    void add(double sample_seconds);

    // target_met() || timed_out().
    [[nodiscard]] bool done() const { return target_met() || timed_out(); }
    // noise() <= target with enough samples and time.
    [[nodiscard]] bool target_met() const;
    // Wall-clock seconds since the repetition began (samples and the untimed
    // work around them).
    void note_wall_time(double seconds) { wall_ = seconds; }
    // max_time of samples, or the wall-clock cap, reached without meeting the target.
    [[nodiscard]] bool timed_out() const;
    // The wall-clock cap was reached (whether or not the target was met).
    [[nodiscard]] bool wall_capped() const { return wall_ >= wall_cap_; }
    [[nodiscard]] double wall_cap() const { return wall_cap_; }
    // Noise as of the last recomputation (+infinity before the first one).
    [[nodiscard]] double noise() const { return noise_; }
    // Sum of the samples, seconds.
    [[nodiscard]] double elapsed() const { return elapsed_; }
    [[nodiscard]] std::size_t size() const { return samples_.size(); }
    // The samples in the order they were added.
    [[nodiscard]] std::span<const double> samples() const { return samples_; }

    [[nodiscard]] double target() const { return target_; }
    [[nodiscard]] double min_time() const { return min_time_; }
    [[nodiscard]] double max_time() const { return max_time_; }
    [[nodiscard]] std::size_t min_samples() const { return min_samples_; }

private:
    void recompute();

    double target_, min_time_, max_time_;
    std::size_t min_samples_;
    std::vector<double> samples_;
    std::vector<double> sorted_; // scratch, reused between recomputations
    double elapsed_ = 0;
    double wall_cap_;
    double wall_ = 0;
    double noise_;
    std::size_t next_recompute_ = 1;
};

// Median cost, in seconds, of one pair of std::chrono::steady_clock::now()
// calls (what bracketing one sample costs), over several batches of pairs.
// Takes about a millisecond.
[[nodiscard]] double measure_timer_overhead();

// Upper bound of calls_per_sample(), so a call that measures as free cannot
// make a sample run forever.
inline constexpr int kMaxCallsPerSample = 1 << 20;

// How many calls to batch into one sample so that the timer's overhead is
// below `max_fraction` of the sample: the smallest k with
// timer_overhead < max_fraction * k * seconds_per_call, clamped to
// [1, kMaxCallsPerSample]. Returns 1 when timer_overhead <= 0, and
// kMaxCallsPerSample when seconds_per_call <= 0 (too fast to see). Throws
// std::invalid_argument unless 0 < max_fraction < 1 and inputs are not NaN.
[[nodiscard]] int calls_per_sample(double seconds_per_call, double timer_overhead, double max_fraction = 0.01);

// How many calls of `seconds_per_call` fill `target_seconds` (a sample of
// the batch and graph launch modes): the smallest k with
// k * seconds_per_call >= target_seconds, clamped to [1, kMaxCallsPerSample];
// kMaxCallsPerSample when seconds_per_call <= 0. Throws std::invalid_argument
// on NaN.
[[nodiscard]] int calls_for_sample_seconds(double seconds_per_call, double target_seconds);

} // namespace opbench
