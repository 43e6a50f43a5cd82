// The Mann-Whitney U test (Wilcoxon rank-sum): do two samples come from the
// same distribution, or does one tend to be larger? compare uses it on the
// repetitions' medians (or, with too few repetitions, the per-sample times)
// of one case in two result sets. Results agree with SciPy's
// scipy.stats.mannwhitneyu(x, y, alternative="two-sided", method=...) to
// rounding (tests/harness/mann_whitney_test.cpp holds values from SciPy 1.10).
#pragma once

#include <span>
#include <string_view>

namespace opbench {

struct UTestResult {
    double u = 0;       // U of the first sample: pairs (x, y) with x > y, ties counting 1/2
    double p_value = 1; // two-sided
    bool exact = false; // exact null distribution (no ties, small samples) or normal approximation
};

// How the p-value is computed.
enum class UTestMethod {
    automatic,  // exact when there are no ties and both samples have at most kExactMaxSize values
    exact,      // the exact distribution of U, ignoring ties (as SciPy's "exact")
    asymptotic, // normal approximation with tie correction and continuity correction
};

inline constexpr std::size_t kExactMaxSize = 50;

// Two-sided test. Either sample empty: u = 0, p = 1 (nothing to test).
// Throws std::invalid_argument for a NaN value, or for `exact` with a sample
// of more than 400 values (the counts would overflow a double).
[[nodiscard]] UTestResult mann_whitney_u(std::span<const double> x, std::span<const double> y,
                                         UTestMethod method = UTestMethod::automatic);

// The smallest two-sided p-value the exact test can reach with these sample
// sizes, 2 / C(n1 + n2, n1): below alpha only if the samples are large
// enough to ever show a difference (4 vs 4 reaches 0.029; 3 vs 3 only 0.1).
[[nodiscard]] double min_two_sided_p(std::size_t n1, std::size_t n2);

} // namespace opbench
