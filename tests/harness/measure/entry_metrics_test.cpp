// The metrics table (harness/measure/entry_metrics.hpp): its keys are unique
// and carry their unit, each getter computes its figure from a hand-made
// entry, and an entry without a time gives no rate (null in the JSON), never 0.
#include "measure/entry_metrics.hpp"

#include <gtest/gtest.h>

#include <set>
#include <string>

using namespace opbench;

namespace {

EntryMetricInputs timed_entry() {
    EntryMetricInputs in;
    in.summary.median_s = 2e-6;
    in.summary.spread = 0.05;
    in.summary.repetitions = 9;
    in.summary.missed_noise_target = 1;
    in.samples = 900;
    in.flops = 4e6;
    in.bytes = 1e6;
    in.pct_peak_compute = 12.5;
    in.pct_peak_bandwidth = 40;
    return in;
}

bool ends_with(std::string_view s, std::string_view tail) {
    return s.size() >= tail.size() && s.substr(s.size() - tail.size()) == tail;
}

} // namespace

TEST(EntryMetrics, KeysAreUniqueAndNameTheirUnit) {
    std::set<std::string_view> keys;
    for (const MetricInfo &m : entry_metrics()) {
        EXPECT_TRUE(keys.insert(m.key).second) << m.key << " twice";
        EXPECT_FALSE(m.label.empty()) << m.key;
        EXPECT_FALSE(m.description.empty()) << m.key;
        if (m.unit == "s") {
            EXPECT_TRUE(ends_with(m.key, "_s")) << m.key;
        }
        if (m.unit == "FLOP/s" || m.unit == "B/s") {
            EXPECT_TRUE(ends_with(m.key, "_per_s")) << m.key;
        }
        if (m.unit == "%") {
            EXPECT_EQ(m.key.substr(0, 4), "pct_") << m.key;
        }
    }
}

TEST(EntryMetrics, EachGetterComputesItsFigure) {
    const nlohmann::json j = entry_metrics_json(timed_entry());
    EXPECT_DOUBLE_EQ(j["median_s"].get<double>(), 2e-6);
    EXPECT_DOUBLE_EQ(j["spread"].get<double>(), 0.05);
    EXPECT_DOUBLE_EQ(j["repetitions"].get<double>(), 9);
    EXPECT_DOUBLE_EQ(j["repetitions_missed_noise_target"].get<double>(), 1);
    EXPECT_DOUBLE_EQ(j["samples"].get<double>(), 900);
    EXPECT_DOUBLE_EQ(j["flop_per_s"].get<double>(), 2e12); // 4e6 FLOP in 2 us
    EXPECT_DOUBLE_EQ(j["byte_per_s"].get<double>(), 5e11);
    EXPECT_DOUBLE_EQ(j["pct_peak_bandwidth"].get<double>(), 40);
    // The JSON object and the value list follow the table, in its order.
    const std::vector<double> values = entry_metric_values(timed_entry());
    ASSERT_EQ(values.size(), entry_metrics().size());
    ASSERT_EQ(j.size(), entry_metrics().size());
    for (std::size_t i = 0; i < values.size(); ++i)
        EXPECT_DOUBLE_EQ(j[std::string(entry_metrics()[i].key)].get<double>(), values[i]);
}

TEST(EntryMetrics, AnEntryWithoutATimeHasNoRateNotZero) {
    EntryMetricInputs in = timed_entry();
    in.summary.median_s = NAN;
    in.pct_peak_compute = in.pct_peak_bandwidth = NAN;
    const nlohmann::json j = entry_metrics_json(in);
    for (const char *k : {"median_s", "spread", "repetitions", "samples", "flop_per_s", "byte_per_s",
                          "pct_peak_compute", "pct_peak_bandwidth"})
        EXPECT_TRUE(j[k].is_null()) << k;
    // The work of a call is known without a time.
    EXPECT_DOUBLE_EQ(j["flop"].get<double>(), 4e6);
    EXPECT_DOUBLE_EQ(j["repetitions_missed_noise_target"].get<double>(), 1);
}
