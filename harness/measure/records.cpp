#include "measure/records.hpp"

#include <cmath>
#include <limits>

namespace opbench {

std::string_view case_status_name(CaseStatus s) {
    switch (s) {
    case CaseStatus::passed: return "passed";
    case CaseStatus::failed: return "failed";
    case CaseStatus::skipped: return "skipped";
    }
    return "failed";
}

std::optional<CaseStatus> case_status_from_name(std::string_view name) {
    for (CaseStatus s : {CaseStatus::passed, CaseStatus::failed, CaseStatus::skipped})
        if (case_status_name(s) == name) return s;
    return std::nullopt;
}

namespace {

nlohmann::json finite_or_null(double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); }

double number_or(const nlohmann::json &j, const char *key, double if_null) {
    const auto &v = j.at(key);
    return v.is_null() ? if_null : v.get<double>();
}

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

} // namespace

void to_json(nlohmann::json &j, const SampleSummary &s) {
    j = {{"n", s.n},
         {"min", finite_or_null(s.min)},
         {"max", finite_or_null(s.max)},
         {"mean", finite_or_null(s.mean)},
         {"median", finite_or_null(s.median)},
         {"p90", finite_or_null(s.p90)},
         {"p99", finite_or_null(s.p99)},
         {"stddev", finite_or_null(s.stddev)},
         {"cv", finite_or_null(s.cv)},
         {"median_ci_low", finite_or_null(s.median_ci_low)},
         {"median_ci_high", finite_or_null(s.median_ci_high)},
         {"noise", finite_or_null(s.noise)},
         {"outliers_low", s.outliers_low},
         {"outliers_high", s.outliers_high}};
}

void from_json(const nlohmann::json &j, SampleSummary &s) {
    s.n = j.at("n").get<std::size_t>();
    s.min = number_or(j, "min", kNaN);
    s.max = number_or(j, "max", kNaN);
    s.mean = number_or(j, "mean", kNaN);
    s.median = number_or(j, "median", kNaN);
    s.p90 = number_or(j, "p90", kNaN);
    s.p99 = number_or(j, "p99", kNaN);
    s.stddev = number_or(j, "stddev", kNaN);
    s.cv = number_or(j, "cv", kNaN);
    s.median_ci_low = number_or(j, "median_ci_low", kNaN);
    s.median_ci_high = number_or(j, "median_ci_high", kNaN);
    s.noise = number_or(j, "noise", std::numeric_limits<double>::infinity());
    s.outliers_low = j.at("outliers_low").get<std::size_t>();
    s.outliers_high = j.at("outliers_high").get<std::size_t>();
}

void to_json(nlohmann::json &j, const PreparationRecord &r) {
    j = {{"check_error", r.check_error},
         {"warmup_calls", r.warmup_calls},
         {"batch_probe_seconds", r.batch_probe_seconds},
         {"calls_per_sample", r.calls_per_sample}};
}

void from_json(const nlohmann::json &j, PreparationRecord &r) {
    r.check_error = j.at("check_error").get<double>();
    r.warmup_calls = j.at("warmup_calls").get<int>();
    r.batch_probe_seconds = j.at("batch_probe_seconds").get<double>();
    r.calls_per_sample = j.at("calls_per_sample").get<int>();
}

void to_json(nlohmann::json &j, const RepetitionRecord &r) {
    j = {{"summary", r.summary},
         {"calls_per_sample", r.calls_per_sample},
         {"target_met", r.target_met},
         {"timed_out", r.timed_out},
         {"cpu_seconds_per_call", r.cpu_seconds_per_call},
         {"device_seconds_per_call", r.device_seconds_per_call},
         {"sample_times", r.sample_times},
         {"process", r.process}};
    if (!r.unit_seconds.empty()) j["unit_seconds"] = r.unit_seconds;
}

void from_json(const nlohmann::json &j, RepetitionRecord &r) {
    r.summary = j.at("summary").get<SampleSummary>();
    r.calls_per_sample = j.at("calls_per_sample").get<int>();
    r.target_met = j.at("target_met").get<bool>();
    r.timed_out = j.at("timed_out").get<bool>();
    r.cpu_seconds_per_call = j.at("cpu_seconds_per_call").get<double>();
    r.device_seconds_per_call = j.at("device_seconds_per_call").get<double>();
    r.sample_times = j.at("sample_times").get<std::vector<double>>();
    r.process = j.value("process", 0);
    if (j.contains("unit_seconds")) r.unit_seconds = j["unit_seconds"].get<std::vector<double>>();
}

} // namespace opbench
