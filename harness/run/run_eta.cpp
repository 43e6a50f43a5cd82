#include "run/run_eta.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
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

// Seconds besides calls, as a fixed part and a part that grows with the
// data an entry touches (preparing its inputs, checking its outputs: 2 s of
// a 300 MB onednn product's 26 s, Zen 5): the fixed part is the median of
// the smaller half of the entries by bytes, the growth the median of what
// the larger half spent above it per byte. A small entry's seconds besides
// calls are mostly fixed costs, whose noise (a busy machine) must not be
// scaled up; without bytes, the median of all.
double RunEta::Corrections::overhead(double bytes) const {
    std::vector<double> values, sizes;
    for (const auto &[b, v] : overheads) {
        values.push_back(v);
        if (b > 0) sizes.push_back(b);
    }
    if (!(bytes > 0) || sizes.size() < overheads.size()) return median(values);
    const double middle = median(sizes);
    std::vector<double> small;
    for (const auto &[b, v] : overheads)
        if (b <= middle) small.push_back(v);
    const double fixed = median(small);
    std::vector<double> per_byte;
    for (const auto &[b, v] : overheads)
        if (b >= middle) per_byte.push_back(std::max(0.0, v - fixed) / b);
    return fixed + median(per_byte) * bytes;
}

// A mean weighted by nearness in call time: an entry whose calls take 2x
// as long weighs 1/(1 + ln 2)^4 = 0.12 against an equal one, 8x 0.012, 300x
// 0.0005 (a 1 us call's tries say little of a 0.3 s call's). Each finished
// entry's tries say this try's calls: theirs, clamped to this try's least
// and most. Tries that ended as planned say only that the target needed no
// more: they count while their calls are at most twice this plan (a 1 ms
// call's 500 planned calls say nothing of a 0.2 s call's 5). The plan
// counts as one entry with calls 30x shorter or longer, so where only
// far-off entries speak (a 0.4 ms call whose noisy tries took 2600 calls,
// for a 50 ms one), the plan is not outvoted. Calls, not time: what the noise target needs is a number of
// samples, so onednn's 0.2-0.5 s calls, planned at 5, ran 20-28 as its
// 0.02-0.03 s calls had run 20-50 (Zen 5, gemm suite).
double RunEta::Corrections::calls_per_try(double call, double least, double most) const {
    const double plan_weight = 1 / std::pow(1 + std::log(30.0), 4);
    double weighted = plan_weight * least, weights = plan_weight;
    for (const TryCalls &t : tries_calls) {
        if (t.bound == TryCalls::Bound::at_most && t.calls > 2 * least) continue;
        const double says = std::clamp(t.calls, least, most);
        const double w = 1 / std::pow(1 + (call > 0 ? std::abs(std::log(t.call / call)) : 0.0), 4);
        weighted += w * says;
        weights += w;
    }
    return weighted / weights;
}

double RunEta::Corrections::past_plan() const {
    std::vector<double> ratios;
    for (const TryCalls &t : tries_calls) ratios.push_back(t.calls / t.planned);
    return ratios.empty() ? 1.0 : median(ratios);
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
    analogy_cache_.clear();
    const EntryPlan &p = plan_[k];
    if (!has_call_time(took) || p.flops <= 0) return;
    for (auto *recent : {&by_backend_[p.backend], p.kind.empty() ? nullptr : &by_kind_[kind_key(p)]}) {
        if (!recent) continue;
        if (recent->size() == kWindow) recent->erase(recent->begin());
        recent->push_back({p.flops, took.call_seconds / p.flops});
    }
}

// A call of `p`: at the speed of the finished entry of its kind nearest in
// FLOPs (a size ratio, so 1024^3 is nearer 2048^3 than 64^3), else by
// analogy with other kinds, else at its backend's median speed; 0 where
// none finished.
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
    // Worked out once per kind until the next entry finishes: a progress
    // line of a large run asks it for thousands of entries.
    auto cached = analogy_cache_.find(kind_key(p));
    if (cached == analogy_cache_.end()) cached = analogy_cache_.emplace(kind_key(p), analogous_seconds_per_flop(p)).first;
    if (cached->second > 0) return p.flops * cached->second;
    const auto backend = by_backend_.find(p.backend);
    if (backend == by_backend_.end()) return 0;
    std::vector<double> speeds;
    for (const Speed &s : backend->second) speeds.push_back(s.seconds_per_flop);
    return p.flops * median(speeds);
}

