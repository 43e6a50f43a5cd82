#include "entry/results.hpp"

#include "measure/sample_codec.hpp"
#include "measure/throttle.hpp"
#include "measure/settings.hpp"

#include "opbench/ops.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <stdexcept>
#include <unistd.h>

namespace fs = std::filesystem;

namespace opbench {


namespace {
nlohmann::json finite_or_null(double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); }
// A figure whose unknown value is -1 (measure/records.hpp).
nlohmann::json known_or_null(double v) { return v >= 0 ? finite_or_null(v) : nlohmann::json(nullptr); }
} // namespace

nlohmann::json summary_json(const RepetitionRecord &r) {
    const SampleSummary &s = r.summary;
    return {{"samples", s.n},
            {"calls_per_sample", r.calls_per_sample},
            {"min", s.min},
            {"mean", s.mean},
            {"median", s.median},
            {"p90", s.p90},
            {"p99", s.p99},
            {"max", s.max},
            {"stddev", s.stddev},
            {"cv", s.cv},
            {"median_ci95", {s.median_ci_low, s.median_ci_high}},
            {"noise", s.noise},
            {"noise_target_met", r.target_met},
            {"timed_out", r.timed_out},
            {"outliers_low", s.outliers_low},
            {"outliers_high", s.outliers_high},
            {"cpu_time_per_call", r.cpu_seconds_per_call},
            {"device_time_per_call",
             r.device_seconds_per_call >= 0 ? nlohmann::json(r.device_seconds_per_call) : nlohmann::json(nullptr)},
            // Every sample, to the timer's tick, without their order (sample_codec.hpp).
            {"sample_histogram", encode_sample_histogram(r.sample_times, r.calls_per_sample)},
            {"process", r.process},
            // Starvation (measure/starvation.hpp); null where not readable.
            {"run_queue_wait_seconds", known_or_null(r.run_queue_wait_seconds)},
            {"run_queue_waits", r.run_queue_waits},
            {"threads_ran", r.threads_ran},
            {"involuntary_switches",
             r.involuntary_switches >= 0 ? nlohmann::json(r.involuntary_switches) : nlohmann::json(nullptr)},
            {"starved_share", known_or_null(r.starved_share)},
            {"starved", r.starved},
            {"remeasured", r.remeasured},
            // The device's clock and the host's time per call (issue 41); null where the plugin gives none.
            {"sm_clock_mhz", r.sm_clock_mhz > 0 ? nlohmann::json(r.sm_clock_mhz) : nlohmann::json(nullptr)},
            {"power_watts", r.power_watts >= 0 ? nlohmann::json(r.power_watts) : nlohmann::json(nullptr)},
            {"temperature_c", r.temperature_c > -273 ? nlohmann::json(r.temperature_c) : nlohmann::json(nullptr)},
            // NVML's names; null when it named none (or was not read).
            {"clock_event_reasons", r.clock_event_reasons ? nlohmann::json(clock_event_reason_names(r.clock_event_reasons))
                                                          : nlohmann::json(nullptr)},
            {"clock_share", known_or_null(r.clock_share)},
            {"throttled", r.throttled},
            {"host_time_per_call",
             r.host_seconds_per_call >= 0 ? nlohmann::json(r.host_seconds_per_call) : nlohmann::json(nullptr)},
            {"wall_time_per_call",
             r.wall_seconds_per_call >= 0 ? nlohmann::json(r.wall_seconds_per_call) : nlohmann::json(nullptr)}};
}

namespace {
// roofline.device_roof (issue 41): the device roof that judged a GPU entry and its share of it.
nlohmann::json device_roof_json(const DeviceRoofJudgement &d) {
    auto positive_or_null = [](double v) { return v > 0 && std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); };
    if (d.roof.empty()) return {{"roof", nullptr}, {"share", nullptr}, {"missing", d.missing}};
    return {{"roof", d.roof},
            {"unit", d.unit},
            {"dtype", d.dtype},
            {"measured", d.measured},
            {"datasheet", positive_or_null(d.datasheet)},
            {"sm_clock_mhz", positive_or_null(d.sm_clock_mhz)},
            {"method", d.method},
            {"share", finite_or_null(d.share)},
            {"cause", d.cause}};
}
} // namespace

