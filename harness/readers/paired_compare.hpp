// compare on a paired set (`opbench ab`, run/ab_run.hpp): the verdict
// per case from its pairs (each iteration entry's `pair` field), by the
// paired test (measure/paired_stats.hpp); and the drift canary
// (context.opbench.canary, measure/canary.hpp) for any set that has one:
// its drift, and --normalize canary, which divides a set's times by its
// machine speed before an unpaired comparison.
#pragma once

#include "measure/canary.hpp"
#include "measure/paired_stats.hpp"
#include "measure/throttle.hpp"
#include "readers/result_set_reader.hpp"
#include "writers/writer.hpp"

#include <optional>
#include <string>
#include <vector>

namespace opbench {

// The set was written by `opbench ab` (context.opbench.paired).
[[nodiscard]] bool is_paired_set(const ResultSet &set);

struct PairedCaseVerdict {
    std::string label; // the case's name without its backend
    std::string base_backend, new_backend;
    std::vector<double> base_times, new_times; // seconds per call, one per pair
    PairedVerdict verdict;
    std::string reason;   // not compared: why (a side failed; every block starved or throttled)
    std::string left_out; // compared with blocks left out: "2 of 60 blocks left out (2 throttled)"; "" none
};

struct PairedComparison {
    std::string path, base, next; // the set and its two backends
    PairedOptions options;
    std::vector<PairedCaseVerdict> cases;
    std::vector<CanaryReading> canary;
    double canary_drift = 0;
    std::optional<ClockRange> device_clock; // the repetitions' SM clock (stats.sm_clock_mhz); none on a CPU
    [[nodiscard]] std::size_t count(const std::string &verdict) const;
};

// Each case's pairs and verdict. Throws ResultSetError when the set's pair
// fields are malformed (a pair index twice, a time not a positive number).
[[nodiscard]] PairedComparison compare_paired(const ResultSet &set, const PairedOptions &options);

// The table and the same as JSON data.
[[nodiscard]] Document paired_document(const PairedComparison &c);

// The set's canary readings, if it recorded any.
[[nodiscard]] std::optional<std::vector<CanaryReading>> canary_of(const ResultSet &set);

// --normalize canary: every time in `set` divided by the set's median
// canary time over the median canary time of `reference_seconds`, so two
// sets measured at different machine speeds compare at one. Throws
// std::invalid_argument when the set has no canary.
void normalize_by_canary(ResultSet &set, double reference_seconds);

} // namespace opbench
