#include "measure/entry_metrics.hpp"

#include "writers/units.hpp"

#include <fmt/format.h>

#include <array>
#include <stdexcept>

namespace opbench {

namespace {

bool timed(const EntryMetricInputs &in) { return std::isfinite(in.summary.median_s) && in.summary.median_s > 0; }

// A rate at the entry's median; no figure without a time or without the work,
// nor for a throttled entry (issue 41: its time is the fallen clock's).
double per_second(double amount, const EntryMetricInputs &in) {
    return timed(in) && amount > 0 && !gives_no_rate(in.summary.quality) ? amount / in.summary.median_s : NAN;
}
// A share of a roof: none for a throttled entry, as no rate.
double roof_share(double pct, const EntryMetricInputs &in) { return gives_no_rate(in.summary.quality) ? NAN : pct; }

// The rows' texts: each a unit's one way of being shown to a person.
std::string seconds_text(double v) { return format_seconds(v); }
std::string spread_text(double v) {
    if (!std::isfinite(v)) return "-";
    return v >= 10 ? ">999%" : fmt::format("{:.1f}%", v * 100); // >999%: repetitions an order of magnitude apart
}
std::string count_text(double v) { return std::isfinite(v) ? fmt::format("{:.0f}", v) : "-"; }
std::string flop_text(double v) {
    if (!std::isfinite(v)) return "-";
    return v >= 1e9   ? fmt::format("{:.3g} GFLOP", v / 1e9)
           : v >= 1e6 ? fmt::format("{:.3g} MFLOP", v / 1e6)
           : v >= 1e3 ? fmt::format("{:.3g} kFLOP", v / 1e3)
                      : fmt::format("{:.3g} FLOP", v);
}
std::string bytes_text(double v) { return format_bytes(v); }
// Three significant digits, and every digit of a larger number ("2000", not
// "2e+03": a GPU or a many-core bf16 run reaches thousands of GFLOP/s).
std::string three_digits(double v) {
    return std::fabs(v) >= 1000 ? fmt::format("{:.0f}", v) : fmt::format("{:.3g}", v);
}
// Rates in the unit of their label (GFLOP/s, GB/s), so a column reads alike.
std::string gflop_per_s_text(double v) { return std::isfinite(v) ? three_digits(v / 1e9) + " GFLOP/s" : "-"; }
std::string gb_per_s_text(double v) { return std::isfinite(v) ? three_digits(v / 1e9) + " GB/s" : "-"; }
std::string percent_text(double v) {
    if (!std::isfinite(v)) return "-";
    return v < 10 ? fmt::format("{:.2g}%", v) : fmt::format("{:.0f}%", v);
}

const std::array<MetricInfo, 11> kMetrics = {{
    {"median_s", "s", "median", "median of the repetitions' medians, time per call (the one summary)",
     [](const EntryMetricInputs &in) { return timed(in) ? in.summary.median_s : NAN; }, seconds_text},
    {"spread", "1", "+-", "repetitions' relative half-range: (max - min) / 2 / median",
     [](const EntryMetricInputs &in) { return timed(in) ? in.summary.spread : NAN; }, spread_text},
    {"repetitions", "1", "reps", "passed repetitions behind the median",
     [](const EntryMetricInputs &in) { return timed(in) ? double(in.summary.repetitions) : NAN; }, count_text},
    {"repetitions_missed_noise_target", "1", "missed", "repetitions that missed their noise target",
     [](const EntryMetricInputs &in) { return double(in.summary.missed_noise_target); }, count_text},
    {"samples", "1", "samples", "samples of those repetitions",
     [](const EntryMetricInputs &in) { return timed(in) && in.samples > 0 ? double(in.samples) : NAN; }, count_text},
    {"flop", "FLOP", "FLOP", "floating-point operations of one call (the op table's formula)",
     [](const EntryMetricInputs &in) { return in.flops; }, flop_text},
    {"byte", "B", "bytes", "bytes one call moves (the op table's formula)",
     [](const EntryMetricInputs &in) { return in.bytes; }, bytes_text},
    {"flop_per_s", "FLOP/s", "GFLOP/s", "flop / median",
     [](const EntryMetricInputs &in) { return per_second(in.flops, in); }, gflop_per_s_text},
    {"byte_per_s", "B/s", "GB/s", "byte / median", [](const EntryMetricInputs &in) { return per_second(in.bytes, in); },
     gb_per_s_text},
    {"pct_peak_compute", "%", "% flop", "flop_per_s as a share of the machine's measured compute peak",
     [](const EntryMetricInputs &in) { return roof_share(in.pct_peak_compute, in); }, percent_text},
    {"pct_peak_bandwidth", "%", "% bw", "byte_per_s as a share of the roof of the cache level the data fits",
     [](const EntryMetricInputs &in) { return roof_share(in.pct_peak_bandwidth, in); }, percent_text},
}};

} // namespace

std::span<const MetricInfo> entry_metrics() { return kMetrics; }

const MetricInfo &metric(std::string_view key) {
    for (const MetricInfo &m : kMetrics)
        if (m.key == key) return m;
    throw std::logic_error(fmt::format("no metric '{}' in entry_metrics()", key));
}

std::string metric_text(std::string_view key, const EntryMetricInputs &in) {
    const MetricInfo &m = metric(key);
    return m.text(m.get(in));
}

namespace {
bool bound_is(const EntryMetricInputs &in, std::string_view kind) { return in.bound.rfind(kind, 0) == 0; }
} // namespace

const MetricInfo &throughput_metric(const EntryMetricInputs &in) {
    return bound_is(in, "memory") || !(in.flops > 0) ? metric("byte_per_s") : metric("flop_per_s");
}

const MetricInfo *peak_metric(const EntryMetricInputs &in) {
    const MetricInfo &compute = metric("pct_peak_compute"), &bandwidth = metric("pct_peak_bandwidth");
    const double f = compute.get(in), m = bandwidth.get(in);
    if (in.device_roof == "none") return nullptr; // the roof of its unit and dtype was not measured
    if (!in.device_roof.empty()) { // the device roof that judged it (issue 41)
        const bool by_bandwidth = in.device_roof == "dram" || in.device_roof == "l2";
        if (by_bandwidth && std::isfinite(m)) return &bandwidth;
        if (!by_bandwidth && std::isfinite(f)) return &compute;
    }
    if (bound_is(in, "compute") && std::isfinite(f)) return &compute;
    if (bound_is(in, "memory") && std::isfinite(m)) return &bandwidth;
    if (std::isfinite(f) && (!std::isfinite(m) || f >= m)) return &compute;
    if (std::isfinite(m)) return &bandwidth;
    return nullptr;
}

std::string peak_text(const EntryMetricInputs &in) {
    const MetricInfo *m = peak_metric(in);
    if (!m) return "-";
    if (!in.device_roof.empty()) return m->text(m->get(in)) + " " + in.device_roof; // "62% tensor bf16"
    // The roof's word is the row's label after "% " ("flop", "bw"); a
    // bandwidth share of a cache level's roof names the level ("L2 bw").
    std::string roof(m->label.substr(m->label.find(' ') + 1));
    if (m->key == "pct_peak_bandwidth" && !in.bandwidth_roof.empty() && in.bandwidth_roof != "DRAM")
        roof = in.bandwidth_roof + " " + roof;
    // Likewise a compute roof the backend's ISA chose ("AMX-BF16 flop").
    if (m->key == "pct_peak_compute" && !in.compute_roof.empty()) roof = in.compute_roof + " " + roof;
    return m->text(m->get(in)) + " " + roof;
}

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
