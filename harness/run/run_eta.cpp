#include "run/run_eta.hpp"

#include <algorithm>
#include <cmath>

namespace opbench {

namespace {

// A backend's speed is the median over its last this many entries; a run
// of 100,000 entries evaluates this many of them per estimate (every
// stride-th, scaled), so a progress line stays cheap.
constexpr std::size_t kWindow = 64, kEvaluated = 4096;

double median(std::vector<double> v) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

std::string kind_key(const EntryPlan &p) { return p.backend + '\x1f' + p.kind; }

bool has_call_time(const EntryTook &t) { return std::isfinite(t.call_seconds) && t.call_seconds > 0; }

} // namespace

double RunEta::Corrections::overhead() const { return median(overheads); }

RunEta::RunEta(std::vector<EntryPlan> plan)
    : plan_(std::move(plan)), took_(plan_.size()), finished_(plan_.size(), false) {}

void RunEta::finished(std::size_t k, const EntryTook &took) {
    if (k >= plan_.size()) return;
    took_[k] = took;
    took_[k].seconds = std::max(0.0, took.seconds);
    finished_[k] = any_finished_ = true;
    const EntryPlan &p = plan_[k];
    if (!has_call_time(took) || p.flops <= 0) return;
    for (auto *recent : {&by_backend_[p.backend], p.kind.empty() ? nullptr : &by_kind_[kind_key(p)]}) {
        if (!recent) continue;
        if (recent->size() == kWindow) recent->erase(recent->begin());
        recent->push_back({p.flops, took.call_seconds / p.flops});
    }
}

// A call of `p`: at the speed of the finished entry of its kind nearest in
// FLOPs (a size ratio, so 1024^3 is nearer 2048^3 than 64^3), else at its
// backend's median speed; 0 where neither finished one.
double RunEta::call_seconds(const EntryPlan &p) const {
    if (p.flops <= 0) return 0;
    if (const auto kind = by_kind_.find(kind_key(p)); !p.kind.empty() && kind != by_kind_.end()) {
        const auto nearest = std::min_element(kind->second.begin(), kind->second.end(), [&](const Speed &a, const Speed &b) {
            return std::abs(std::log(a.flops / p.flops)) < std::abs(std::log(b.flops / p.flops));
        });
        return p.flops * nearest->seconds_per_flop;
    }
    const auto backend = by_backend_.find(p.backend);
    if (backend == by_backend_.end()) return 0;
    std::vector<double> speeds;
    for (const Speed &s : backend->second) speeds.push_back(s.seconds_per_flop);
    return p.flops * median(speeds);
}

double RunEta::planned_try(std::size_t k) const {
    const EntryPlan &p = plan_[k];
    const double call = call_seconds(p);
    // min_samples calls, at least min_time, at most max_time, and never
    // less than one call.
    return std::max(call, std::clamp(p.min_samples * call, p.min_time, std::max(p.min_time, p.max_time)));
}

double RunEta::most_try(std::size_t k) const {
    // The stopping rule looks after each call: a try ends within a call of
    // max_time.
    const double call = call_seconds(plan_[k]);
    return std::max(plan_[k].max_time, call) + call;
}

double RunEta::planned_measure(std::size_t k) const { return std::max(1, plan_[k].repetitions) * planned_try(k); }

double RunEta::most_measure(std::size_t k) const {
    return std::max(1, plan_[k].repetitions) * (1 + std::max(0, plan_[k].starved_retries)) * most_try(k);
}

double RunEta::other_calls(std::size_t k) const {
    return (std::max(0, plan_[k].warmup) + 1) * call_seconds(plan_[k]); // warmup, then the verified call
}

double RunEta::estimate(std::size_t k, const Corrections &c) const {
    const EntryPlan &p = plan_[k];
    const double least = planned_try(k);
    const double one_try = least + c.room_used() * std::max(0.0, most_try(k) - least);
    const double tries = std::clamp(c.tries_per_repetition(), 1.0, 1.0 + std::max(0, p.starved_retries));
    return c.overhead() + other_calls(k) + std::max(1, p.repetitions) * tries * one_try;
}

double RunEta::seconds_left() const {
    if (!any_finished_) return -1;
    std::map<std::string, Corrections> by_backend;
    Corrections run;
    const std::size_t stride = std::max<std::size_t>(1, plan_.size() / kEvaluated);
    for (std::size_t k = 0; k < plan_.size(); k += stride) {
        if (!finished_[k]) continue;
        for (Corrections *c : {&by_backend[plan_[k].backend], &run}) {
            c->overheads.push_back(std::max(0.0, took_[k].seconds - took_[k].measure_seconds - other_calls(k)));
            // An entry that failed or was skipped says nothing of how long
            // repetitions run.
            if (!has_call_time(took_[k])) continue;
            const int tries = std::max(took_[k].tries, std::max(1, plan_[k].repetitions));
            const double least = planned_try(k), room = most_try(k) - least;
            if (room > 0.01 * least) { // else its tries had no room to run on
                c->stretch += std::clamp((took_[k].measure_seconds / tries - least) / room, 0.0, 1.0);
                c->stretched += 1;
            }
            c->tries += tries;
            c->repetitions += std::max(1, plan_[k].repetitions);
        }
    }
    double left = 0;
    for (std::size_t k = 0; k < plan_.size(); k += stride) {
        if (finished_[k]) continue;
        const auto b = by_backend.find(plan_[k].backend);
        left += estimate(k, b != by_backend.end() ? b->second : run) * double(stride);
    }
    return left;
}

} // namespace opbench
