// Sample times as a result set stores them (results/README.md,
// `stats.sample_histogram`): a sample is `calls_per_sample` calls timed
// together by std::chrono::steady_clock, so its total is a whole number of
// the clock's ticks and nothing finer is known. The set keeps each distinct
// tick count once, ascending, with how often it occurred. That keeps every
// value to the timer's resolution (or to the coarser unit of the bound
// below) and drops only the order the samples were taken in, which no
// reader uses (the U test, quantiles and box plots sort them anyway). A
// quick-suite set measured 1.7 MB this way, 5.8-7.0 MB with decimal doubles
// (docs/ci.md); with the bound and per-case fields once, 0.83 MB
// (results/README.md, "Per-case fields").
#pragma once

#include <nlohmann/json.hpp>

#include <stdexcept>
#include <string>
#include <vector>

namespace opbench {

// steady_clock's tick in seconds (1e-9 on Linux).
[[nodiscard]] double steady_tick_seconds();

// {"tick_seconds": T, "ticks": "12034 1 1 3", "counts": "2 5 1 1"}: `ticks`
// holds the distinct sample totals in ticks, ascending, each written as its
// difference from the one before (the first as itself), so most take one or
// two digits; `counts` how many samples had each. Both are strings of whole
// numbers separated by spaces: a JSON array would put each number on a line
// of its own in the indented set, several times the bytes. `per_call_seconds` are sample totals
// divided by `calls_per_sample`, as the recipe records them.
// At most `max_bins` distinct totals are kept: where the samples have more,
// the unit becomes 2, 4, 8... clock ticks until they fit, and tick_seconds
// is that unit (each sample then to within half of it), so the histogram's
// size is bounded however many samples a fast CPU takes.
constexpr std::size_t kSampleHistogramMaxBins = 64;
[[nodiscard]] nlohmann::json encode_sample_histogram(const std::vector<double> &per_call_seconds,
                                                     int calls_per_sample, double tick_seconds = steady_tick_seconds(),
                                                     std::size_t max_bins = kSampleHistogramMaxBins);

// A histogram that is not what encode_sample_histogram writes; what() says
// which member and what was expected.
class SampleHistogramError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// Per-call seconds back, ascending. Checks the shape (tick_seconds a
// positive finite number, ticks and counts strings of as many whole numbers
// >= 0, counts >= 1); throws SampleHistogramError.
[[nodiscard]] std::vector<double> decode_sample_histogram(const nlohmann::json &histogram, int calls_per_sample);

} // namespace opbench
