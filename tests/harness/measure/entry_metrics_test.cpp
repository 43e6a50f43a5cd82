// The metrics table (harness/measure/entry_metrics.hpp): its keys are unique
// and carry their unit, each getter computes its figure from a hand-made
// entry, and an entry without a time gives no rate (null in the JSON), never 0;
// each row has the text the views show, and the bound picks the rate and the
// % of peak a one-line view shows.
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

// Each row says its value for a person (the views show only this text): the
// unit scaled to the row's label, "-" for no figure, never "nan".
// tests/harness/metric_text.hpp holds the views' tests to these texts.
TEST(EntryMetrics, EachRowHasItsText) {
    const EntryMetricInputs in = timed_entry();
    EXPECT_EQ(metric_text("median_s", in), "2 us");
    EXPECT_EQ(metric_text("spread", in), "5.0%");
    EXPECT_EQ(metric_text("repetitions", in), "9");
    EXPECT_EQ(metric_text("samples", in), "900");
    EXPECT_EQ(metric_text("flop", in), "4 MFLOP");
    EXPECT_EQ(metric_text("byte", in), "976.6 KiB");
    EXPECT_EQ(metric_text("flop_per_s", in), "2000 GFLOP/s") << "every digit, no exponent";
    EXPECT_EQ(metric_text("byte_per_s", in), "500 GB/s");
    EXPECT_EQ(metric_text("pct_peak_compute", in), "12%");
    EXPECT_EQ(metric_text("pct_peak_bandwidth", in), "40%");
    EXPECT_EQ(metric("pct_peak_compute").text(2.25), "2.2%") << "two digits under 10%";
    EXPECT_EQ(metric("spread").text(12.0), ">999%") << "repetitions an order of magnitude apart";
    for (const MetricInfo &m : entry_metrics()) {
        ASSERT_NE(m.text, nullptr) << m.key;
        EXPECT_EQ(m.text(NAN), "-") << m.key;
    }
    // The rates' text is in their label's unit, so a column reads alike.
    EXPECT_NE(metric_text("flop_per_s", in).find(metric("flop_per_s").label), std::string::npos);
    EXPECT_NE(metric_text("byte_per_s", in).find(metric("byte_per_s").label), std::string::npos);
}

TEST(EntryMetrics, AnUnknownKeyIsAMistakeInTheCode) {
    EXPECT_EQ(metric("byte_per_s").unit, "B/s");
    EXPECT_THROW((void)metric("bytes_per_second"), std::logic_error);
}

// Which rate and which % of peak a one-line view shows: the one the entry's
// bound is about, the same in every view.
TEST(EntryMetrics, TheBoundPicksTheRateAndThePeak) {
    EntryMetricInputs in = timed_entry(); // 12.5% of the compute peak, 40% of the bandwidth roof
    in.bound = "compute-bound";
    EXPECT_EQ(throughput_metric(in).key, "flop_per_s");
    EXPECT_EQ(peak_metric(in)->key, "pct_peak_compute");
    EXPECT_EQ(peak_text(in), "12% flop");
    in.bound = "memory-bound";
    EXPECT_EQ(throughput_metric(in).key, "byte_per_s");
    EXPECT_EQ(peak_text(in), "40% bw") << "DRAM's roof is plain bw";
    in.bandwidth_roof = "L2";
    EXPECT_EQ(peak_text(in), "40% L2 bw") << "a cache level's roof is named";
    in.bound = "overhead-bound"; // the larger share
    EXPECT_EQ(peak_metric(in)->key, "pct_peak_bandwidth");
    in.pct_peak_bandwidth = NAN;
    EXPECT_EQ(peak_metric(in)->key, "pct_peak_compute") << "the measured one";
    in.pct_peak_compute = NAN;
    EXPECT_EQ(peak_metric(in), nullptr);
    EXPECT_EQ(peak_text(in), "-");
    in.flops = 0; // no FLOPs: the byte rate whatever the bound
    in.bound = "compute-bound";
    EXPECT_EQ(throughput_metric(in).key, "byte_per_s");
}
