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

} // namespace opbench
