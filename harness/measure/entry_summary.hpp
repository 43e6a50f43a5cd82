// One entry's summary: the one median, spread and quality verdict that every
// view of a case x backend shows (the run console, the result set, compare,
// compare --by, report, analyze, history). Computed from plain numbers, so the
// run can compute it while measuring, or from a result set's entries, so the
// readers compute the same thing from what the run wrote.
//
// Policy (docs/measurement.md, "One median per entry"):
//   - the median is the median of every passed repetition's median but the
//     starved ones' (measure/starvation.hpp: their threads waited for a CPU,
//     so they timed the machine). Without starvation it is Google
//     Benchmark's own `median` aggregate (and so compare.py's).
//     A repetition that missed its noise target is still a measurement of
//     what happened, and counts, in every view: dropping it would make one
//     view show 27 us and another 24 ms for the same entry. Missing the
//     target is a reason in the verdict (noisy). An entry whose repetitions
//     were all starved has no median; its status is `starved`.
//   - the spread is the repetitions' relative half-range,
//     (max - min) / 2 / median: the result set's `repetition_spread`.
//   - the quality is `clean`, `noisy` (the figure is less precise than the
//     settings asked: spread above the noise target, repetitions that missed
//     it, more runnable threads than free CPUs) or `disturbed` (the times
//     show outside interference: bimodal repetitions, times quantised to the
//     scheduler's slice). A disturbed entry's median says nothing about its
//     kernel.
#pragma once

#include "measure/records.hpp"

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdint>
#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace opbench {

// Ordered by severity. `throttled` (measure/throttle.hpp): every repetition
// ran while the device's clock had fallen: the time is the clock's.
enum class Quality { clean, noisy, disturbed, throttled };
// Whether an entry of quality `q` says nothing of its kernel (disturbed or
// throttled): no rate, no speed-up, no diagnosis.
[[nodiscard]] inline bool says_nothing_of_kernel(Quality q) { return q >= Quality::disturbed; }
// Whether an entry of quality `q` gives no rate, no share of a roof and no
// speed-up in any view (issue 41): `throttled`, whose time is the fallen
// clock's. Its time is still shown, flagged. (A `disturbed` entry keeps its
// figures, flagged.)
[[nodiscard]] inline bool gives_no_rate(Quality q) { return q == Quality::throttled; }
[[nodiscard]] std::string_view quality_name(Quality q);

// Why an entry is not clean. `code` is stable (result sets, tests):
// spread | missed_noise_target | oversubscribed | bimodal | quantised.
struct QualityReason {
    std::string code;
    Quality severity = Quality::noisy;
    std::string text; // for a person, short: "spread ±12% > 1% noise target"
};

// What one repetition contributes, per call, in seconds.
struct RepetitionFigures {
    double median_s = NAN;
    double noise = INFINITY;     // relative half-width of the median's 95% CI
    bool noise_target_met = true;
    double fastest_s = NAN;      // its fastest sample (stats.min); NaN unknown
    bool starved = false;        // its threads waited for a CPU (measure/starvation.hpp): no time of the op
    double starved_share = NAN;  // that wait's share of its samples' time; NaN unknown
    bool throttled = false;      // the device's clock fell below the rule's share (measure/throttle.hpp)
    std::uint64_t clock_event_reasons = 0; // NVML's reasons over it (throttle.hpp); 0 none or unknown
    double power_watts = NAN;    // board power at its end; NaN unknown
    double temperature_c = NAN;  // GPU temperature at its end; NaN unknown
};

// How the entry ran: what the settings asked and what the machine had.
struct EntryConditions {
    double noise_target = 0; // relative; 0: none asked
    int threads = 0;         // runnable threads the backend used for the entry; 0 unknown
    int cpus = 0;            // CPUs the process could run on; 0 unknown
    double load = NAN;       // the machine's 1-minute load average before the run; NaN unknown
};

