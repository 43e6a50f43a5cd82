// One entry's summary; the policy is in entry_summary.hpp.
#include "measure/entry_summary.hpp"
#include "measure/throttle.hpp"

#include "measure/json_member.hpp"
#include "machine/bottleneck.hpp"
#include "measure/statistics.hpp"
#include "writers/units.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <set>

namespace opbench {

namespace {

// A count read from a set as a double: a damaged set may hold 1e51, whose
// conversion to int is undefined (fuzz_reader found it); held to a million.
int count_from(double v) { return v >= 1 ? int(std::min(v, 1e6)) : 0; }

} // namespace


std::string_view quality_name(Quality q) {
    switch (q) {
    case Quality::clean: return "clean";
    case Quality::noisy: return "noisy";
    case Quality::disturbed: return "disturbed";
    case Quality::throttled: return "throttled";
    }
    return "clean";
}

std::string EntrySummary::verdict() const {
    if (reasons.empty()) return std::string(flag());
    std::vector<std::string> texts;
    for (const auto &r : reasons) texts.push_back(r.text);
    return fmt::format("{}: {}", flag(), fmt::join(texts, "; "));
}

std::string EntrySummary::reason_codes() const {
    std::vector<std::string> codes;
    for (const auto &r : reasons) codes.push_back(r.code);
    return fmt::format("{}", fmt::join(codes, ","));
}

nlohmann::json EntrySummary::to_json() const {
    auto finite_or_null = [](double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); };
    nlohmann::json reasons_json = nlohmann::json::array();
    for (const auto &r : reasons)
        reasons_json.push_back({{"code", r.code}, {"severity", std::string(quality_name(r.severity))}, {"text", r.text}});
    return {{"median_seconds", finite_or_null(median_s)},
            {"spread", finite_or_null(spread)},
            {"repetitions", repetitions},
            {"missed_noise_target", missed_noise_target},
            {"starved_repetitions", starved_repetitions},
            {"throttled_repetitions", throttled_repetitions},
            {"quality", std::string(quality_name(quality))},
            {"reasons", std::move(reasons_json)}};
}

