// The paired A/B verdict: is `new` slower or faster than `base`, judged on
// pairs (base time, new time) measured next to each other (run/ab_run.hpp)?
// Each pair gives one ratio new / base; the machine's state, which moves
// both sides of a pair together, cancels in it. The test is Wilcoxon's
// signed-rank test on the log ratios (two-sided, normal approximation with
// tie and continuity correction, zero differences dropped: SciPy's
// scipy.stats.wilcoxon(d, zero_method="wilcox", correction=True,
// method="approx")); the change is the Hodges-Lehmann estimate (median of
// the Walsh averages) with its distribution-free 95% interval.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <vector>

namespace opbench {

struct SignedRankResult {
    std::size_t n = 0;  // nonzero differences used
    double w_plus = 0;  // sum of the ranks of the positive differences
    double w_minus = 0; // ... and of the negative ones
    double z = 0;       // standardised statistic (W+ - mean) / sd, continuity-corrected
    double p_value = 1; // two-sided; 1 with no nonzero difference
};

// Wilcoxon's signed-rank test of `d` against a median of zero.
// Throws std::invalid_argument for a NaN.
[[nodiscard]] SignedRankResult wilcoxon_signed_rank(std::span<const double> d);

// Hodges-Lehmann estimate of the median of `d` and its confidence interval
// at `confidence` (from the signed-rank distribution's normal quantile).
struct ShiftEstimate {
    double estimate = 0, low = 0, high = 0;
};
[[nodiscard]] ShiftEstimate hodges_lehmann(std::span<const double> d, double confidence = 0.95);

// Pairs fewer than this cannot reach p < 0.05 in the two-sided test
// (6 pairs all one way: p = 0.031 exactly, 0.046 by the approximation).
inline constexpr std::size_t kMinPairs = 6;

struct PairedOptions {
    double threshold = 0.02; // smallest relative change of the ratio that counts
    double alpha = 0.05;
};

struct PairedVerdict {
    std::size_t pairs = 0;
    double ratio = 1;                    // Hodges-Lehmann estimate of new / base
    double ratio_low = 1, ratio_high = 1; // its 95% interval
    double p_value = 1;
    std::string verdict; // same | faster | slower | noisy
};

// compare's rule (readers/compare.hpp verdict_for) on paired data: a change
// under the threshold is "same"; over it "slower"/"faster" when the test
// is significant, else "noisy". Fewer than kMinPairs pairs: "noisy".
[[nodiscard]] PairedVerdict paired_verdict(std::span<const double> base_times, std::span<const double> new_times,
                                           const PairedOptions &options);

// A case's status from the blocks `ab` left out of its pairs (a starved or a
// throttled repetition: run/abba_schedule.hpp), as `ab` and compare give it:
// "passed" while a block gave a pair; else "starved" (a block left out starved) or
// "throttled" (every block left out throttled), with a one-line reason.
// `starved_retries`: the tries a starved repetition had (its settings).
struct BlocksStatus {
    std::string status = "passed", reason;
};
[[nodiscard]] BlocksStatus blocks_status(std::size_t pairs, std::size_t starved_blocks, std::size_t throttled_blocks,
                                         int starved_retries);
// A compared case's blocks left out, for its row: "2 of 60 blocks left out
// (2 throttled)"; "" when every block gave a pair.
[[nodiscard]] std::string left_out_note(std::size_t blocks, std::size_t starved_blocks,
                                        std::size_t throttled_blocks);

} // namespace opbench
