#include "readers/mann_whitney.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>
#include <vector>

namespace opbench {

namespace {

struct Ranked {
    double rank_sum_x = 0; // sum of the first sample's (mid)ranks
    double tie_term = 0;   // sum over tie groups of t^3 - t
    bool has_ties = false;
};

Ranked rank(std::span<const double> x, std::span<const double> y) {
    struct Value {
        double v;
        bool from_x;
    };
    std::vector<Value> all;
    all.reserve(x.size() + y.size());
    for (double v : x) all.push_back({v, true});
    for (double v : y) all.push_back({v, false});
    std::sort(all.begin(), all.end(), [](const Value &a, const Value &b) { return a.v < b.v; });
    Ranked r;
    for (std::size_t i = 0; i < all.size();) {
        std::size_t j = i;
        while (j < all.size() && all[j].v == all[i].v) ++j;
        const double t = double(j - i);
        const double midrank = (double(i + 1) + double(j)) / 2.0; // ranks are 1-based
        for (std::size_t k = i; k < j; ++k)
            if (all[k].from_x) r.rank_sum_x += midrank;
        if (t > 1) {
            r.has_ties = true;
            r.tie_term += t * t * t - t;
        }
        i = j;
    }
    return r;
}

// P(U >= u) under the null hypothesis, no ties: the number of arrangements
// of n1 x's and n2 y's with U = k follows the recurrence
// c(k; n1, n2) = c(k - n2; n1 - 1, n2) + c(k; n1, n2 - 1), built up over n2
// (Mann & Whitney 1947). Counts as doubles: exact up to 2^53, then relative
// error ~1e-16, which the p-value does not notice.
double exact_upper_tail(std::size_t n1, std::size_t n2, double u) {
    const std::size_t max_u = n1 * n2;
    // counts[a][k]: arrangements of a x's with the current n2' y's, U = k.
    std::vector<std::vector<double>> counts(n1 + 1);
    for (std::size_t a = 0; a <= n1; ++a) counts[a].assign(max_u + 1, 0.0), counts[a][0] = 1.0; // n2' = 0
    for (std::size_t b = 1; b <= n2; ++b) {
        // c(k; a, b) = c(k - b; a - 1, b) + c(k; a, b - 1); a ascending uses
        // the already-updated row a - 1 (at b) and the old row a (at b - 1).
        for (std::size_t a = 1; a <= n1; ++a) {
            std::vector<double> &row = counts[a];
            const std::vector<double> &prev = counts[a - 1];
            for (std::size_t k = a * b + 1; k-- > 0;) {
                const double with_x_last = k >= b ? prev[k - b] : 0.0;
                row[k] = with_x_last + row[k];
            }
        }
    }
    const std::vector<double> &dist = counts[n1];
    const double total = std::accumulate(dist.begin(), dist.end(), 0.0);
    double tail = 0;
    // A tie-broken U (x.5) is truncated, as SciPy does: P(U >= floor(u)).
    const auto from = static_cast<std::size_t>(std::floor(u));
    for (std::size_t k = std::min(from, max_u + 1); k <= max_u; ++k) tail += dist[k];
    return tail / total;
}

} // namespace

double min_two_sided_p(std::size_t n1, std::size_t n2) {
    if (n1 == 0 || n2 == 0) return 1.0;
    // 1 / C(n1 + n2, n1) in logs: no overflow for any size.
    const double log_c = std::lgamma(double(n1 + n2 + 1)) - std::lgamma(double(n1 + 1)) - std::lgamma(double(n2 + 1));
    return std::min(1.0, 2.0 * std::exp(-log_c));
}

UTestResult mann_whitney_u(std::span<const double> x, std::span<const double> y, UTestMethod method) {
    for (auto s : {x, y})
        for (double v : s)
            if (std::isnan(v)) throw std::invalid_argument("mann_whitney_u: NaN in a sample");
    UTestResult r;
    if (x.empty() || y.empty()) return r;
    const double n1 = double(x.size()), n2 = double(y.size());
    const Ranked ranked = rank(x, y);
    r.u = ranked.rank_sum_x - n1 * (n1 + 1) / 2.0;
    // The test statistic is the larger of U1 and U2 = n1 n2 - U1; its upper
    // tail, doubled, is the two-sided p-value (SciPy's convention).
    const double u_big = std::max(r.u, n1 * n2 - r.u);

    const bool exact = method == UTestMethod::exact || (method == UTestMethod::automatic && !ranked.has_ties &&
                                                        x.size() <= kExactMaxSize && y.size() <= kExactMaxSize);
    if (exact) {
        if (x.size() > 400 || y.size() > 400)
            throw std::invalid_argument("mann_whitney_u: the exact test takes at most 400 values per sample");
        r.exact = true;
        r.p_value = std::min(1.0, 2.0 * exact_upper_tail(x.size(), y.size(), u_big));
        return r;
    }
    const double n = n1 + n2;
    const double mu = n1 * n2 / 2.0;
    const double var = n1 * n2 / 12.0 * ((n + 1.0) - ranked.tie_term / (n * (n - 1.0)));
    if (!(var > 0)) {
        r.p_value = 1.0; // every value equal: no evidence of a difference
        return r;
    }
    const double z = (u_big - mu - 0.5) / std::sqrt(var);            // 0.5: continuity correction
    r.p_value = std::clamp(std::erfc(z / std::sqrt(2.0)), 0.0, 1.0); // 2 * (1 - Phi(z))
    return r;
}

} // namespace opbench