namespace {

std::string pct(double share) { return fmt::format("{:.2g}%", share * 100); }

// Two populations among the repetitions: the widest gap between neighbouring
// sorted medians is at least kBimodalGap.
std::optional<QualityReason> bimodal(std::vector<double> sorted) {
    if (sorted.size() < 2) return std::nullopt;
    std::sort(sorted.begin(), sorted.end());
    std::size_t cut = 0;
    double widest = 1;
    for (std::size_t i = 1; i < sorted.size(); ++i)
        if (sorted[i - 1] > 0 && sorted[i] / sorted[i - 1] > widest) {
            widest = sorted[i] / sorted[i - 1];
            cut = i;
        }
    if (widest < kBimodalGap) return std::nullopt;
    const std::vector<double> low(sorted.begin(), sorted.begin() + std::ptrdiff_t(cut));
    const std::vector<double> high(sorted.begin() + std::ptrdiff_t(cut), sorted.end());
    return QualityReason{"bimodal", Quality::disturbed,
                         fmt::format("bimodal: {} repetitions near {}, {} near {}", low.size(),
                                     format_seconds(summarize(low).median), high.size(),
                                     format_seconds(summarize(high).median))};
}

// Repetitions whose median is a whole number of scheduler slices for work
// that ran far faster: a thread of the entry waited for a CPU.
std::optional<QualityReason> quantised(std::span<const RepetitionFigures> reps) {
    double fastest = INFINITY;
    for (const auto &r : reps) {
        if (std::isfinite(r.fastest_s) && r.fastest_s > 0) fastest = std::min(fastest, r.fastest_s);
        if (std::isfinite(r.median_s) && r.median_s > 0) fastest = std::min(fastest, r.median_s);
    }
    if (!std::isfinite(fastest)) return std::nullopt;
    std::vector<double> hits;
    for (const auto &r : reps) {
        const double m = r.median_s;
        if (!(m >= kSliceSeconds) || m < kQuantisedFactor * fastest) continue;
        const double slices = m / kSliceSeconds;
        if (std::fabs(slices - std::round(slices)) <= kSliceTolerance) hits.push_back(m);
    }
    if (hits.empty()) {
        // Every sample slow too: the grid itself is the evidence.
        std::set<long> slice_counts;
        for (const auto &r : reps) {
            const double slices = r.median_s / kSliceSeconds;
            if (r.median_s >= kSliceSeconds && std::fabs(slices - std::round(slices)) <= kGridTolerance) {
                hits.push_back(r.median_s);
                slice_counts.insert(std::lround(slices));
            }
        }
        if (reps.size() < kGridMinRepetitions || 3 * hits.size() < 2 * reps.size() || slice_counts.size() < 2)
            return std::nullopt;
        const auto [lo, hi] = std::minmax_element(hits.begin(), hits.end());
        return QualityReason{"quantised", Quality::disturbed,
                             fmt::format("{} of {} repetitions at whole milliseconds ({} to {}), at {} different "
                                         "ones: threads waited for scheduler slices",
                                         hits.size(), reps.size(), format_seconds(*lo), format_seconds(*hi),
                                         slice_counts.size())};
    }
    const auto [lo, hi] = std::minmax_element(hits.begin(), hits.end());
    return QualityReason{"quantised", Quality::disturbed,
                         fmt::format("{} of {} repetitions at whole milliseconds ({}{}) for work that ran in {}: "
                                     "threads waited for a scheduler slice",
                                     hits.size(), reps.size(), format_seconds(*lo),
                                     *hi > *lo ? " to " + format_seconds(*hi) : std::string(),
                                     format_seconds(fastest))};
}

// What NVML said of the throttled repetitions, for the throttled note:
// "; NVML: sw power cap; up to 700 W, 83 C" ("" when it said nothing).
std::string throttle_causes(std::span<const RepetitionFigures> reps) {
    std::uint64_t reasons = 0;
    double watts = NAN, celsius = NAN;
    for (const auto &r : reps) {
        if (!r.throttled) continue;
        reasons |= r.clock_event_reasons;
        if (std::isfinite(r.power_watts)) watts = std::isfinite(watts) ? std::max(watts, r.power_watts) : r.power_watts;
        if (std::isfinite(r.temperature_c))
            celsius = std::isfinite(celsius) ? std::max(celsius, r.temperature_c) : r.temperature_c;
    }
    std::string out = reasons ? "; NVML: " + clock_event_reasons_text(reasons) : std::string();
    if (std::isfinite(watts) || std::isfinite(celsius))
        out += fmt::format("; up to {}{}{}", std::isfinite(watts) ? fmt::format("{:.0f} W", watts) : "",
                           std::isfinite(watts) && std::isfinite(celsius) ? ", " : "",
                           std::isfinite(celsius) ? fmt::format("{:.0f} C", celsius) : "");
    return out;
}

} // namespace

