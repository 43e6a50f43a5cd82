#include "run/run_eta.hpp"

#include <algorithm>
#include <cmath>

namespace opbench {

namespace {

// Seconds an entry costs besides its calls: starting it in its worker,
// preparing, the result's record. Small; the scaling by measured cost
// absorbs the rest.
constexpr double kSetupSeconds = 0.02;
// A backend's speed is the median over its last this many entries; a run
// of 100,000 entries evaluates this many of them per estimate (every
// stride-th, scaled), so a progress line stays cheap.
constexpr std::size_t kWindow = 64, kEvaluated = 4096;

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

} // namespace

RunEta::RunEta(std::vector<EntryPlan> plan) : plan_(std::move(plan)), took_(plan_.size(), -1.0) {}

void RunEta::finished(std::size_t k, double seconds, double call_seconds) {
    if (k >= plan_.size()) return;
    took_[k] = std::max(0.0, seconds);
    any_finished_ = true;
    if (std::isfinite(call_seconds) && call_seconds > 0 && plan_[k].flops > 0) {
        std::vector<double> &recent = seconds_per_flop_[plan_[k].backend];
        if (recent.size() == kWindow) recent.erase(recent.begin());
        recent.push_back(call_seconds / plan_[k].flops);
    }
}

double RunEta::expected(std::size_t k) const {
    const EntryPlan &p = plan_[k];
    const auto speed = seconds_per_flop_.find(p.backend);
    const double call = speed == seconds_per_flop_.end() ? 0.0 : p.flops * median(speed->second);
    // A repetition takes min_samples calls, at least min_time, at most
    // max_time, and never less than one call.
    const double repetition = std::max(call, std::clamp(p.min_samples * call, p.min_time, std::max(p.min_time, p.max_time)));
    return kSetupSeconds + std::max(1, p.repetitions) * repetition + (std::max(0, p.warmup) + 1) * call;
}

double RunEta::seconds_left() const {
    // Measured over expected, per backend and over the run.
    std::map<std::string, std::pair<double, double>> by_backend;
    double took = 0, expected_done = 0;
    const std::size_t stride = std::max<std::size_t>(1, plan_.size() / kEvaluated);
    for (std::size_t k = 0; k < plan_.size(); k += stride) {
        if (took_[k] < 0) continue;
        const double e = expected(k);
        by_backend[plan_[k].backend].first += took_[k];
        by_backend[plan_[k].backend].second += e;
        took += took_[k];
        expected_done += e;
    }
    if (!any_finished_) return -1;
    const double overall = expected_done > 0 ? took / expected_done : 1.0;
    double left = 0;
    for (std::size_t k = 0; k < plan_.size(); k += stride) {
        if (took_[k] >= 0) continue;
        const auto b = by_backend.find(plan_[k].backend);
        const double scale = b != by_backend.end() && b->second.second > 0 ? b->second.first / b->second.second : overall;
        left += scale * expected(k) * double(stride);
    }
    return left;
}

} // namespace opbench
