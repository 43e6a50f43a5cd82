#include "readers/change_points.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace opbench {

namespace {

// A standard deviation of a log median below which runs are not told apart
// (0.01%): keeps the weights finite for a series of identical medians.
constexpr double kSigmaFloor = 1e-4;

// A run is an outlier beyond this many of its standard deviations from the
// running median of 2 x kHalfWindow + 1 runs around it.
constexpr double kOutlierSigmas = 6.0;
constexpr std::size_t kHalfWindow = 3;

// The usable runs: their log medians, weights and places in the series.
struct Weighted {
    std::vector<double> x, w;
    std::vector<std::size_t> index;
};

double within_variance(const SeriesPoint &p) {
    if (!std::isfinite(p.spread) || p.spread <= 0) return 0;
    const double se = p.spread / std::sqrt(static_cast<double>(std::max<std::size_t>(1, p.repetitions)));
    return se * se;
}

// The median of x[i - kHalfWindow .. i + kHalfWindow] (clipped at the ends).
double running_median(const std::vector<double> &x, std::size_t i) {
    const std::size_t lo = i > kHalfWindow ? i - kHalfWindow : 0, hi = std::min(x.size(), i + kHalfWindow + 1);
    std::vector<double> w(x.begin() + static_cast<std::ptrdiff_t>(lo), x.begin() + static_cast<std::ptrdiff_t>(hi));
    std::sort(w.begin(), w.end());
    const std::size_t m = w.size() / 2;
    return w.size() % 2 ? w[m] : (w[m - 1] + w[m]) / 2;
}

// Leaves out the runs far from their neighbours' running median (more than
// kOutlierSigmas of their own standard deviation): one run slowed by a
// neighbour's episode on a shared machine (30-90%, docs/measurement.md,
// "Repeatability") is not a change. A running median keeps a step: the runs
// just after one have a majority of their window after it too.
Weighted without_outliers(Weighted s) {
    if (s.x.size() < 2 * kHalfWindow + 1) return s;
    Weighted out;
    for (std::size_t i = 0; i < s.x.size(); ++i) {
        if (std::abs(s.x[i] - running_median(s.x, i)) * std::sqrt(s.w[i]) > kOutlierSigmas) continue;
        out.x.push_back(s.x[i]);
        out.w.push_back(s.w[i]);
        out.index.push_back(s.index[i]);
    }
    return out;
}

// How much the runs' variances (within + between) over- or understate the
// scatter the series shows: the square of 1.4826 x the median absolute
// successive difference, each standardised by its two runs' variances. A
// loaded machine's repetitions can spread 30% while its runs' medians move
// 5%: the weights keep their proportions (a noisier run weighs less) and
// take the series' own scale, so the penalty means the same everywhere.
double variance_scale(const Weighted &s) {
    if (s.x.size() < 3) return 1.0;
    std::vector<double> z;
    for (std::size_t i = 1; i < s.x.size(); ++i)
        z.push_back(std::abs(s.x[i] - s.x[i - 1]) / std::sqrt(1 / s.w[i] + 1 / s.w[i - 1]));
    std::nth_element(z.begin(), z.begin() + static_cast<std::ptrdiff_t>(z.size() / 2), z.end());
    const double scale = 1.4826 * z[z.size() / 2];
    return scale > 0 ? scale * scale : 1.0;
}

// A run's repetitions spread more than kDisturbedSpread x the series'
// median spread: its own interval weighs it; any other run weighs as a
// typical one.
constexpr double kDisturbedSpread = 2.0;

// Each run's within-run variance: the series' median, or its own where its
// spread marks it disturbed. On a loaded machine a run's spread says little
// about how far its median moved (rank correlation 0.09 over 136 case-runs
// of quick.toml at load 6-10), and weighing every run by its own spread
// trusted the runs whose repetitions happened to agree: 28 false changes
// per 1,000 case-runs on A/A archives with real runs' spreads, 0.2 this way
// (docs/measurement.md, "Change points in the archive").
// Returns the typical (median) within-run variance.
double typical_unless_disturbed(std::vector<double> &within) {
    if (within.empty()) return 0;
    std::vector<double> sorted = within;
    std::nth_element(sorted.begin(), sorted.begin() + static_cast<std::ptrdiff_t>(sorted.size() / 2), sorted.end());
    const double median = sorted[sorted.size() / 2];
    for (double &v : within) v = v > kDisturbedSpread * kDisturbedSpread * median ? v : median;
    return median;
}

Weighted weighted_series(const std::vector<SeriesPoint> &series) {
    Weighted out;
    std::vector<double> within;
    for (std::size_t i = 0; i < series.size(); ++i) {
        const SeriesPoint &p = series[i];
        if (!p.usable || !(std::isfinite(p.median_s) && p.median_s > 0)) continue;
        out.x.push_back(std::log(p.median_s));
        within.push_back(within_variance(p));
        out.index.push_back(i);
    }
    // The between-run part beside a typical run's (the disturbed runs'
    // large variances would otherwise swallow it).
    const double typical = typical_unless_disturbed(within);
    const double tau = between_run_sigma(out.x, std::vector<double>(within.size(), typical));
    for (double v : within) out.w.push_back(1.0 / (v + tau * tau + kSigmaFloor * kSigmaFloor));
    const double k = variance_scale(out);
    for (double &w : out.w) w /= k;
    return out;
}

// Prefix sums of w, w x, w x^2: a segment's cost (its weighted sum of
// squares about its weighted mean) in O(1).
class Prefix {
public:
    explicit Prefix(const Weighted &s) : sw_(s.x.size() + 1), swx_(sw_), swxx_(sw_) {
        for (std::size_t i = 0; i < s.x.size(); ++i) {
            sw_[i + 1] = sw_[i] + s.w[i];
            swx_[i + 1] = swx_[i] + s.w[i] * s.x[i];
            swxx_[i + 1] = swxx_[i] + s.w[i] * s.x[i] * s.x[i];
        }
    }
    // Runs [s, t).
    [[nodiscard]] double cost(std::size_t s, std::size_t t) const {
        const double w = sw_[t] - sw_[s], wx = swx_[t] - swx_[s];
        return std::max(0.0, swxx_[t] - swxx_[s] - wx * wx / w);
    }
    [[nodiscard]] double weight(std::size_t s, std::size_t t) const { return sw_[t] - sw_[s]; }
    [[nodiscard]] double mean(std::size_t s, std::size_t t) const {
        return (swx_[t] - swx_[s]) / (sw_[t] - sw_[s]);
    }

private:
    std::vector<double> sw_, swx_, swxx_;
};

// PELT (Killick, Fearnhead and Eckley 2012) with a minimum segment length:
// the starts of the optimal segments after the first.
std::vector<std::size_t> pelt(const Prefix &c, std::size_t n, double penalty, std::size_t min_runs) {
    constexpr double kInf = std::numeric_limits<double>::infinity();
    std::vector<double> best(n + 1, kInf);
    std::vector<std::size_t> last(n + 1, 0);
    best[0] = -penalty;
    std::vector<std::size_t> candidates;
    for (std::size_t t = min_runs; t <= n; ++t) {
        const std::size_t s_new = t - min_runs;
        if (std::isfinite(best[s_new])) candidates.push_back(s_new);
        for (std::size_t s : candidates) {
            const double f = best[s] + c.cost(s, t) + penalty;
            if (f < best[t]) best[t] = f, last[t] = s;
        }
        std::erase_if(candidates, [&](std::size_t s) { return best[s] + c.cost(s, t) > best[t]; });
    }
    std::vector<std::size_t> starts;
    for (std::size_t t = n; t > 0 && last[t] > 0; t = last[t]) starts.push_back(last[t]);
    std::reverse(starts.begin(), starts.end());
    return starts;
}

// The first later change that brought the level back: the opposite way, to
// within half the change's size of the level before it.
void mark_undone(std::vector<ChangePoint> &changes, const std::vector<double> &levels) {
    for (std::size_t i = 0; i < changes.size(); ++i) {
        const double d = levels[i + 1] - levels[i];
        for (std::size_t j = i + 1; j < changes.size(); ++j) {
            const double dj = levels[j + 1] - levels[j];
            if (dj * d < 0 && std::abs(levels[j + 1] - levels[i]) < std::abs(d) / 2) {
                changes[i].undone_by = j;
                break;
            }
        }
    }
}

} // namespace