namespace {

// A kind's parts, "dt:bf16" as {"dt", "bf16"}, in their order.
std::vector<std::pair<std::string, std::string>> kind_parts(std::string_view kind) {
    std::vector<std::pair<std::string, std::string>> parts;
    std::size_t at = 0;
    while (at <= kind.size()) {
        std::size_t end = kind.find('/', at);
        if (end == std::string_view::npos) end = kind.size();
        const std::string_view part = kind.substr(at, end - at);
        const std::size_t colon = part.find(':');
        parts.emplace_back(part.substr(0, colon == std::string_view::npos ? part.size() : colon),
                           colon == std::string_view::npos ? "" : part.substr(colon + 1));
        at = end + 1;
    }
    return parts;
}

// The one part in which two kinds differ (its index), if they have the
// same keys and differ in exactly one value.
std::optional<std::size_t> one_difference(const std::vector<std::pair<std::string, std::string>> &a,
                                          const std::vector<std::pair<std::string, std::string>> &b) {
    if (a.size() != b.size()) return std::nullopt;
    std::optional<std::size_t> differs;
    for (std::size_t i = 0; i < a.size(); ++i) {
        if (a[i].first != b[i].first) return std::nullopt;
        if (a[i].second == b[i].second) continue;
        if (differs) return std::nullopt;
        differs = i;
    }
    return differs;
}

} // namespace

// Seconds per FLOP of the entry of `speeds` nearest `flops` in size.
double RunEta::nearest_speed(const std::vector<Speed> &speeds, double flops) {
    const Speed *nearest = nullptr;
    for (const Speed &s : speeds)
        if (!nearest || std::abs(std::log(s.flops / flops)) < std::abs(std::log(nearest->flops / flops))) nearest = &s;
    return nearest ? nearest->seconds_per_flop : 0.0;
}

// A kind not seen yet that differs from a seen one in one part (its dtype,
// most often: naive's first bf16 x W^T product after its f32 ones) runs at
// that kind's speed times what the same change did to two other seen kinds
// (naive's bf16 square products against its f32 ones, size for size).
// Before, the backend's median speed stood in: 2x too fast for naive's
// first bf16 x W^T entry, since its x W^T products run 4x slower per FLOP
// than the square ones that median was made of. 0: no such kinds finished.
double RunEta::analogous_seconds_per_flop(const EntryPlan &p) const {
    if (p.kind.empty()) return 0;
    const std::string prefix = p.backend + '\x1f';
    std::vector<std::pair<std::vector<std::pair<std::string, std::string>>, const std::vector<Speed> *>> seen;
    for (auto it = by_kind_.lower_bound(prefix); it != by_kind_.end() && it->first.starts_with(prefix); ++it)
        seen.emplace_back(kind_parts(std::string_view(it->first).substr(prefix.size())), &it->second);
    const auto wanted = kind_parts(p.kind);
    std::vector<double> estimates;
    for (const auto &[like, like_speeds] : seen) {
        const auto part = one_difference(wanted, like);
        if (!part) continue;
        const auto &[key, value] = wanted[*part];
        // Pairs of seen kinds that differ in the same part (by key: kinds
        // of other ops have it elsewhere), from like's value to ours.
        std::vector<double> ratios;
        for (const auto &[to, to_speeds] : seen)
            for (const auto &[from, from_speeds] : seen) {
                const auto i = one_difference(to, from);
                if (!i || to[*i].first != key || to[*i].second != value || from[*i].second != like[*part].second)
                    continue;
                for (const Speed &s : *to_speeds)
                    ratios.push_back(s.seconds_per_flop / nearest_speed(*from_speeds, s.flops));
            }
        if (!ratios.empty()) estimates.push_back(nearest_speed(*like_speeds, p.flops) * median(ratios));
    }
    return median(estimates);
}

// Whole calls: min_samples of them and min_time, unless the call that
// reaches max_time comes first (a try of 8 s calls with max_time 10 s ends
// with its second).
double RunEta::planned_calls(const EntryPlan &p, double call) {
    const double planned = std::max<double>(p.min_samples, std::ceil(p.min_time / call));
    return std::min(planned, most_calls(p, call));
}

