// Change points of one case's series of archived runs (issue 43): a
// penalised piecewise-constant fit of the runs' log medians (PELT), a run
// weighted by its own interval where its spread marks it disturbed (over 2x
// the series' median), as a typical run otherwise (a run's spread says
// little about how far its median moved: docs/measurement.md). A run's
// variance is that within-run part (spread over the square root of the
// repetitions) plus the between-run variance of the series, estimated
// robustly from successive differences, so a disturbed run counts less and
// a quiet series is not fitted to its runs' own noise; the variances are
// then scaled together to the
// scatter of the series' successive differences (a loaded machine's
// repetitions can spread far more than its runs' medians move). Runs without a time (starved, failed, absent) are
// left out by the caller (`usable` false).
//
// The penalty is in chi-square units (the fit's cost is a weighted sum of
// squares), so one value serves every case and machine; kDefaultPenalty is
// calibrated on A/A archives (docs/measurement.md, "Change points in the
// archive").
#pragma once

#include <cstddef>
#include <optional>
#include <vector>

namespace opbench {

// One run of a case.
struct SeriesPoint {
    double median_s = 0;    // the run's median, seconds (> 0)
    double spread = 0;      // (max - min) / 2 / median of its repetitions; NaN or 0: unknown
    std::size_t repetitions = 1;
    bool usable = true;     // false: starved, failed or absent (left out)
};

// Calibrated on A/A archives: the smallest penalty with at most 1 false
// change per 1,000 case-runs, with a margin (docs/measurement.md).
inline constexpr double kDefaultPenalty = 25.0;
// A segment holds at least this many runs, so one outlying run is not a change
// (a change among the newest runs is seen once this many runs follow it).
inline constexpr std::size_t kDefaultMinRuns = 3;

struct ChangePointOptions {
    double penalty = kDefaultPenalty;
    std::size_t min_runs = kDefaultMinRuns;
};

struct ChangePoint {
    std::size_t before = 0; // index (into the series) of the last usable run before the change
    std::size_t after = 0;  // index of the first usable run after it
    double ratio = 1;       // the level after / before (> 1: slower)
    double ratio_low = 1, ratio_high = 1; // its 95% interval
    std::size_t runs_before = 0, runs_after = 0; // usable runs of the segments on each side
    std::optional<std::size_t> undone_by;        // index (into the changes) of the later change that undid it
};

// The fitted segments' breaks, oldest first. Fewer than 2 * min_runs usable
// runs: none.
[[nodiscard]] std::vector<ChangePoint> find_change_points(const std::vector<SeriesPoint> &series,
                                                          const ChangePointOptions &options = {});

// The between-run standard deviation of log medians that find_change_points
// adds to each run's own (1.4826 x the median absolute successive difference
// / sqrt 2, less the runs' mean within-run variance); exposed for tests.
[[nodiscard]] double between_run_sigma(const std::vector<double> &log_medians,
                                       const std::vector<double> &within_variances);

} // namespace opbench