double between_run_sigma(const std::vector<double> &x, const std::vector<double> &within) {
    if (x.size() < 3) return 0;
    std::vector<double> diffs;
    for (std::size_t i = 1; i < x.size(); ++i) diffs.push_back(std::abs(x[i] - x[i - 1]));
    std::nth_element(diffs.begin(), diffs.begin() + static_cast<std::ptrdiff_t>(diffs.size() / 2), diffs.end());
    const double total = 1.4826 * diffs[diffs.size() / 2] / std::sqrt(2.0);
    double mean_within = 0;
    for (double v : within) mean_within += v / static_cast<double>(within.size());
    return std::sqrt(std::max(0.0, total * total - mean_within));
}

namespace {

// A fit: the segments' first places in the usable runs, with n at the end,
// and each segment's level.
struct Fit {
    std::vector<std::size_t> bounds;
    std::vector<double> levels;
};

Fit fit(const Weighted &s, const ChangePointOptions &o) {
    const Prefix c(s);
    Fit f;
    f.bounds = pelt(c, s.x.size(), o.penalty, o.min_runs);
    f.bounds.insert(f.bounds.begin(), 0);
    f.bounds.push_back(s.x.size());
    for (std::size_t k = 0; k + 1 < f.bounds.size(); ++k) f.levels.push_back(c.mean(f.bounds[k], f.bounds[k + 1]));
    return f;
}

// The second pass: each run against the first fit's level where it stands
// (series place `at`), or, within kHalfWindow runs of a break, the level
// on the break's other side: a run just after a step that the running
// median took for an outlier (an outlier beside it) comes back.
Weighted near_fit(const Weighted &all, const Weighted &kept, const Fit &f) {
    std::vector<std::size_t> starts; // each segment's first series place
    for (std::size_t k = 0; k + 1 < f.bounds.size(); ++k) starts.push_back(kept.index[f.bounds[k]]);
    Weighted out;
    for (std::size_t i = 0; i < all.x.size(); ++i) {
        const std::size_t at = all.index[i];
        const std::size_t k = static_cast<std::size_t>(std::upper_bound(starts.begin(), starts.end(), at) - starts.begin()) - 1;
        double r = std::abs(all.x[i] - f.levels[k]);
        if (k > 0 && at < starts[k] + kHalfWindow) r = std::min(r, std::abs(all.x[i] - f.levels[k - 1]));
        if (k + 1 < starts.size() && at + kHalfWindow >= starts[k + 1])
            r = std::min(r, std::abs(all.x[i] - f.levels[k + 1]));
        if (r * std::sqrt(all.w[i]) > kOutlierSigmas) continue;
        out.x.push_back(all.x[i]);
        out.w.push_back(all.w[i]);
        out.index.push_back(at);
    }
    return out;
}

std::vector<ChangePoint> changes_of(const Weighted &s, const Fit &f) {
    const Prefix c(s);
    const auto &b = f.bounds;
    std::vector<ChangePoint> out;
    for (std::size_t k = 1; k + 1 < b.size(); ++k) {
        ChangePoint p;
        p.before = s.index[b[k] - 1];
        p.after = s.index[b[k]];
        const double d = f.levels[k] - f.levels[k - 1];
        const double se = std::sqrt(1 / c.weight(b[k - 1], b[k]) + 1 / c.weight(b[k], b[k + 1]));
        p.ratio = std::exp(d);
        p.ratio_low = std::exp(d - 1.96 * se);
        p.ratio_high = std::exp(d + 1.96 * se);
        p.runs_before = b[k] - b[k - 1];
        p.runs_after = b[k + 1] - b[k];
        out.push_back(p);
    }
    mark_undone(out, f.levels);
    return out;
}

} // namespace

std::vector<ChangePoint> find_change_points(const std::vector<SeriesPoint> &series, const ChangePointOptions &options) {
    ChangePointOptions o = options;
    o.min_runs = std::max<std::size_t>(1, o.min_runs);
    const Weighted all = weighted_series(series);
    const Weighted kept = without_outliers(all);
    if (kept.x.size() < 2 * o.min_runs) return {};
    const Fit first = fit(kept, o);
    const Weighted second = near_fit(all, kept, first);
    if (second.index == kept.index) return changes_of(kept, first); // nothing came back: the same fit
    if (second.x.size() < 2 * o.min_runs) return {};
    return changes_of(second, fit(second, o));
}

} // namespace opbench