nlohmann::json case_fields(const CaseResult &r) {
    const Case &c = *r.source;
    const opb_op_desc &d = c.desc;
    nlohmann::json j;
    j["op"] = op_name(d.op);
    j["backend"] = r.backend;
    j["dtype"] = dtype_name(d.dtype);
    j["variant"] = variant_name(d.op, d.variant);
    j["case"] = c.name;
    j["params"] = shape_params(d);
    j["flops"] = op_flops(d);
    j["bytes"] = op_bytes(d);
    j["arithmetic_intensity"] = arithmetic_intensity(d);
    const nlohmann::json measurement = measurement_fields(r, c.settings, c.desc.threads, c.where);
    for (const auto &[k, v] : measurement.items()) j[k] = v;
    return j;
}

namespace {
// Every setting with a result key, named and valued as the table says; the
// launch mode that ran, and the threads the entry used.
nlohmann::json settings_json(const CaseResult &r, const MeasureSettings &measured_with, int threads_resolved) {
    nlohmann::json settings = nlohmann::json::object();
    for (const SettingInfo &info : measurement_settings()) {
        if (info.result_key.empty()) continue;
        const double v = info.get(measured_with);
        if (!setting_value_names(info.type).empty())
            settings[std::string(info.result_key)] = value_text(info, v);
        else if (info.type == SettingType::integer)
            settings[std::string(info.result_key)] = static_cast<int64_t>(v);
        else
            settings[std::string(info.result_key)] = v;
    }
    // The launch mode that ran: graph's fallback records batch, with what was
    // asked and why (fields added only where it fell back).
    if (r.launch_used >= 0) settings["launch"] = launch_mode_name(static_cast<LaunchMode>(r.launch_used));
    if (!r.launch_fallback.empty()) {
        settings["launch_requested"] = launch_mode_name(measured_with.launch);
        settings["launch_fallback"] = r.launch_fallback;
    }
    settings["threads_resolved"] = threads_resolved;
    return settings;
}
} // namespace

nlohmann::json measurement_fields(const CaseResult &r, const MeasureSettings &measured_with, int threads_resolved,
                                  const SourceLocation &where) {
    nlohmann::json j;
    j["status"] = case_status_name(r.status);
    j["reason"] = r.reason;
    j["reference"] = r.is_reference;
    j["nmse"] = r.nmse >= 0 ? nlohmann::json(r.nmse) : nlohmann::json(nullptr);
    j["nmse_threshold"] = r.nmse_threshold;
    // How the output was checked; "verified" is false for --verify off (and
    // for anything that did not pass a check), so an unchecked entry can
    // never read as a checked one.
    j["verification"] = r.checked ? verification_json(r.verification) : nlohmann::json(nullptr);
    j["verified"] = r.checked && r.verification.verified;
    j["prepare_seconds"] = r.prepare_seconds;
    j["verify_seconds"] = r.verify_seconds;
    j["measure_seconds"] = r.measure_seconds;
    j["process_start_seconds"] = r.process_start_seconds;
    j["inputs_seconds"] = r.inputs_seconds;
    j["settings"] = settings_json(r, measured_with, threads_resolved);
    j["suite_location"] = where.str();
    // Within-repetition noise says how precisely each repetition's median is
    // known; the spread of the repetitions' medians says how much the case
    // moved between them (load, frequency, placement), which is what a
    // comparison between runs must allow for.
    if (r.repetitions.size() >= 2) {
        double lo = r.repetitions.front().summary.median, hi = lo;
        std::vector<double> medians;
        for (const auto &rec : r.repetitions) {
            lo = std::min(lo, rec.summary.median);
            hi = std::max(hi, rec.summary.median);
            medians.push_back(rec.summary.median);
        }
        const double center = summarize(medians).median;
        j["repetition_spread"] = center > 0 ? (hi - lo) / 2.0 / center : 0.0;
    } else {
        j["repetition_spread"] = nullptr;
    }
    if (r.roofline) {
        const Roofline &rl = *r.roofline;
        j["roofline"] = {{"bound", rl.bound},
                         {"pct_peak_compute", finite_or_null(rl.pct_peak_compute)},
                         {"pct_peak_bandwidth", finite_or_null(rl.pct_peak_bandwidth)},
                         {"ridge_point", finite_or_null(rl.ridge_point)},
                         {"bandwidth_roof", rl.bandwidth_roof},
                         {"compute_roof", rl.compute_roof},
                         {"compute_roof_by_isa", rl.compute_roof_by_isa},
                         {"above_roof_cause", rl.above_roof_cause}};
        if (rl.device_roof) j["roofline"]["device_roof"] = device_roof_json(*rl.device_roof);
    } else {
        j["roofline"] = nullptr;
    }
    const MemoryFigures &m = r.memory;
    j["memory"] = {{"workspace_bytes", m.workspace_bytes},
                   {"plugin_peak_bytes", m.plugin_peak_bytes},
                   {"host_accounted_peak_bytes", m.host_accounted_peak},
                   {"device_accounted_peak_bytes", m.device_accounted_peak},
                   {"heap_tracked", m.heap_tracked},
                   {"heap_peak_bytes", m.heap_peak_bytes},
                   {"allocs_per_call", m.allocs_per_call},
                   {"alloc_bytes_per_call", m.alloc_bytes_per_call},
                   {"rss_peak_bytes", m.rss_peak_bytes},
                   {"rss_peak_reset", m.rss_peak_reset}};
    return j;
}

