// opbench compare: two or more result sets, case by case. Cases match on
// what they compute (op, shape, dtype, variant, backend, case name), not on
// the settings in their names (threads, cache), so runs that differ only in
// --threads still line up; the settings that differ are listed first.
#pragma once

#include "readers/result_set_reader.hpp"
#include "writers/writer.hpp"

#include <cmath>
#include <map>
#include <string>
#include <vector>

namespace opbench {

// How far one case's median moved between earlier runs of the same suite on
// the same machine (the archive that --baseline-from reads): the largest
// relative change between consecutive runs, leaving out the single largest
// (which may be a real step: an optimisation that landed). Runs of unchanged
// code differed by that much, so a change no larger is noisy, never faster
// or slower; this is the run-to-run drift (a neighbour's load, the host's
// state) that no statistic within two runs can see.
struct RunToRunRange {
    std::size_t runs = 0; // archived runs with a valid time for the case
    double range = 0;     // relative
};
// Fewer runs than this say too little about a case's range to judge by.
inline constexpr std::size_t kMinRunsForRange = 4;

struct CompareOptions {
    double threshold = 0.05;         // smallest relative change of the median that counts
    double alpha = 0.05;             // significance level of the U test
    bool wide = false;               // tables with full case names and every column (--wide)
    // With wide: the quality's and the reasons' prose as numbered footnotes,
    // not in their cells (Markdown: a CI summary's cells stay short).
    bool footnoted = false;
    // By CaseRecord::match_key(); empty without an archive.
    std::map<std::string, RunToRunRange> run_to_run;
};

// Each case's run-to-run range over `history` (sets of one suite on one
// machine, oldest first); cases with a valid time in fewer than
// kMinRunsForRange sets get no entry.
[[nodiscard]] std::map<std::string, RunToRunRange> run_to_run_ranges(const std::vector<ResultSet> &history);

// A setting with different values across the sets (one value per set).
struct SettingDiff {
    std::string setting;
    std::vector<std::string> values;
    bool strict = true; // --strict refuses on it (the commit is what a comparison compares: never)
};

// Every comparable setting with its value in each set (machine, CPUs,
// threads, cache, noise target, build, library versions, suite, commit...).
[[nodiscard]] std::vector<SettingDiff> all_settings(const std::vector<ResultSet> &sets);
// Only those whose values differ between the sets.
[[nodiscard]] std::vector<SettingDiff> differing_settings(const std::vector<ResultSet> &sets);

struct CaseComparison {
    std::string label; // the case name without backend / threads / cache
    std::string backend, op, dtype, variant;
    nlohmann::json params = nlohmann::json::object(); // shape parameters, as the set lists them
    std::string key; // how the sets' cases were matched (match_key, with settings when needed)
    // Both sides valid: medians (seconds), ratio new / base, the U test.
    bool compared = false;
    double base_median = 0, new_median = 0, ratio = 0;
    double p_value = 1;             // NaN when no test could be made
    // A 95% interval of the ratio: the new median's order-statistic interval
    // over the base's (median_ci over the repetitions' medians), so it is
    // conservative. NaN when either side has under 6 repetitions.
    double ratio_low = NAN, ratio_high = NAN;
    std::string test;               // "repetitions 9 vs 9", "samples 640 vs 655", "none (1 vs 1 repetitions)"
    std::string verdict;            // same | faster | slower | noisy; or the status when not compared
    std::string reason;             // why not compared (status and reason of the side(s) without a time)
    std::string note;               // the sides' quality when not clean
    // Each side's one summary (median, quality); also for a case without a
    // ratio, where the side has repetitions.
    EntrySummary base_summary, new_summary;
    bool disturbed = false; // a side is disturbed: a faster/slower verdict became noisy
    RunToRunRange run_to_run;       // from the archive; runs == 0 when none was used
    bool within_run_to_run = false; // a significant change within that range: noisy
    // The larger of the two sides' process spreads (process_spread()); a
    // significant change within it is noisy.
    double process_spread = 0;
    bool within_process_spread = false;
};

struct Geomean {
    std::string group; // "all", "backend <name>", "op <name>"
    std::size_t cases = 0;
    double ratio = 1;
};

struct PairComparison {
    std::string base_name, new_name, base_path, new_path;
    std::vector<CaseComparison> cases; // compared ones first, in the base set's order
    std::vector<Geomean> geomeans;
    [[nodiscard]] std::size_t count(const std::string &verdict) const;
};

struct Comparison {
    std::vector<std::string> set_names;
    std::vector<SettingDiff> differing;
    std::vector<PairComparison> pairs; // sets[0] against each later set
    CompareOptions options;
    bool interleaved = false;                  // some set ran its repetitions interleaved
    [[nodiscard]] bool has_regression() const; // some case is `slower`
};

// The verdict for one relative change with its p-value (NaN: no test):
// under the threshold "same"; over it "faster"/"slower" when significant,
// else "noisy".
[[nodiscard]] std::string verdict_for(double ratio, double p_value, const CompareOptions &options);

// How far a case's time moved between the worker processes of one run
// (stats.process; case_host.hpp's pool): (max - min) / median of the
// per-process medians of its repetitions; 0 with fewer than two processes.
// A change between two runs no larger than that is what a new process draw
// alone produces (memory layout, runtime state), so it is noisy.
[[nodiscard]] double process_spread(const ValidTimes &times);

// Compare one case's valid times: the U test on the repetitions' medians
// when there are enough of them to reach alpha, else on the per-sample times.
// A side whose quality is disturbed (measure/entry_summary.hpp) never gives
// faster or slower: its time says nothing about the code.
[[nodiscard]] CaseComparison compare_case(const CaseRecord &base, const CaseRecord &next,
                                          const CompareOptions &options);

// sets[0] is the base; needs at least two sets.
[[nodiscard]] Comparison compare_sets(const std::vector<ResultSet> &sets, const CompareOptions &options);

// Tables (settings that differ, per pair: compared cases, cases without a
// time, geomeans) and the same as JSON data.
[[nodiscard]] Document comparison_document(const Comparison &c);

// Whether matching must include threads and cache: some set holds one case
// under several of those settings.
[[nodiscard]] bool needs_settings_in_key(const std::vector<ResultSet> &sets);

} // namespace opbench
