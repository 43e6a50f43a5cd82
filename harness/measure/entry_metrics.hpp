// An entry's metrics, described once, as measurement settings are
// (settings.hpp): one table of rows (key, unit, short label, getter).
//
//   - The run writes them into each result-set entry as `metrics`
//     ({key: number or null}), next to the entry's `summary`.
//   - The readers compute the same rows from what they read
//     (readers/tidy_records.cpp: every tidy CSV row, compare's records,
//     `run --format`), so a set written before `metrics` existed reads alike.
//   - python/opbench_results.py takes the stored object when a set has it.
//   - The views show the rows' values in the rows' own text (MetricInfo::text)
//     under the rows' labels: the run console, compare's tables (also
//     --by backend / machine) and the report. Which rate and which % of peak a
//     one-line view shows for an entry's bound is throughput_metric() and
//     peak_metric() here, so every view picks the same one.
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
#include <string>
#include <string_view>
#include <vector>

namespace opbench {

// What an entry's metrics are computed from.
struct EntryMetricInputs {
    EntrySummary summary;                // the one summary; median NaN when the entry has no time
    std::size_t samples = 0;             // samples of the passed repetitions; 0 unknown
    double flops = 0;                    // work of one call
    double bytes = 0;                    // bytes one call moves
    double pct_peak_compute = NAN;       // roofline, at the median; NaN not measured
    double pct_peak_bandwidth = NAN;     // against the roof of the level the working set fits
    std::string bound;                   // the roofline's: "compute-bound", "memory-bound", ...; empty: none
    std::string bandwidth_roof = "DRAM"; // the level pct_peak_bandwidth is of: "L1d", "L2", "L3", "DRAM"
    // The compute roof pct_peak_compute is of, where the backend's ISA chose
    // it ("AMX-BF16", "AVX2 FMA"; issue 28); "" the dtype's usual roof.
    std::string compute_roof;
    // Why a % of peak is above 100, for this entry (Roofline::above_roof_cause);
    // "" none recorded (at most 100, or a set from before issue 28).
    std::string above_roof_cause;
    // A GPU entry judged on its device's measured roofs (roofline.device_roof,
    // issue 41): that roof's label ("tensor bf16", "simt f32", "dram"). The
    // views then show its share, named: "62% tensor bf16", "71% dram".
    // "none" when its roof was not measured (no share shown: "-"); "" on a
    // CPU, and for a device whose plugin measures no roofs.
    std::string device_roof;
};

struct MetricInfo {
    std::string_view key;   // result-set `metrics` key and tidy CSV column: SI base unit in the name
    std::string_view unit;  // "s", "1" (a count or a ratio), "FLOP", "B", "FLOP/s", "B/s", "%"
    std::string_view label; // short column label for a person: "median", "GFLOP/s"
    std::string_view description;
    double (*get)(const EntryMetricInputs &); // NaN: no figure (an entry without a time)
    // The value for a person, its unit scaled and named: "12.3 us", "262 GFLOP/s",
    // "39%"; "-" for no figure (NaN). Every view formats the row with this.
    std::string (*text)(double value);
};

// Every metric, in the tidy CSV's column order.
[[nodiscard]] std::span<const MetricInfo> entry_metrics();

// The row of `key`. An unknown key is a mistake in the code, not in input:
// std::logic_error naming it.
[[nodiscard]] const MetricInfo &metric(std::string_view key);

// The row's value for `in` in the row's text: metric(key).text(get(in)).
[[nodiscard]] std::string metric_text(std::string_view key, const EntryMetricInputs &in);

// The rate a one-line view shows: byte_per_s for a memory-bound entry or one
// without FLOPs, else flop_per_s.
[[nodiscard]] const MetricInfo &throughput_metric(const EntryMetricInputs &in);
// The % of peak that matters for the entry's bound: pct_peak_compute when
// compute-bound, pct_peak_bandwidth when memory-bound, else the larger of
// the measured ones; nullptr when neither was measured. An entry judged by
// a device roof (device_roof): the % of that roof, whatever the bound.
[[nodiscard]] const MetricInfo *peak_metric(const EntryMetricInputs &in);
// That % with the roof it is of: "39% flop", "61% bw" (DRAM), "61% L2 bw",
// a device roof's "62% tensor bf16" or "71% dram"; "-".
[[nodiscard]] std::string peak_text(const EntryMetricInputs &in);

// The `metrics` object of a result-set entry: each key, a number or null.
[[nodiscard]] nlohmann::json entry_metrics_json(const EntryMetricInputs &in);

// Each metric's value in entry_metrics() order.
[[nodiscard]] std::vector<double> entry_metric_values(const EntryMetricInputs &in);

} // namespace opbench
