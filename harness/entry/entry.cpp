#include "entry/entry.hpp"

#include "measure/statistics.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace opbench {

void Entry::activated(const Activation &a) {
    result.status = a.status;
    result.reason = a.reason;
    result.nmse = a.nmse;
    result.memory.workspace_bytes = a.workspace_bytes;
    result.checked = a.checked;
    result.verification = a.verification;
    result.prepare_seconds = a.prepare_seconds;
    result.verify_seconds = a.verify_seconds;
    result.inputs_seconds = a.inputs_seconds;
    result.launch_used = a.preparation.launch;
    result.launch_fallback = a.preparation.launch_fallback;
}

void Entry::finished(const FinishRecord &f) {
    const uint64_t workspace = result.memory.workspace_bytes;
    result.memory = f.memory;
    if (result.memory.workspace_bytes == 0) result.memory.workspace_bytes = workspace;
}

std::optional<double> Entry::median_seconds() const {
    // A starved repetition timed the machine (measure/entry_summary.hpp's policy).
    // So is a throttled one, unless every one was (measure/throttle.hpp: the entry is then `throttled`).
    const bool all_throttled = std::all_of(result.repetitions.begin(), result.repetitions.end(),
                                           [](const RepetitionRecord &r) { return r.starved || r.throttled; });
    std::vector<double> medians;
    for (const auto &rec : result.repetitions)
        if (!rec.starved && (!rec.throttled || all_throttled)) medians.push_back(rec.summary.median);
    if (medians.empty()) return std::nullopt;
    return summarize(medians).median;
}

std::string noise_label(const RepetitionRecord &rec) {
    std::string label = std::isfinite(rec.summary.noise) ? fmt::format("noise {:.2f}%", rec.summary.noise * 100.0)
                                                         : fmt::format("noise n/a ({} samples)", rec.summary.n);
    if (rec.timed_out) label += ", max_time reached";
    return label;
}

namespace {

// Seconds in Google Benchmark's unit.
double in_unit(double seconds, const char *unit) {
    const std::string u = unit;
    return seconds * (u == "ms" ? 1e3 : u == "ns" ? 1e9 : u == "s" ? 1.0 : 1e6);
}

// The Google Benchmark name of every entry of a case: its run name.
std::string run_name_of(const Entry &e) { return opbench::run_name_of(e.name()); }

nlohmann::json with_fields(nlohmann::json entry, const nlohmann::json &fields) {
    for (const auto &[k, v] : fields.items()) entry[k] = v;
    return entry;
}

nlohmann::json iteration_entry(const Entry &e, std::size_t index, const nlohmann::json &fields) {
    const RepetitionRecord &rec = e.result.repetitions[index];
    const std::string run_name = run_name_of(e);
    const double calls = double(rec.summary.n) * rec.calls_per_sample;
    nlohmann::json j = {{"name", run_name},
                        {"run_name", run_name},
                        {"run_type", "iteration"},
                        {"repetitions", e.result.repetitions.size()},
                        {"repetition_index", index},
                        {"threads", 1},
                        {"iterations", static_cast<int64_t>(calls)},
                        {"real_time", in_unit(rec.summary.median, e.time_unit())},
                        {"cpu_time", in_unit(rec.cpu_seconds_per_call, e.time_unit())},
                        {"time_unit", e.time_unit()}};
    const nlohmann::json counters = e.counters(rec);
    for (const auto &[k, v] : counters.items()) j[k] = v;
    j["label"] = e.label(rec);
    j = with_fields(std::move(j), fields);
    j["stats"] = summary_json(rec);
    return j;
}

// Google Benchmark's aggregates over the repetitions: mean, median, stddev
// of the per-call medians and CPU times, and cv (stddev / mean, a fraction).
std::vector<nlohmann::json> aggregate_entries(const Entry &e, const nlohmann::json &fields) {
    std::vector<double> real, cpu;
    for (const auto &rec : e.result.repetitions) {
        if (rec.starved) continue; // as the entry's summary: not a time of the op
        real.push_back(rec.summary.median);
        cpu.push_back(rec.cpu_seconds_per_call);
    }
    const SampleSummary r = summarize(real), c = summarize(cpu);
    const std::string run_name = run_name_of(e);
    std::vector<nlohmann::json> out;
    auto add = [&](const char *aggregate, double real_value, double cpu_value, bool is_time) {
        nlohmann::json j = {{"name", run_name + "_" + aggregate},
                            {"run_name", run_name},
                            {"run_type", "aggregate"},
                            {"repetitions", real.size()},
                            {"threads", 1},
                            {"aggregate_name", aggregate},
                            {"aggregate_unit", is_time ? "time" : "percentage"},
                            {"iterations", real.size()},
                            {"real_time", is_time ? in_unit(real_value, e.time_unit()) : real_value},
                            {"cpu_time", is_time ? in_unit(cpu_value, e.time_unit()) : cpu_value},
                            {"time_unit", e.time_unit()}};
        out.push_back(with_fields(std::move(j), fields));
    };
    add("mean", r.mean, c.mean, true);
    add("median", r.median, c.median, true);
    add("stddev", r.stddev, c.stddev, true);
    add("cv", r.mean > 0 ? r.stddev / r.mean : 0.0, c.mean > 0 ? c.stddev / c.mean : 0.0, false);
    return out;
}

} // namespace

