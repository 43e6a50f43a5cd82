#include "run/run_eta.hpp"

#include <algorithm>
#include <cmath>
#include <string_view>

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

// A mean weighted by nearness in call time: an entry whose calls take 2x
// as long weighs 1/(1 + ln 2)^4 = 0.12 against an equal one, 8x 0.012, 300x
// 0.0005 (a 1 us call's tries say little of a 0.3 s call's).
double RunEta::Corrections::past_plan(double call) const {
    double weighted = 0, weights = 0;
    for (const auto &[c, share] : paces) {
        const double distance = call > 0 ? std::abs(std::log(c / call)) : 0.0;
        const double w = 1 / std::pow(1 + distance, 4);
        weighted += w * share;
        weights += w;
    }
    return weights > 0 ? weighted / weights : 0.0;
}

std::string eta_kind(std::string_view entry_name) {
    std::string kind;
    std::size_t at = 0;
    while (at < entry_name.size()) {
        std::size_t end = entry_name.find('/', at);
        if (end == std::string_view::npos) end = entry_name.size();
        const std::string_view part = entry_name.substr(at, end - at);
        at = end + 1;
        if (part.starts_with("be:") || part.starts_with("case:")) continue;
        if (!kind.empty()) kind += '/';
        const std::size_t colon = part.find(':');
        const std::string_view value = colon == std::string_view::npos ? part : part.substr(colon + 1);
        const bool size = !value.empty() && value.find_first_not_of("0123456789") == std::string_view::npos &&
                          value.find_first_not_of('0') != std::string_view::npos && value != "1";
        kind += size ? std::string(part.substr(0, colon + 1)) + "#" : std::string(part);
    }
    return kind;
}

RunEta::RunEta(std::vector<EntryPlan> plan)
    : plan_(std::move(plan)), took_(plan_.size()), finished_(plan_.size(), false) {}

void RunEta::in_progress(std::size_t k, const EntryTook &so_far, int repetitions_done) {
    if (k >= plan_.size() || finished_[k] || repetitions_done <= 0) return;
    current_ = k;
    current_took_ = so_far;
    current_done_ = repetitions_done;
}

// What the entry in progress has left: its remaining repetitions at the
// pace of its finished ones.
double RunEta::current_left() const {
    const EntryPlan &p = plan_[current_];
    const int reps = std::max(1, p.repetitions), processes = std::clamp(p.processes, 1, reps);
    const int left = std::max(0, reps - current_done_);
    // Moves to a further process: those made, and those to come.
    const int per_process = (reps + processes - 1) / processes;
    const int moved = (current_done_ + per_process - 1) / per_process - 1;
    const double move = processes > 1 ? move_calls(current_) / (processes - 1) : 0.0; // one process's
    const double pace = std::max(0.0, current_took_.measure_seconds - moved * move) / current_done_;
    return left * pace + std::max(0, processes - 1 - moved) * move;
}

void RunEta::finished(std::size_t k, const EntryTook &took) {
    if (k >= plan_.size()) return;
    if (k == current_) current_ = SIZE_MAX;
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
    const auto distance = [&](const Speed &s) { return std::abs(std::log(s.flops / p.flops)); };
    const Speed *nearest = nullptr;
    // First the entry in progress: of equally near ones, it is taken.
    const Speed current =
        current_ != SIZE_MAX && plan_[current_].flops > 0 ? Speed{plan_[current_].flops, current_took_.call_seconds / plan_[current_].flops}
                                                           : Speed{0, 0};
    if (current.flops > 0 && has_call_time(current_took_) && !p.kind.empty() && kind_key(plan_[current_]) == kind_key(p))
        nearest = &current;
    if (const auto kind = by_kind_.find(kind_key(p)); !p.kind.empty() && kind != by_kind_.end())
        for (const Speed &s : kind->second)
            if (!nearest || distance(s) < distance(*nearest)) nearest = &s;
    if (nearest) return p.flops * nearest->seconds_per_flop;
    const auto backend = by_backend_.find(p.backend);
    if (backend == by_backend_.end()) return 0;
    std::vector<double> speeds;
    for (const Speed &s : backend->second) speeds.push_back(s.seconds_per_flop);
    return p.flops * median(speeds);
}

