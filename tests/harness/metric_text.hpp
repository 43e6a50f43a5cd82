// What a view must show for a metric: its value for `in` as the metrics table
// (harness/measure/entry_metrics.hpp) formats it, taken from
// entry_metric_values(), the numbers the result set's `metrics` and the tidy
// CSV hold. The views' tests (run console, compare, compare --by, report)
// compare their cells with it.
#pragma once

#include "measure/entry_metrics.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace opbench::test {

inline std::string table_text(std::string_view key, const EntryMetricInputs &in) {
    const std::vector<double> values = entry_metric_values(in);
    for (std::size_t i = 0; i < entry_metrics().size(); ++i)
        if (entry_metrics()[i].key == key) return entry_metrics()[i].text(values[i]);
    return "no metric " + std::string(key);
}

} // namespace opbench::test
