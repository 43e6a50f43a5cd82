#include "measure/paired_stats.hpp"

#include "measure/throttle.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

namespace opbench {

namespace {

// Upper-tail quantile of the standard normal for the usual confidence
// levels, by bisection on erfc (no closed form; 60 halvings reach double precision).
double normal_quantile(double p) {
    double lo = -10, hi = 10;
    for (int i = 0; i < 200; ++i) {
        const double mid = 0.5 * (lo + hi);
        if (0.5 * std::erfc(-mid / std::sqrt(2.0)) < p) lo = mid;
        else hi = mid;
    }
    return 0.5 * (lo + hi);
}

} // namespace

SignedRankResult wilcoxon_signed_rank(std::span<const double> d) {
    std::vector<double> nonzero;
    for (double v : d) {
        if (std::isnan(v)) throw std::invalid_argument("wilcoxon_signed_rank: a difference is NaN");
        if (v != 0) nonzero.push_back(v);
    }
    SignedRankResult r;
    r.n = nonzero.size();
    if (r.n == 0) return r;
    std::vector<std::size_t> order(r.n);
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(),
              [&](std::size_t a, std::size_t b) { return std::fabs(nonzero[a]) < std::fabs(nonzero[b]); });
    // Average ranks over ties of |d|; each tie group of size t lowers the
    // variance by (t^3 - t) / 48.
    double tie_term = 0;
    for (std::size_t i = 0; i < r.n;) {
        std::size_t j = i;
        while (j + 1 < r.n && std::fabs(nonzero[order[j + 1]]) == std::fabs(nonzero[order[i]])) ++j;
        const double rank = 0.5 * double(i + j) + 1.0;
        for (std::size_t k = i; k <= j; ++k) (nonzero[order[k]] > 0 ? r.w_plus : r.w_minus) += rank;
        const double t = double(j - i + 1);
        tie_term += t * t * t - t;
        i = j + 1;
    }
    const double n = double(r.n);
    const double mean = n * (n + 1) / 4;
    const double sd = std::sqrt(n * (n + 1) * (2 * n + 1) / 24 - tie_term / 48);
    if (sd == 0) return r;
    const double dev = r.w_plus - mean;
    const double corrected = std::max(0.0, std::fabs(dev) - 0.5);
    r.z = std::copysign(corrected / sd, dev);
    r.p_value = std::min(1.0, std::erfc(corrected / sd / std::sqrt(2.0)));
    return r;
}

ShiftEstimate hodges_lehmann(std::span<const double> d, double confidence) {
    ShiftEstimate e;
    if (d.empty()) return e;
    std::vector<double> walsh;
    walsh.reserve(d.size() * (d.size() + 1) / 2);
    for (std::size_t i = 0; i < d.size(); ++i)
        for (std::size_t j = i; j < d.size(); ++j) walsh.push_back(0.5 * (d[i] + d[j]));
    std::sort(walsh.begin(), walsh.end());
    const std::size_t m = walsh.size();
    e.estimate = m % 2 ? walsh[m / 2] : 0.5 * (walsh[m / 2 - 1] + walsh[m / 2]);
    // The interval runs from the k-th smallest to the k-th largest Walsh
    // average, k the signed-rank statistic's lower critical value.
    const double n = double(d.size());
    const double z = normal_quantile(0.5 + confidence / 2);
    const double k = std::floor(n * (n + 1) / 4 - z * std::sqrt(n * (n + 1) * (2 * n + 1) / 24));
    const std::size_t ki = k < 1 ? 0 : std::min(m - 1, std::size_t(k) - 1);
    e.low = walsh[ki];
    e.high = walsh[m - 1 - ki];
    return e;
}

PairedVerdict paired_verdict(std::span<const double> base_times, std::span<const double> new_times,
                             const PairedOptions &options) {
    if (base_times.size() != new_times.size())
        throw std::invalid_argument("paired_verdict: the sides hold different numbers of times");
    std::vector<double> log_ratios;
    for (std::size_t i = 0; i < base_times.size(); ++i)
        if (base_times[i] > 0 && new_times[i] > 0) log_ratios.push_back(std::log(new_times[i] / base_times[i]));
    PairedVerdict v;
    v.pairs = log_ratios.size();
    if (v.pairs == 0) {
        v.verdict = "noisy";
        return v;
    }
    const SignedRankResult test = wilcoxon_signed_rank(log_ratios);
    const ShiftEstimate shift = hodges_lehmann(log_ratios);
    v.ratio = std::exp(shift.estimate);
    v.ratio_low = std::exp(shift.low);
    v.ratio_high = std::exp(shift.high);
    v.p_value = test.p_value;
    if (std::fabs(v.ratio - 1) < options.threshold) v.verdict = "same";
    else if (v.pairs < kMinPairs || v.p_value >= options.alpha) v.verdict = "noisy";
    else v.verdict = v.ratio > 1 ? "slower" : "faster";
    return v;
}

BlocksStatus blocks_status(std::size_t pairs, std::size_t starved_blocks, std::size_t throttled_blocks,
                           int starved_retries) {
    if (pairs > 0 || starved_blocks + throttled_blocks == 0) return {};
    if (throttled_blocks == 0)
        return {"starved", fmt::format("every one of its {} blocks had a starved repetition (threads waited for a CPU "
                                       "after {} more tries): no pair is a time of the builds. Use --threads 1, "
                                       "--cpus with idle CPUs, or a quieter machine",
                                       starved_blocks, starved_retries)};
    if (starved_blocks == 0)
        return {"throttled", fmt::format("every one of its {} blocks had a throttled repetition (the device's SM "
                                         "clock below {:.0f}% of its sustained clock after {} more tries): no pair "
                                         "is a time of the builds. Measure again with the GPU cool and idle "
                                         "(nvidia-smi -q -d PERFORMANCE names the throttle reason)",
                                         throttled_blocks, 100 * kThrottledClockShare, kThrottledRetries)};
    return {"starved", fmt::format("every one of its {} blocks had a starved ({}) or throttled ({}) repetition: no "
                                   "pair is a time of the builds. Use --threads 1, --cpus with idle CPUs, a quieter "
                                   "machine and the GPU cool and idle",
                                   starved_blocks + throttled_blocks, starved_blocks, throttled_blocks)};
}

std::string left_out_note(std::size_t blocks, std::size_t starved_blocks, std::size_t throttled_blocks) {
    if (starved_blocks + throttled_blocks == 0) return {};
    std::string kinds;
    if (starved_blocks > 0) kinds = fmt::format("{} starved", starved_blocks);
    if (throttled_blocks > 0) kinds += fmt::format("{}{} throttled", kinds.empty() ? "" : ", ", throttled_blocks);
    return fmt::format("{} of {} blocks left out ({})", starved_blocks + throttled_blocks, blocks, kinds);
}

} // namespace opbench