std::vector<nlohmann::json> result_entries(const Entry &e) {
    const nlohmann::json fields = e.fields();
    std::vector<nlohmann::json> out;
    if (e.result.status != CaseStatus::passed || e.result.repetitions.empty()) {
        const std::string name = run_name_of(e);
        nlohmann::json j = {{"name", name},
                            {"run_name", name},
                            {"run_type", "iteration"},
                            {"repetitions", 1},
                            {"repetition_index", 0},
                            {"threads", 1},
                            {"iterations", 0},
                            {"real_time", 0},
                            {"cpu_time", 0},
                            {"time_unit", e.time_unit()},
                            {"error_occurred", true},
                            {"error_message",
                             std::string(case_status_name(e.result.status)) + ": " + e.result.reason}};
        // A starved entry keeps what its repetitions measured, beside the
        // time fields that no reader (compare.py included) takes as the op's.
        if (e.result.status == CaseStatus::starved) {
            j["starved_repetitions"] = nlohmann::json::array();
            for (const auto &rec : e.result.repetitions) j["starved_repetitions"].push_back(summary_json(rec));
        }
        out.push_back(with_fields(std::move(j), fields));
        return out;
    }
    for (std::size_t i = 0; i < e.result.repetitions.size(); ++i) out.push_back(iteration_entry(e, i, fields));
    const auto unstarved = std::count_if(e.result.repetitions.begin(), e.result.repetitions.end(),
                                         [](const RepetitionRecord &r) { return !r.starved; });
    if (unstarved >= 2)
        for (auto &a : aggregate_entries(e, fields)) out.push_back(std::move(a));
    return out;
}

EntryFacts Entry::bottleneck_facts() const {
    EntryFacts f = identity_facts();
    f.backend = result.backend;
    f.allocs_per_call = result.memory.allocs_per_call;
    f.alloc_bytes_per_call = result.memory.alloc_bytes_per_call;
    if (result.roofline) f.above_roof_cause = result.roofline->above_roof_cause;
    if (!result.repetitions.empty() && result.repetitions.front().device_seconds_per_call >= 0)
        f.device_seconds = result.repetitions.front().device_seconds_per_call;
    if (!result.repetitions.empty() && result.repetitions.front().host_seconds_per_call >= 0)
        f.host_seconds = result.repetitions.front().host_seconds_per_call;
    if (!result.repetitions.empty() && result.repetitions.front().wall_seconds_per_call >= 0)
        f.wall_seconds = result.repetitions.front().wall_seconds_per_call;
    f.case_threads = settings().threads;
    f.cold_cache = settings().cache == CacheState::cold;
    return f;
}

EntryMetricInputs metric_inputs(const Entry &e) { return metric_inputs(e.result, e.call_work()); }

EntryMetricInputs metric_inputs(const CaseResult &result, const CallWork &work) {
    EntryMetricInputs in;
    if (result.summary) in.summary = *result.summary;
    for (const RepetitionRecord &rec : result.repetitions) in.samples += rec.summary.n;
    in.flops = work.flops;
    in.bytes = work.bytes;
    if (result.roofline) {
        in.pct_peak_compute = result.roofline->pct_peak_compute;
        in.pct_peak_bandwidth = result.roofline->pct_peak_bandwidth;
        in.bound = result.roofline->bound;
        in.bandwidth_roof = result.roofline->bandwidth_roof;
        if (result.roofline->compute_roof_by_isa) in.compute_roof = result.roofline->compute_roof;
        in.above_roof_cause = result.roofline->above_roof_cause;
        if (const auto &d = result.roofline->device_roof) in.device_roof = d->roof.empty() ? "none" : d->roof;
    }
    return in;
}

} // namespace opbench