EntrySummary summarize_entry(std::span<const RepetitionFigures> reps, const EntryConditions &c) {
    EntrySummary s;
    std::vector<double> medians;
    std::vector<RepetitionFigures> timed; // the repetitions the median is taken over
    // Throttled repetitions count only when no other ran at the sustained
    // clock: then the entry keeps their median, as `throttled`.
    const bool every_one_throttled = std::all_of(reps.begin(), reps.end(), [](const RepetitionFigures &r) {
        return r.throttled || r.starved || !(r.median_s > 0) || !std::isfinite(r.median_s);
    }) && std::any_of(reps.begin(), reps.end(), [](const RepetitionFigures &r) { return r.throttled; });
    for (const auto &r : reps) {
        if (!(r.median_s > 0) || !std::isfinite(r.median_s)) continue;
        if (r.starved) {
            ++s.starved_repetitions;
            continue;
        }
        if (r.throttled) {
            ++s.throttled_repetitions;
            if (!every_one_throttled) continue;
        }
        timed.push_back(r);
        medians.push_back(r.median_s);
        if (!r.noise_target_met) ++s.missed_noise_target;
    }
    s.repetitions = medians.size();
    if (medians.empty()) return s;
    s.median_s = summarize(medians).median;
    if (medians.size() >= 2) {
        const auto [lo, hi] = std::minmax_element(medians.begin(), medians.end());
        s.spread = (*hi - *lo) / 2.0 / s.median_s;
    }

    if (auto r = bimodal(medians)) s.reasons.push_back(*r);
    if (auto r = quantised(timed)) s.reasons.push_back(*r);
    if (s.starved_repetitions > 0)
        s.reasons.push_back({"starved", Quality::noisy,
                             fmt::format("{} of {} repetitions starved (threads waited for a CPU) and left out",
                                         s.starved_repetitions, s.starved_repetitions + s.repetitions)});
    if (every_one_throttled)
        s.reasons.push_back({"throttled", Quality::throttled,
                             fmt::format("all {} repetitions ran below {:.0f}% of the sustained SM clock, after "
                                         "{} re-measures each: the time is the clock's{}",
                                         s.throttled_repetitions, 100 * kThrottledClockShare, kThrottledRetries,
                                         throttle_causes(reps))});
    else if (s.throttled_repetitions > 0)
        s.reasons.push_back({"throttled", Quality::noisy,
                             fmt::format("{} of {} repetitions throttled (SM clock below {:.0f}% of sustained) and "
                                         "left out{}",
                                         s.throttled_repetitions, s.throttled_repetitions + s.repetitions,
                                         100 * kThrottledClockShare, throttle_causes(reps))});
    if (c.noise_target > 0 && std::isfinite(s.spread) && s.spread > c.noise_target)
        s.reasons.push_back({"spread", Quality::noisy,
                             fmt::format("repetitions spread ±{} > {} noise target", pct(s.spread),
                                         pct(c.noise_target))});
    if (s.missed_noise_target > 0)
        s.reasons.push_back({"missed_noise_target", Quality::noisy,
                             fmt::format("{} of {} repetitions missed {} noise target", s.missed_noise_target,
                                         s.repetitions,
                                         c.noise_target > 0 ? "the " + pct(c.noise_target) : std::string("their"))});
    if (c.threads > 0 && c.cpus > 0 && std::isfinite(c.load)) {
        const double free_cpus = std::max(0.0, double(c.cpus) - c.load);
        if (double(c.threads) > free_cpus + kOversubscribedSlack)
            s.reasons.push_back(
                {"oversubscribed", Quality::noisy,
                 fmt::format("{} thread{} on {:.1f} free CPUs (load {:.2f} on {}): --threads 1 or --cpus", c.threads,
                             c.threads == 1 ? "" : "s", free_cpus, c.load, c.cpus)});
    }
    for (const auto &r : s.reasons) s.quality = std::max(s.quality, r.severity);
    return s;
}

std::optional<std::string> starved_reason(std::span<const RepetitionRecord> repetitions) {
    if (repetitions.empty()) return std::nullopt;
    std::vector<double> shares, medians;
    int threads = 0, remeasured = 0;
    for (const auto &r : repetitions) {
        if (!r.starved) return std::nullopt;
        shares.push_back(r.starved_share);
        medians.push_back(r.summary.median);
        threads = std::max(threads, r.threads_ran);
        remeasured = std::max(remeasured, r.remeasured);
    }
    return fmt::format("every repetition starved: its {} thread{} waited for a CPU for {} of the samples' time "
                       "({} more tr{} each); it read {}, the machine's time, not the op's. Use --threads 1, "
                       "--cpus with idle CPUs, or a quieter machine",
                       threads, threads == 1 ? "" : "s", pct(summarize(shares).median), remeasured,
                       remeasured == 1 ? "y" : "ies", format_seconds(summarize(medians).median));
}

namespace {


double number_or(const nlohmann::json &j, const char *key, double fallback) {
    const nlohmann::json &v = json_member(j, key);
    return v.is_number() ? v.get<double>() : fallback;
}

// Google Benchmark's time units in seconds (0 for another).
double unit_seconds(const std::string &unit) {
    return unit == "ns" ? 1e-9 : unit == "us" ? 1e-6 : unit == "ms" ? 1e-3 : unit == "s" ? 1.0 : 0.0;
}

double first_number(const nlohmann::json &array) {
    return array.is_array() && !array.empty() && array[0].is_number() ? array[0].get<double>() : NAN;
}

} // namespace