// Thresholds, named so a reader of a verdict can find them.
// Neighbouring (sorted) repetition medians this far apart: two populations.
inline constexpr double kBimodalGap = 3.0;
// A repetition median at least this many times the entry's fastest sample,
// of at least kSliceSeconds, within kSliceTolerance of a whole number of
// slices: a thread that waited for the scheduler (CFS's ticks are 1-4 ms).
inline constexpr double kQuantisedFactor = 20.0;
inline constexpr double kSliceSeconds = 1e-3;
inline constexpr double kSliceTolerance = 0.1; // of a slice
// Without a fast sample to compare with: at least kGridMinRepetitions
// repetitions, two thirds of them within kGridTolerance of a whole number of
// slices, at two or more different numbers (a steady op sits at one value;
// waits of a slice or more land on several). A genuine time falls that close
// with probability 0.1 per repetition.
inline constexpr std::size_t kGridMinRepetitions = 5;
inline constexpr double kGridTolerance = 0.05; // of a slice
// More runnable threads than this many CPUs above the free ones (the load
// average is a one-minute mean, so half a CPU of slack).
inline constexpr double kOversubscribedSlack = 0.5;

struct EntrySummary {
    std::size_t repetitions = 0;         // the repetitions the median is taken over (starved ones are not)
    std::size_t starved_repetitions = 0; // left out: starved even after their re-measures
    std::size_t throttled_repetitions = 0; // left out (unless all were): throttled after their re-measures
    std::size_t missed_noise_target = 0;
    double median_s = NAN; // median of every repetition's median
    double spread = NAN;   // (max - min) / 2 / median; NaN with fewer than two repetitions
    Quality quality = Quality::clean;
    std::vector<QualityReason> reasons; // empty when clean; disturbed ones first

    [[nodiscard]] std::string_view flag() const { return quality_name(quality); }
    // Every repetition starved: the entry has no time of its op (status `starved`).
    [[nodiscard]] bool all_starved() const { return repetitions == 0 && starved_repetitions > 0; }
    // "clean", or "noisy: <reason>; <reason>".
    [[nodiscard]] std::string verdict() const;
    // The codes of the reasons, comma-joined: "bimodal,oversubscribed".
    [[nodiscard]] std::string reason_codes() const;
    // The entry's `summary` object: median_seconds, spread, repetitions,
    // missed_noise_target, quality, reasons [{code, severity, text}].
    [[nodiscard]] nlohmann::json to_json() const;
};

// Why an entry has no time of its op when every repetition stayed starved
// after its re-measures (the reason of status `starved`, with the remedy);
// nullopt when a repetition was not starved, or there is none.
[[nodiscard]] std::optional<std::string> starved_reason(std::span<const RepetitionRecord> repetitions);

// The one summary, from plain numbers. No repetition: median NaN, clean.
[[nodiscard]] EntrySummary summarize_entry(std::span<const RepetitionFigures> repetitions,
                                           const EntryConditions &conditions);

// What the run holds while measuring: one repetition's record (its samples'
// median, noise, min; whether it met the target).
[[nodiscard]] RepetitionFigures repetition_figures(const RepetitionRecord &record);
// From a result set: one iteration entry's figures (stats.median, else
// real_time in its time_unit; stats.noise, stats.noise_target_met, stats.min).
[[nodiscard]] RepetitionFigures repetition_figures(const nlohmann::json &entry);
// The conditions of an entry (its settings: noise_target, threads) in a set
// whose Google Benchmark `context` (with context.opbench) is given: threads
// as machine/bottleneck.hpp's threads_used() counts them, CPUs the pinned
// list or the allowed cores, load context.opbench.machine.load_average[0]
// (else Google Benchmark's load_avg[0]).
[[nodiscard]] EntryConditions entry_conditions(const nlohmann::json &entry, const nlohmann::json &context);
// The same for an entry the run holds: its noise target, its threads
// (resolved, else the setting) and its backend's name.
[[nodiscard]] EntryConditions entry_conditions(double noise_target, int case_threads, const std::string &backend,
                                               const nlohmann::json &context);
// The summary of one case x backend from its passed iteration entries.
[[nodiscard]] EntrySummary summarize_entry_json(std::span<const nlohmann::json *const> entries,
                                                const nlohmann::json &context);

} // namespace opbench
