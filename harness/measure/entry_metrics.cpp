#include "measure/entry_metrics.hpp"

#include <array>

namespace opbench {

namespace {

bool timed(const EntryMetricInputs &in) { return std::isfinite(in.summary.median_s) && in.summary.median_s > 0; }

// A rate at the entry's median; no figure without a time or without the work.
double per_second(double amount, const EntryMetricInputs &in) {
    return timed(in) && amount > 0 ? amount / in.summary.median_s : NAN;
}

const std::array<MetricInfo, 11> kMetrics = {{
    {"median_s", "s", "median", "median of the repetitions' medians, time per call (the one summary)",
     [](const EntryMetricInputs &in) { return timed(in) ? in.summary.median_s : NAN; }},
    {"spread", "1", "+-", "repetitions' relative half-range: (max - min) / 2 / median",
     [](const EntryMetricInputs &in) { return timed(in) ? in.summary.spread : NAN; }},
    {"repetitions", "1", "reps", "passed repetitions behind the median",
     [](const EntryMetricInputs &in) { return timed(in) ? double(in.summary.repetitions) : NAN; }},
    {"repetitions_missed_noise_target", "1", "missed", "repetitions that missed their noise target",
     [](const EntryMetricInputs &in) { return double(in.summary.missed_noise_target); }},
    {"samples", "1", "samples", "samples of those repetitions",
     [](const EntryMetricInputs &in) { return timed(in) && in.samples > 0 ? double(in.samples) : NAN; }},
    {"flop", "FLOP", "FLOP", "floating-point operations of one call (the op table's formula)",
     [](const EntryMetricInputs &in) { return in.flops; }},
    {"byte", "B", "bytes", "bytes one call moves (the op table's formula)",
     [](const EntryMetricInputs &in) { return in.bytes; }},
    {"flop_per_s", "FLOP/s", "GFLOP/s", "flop / median",
     [](const EntryMetricInputs &in) { return per_second(in.flops, in); }},
    {"byte_per_s", "B/s", "GB/s", "byte / median",
     [](const EntryMetricInputs &in) { return per_second(in.bytes, in); }},
    {"pct_peak_compute", "%", "% flop", "flop_per_s as a share of the machine's measured compute peak",
     [](const EntryMetricInputs &in) { return in.pct_peak_compute; }},
    {"pct_peak_bandwidth", "%", "% bw", "byte_per_s as a share of the roof of the cache level the data fits",
     [](const EntryMetricInputs &in) { return in.pct_peak_bandwidth; }},
}};

} // namespace

std::span<const MetricInfo> entry_metrics() { return kMetrics; }

std::vector<double> entry_metric_values(const EntryMetricInputs &in) {
    std::vector<double> values;
    for (const MetricInfo &m : kMetrics) values.push_back(m.get(in));
    return values;
}

nlohmann::json entry_metrics_json(const EntryMetricInputs &in) {
    nlohmann::json j = nlohmann::json::object();
    for (const MetricInfo &m : kMetrics) {
        const double v = m.get(in);
        j[std::string(m.key)] = std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr);
    }
    return j;
}

} // namespace opbench