// The stopping rule looks after each call: a try ends with the call that
// reaches max_time (the first, when one call outlasts it).
double RunEta::most_calls(const EntryPlan &p, double call) { return std::max(1.0, std::ceil(p.max_time / call)); }

double RunEta::planned_try(std::size_t k) const {
    const double call = call_seconds(plan_[k]);
    return call > 0 ? planned_calls(plan_[k], call) * call : plan_[k].min_time;
}

double RunEta::most_try(std::size_t k) const {
    const double call = call_seconds(plan_[k]);
    return call > 0 ? most_calls(plan_[k], call) * call : plan_[k].max_time;
}

double RunEta::planned_measure(std::size_t k) const { return std::max(1, plan_[k].repetitions) * planned_try(k); }

double RunEta::most_measure(std::size_t k) const {
    return std::max(1, plan_[k].repetitions) * (1 + std::max(0, plan_[k].starved_retries)) * most_try(k);
}

double RunEta::other_calls(std::size_t k) const {
    // The first process's calls before sampling: `warmup` of them, at least
    // one, the verified call among them; the batch needs no call of its own
    // (recipe.cpp).
    return std::max(1, plan_[k].warmup) * call_seconds(plan_[k]);
}

double RunEta::move_calls(std::size_t k) const {
    const int moves = std::max(0, std::min(plan_[k].processes, std::max(1, plan_[k].repetitions)) - 1);
    // Each later process warms up; it takes the first's batch, with no probe call.
    return moves * std::max(1, plan_[k].warmup) * call_seconds(plan_[k]);
}

double RunEta::estimate(std::size_t k, const Corrections &c) const {
    const EntryPlan &p = plan_[k];
    const double call = call_seconds(p), least = planned_try(k), most = std::max(least, most_try(k));
    // A call of unknown length (no FLOPs, or none of its backend finished):
    // its tries run as many times their plan as the backend's did.
    const double one_try = call > 0 ? c.calls_per_try(call, least / call, most / call) * call + median(c.try_overheads)
                                    : std::clamp(least * c.past_plan(), least, most);
    const double tries = std::clamp(c.tries_per_repetition(), 1.0, 1.0 + std::max(0, p.starved_retries));
    return c.overhead(p.bytes) + other_calls(k) + move_calls(k) + std::max(1, p.repetitions) * tries * one_try;
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
            c->overheads.emplace_back(plan_[k].bytes,
                                      std::max(0.0, took_[k].seconds - took_[k].measure_seconds - other_calls(k)));
            // An entry that failed or was skipped says nothing of how long
            // repetitions run.
            if (!has_call_time(took_[k])) continue;
            const int tries = std::max(took_[k].tries, std::max(1, plan_[k].repetitions));
            const double per_try = std::max(0.0, took_[k].measure_seconds - move_calls(k)) / tries;
            // The calls its tries sampled (else as many as their time
            // holds), against its plan and its most, a tenth apart: a try
            // of min_time samples fewer calls than min_time holds.
            const double call = took_[k].call_seconds;
            const double calls = took_[k].calls_per_try > 0 ? took_[k].calls_per_try : per_try / call;
            const double least = planned_calls(plan_[k], call), most = most_calls(plan_[k], call);
            using Bound = TryCalls::Bound;
            c->tries_calls.push_back({call, calls, least,
                                      calls >= 0.9 * most   ? Bound::at_least
                                      : calls <= 1.1 * least ? Bound::at_most
                                                             : Bound::exact});
            // What a try spends besides its calls: the timer, the
            // run-queue readings, the summary.
            c->try_overheads.push_back(std::max(0.0, per_try - calls * call));
            c->tries += tries;
            c->repetitions += std::max(1, plan_[k].repetitions);
        }
    }
    // Each estimate weighs a backend's last kWindow entries' tries: a
    // progress line of a huge run stays cheap.
    const auto keep_last = [](Corrections &c) {
        if (c.tries_calls.size() > kWindow) {
            c.tries_calls.erase(c.tries_calls.begin(), c.tries_calls.end() - kWindow);
            c.try_overheads.erase(c.try_overheads.begin(), c.try_overheads.end() - kWindow);
        }
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