double RunEta::planned_try(std::size_t k) const {
    const EntryPlan &p = plan_[k];
    const double call = call_seconds(p);
    if (call <= 0) return p.min_time;
    // Whole calls: min_samples of them and min_time, unless the call that
    // reaches max_time comes first (a try of 8 s calls with max_time 10 s
    // ends with its second).
    const double planned = std::max<double>(p.min_samples, std::ceil(p.min_time / call));
    const double most = std::max(1.0, std::ceil(p.max_time / call));
    return std::min(planned, most) * call;
}

double RunEta::most_try(std::size_t k) const {
    // The stopping rule looks after each call: a try ends with the call
    // that reaches max_time (the first, when one call outlasts it).
    const double call = call_seconds(plan_[k]);
    if (call <= 0) return plan_[k].max_time;
    return std::max(1.0, std::ceil(plan_[k].max_time / call)) * call;
}

double RunEta::planned_measure(std::size_t k) const { return std::max(1, plan_[k].repetitions) * planned_try(k); }

double RunEta::most_measure(std::size_t k) const {
    return std::max(1, plan_[k].repetitions) * (1 + std::max(0, plan_[k].starved_retries)) * most_try(k);
}

double RunEta::other_calls(std::size_t k) const {
    // The verified call, at least one warmup call, the batch probe (recipe.cpp).
    return (std::max(1, plan_[k].warmup) + 2) * call_seconds(plan_[k]);
}

double RunEta::move_calls(std::size_t k) const {
    const int moves = std::max(0, std::min(plan_[k].processes, std::max(1, plan_[k].repetitions)) - 1);
    return moves * (std::max(1, plan_[k].warmup) + 1) * call_seconds(plan_[k]);
}

double RunEta::estimate(std::size_t k, const Corrections &c) const {
    const EntryPlan &p = plan_[k];
    const double least = planned_try(k), most = std::max(least, most_try(k));
    const double one_try = least + c.past_plan(call_seconds(p)) * (most - least);
    const double tries = std::clamp(c.tries_per_repetition(), 1.0, 1.0 + std::max(0, p.starved_retries));
    return c.overhead() + other_calls(k) + move_calls(k) + std::max(1, p.repetitions) * tries * one_try;
}

double RunEta::seconds_left() const {
    // Before any entry finished, the first one's repetitions so far are enough.
    if (!any_finished_ && current_ == SIZE_MAX) return -1;
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
            const double per_try = std::max(0.0, took_[k].measure_seconds - move_calls(k)) / tries;
            // How far toward max_time its tries ran past their plan (0: as
            // planned; 1: to max_time, the noise target unmet).
            const double least = planned_try(k), most = std::max(least, most_try(k));
            if (least > 0)
                c->paces.emplace_back(took_[k].call_seconds,
                                      most > least ? std::clamp((per_try - least) / (most - least), 0.0, 1.0) : 1.0);
            c->tries += tries;
            c->repetitions += std::max(1, plan_[k].repetitions);
        }
    }
    // Each estimate weighs a backend's last kWindow entries' tries: a
    // progress line of a huge run stays cheap.
    const auto keep_last = [](Corrections &c) {
        if (c.paces.size() > kWindow) c.paces.erase(c.paces.begin(), c.paces.end() - kWindow);
    };
    keep_last(run);
    for (auto &[name, c] : by_backend) keep_last(c);
    double left = 0;
    for (std::size_t k = 0; k < plan_.size(); k += stride) {
        if (finished_[k]) continue;
        if (k == current_) {
            left += current_left();
            continue;
        }
        const auto b = by_backend.find(plan_[k].backend);
        left += estimate(k, b != by_backend.end() ? b->second : run) * double(stride);
    }
    return left;
}

} // namespace opbench
