// An entry's metrics, described once, as measurement settings are
// (settings.hpp): one table of rows (key, unit, short label, getter).
//
//   - The run writes them into each result-set entry as `metrics`
//     ({key: number or null}), next to the entry's `summary`.
//   - The readers compute the same rows from what they read
//     (readers/tidy_records.cpp: every tidy CSV row, compare's records,
//     `run --format`), so a set written before `metrics` existed reads alike.
//   - python/opbench_results.py takes the stored object when a set has it.
//
// Adding a metric is one field and one row: a field in EntryMetricInputs when
// the metric needs a figure not there yet (filled by the run's
// metric_inputs, entry/entry.hpp, and the readers', readers/tidy_records.hpp),
// and a row in entry_metrics().
#pragma once

#include "measure/entry_summary.hpp"

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstddef>
#include <span>
#include <string_view>
#include <vector>

namespace opbench {

// What an entry's metrics are computed from.
struct EntryMetricInputs {
    EntrySummary summary;      // the one summary; median NaN when the entry has no time
    std::size_t samples = 0;   // samples of the passed repetitions; 0 unknown
    double flops = 0;          // work of one call
    double bytes = 0;          // bytes one call moves
    double pct_peak_compute = NAN;   // roofline, at the median; NaN not measured
    double pct_peak_bandwidth = NAN; // against the roof of the level the working set fits
};

struct MetricInfo {
    std::string_view key;   // result-set `metrics` key and tidy CSV column: SI base unit in the name
    std::string_view unit;  // "s", "1" (a count or a ratio), "FLOP", "B", "FLOP/s", "B/s", "%"
    std::string_view label; // short column label for a person: "median", "GFLOP/s"
    std::string_view description;
    double (*get)(const EntryMetricInputs &); // NaN: no figure (an entry without a time)
};

// Every metric, in the tidy CSV's column order.
[[nodiscard]] std::span<const MetricInfo> entry_metrics();

// The `metrics` object of a result-set entry: each key, a number or null.
[[nodiscard]] nlohmann::json entry_metrics_json(const EntryMetricInputs &in);

// Each metric's value in entry_metrics() order.
[[nodiscard]] std::vector<double> entry_metric_values(const EntryMetricInputs &in);

} // namespace opbench
