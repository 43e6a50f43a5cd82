// The tidy form of result sets for data tools (CSV, pandas): one row per
// entry (case x backend) and set, every number in SI base units with the unit
// in the column name (median_s, flop_per_s), op, dtype, variant, backend and
// each shape parameter (param_<name>) a column of its own, and an entry
// without a time saying why in `status` and `reason`, never in a number
// column (those stay empty). The metric columns are measure/entry_metrics.hpp's
// table. results/README.md, "CSV", lists the columns;
// python/opbench_results.py builds the same rows from the JSON.
#pragma once

#include "measure/entry_metrics.hpp"
#include "readers/compare.hpp"
#include "readers/result_set_reader.hpp"
#include "writers/writer.hpp"

#include <functional>
#include <vector>

namespace opbench {

// An entry's name without its backend: "OP/M:64/N:64/dt:f32/be:onednn/case:sq"
// gives "OP/M:64/N:64/dt:f32/case:sq", so the same case on naive
// and onednn (or on NAME@base and NAME@new) has one key: the CSV's `key`.
[[nodiscard]] std::string entry_key(const std::string &name);

// What a read entry's metrics are computed from: the summary of `times`
// (median NaN unless its status is "ok"), its samples, work and roofline.
// The run computes the same from its records (entry/entry.hpp).
[[nodiscard]] EntryMetricInputs metric_inputs(const CaseRecord &c, const ValidTimes &times);

// Every entry of every set, set by set in the sets' order. `keep` (empty:
// all) picks entries. The time is valid_times()'s: the entry's summary.
[[nodiscard]] Table entry_records(const std::vector<ResultSet> &sets,
                                  const std::function<bool(const CaseRecord &)> &keep = {});

// entry_records() plus, on each later set's rows, its comparison with the
// first set: base_set, ratio, ratio_ci95_low/high, p_value, test, verdict
// (the first set's own rows: verdict "base").
[[nodiscard]] Table comparison_records(const std::vector<ResultSet> &sets, const Comparison &comparison);

} // namespace opbench
