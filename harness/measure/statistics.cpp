// Sample statistics and the noise-aware stopping rule; see statistics.hpp.
#include "measure/statistics.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <stdexcept>
#include <string>

namespace opbench {

namespace {

// A number for a message: "%g", never std::to_string's fixed notation, which
// writes 1e308 as 309 digits.
std::string shown_number(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", v);
    return buf;
}

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

// Below this many samples no order-statistic interval covers the median with
// 95% probability (1 - 2^(1-n) < 0.95 for n <= 5).
constexpr std::size_t kMinSamplesForCi = 6;
// Exact binomial up to here; the normal approximation is within one rank above.
constexpr std::size_t kExactBinomialLimit = 1000;

std::vector<double> sorted_copy(std::span<const double> values) {
    std::vector<double> v(values.begin(), values.end());
    std::sort(v.begin(), v.end());
    return v;
}

} // namespace

double percentile_sorted(std::span<const double> sorted, double q) {
    if (sorted.empty()) return kNaN;
    if (std::isnan(q)) return kNaN;
    q = std::clamp(q, 0.0, 1.0);
    const double h = static_cast<double>(sorted.size() - 1) * q;
    const auto lo = static_cast<std::size_t>(std::floor(h));
    if (lo + 1 >= sorted.size()) return sorted.back();
    const double frac = h - static_cast<double>(lo);
    return sorted[lo] + frac * (sorted[lo + 1] - sorted[lo]);
}

double percentile(std::span<const double> values, double q) {
    const auto v = sorted_copy(values);
    return percentile_sorted(v, q);
}

double mean(std::span<const double> values) {
    if (values.empty()) return kNaN;
    // Summing deviations from the first sample keeps the mean of identical
    // samples exact and loses less precision on timings clustered far from 0.
    const double shift = values.front();
    double sum = 0;
    for (double x : values) sum += x - shift;
    return shift + sum / static_cast<double>(values.size());
}

double stddev(std::span<const double> values) {
    if (values.empty()) return kNaN;
    if (values.size() == 1) return 0.0;
    const double m = mean(values);
    // Two-pass sum of squared deviations: stable for samples that differ by
    // tiny amounts around a large mean, the usual case for timings.
    double ss = 0;
    for (double x : values) ss += (x - m) * (x - m);
    return std::sqrt(ss / static_cast<double>(values.size() - 1));
}

std::size_t median_ci_rank(std::size_t n) {
    if (n < kMinSamplesForCi) return 0;
    if (n > kExactBinomialLimit) {
        const double nd = static_cast<double>(n);
        const double k = std::floor(nd / 2.0 - 1.959963984540054 * std::sqrt(nd) / 2.0);
        return k < 1 ? 1 : static_cast<std::size_t>(k);
    }
    // Largest k with 2 * P(B <= k - 1) <= 0.05, B ~ Binomial(n, 1/2), summing
    // the pmf in log space so that 2^-n does not underflow for n near 1000.
    const double nd = static_cast<double>(n);
    const double log_norm = std::lgamma(nd + 1) - nd * std::log(2.0);
    double cdf = 0;
    std::size_t k = 0;
    for (std::size_t j = 0; j <= n / 2; ++j) {
        const double jd = static_cast<double>(j);
        cdf += std::exp(log_norm - std::lgamma(jd + 1) - std::lgamma(nd - jd + 1));
        if (2 * cdf > 0.05) break;
        k = j + 1;
    }
    return k;
}

MedianCi median_ci(std::span<const double> sorted) {
    MedianCi ci;
    if (sorted.empty()) {
        ci.low = ci.high = kNaN;
        return ci;
    }
    const std::size_t k = median_ci_rank(sorted.size());
    if (k == 0) {
        ci.low = sorted.front();
        ci.high = sorted.back();
        return ci;
    }
    ci.rank_low = k;
    ci.rank_high = sorted.size() + 1 - k;
    ci.low = sorted[ci.rank_low - 1];
    ci.high = sorted[ci.rank_high - 1];
    ci.exists = true;
    return ci;
}

double relative_half_width(const MedianCi &ci, double median) {
    if (!ci.exists || std::isnan(median)) return kInf;
    const double half = (ci.high - ci.low) / 2.0;
    if (half == 0) return 0.0;
    if (median == 0) return kInf;
    return half / std::fabs(median);
}

TukeyFences tukey_fences(std::span<const double> sorted) {
    if (sorted.size() < 4) return {-kInf, kInf};
    const double q1 = percentile_sorted(sorted, 0.25);
    const double q3 = percentile_sorted(sorted, 0.75);
    const double iqr = q3 - q1;
    return {q1 - 1.5 * iqr, q3 + 1.5 * iqr};
}

SampleSummary summarize(std::span<const double> samples) {
    SampleSummary s;
    s.n = samples.size();
    if (samples.empty()) {
        s.min = s.max = s.mean = s.median = s.p90 = s.p99 = kNaN;
        s.stddev = s.cv = kNaN;
        s.median_ci_low = s.median_ci_high = kNaN;
        s.noise = kInf;
        return s;
    }
    const auto sorted = sorted_copy(samples);
    s.min = sorted.front();
    s.max = sorted.back();
    s.mean = mean(sorted);
    s.median = percentile_sorted(sorted, 0.5);
    s.p90 = percentile_sorted(sorted, 0.90);
    s.p99 = percentile_sorted(sorted, 0.99);
    s.stddev = stddev(sorted);
    s.cv = s.mean != 0 ? s.stddev / std::fabs(s.mean) : 0.0;
    const MedianCi ci = median_ci(sorted);
    s.median_ci_low = ci.low;
    s.median_ci_high = ci.high;
    s.noise = relative_half_width(ci, s.median);
    const TukeyFences f = tukey_fences(sorted);
    s.outliers_low = static_cast<std::size_t>(std::lower_bound(sorted.begin(), sorted.end(), f.low) - sorted.begin());
    s.outliers_high = static_cast<std::size_t>(sorted.end() - std::upper_bound(sorted.begin(), sorted.end(), f.high));
    return s;
}

// --- NoiseCriterion ---------------------------------------------------------

NoiseCriterion::NoiseCriterion(double target, double min_time, double max_time, std::size_t min_samples,
                               double wall_cap)
    : target_(target), min_time_(min_time), max_time_(max_time), min_samples_(min_samples),
      wall_cap_(wall_cap < 0 ? kWallCapFactor * max_time : wall_cap), noise_(kInf) {
    if (!std::isfinite(target) || target <= 0)
        throw std::invalid_argument("noise target must be a positive number, got " + shown_number(target));
    if (!std::isfinite(min_time) || !std::isfinite(max_time) || min_time < 0 || max_time < min_time)
        throw std::invalid_argument("need 0 <= min_time <= max_time (seconds), got min_time " + shown_number(min_time) +
                                    ", max_time " + shown_number(max_time));
}

void NoiseCriterion::add(double sample_seconds) {
    if (!std::isfinite(sample_seconds) || sample_seconds < 0)
        throw std::invalid_argument("a sample must be a finite, non-negative time in seconds, got " +
                                    shown_number(sample_seconds));
    samples_.push_back(sample_seconds);
    elapsed_ += sample_seconds;
    if (samples_.size() >= next_recompute_) recompute();
}

void NoiseCriterion::recompute() {
    const std::size_t n = samples_.size();
    sorted_.assign(samples_.begin(), samples_.end());
    std::sort(sorted_.begin(), sorted_.end());
    noise_ = relative_half_width(median_ci(sorted_), percentile_sorted(sorted_, 0.5));
    // Geometric schedule: every sample while small, then every n/16.
    next_recompute_ = n < 32 ? n + 1 : n + n / 16;
}

bool NoiseCriterion::target_met() const {
    return samples_.size() >= min_samples_ && elapsed_ >= min_time_ && noise_ <= target_;
}

bool NoiseCriterion::timed_out() const { return !target_met() && (elapsed_ >= max_time_ || wall_capped()); }

// --- timer overhead and batching --------------------------------------------

double measure_timer_overhead() {
    using clock = std::chrono::steady_clock;
    constexpr int kBatches = 21;
    constexpr int kPairsPerBatch = 1000;
    std::vector<double> per_pair;
    per_pair.reserve(kBatches);
    // Accumulating the differences keeps the calls from being optimised away.
    clock::duration sink{};
    for (int b = 0; b < kBatches; ++b) {
        const auto t0 = clock::now();
        for (int i = 0; i < kPairsPerBatch; ++i) {
            const auto a = clock::now();
            const auto z = clock::now();
            sink += z - a;
        }
        const auto t1 = clock::now();
        per_pair.push_back(std::chrono::duration<double>(t1 - t0).count() / kPairsPerBatch);
    }
    if (sink.count() < 0) per_pair.push_back(0); // never: steady_clock is monotonic
    return percentile(per_pair, 0.5);
}

int calls_for_sample_seconds(double seconds_per_call, double target_seconds) {
    if (std::isnan(seconds_per_call) || std::isnan(target_seconds))
        throw std::invalid_argument("calls_for_sample_seconds: NaN input");
    if (target_seconds <= 0) return 1;
    if (seconds_per_call <= 0) return kMaxCallsPerSample;
    const double estimate = std::ceil(target_seconds / seconds_per_call);
    if (!(estimate < kMaxCallsPerSample)) return kMaxCallsPerSample;
    // The division can round up past the boundary: settle it with the product.
    int k = std::max(1, static_cast<int>(estimate));
    while (k > 1 && double(k - 1) * seconds_per_call >= target_seconds) --k;
    return k;
}

int calls_per_sample(double seconds_per_call, double timer_overhead, double max_fraction) {
    if (std::isnan(seconds_per_call) || std::isnan(timer_overhead) || std::isnan(max_fraction))
        throw std::invalid_argument("calls_per_sample: NaN input");
    if (!(max_fraction > 0 && max_fraction < 1))
        throw std::invalid_argument("calls_per_sample: max_fraction must be in (0, 1), got " +
                                    shown_number(max_fraction));
    if (timer_overhead <= 0) return 1;
    if (seconds_per_call <= 0) return kMaxCallsPerSample;
    // Smallest k with overhead < fraction * k * t, i.e. k > overhead / (fraction * t).
    const double estimate = std::floor(timer_overhead / (max_fraction * seconds_per_call));
    if (!(estimate < kMaxCallsPerSample)) return kMaxCallsPerSample;
    // The division can round either way at the boundary: settle it with the
    // inequality itself.
    int k = std::max(1, static_cast<int>(estimate));
    while (k > 1 && timer_overhead < max_fraction * (k - 1) * seconds_per_call) --k;
    while (k < kMaxCallsPerSample && !(timer_overhead < max_fraction * k * seconds_per_call)) ++k;
    return k;
}

} // namespace opbench