RepetitionFigures repetition_figures(const RepetitionRecord &record) {
    return {record.summary.median,
            record.summary.noise,
            record.target_met,
            record.summary.min,
            record.starved,
            record.starved_share >= 0 ? record.starved_share : NAN,
            record.throttled,
            record.clock_event_reasons,
            record.power_watts >= 0 ? record.power_watts : NAN,
            record.temperature_c > -273 ? record.temperature_c : NAN};
}

RepetitionFigures repetition_figures(const nlohmann::json &entry) {
    RepetitionFigures r;
    const nlohmann::json &stats = json_member(entry, "stats");
    const nlohmann::json &median = json_member(stats, "median");
    if (median.is_number())
        r.median_s = median.get<double>();
    else if (json_member(entry, "real_time").is_number())
        r.median_s = entry["real_time"].get<double>() * unit_seconds(entry.value("time_unit", "ns"));
    r.noise = number_or(stats, "noise", INFINITY); // null: too few samples for a CI
    const nlohmann::json &met = json_member(stats, "noise_target_met");
    r.noise_target_met = met.is_boolean() ? met.get<bool>() : true;
    r.fastest_s = number_or(stats, "min", NAN);
    // Sets before starvation was measured have neither: never starved.
    const nlohmann::json &starved = json_member(stats, "starved");
    r.starved = starved.is_boolean() && starved.get<bool>();
    r.starved_share = number_or(stats, "starved_share", NAN);
    // Sets before issue 41, and CPU entries, have no clock: never throttled.
    const nlohmann::json &throttled = json_member(stats, "throttled");
    r.throttled = throttled.is_boolean() && throttled.get<bool>();
    if (const nlohmann::json &names = json_member(stats, "clock_event_reasons"); names.is_array()) {
        std::vector<std::string> known;
        for (const auto &n : names)
            if (n.is_string()) known.push_back(n.get<std::string>());
        r.clock_event_reasons = clock_event_reasons_from_names(known);
    }
    r.power_watts = number_or(stats, "power_watts", NAN);
    r.temperature_c = number_or(stats, "temperature_c", NAN);
    return r;
}

EntryConditions entry_conditions(const nlohmann::json &entry, const nlohmann::json &context) {
    const nlohmann::json &settings = json_member(entry, "settings");
    const double resolved = number_or(settings, "threads_resolved", 0);
    const int case_threads = resolved >= 1 ? count_from(resolved) : count_from(number_or(settings, "threads", 0));
    return entry_conditions(number_or(settings, "noise_target", 0.0), case_threads, entry.value("backend", ""),
                            context);
}

EntryConditions entry_conditions(double noise_target, int case_threads, const std::string &backend,
                                 const nlohmann::json &context) {
    EntryConditions c;
    c.noise_target = noise_target;
    const nlohmann::json &ob = json_member(context, "opbench");
    const nlohmann::json &pinned = json_member(json_member(ob, "measurement"), "cpus");
    if (pinned.is_array() && !pinned.empty())
        c.cpus = int(pinned.size());
    else if (const double allowed = number_or(json_member(ob, "machine"), "allowed_cores", 0); allowed >= 1)
        c.cpus = count_from(allowed);
    else
        c.cpus = count_from(number_or(context, "num_cpus", 0));
    const nlohmann::json &info = json_member(json_member(json_member(ob, "backends"), backend.c_str()), "info");
    c.threads = threads_used(case_threads, info, c.cpus);
    c.load = first_number(json_member(json_member(ob, "machine"), "load_average"));
    if (!std::isfinite(c.load)) c.load = first_number(json_member(context, "load_avg"));
    return c;
}

EntrySummary summarize_entry_json(std::span<const nlohmann::json *const> entries, const nlohmann::json &context) {
    std::vector<RepetitionFigures> reps;
    for (const nlohmann::json *e : entries) reps.push_back(repetition_figures(*e));
    return summarize_entry(reps, entries.empty() ? EntryConditions{} : entry_conditions(*entries.front(), context));
}

} // namespace opbench