const std::vector<std::string> &per_case_keys() {
    static const std::vector<std::string> keys = {
        "params",         "flops",          "bytes",        "arithmetic_intensity", "reason",
        "reference",      "nmse",           "nmse_threshold", "verification",       "verified",
        "prepare_seconds", "verify_seconds", "measure_seconds", "process_start_seconds", "inputs_seconds",
        "settings",       "suite_location",
        "repetition_spread", "roofline",    "memory",       "bottleneck",           "profile",
        "workload",       "nmse_where",     "decoder",      "summary",              "metrics",
        "kernel_timeline"};
    return keys;
}

void store_case_fields_once(nlohmann::json &result_set) {
    if (!result_set.is_object() || !result_set.contains("benchmarks") || !result_set["benchmarks"].is_array()) return;
    std::set<std::string> seen; // run names whose first iteration entry has passed
    for (auto &e : result_set["benchmarks"]) {
        if (!e.is_object()) continue;
        const std::string name = e.value("run_name", e.value("name", ""));
        if (e.value("run_type", "iteration") == "iteration" && seen.insert(name).second) continue;
        for (const std::string &k : per_case_keys()) e.erase(k);
    }
    result_set["context"]["opbench"]["per_case_fields"] = per_case_keys();
}

void expand_case_fields(nlohmann::json &result_set) {
    if (!result_set.is_object() || !result_set.contains("benchmarks") || !result_set["benchmarks"].is_array()) return;
    auto &entries = result_set["benchmarks"];
    std::map<std::string, std::size_t> first; // run name -> its first iteration entry
    for (std::size_t i = 0; i < entries.size(); ++i)
        if (entries[i].is_object() && entries[i].value("run_type", "iteration") == "iteration")
            first.emplace(entries[i].value("run_name", entries[i].value("name", "")), i);
    for (std::size_t i = 0; i < entries.size(); ++i) {
        if (!entries[i].is_object()) continue;
        const auto it = first.find(entries[i].value("run_name", entries[i].value("name", "")));
        if (it == first.end() || it->second == i) continue;
        const nlohmann::json &from = entries[it->second];
        for (const std::string &k : per_case_keys())
            if (from.contains(k) && !entries[i].contains(k)) entries[i][k] = from[k];
    }
}

} // namespace opbench
