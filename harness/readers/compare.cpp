#include "readers/compare.hpp"

#include "readers/compact_table.hpp"
#include "readers/mann_whitney.hpp"
#include "measure/entry_metrics.hpp"
#include "measure/statistics.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <set>

namespace opbench {

namespace {

using Extractor = std::function<std::string(const ResultSet &)>;

const nlohmann::json &at_path(const nlohmann::json &j, std::initializer_list<const char *> keys) {
    static const nlohmann::json null_json;
    const nlohmann::json *cur = &j;
    for (const char *k : keys) {
        if (!cur->is_object()) return null_json;
        auto it = cur->find(k);
        if (it == cur->end()) return null_json;
        cur = &*it;
    }
    return *cur;
}

std::string text(const nlohmann::json &j) {
    if (j.is_null()) return "-";
    if (j.is_string()) return j.get<std::string>();
    return j.dump();
}

// The distinct values of one per-case setting, "0 (all cores)" style.
std::string case_setting_values(const ResultSet &s, const char *key) {
    std::set<std::string> values;
    for (const auto &c : s.cases) {
        auto it = c.settings.find(key);
        if (it == c.settings.end()) continue;
        std::string v = text(*it);
        if (std::string(key) == "threads" && v == "0") v = "all cores";
        if (std::string(key) == "noise_target" && it->is_number()) v = fmt::format("{:g}%", it->get<double>() * 100);
        values.insert(v);
    }
    return values.empty() ? "-" : fmt::format("{}", fmt::join(values, ", "));
}

std::string library_versions(const ResultSet &s) {
    std::vector<std::string> parts;
    for (const auto &[name, be] : at_path(s.context, {"opbench", "backends"}).items()) {
        std::string lv = be.value("library_versions", std::string());
        if (!lv.empty()) parts.push_back(name + ": " + lv);
    }
    return parts.empty() ? "-" : fmt::format("{}", fmt::join(parts, "; "));
}

// "interleaved" when Google Benchmark ran the repetitions of all cases in a
// random order (--benchmark_enable_random_interleaving), else "back to back".
std::string repetition_order(const ResultSet &s) {
    const auto &args = at_path(s.context, {"opbench", "measurement", "benchmark_args"});
    if (args.is_array())
        for (const auto &a : args)
            if (a.is_string()) {
                const std::string v = a.get<std::string>();
                if (v == "--benchmark_enable_random_interleaving=true" || v == "--benchmark_enable_random_interleaving")
                    return "interleaved";
            }
    return "back to back";
}

std::string cpus(const ResultSet &s) {
    std::string out = fmt::format("{} allowed", text(at_path(s.context, {"opbench", "machine", "allowed_cores"})));
    const auto &pinned = at_path(s.context, {"opbench", "measurement", "cpus"});
    if (pinned.is_array() && !pinned.empty())
        out += fmt::format(", pinned to {}", fmt::join(pinned.get<std::vector<int>>(), ","));
    return out;
}

std::string repetitions(const ResultSet &s) {
    std::set<std::size_t> counts;
    for (const auto &c : s.cases)
        if (c.status == "passed") counts.insert(c.repetitions.size());
    return counts.empty() ? "-" : fmt::format("{}", fmt::join(counts, ", "));
}

// The worker processes a case's repetitions were spread over (the setting;
// a set from before it has none and used 3).
std::string processes(const ResultSet &s) {
    const std::string v = case_setting_values(s, "processes");
    return v == "-" && !s.cases.empty() ? "3" : v;
}

struct SettingRow {
    const char *name;
    bool strict;
    Extractor get;
};

// A profiling run (--profile, --trace) times extra work into its recorded
// samples' surroundings: its figures are never compared with a plain run's.
std::string profiling(const ResultSet &s) {
    const nlohmann::json &on = at_path(s.context, {"opbench", "profiling", "enabled"});
    return on.is_boolean() && on.get<bool>() ? "on" : "off";
}

const std::vector<SettingRow> &setting_rows() {
    static const std::vector<SettingRow> rows = {
        {"machine", true, [](const ResultSet &s) { return s.machine_id(); }},
        {"CPU", true, [](const ResultSet &s) { return s.cpu_model(); }},
        {"host", false, [](const ResultSet &s) { return s.host_name(); }},
        {"CPUs", true, cpus},
        {"threads", true, [](const ResultSet &s) { return case_setting_values(s, "threads"); }},
        {"cache", true, [](const ResultSet &s) { return case_setting_values(s, "cache"); }},
        {"noise target", true, [](const ResultSet &s) { return case_setting_values(s, "noise_target"); }},
        {"min time", true, [](const ResultSet &s) { return case_setting_values(s, "min_time"); }},
        {"max time", true, [](const ResultSet &s) { return case_setting_values(s, "max_time"); }},
        {"repetitions", true, repetitions},
        {"processes", true, processes},
        {"repetition order", true, repetition_order},
        {"build type", true, [](const ResultSet &s) { return s.build_type(); }},
        {"compiler", true,
         [](const ResultSet &s) {
             return text(at_path(s.context, {"opbench", "build", "compiler"}));
         }},
        {"library versions", true, library_versions},
        {"oneDNN ISA", true,
         [](const ResultSet &s) {
             return text(at_path(s.context, {"opbench", "backends", "onednn", "info", "onednn_isa"}));
         }},
        {"profiling", true, profiling},
        {"isolation", true,
         [](const ResultSet &s) {
             return text(at_path(s.context, {"opbench", "measurement", "isolation"}));
         }},
        {"reference", true,
         [](const ResultSet &s) {
             return text(at_path(s.context, {"opbench", "measurement", "reference_backend"}));
         }},
        {"suite", true, [](const ResultSet &s) { return s.suite_name(); }},
        {"suite hash", true, [](const ResultSet &s) { return s.suite_sha256().substr(0, 12); }},
        {"commit", false, [](const ResultSet &s) { return s.commit(); }},
    };
    return rows;
}

std::string signed_percent(double change) { return fmt::format("{:+.1f}%", change * 100); }

std::string pair_title(const PairComparison &p) { return fmt::format("{} -> {}", p.base_name, p.new_name); }

// Display names for sets: file stems, made unique.
std::vector<std::string> set_names(const std::vector<ResultSet> &sets) {
    std::vector<std::string> names;
    for (const auto &s : sets) {
        std::string n = s.short_name();
        if (std::count(names.begin(), names.end(), n) > 0) n = s.path;
        names.push_back(n);
    }
    return names;
}

// A side's quality flag; "-" for a side without repetitions.
std::string side_flag(const EntrySummary &s) { return s.repetitions > 0 ? std::string(s.flag()) : std::string("-"); }

// "clean", "noisy", or "clean/disturbed" when the sides differ.
std::string quality_cell(const CaseComparison &cc) {
    const std::string b = side_flag(cc.base_summary), n = side_flag(cc.new_summary);
    return b == n ? b : b + "/" + n;
}

double geomean_of(const std::vector<double> &ratios) {
    double log_sum = 0;
    for (double r : ratios) log_sum += std::log(r);
    return std::exp(log_sum / double(ratios.size()));
}

} // namespace

std::size_t PairComparison::count(const std::string &verdict) const {
    return static_cast<std::size_t>(
        std::count_if(cases.begin(), cases.end(), [&](const CaseComparison &c) { return c.verdict == verdict; }));
}

bool Comparison::has_regression() const {
    for (const auto &p : pairs)
        if (p.count("slower") > 0) return true;
    return false;
}

std::vector<SettingDiff> all_settings(const std::vector<ResultSet> &sets) {
    std::vector<SettingDiff> out;
    for (const auto &row : setting_rows()) {
        SettingDiff d{row.name, {}, row.strict};
        for (const auto &s : sets) d.values.push_back(row.get(s));
        out.push_back(std::move(d));
    }
    return out;
}

std::vector<SettingDiff> differing_settings(const std::vector<ResultSet> &sets) {
    std::vector<SettingDiff> out;
    for (auto &d : all_settings(sets))
        if (std::any_of(d.values.begin(), d.values.end(), [&](const std::string &v) { return v != d.values[0]; }))
            out.push_back(std::move(d));
    return out;
}

std::string verdict_for(double ratio, double p_value, const CompareOptions &o) {
    const double change = ratio - 1.0;
    if (std::fabs(change) < o.threshold) return "same";
    if (std::isfinite(p_value) && p_value < o.alpha) return change > 0 ? "slower" : "faster";
    return "noisy";
}

namespace {

// The case's names, copied from one side; every comparison starts here.
CaseComparison named_after(const CaseRecord &c) {
    CaseComparison r;
    r.label = c.label();
    r.backend = c.backend;
    r.op = c.op;
    r.dtype = c.dtype;
    r.variant = c.variant;
    r.params = c.params;
    r.p_value = NAN;
    return r;
}

// "base noisy (...); new disturbed (...)": the sides that are not clean.
std::string unclean_sides(const ValidTimes &b, const ValidTimes &n) {
    std::vector<std::string> sides;
    if (b.summary.repetitions > 0 && b.summary.quality != Quality::clean)
        sides.push_back("base " + b.summary.verdict());
    if (n.summary.repetitions > 0 && n.summary.quality != Quality::clean) sides.push_back("new " + n.summary.verdict());
    return fmt::format("{}", fmt::join(sides, "; "));
}

// No ratio: say which side has no time, and why.
void explain_no_ratio(CaseComparison &r, const ValidTimes &b, const ValidTimes &n) {
    if (b.status != "ok" && n.status != "ok" && b.status == n.status && b.why == n.why) {
        r.verdict = b.status;
        r.reason = b.why;
        return;
    }
    r.verdict = b.status != "ok" ? b.status : n.status;
    std::vector<std::string> parts;
    if (b.status != "ok") parts.push_back(fmt::format("base {}: {}", b.status, b.why));
    if (n.status != "ok") parts.push_back(fmt::format("new {}: {}", n.status, n.why));
    r.reason = fmt::format("{}", fmt::join(parts, "; "));
}

// The ratio's 95% interval from the two medians' distribution-free intervals.
void set_ratio_interval(CaseComparison &r, const ValidTimes &b, const ValidTimes &n) {
    std::vector<double> bs = b.repetition_medians, ns = n.repetition_medians;
    std::sort(bs.begin(), bs.end());
    std::sort(ns.begin(), ns.end());
    const MedianCi bci = median_ci(bs), nci = median_ci(ns);
    if (bci.exists && nci.exists && bci.low > 0) {
        r.ratio_low = nci.low / bci.high;
        r.ratio_high = nci.high / bci.low;
    }
}

// The Mann-Whitney U test on the repetitions, or on the samples when there
// are too few repetitions to ever reach alpha. Returns whether the sides'
// repetitions overlap (only asked of the samples' test).
bool run_u_test(CaseComparison &r, const ValidTimes &b, const ValidTimes &n, const CompareOptions &o) {
    const std::size_t nb = b.repetition_medians.size(), nn = n.repetition_medians.size();
    if (min_two_sided_p(nb, nn) < o.alpha) {
        r.p_value = mann_whitney_u(b.repetition_medians, n.repetition_medians).p_value;
        r.test = fmt::format("repetitions {} vs {}", nb, nn);
        return false;
    }
    if (b.samples.empty() || n.samples.empty()) {
        r.test = fmt::format("none ({} vs {} repetitions, no samples)", nb, nn);
        return false;
    }
    // The samples within the repetitions (serially correlated, so the
    // p-value is optimistic).
    r.p_value = mann_whitney_u(b.samples, n.samples).p_value;
    r.test = fmt::format("samples {} vs {}", b.samples.size(), n.samples.size());
    // Samples within a repetition are correlated, so their p-value ignores
    // how far the case moves between repetitions: a change only counts
    // when every repetition of one side is beyond every one of the other.
    const auto [b_lo, b_hi] = std::minmax_element(b.repetition_medians.begin(), b.repetition_medians.end());
    const auto [n_lo, n_hi] = std::minmax_element(n.repetition_medians.begin(), n.repetition_medians.end());
    const bool overlap = nb + nn > 2 && !(*b_hi < *n_lo || *n_hi < *b_lo);
    if (overlap) r.test += ", repetitions overlap";
    return overlap;
}

bool is_change(const CaseComparison &r) { return r.verdict == "faster" || r.verdict == "slower"; }

// A significant change becomes noisy when it is within what the case moves
// anyway: across worker processes, with a side disturbed, or between
// archived runs of unchanged code.
void downgrade_unconvincing_change(CaseComparison &r, const ValidTimes &b, const ValidTimes &n,
                                   const std::string &match_key, const CompareOptions &o) {
    r.process_spread = std::max(process_spread(b), process_spread(n));
    if (is_change(r) && std::fabs(r.ratio - 1.0) <= r.process_spread) {
        r.verdict = "noisy";
        r.within_process_spread = true;
        r.test += fmt::format(", within its spread across worker processes {:.1f}%", r.process_spread * 100);
    }
    if (is_change(r) && (says_nothing_of_kernel(b.summary.quality) || says_nothing_of_kernel(n.summary.quality))) {
        r.verdict = "noisy";
        r.disturbed = true;
        r.test += ", a side disturbed";
    }
    if (auto h = o.run_to_run.find(match_key); h != o.run_to_run.end() && h->second.runs >= kMinRunsForRange) {
        r.run_to_run = h->second;
        if (is_change(r) && std::fabs(r.ratio - 1.0) <= h->second.range) {
            r.verdict = "noisy";
            r.within_run_to_run = true;
            r.test += fmt::format(", within its run-to-run range {:.1f}%", h->second.range * 100);
        }
    }
}

// A throttled side (issue 41) has a time, but the fallen clock's: no ratio,
// as a side without a time has none; the verdict says `throttled`.
ValidTimes unless_throttled(ValidTimes v) {
    if (v.status == "ok" && gives_no_rate(v.summary.quality)) {
        v.status = "throttled";
        v.why = v.summary.verdict();
    }
    return v;
}

} // namespace

CaseComparison compare_case(const CaseRecord &base, const CaseRecord &next, const CompareOptions &o) {
    CaseComparison r = named_after(base);
    const ValidTimes b = unless_throttled(valid_times(base));
    const ValidTimes n = unless_throttled(valid_times(next));
    r.base_summary = b.summary;
    r.new_summary = n.summary;
    r.note = unclean_sides(b, n);
    if (b.status != "ok" || n.status != "ok") {
        explain_no_ratio(r, b, n);
        return r;
    }
    r.compared = true;
    r.base_median = b.median;
    r.new_median = n.median;
    r.ratio = n.median / b.median;
    set_ratio_interval(r, b, n);
    const bool overlap = run_u_test(r, b, n, o);
    r.verdict = verdict_for(r.ratio, r.p_value, o);
    if (overlap && is_change(r)) r.verdict = "noisy";
    downgrade_unconvincing_change(r, b, n, base.match_key(), o);
    return r;
}

double process_spread(const ValidTimes &times) {
    std::map<int, std::vector<double>> by_process;
    for (std::size_t i = 0; i < times.repetition_medians.size() && i < times.repetition_processes.size(); ++i)
        by_process[times.repetition_processes[i]].push_back(times.repetition_medians[i]);
    if (by_process.size() < 2 || !(times.median > 0)) return 0;
    double lo = INFINITY, hi = 0;
    for (const auto &[process, medians] : by_process) {
        const double m = summarize(medians).median;
        lo = std::min(lo, m);
        hi = std::max(hi, m);
    }
    return (hi - lo) / times.median;
}

std::map<std::string, RunToRunRange> run_to_run_ranges(const std::vector<ResultSet> &history) {
    std::map<std::string, std::vector<double>> medians;
    for (const auto &set : history)
        for (const auto &c : set.cases) {
            const ValidTimes v = valid_times(c);
            if (v.status == "ok" && !gives_no_rate(v.summary.quality)) medians[c.match_key()].push_back(v.median);
        }
    std::map<std::string, RunToRunRange> out;
    for (const auto &[key, m] : medians) {
        if (m.size() < kMinRunsForRange) continue;
        std::vector<double> changes; // between consecutive runs, largest first
        for (std::size_t i = 1; i < m.size(); ++i)
            if (m[i - 1] > 0) changes.push_back(std::fabs(m[i] / m[i - 1] - 1.0));
        if (changes.size() < 2) continue;
        std::sort(changes.rbegin(), changes.rend());
        out[key] = {m.size(), changes[1]}; // the largest one left out: it may be a real step
    }
    return out;
}

bool needs_settings_in_key(const std::vector<ResultSet> &sets) {
    for (const auto &s : sets) {
        std::set<std::string> keys;
        for (const auto &c : s.cases)
            if (!keys.insert(c.match_key()).second) return true;
    }
    return false;
}

namespace {
// A case that only one of the two sets holds: listed, never given a ratio.
CaseComparison only_in(const CaseRecord &c, const std::string &set_name) {
    CaseComparison r = named_after(c);
    r.verdict = "missing";
    r.reason = fmt::format("only in {}", set_name);
    return r;
}
} // namespace

Comparison compare_sets(const std::vector<ResultSet> &sets, const CompareOptions &o) {
    Comparison out;
    out.options = o;
    out.set_names = set_names(sets);
    out.differing = differing_settings(sets);
    out.interleaved =
        std::any_of(sets.begin(), sets.end(), [](const ResultSet &s) { return repetition_order(s) == "interleaved"; });
    const bool with_settings = needs_settings_in_key(sets);
    auto key = [&](const CaseRecord &c) { return with_settings ? c.match_key_with_settings() : c.match_key(); };
    const ResultSet &base = sets.at(0);
    for (std::size_t i = 1; i < sets.size(); ++i) {
        const ResultSet &next = sets[i];
        PairComparison pair;
        pair.base_name = out.set_names[0];
        pair.new_name = out.set_names[i];
        pair.base_path = base.path;
        pair.new_path = next.path;
        std::map<std::string, const CaseRecord *> in_next;
        for (const auto &c : next.cases) in_next.emplace(key(c), &c);
        std::set<std::string> matched;
        std::vector<CaseComparison> missing;
        for (const auto &c : base.cases) {
            auto it = in_next.find(key(c));
            if (it == in_next.end()) {
                missing.push_back(only_in(c, pair.base_name));
                missing.back().key = key(c);
                continue;
            }
            matched.insert(it->first);
            pair.cases.push_back(compare_case(c, *it->second, o));
            pair.cases.back().key = key(c);
        }
        for (const auto &c : next.cases)
            if (!matched.count(key(c))) {
                missing.push_back(only_in(c, pair.new_name));
                missing.back().key = key(c);
            }
        std::stable_partition(pair.cases.begin(), pair.cases.end(), [](const CaseComparison &c) { return c.compared; });
        pair.cases.insert(pair.cases.end(), missing.begin(), missing.end());

        // Geomeans of the ratios: all, per backend, per op.
        std::map<std::string, std::vector<double>> groups;
        for (const auto &c : pair.cases) {
            if (!c.compared) continue;
            groups["all"].push_back(c.ratio);
            groups["backend " + c.backend].push_back(c.ratio);
            groups["op " + c.op].push_back(c.ratio);
        }
        for (const auto &prefix : {"all", "backend ", "op "})
            for (const auto &[g, ratios] : groups)
                if (g.rfind(prefix, 0) == 0 && (std::string(prefix) != "all" || g == "all"))
                    pair.geomeans.push_back({g, ratios.size(), geomean_of(ratios)});
        out.pairs.push_back(std::move(pair));
    }
    return out;
}

namespace {

// The "Settings that differ" table (when any do) and its JSON.
void add_differing_settings(const Comparison &c, Document &doc, nlohmann::json &data) {
    data["settings_differ"] = nlohmann::json::array();
    if (c.differing.empty()) return;
    Table t;
    t.title = "Settings that differ";
    t.columns.push_back("setting");
    for (const auto &n : c.set_names) t.columns.push_back(n);
    for (const auto &d : c.differing) {
        std::vector<std::string> row{d.setting};
        row.insert(row.end(), d.values.begin(), d.values.end());
        t.rows.push_back(std::move(row));
        data["settings_differ"].push_back({{"setting", d.setting}, {"values", d.values}, {"strict", d.strict}});
    }
    doc.tables.push_back(std::move(t));
}

// What the rows of one pair's tables leave out by default, so they fit 100
// columns: the shared name segments, the usual test and the reasons every
// entry gives go to a header line; qualities, other tests and reasons to
// footnotes. --wide keeps every name and text in its row.
struct PairLayout {
    SharedSegments names;         // of the compared cases
    SharedSegments skipped_names; // of the cases without a ratio
    std::string usual_test;       // the U test most compared cases got
    std::set<std::string> common; // reasons every entry gives (a loaded machine's)
};

PairLayout pair_layout(const PairComparison &p) {
    std::vector<std::string> labels, skipped_labels;
    std::map<std::string, std::size_t> test_counts;
    for (const auto &cc : p.cases) {
        (cc.compared ? labels : skipped_labels).push_back(cc.label);
        if (cc.compared) ++test_counts[cc.test];
    }
    PairLayout l;
    l.names = split_shared_segments(labels);
    l.skipped_names = split_shared_segments(skipped_labels);
    for (const auto &[test, n] : test_counts)
        if (l.usual_test.empty() || n > test_counts[l.usual_test]) l.usual_test = test;
    std::vector<const EntrySummary *> summaries;
    for (const auto &cc : p.cases) summaries.insert(summaries.end(), {&cc.base_summary, &cc.new_summary});
    l.common = common_reasons(summaries);
    return l;
}

// The columns of the pair's two tables, and (compact) their header lines.
void lay_out_tables(Table &compared, Table &skipped, const PairLayout &l, bool wide) {
    if (wide) {
        compared.columns = {"case", "backend", "base", "new", "ratio", "change", "p", "test", "verdict", "quality"};
        skipped.columns = {"case", "backend", "status", "reason"};
        return;
    }
    compared.columns = {"case", "backend", "base", "new", "change", "p", "verdict", "quality"};
    skipped.columns = {"case", "backend", "status", "quality"};
    std::vector<std::string> header;
    if (!l.names.shared.empty()) header.push_back(fmt::format("every case: {}", fmt::join(l.names.shared, " ")));
    if (!l.usual_test.empty()) header.push_back(fmt::format("U test: {} unless a note says otherwise", l.usual_test));
    if (!l.common.empty()) header.push_back(common_reasons_line(l.common));
    compared.title = title_with_header(compared.title, header);
    if (!l.skipped_names.shared.empty())
        skipped.title =
            title_with_header(skipped.title, {fmt::format("every case: {}", fmt::join(l.skipped_names.shared, " "))});
}

// One case of the "comparisons" JSON.
nlohmann::json case_json(const CaseComparison &cc) {
    nlohmann::json cj = {{"case", cc.label},      {"backend", cc.backend}, {"op", cc.op},          {"dtype", cc.dtype},
                         {"variant", cc.variant}, {"params", cc.params},   {"verdict", cc.verdict}};
    if (cc.base_summary.repetitions > 0) cj["base_summary"] = cc.base_summary.to_json();
    if (cc.new_summary.repetitions > 0) cj["new_summary"] = cc.new_summary.to_json();
    // Only a side with a time has a quality: a failed, skipped or starved
    // case has none (null, as history's JSON and the CSV's empty cell), not
    // a default "clean" (issue 26: one quality per entry in every view).
    if (cc.base_summary.repetitions > 0 || cc.new_summary.repetitions > 0)
        cj["quality"] = std::string(quality_name(std::max(cc.base_summary.quality, cc.new_summary.quality)));
    else
        cj["quality"] = nullptr;
    if (!cc.note.empty()) cj["note"] = cc.note;
    if (!cc.compared) {
        cj["reason"] = cc.reason;
        return cj;
    }
    cj["base_median_seconds"] = cc.base_median;
    cj["new_median_seconds"] = cc.new_median;
    cj["ratio"] = cc.ratio;
    cj["ratio_ci95"] =
        std::isfinite(cc.ratio_low) ? nlohmann::json::array({cc.ratio_low, cc.ratio_high}) : nlohmann::json(nullptr);
    cj["p_value"] = std::isfinite(cc.p_value) ? nlohmann::json(cc.p_value) : nlohmann::json(nullptr);
    cj["test"] = cc.test;
    cj["process_spread"] = cc.process_spread;
    cj["within_process_spread"] = cc.within_process_spread;
    cj["disturbed"] = cc.disturbed;
    if (cc.run_to_run.runs > 0) {
        cj["run_to_run_range"] = cc.run_to_run.range;
        cj["run_to_run_runs"] = cc.run_to_run.runs;
        cj["within_run_to_run"] = cc.within_run_to_run;
    }
    return cj;
}

// A compact row's quality: one flag, the worse side's (a disturbed side
// always shows), and what the sides say beyond the header's reasons (each
// side's flag too when they differ), for the row's footnote.
struct CompactQuality {
    std::string flag;
    std::vector<std::string> notes;
};

CompactQuality compact_quality(const CaseComparison &cc, const PairLayout &l) {
    CompactQuality q;
    const EntrySummary *worse = nullptr;
    for (const EntrySummary *s : {&cc.base_summary, &cc.new_summary})
        if (s->repetitions > 0 && (!worse || s->quality > worse->quality)) worse = s;
    q.flag = worse ? std::string(worse->flag()) : "-";
    const bool differ = side_flag(cc.base_summary) != side_flag(cc.new_summary);
    for (const auto &[side, summary] : {std::pair{"base", &cc.base_summary}, std::pair{"new", &cc.new_summary}}) {
        if (auto v = verdict_beyond(*summary, l.common); !v.empty())
            q.notes.push_back(std::string(side) + " " + v);
        else if (differ)
            q.notes.push_back(std::string(side) + " " + side_flag(*summary));
    }
    return q;
}

// The last cell of a compact row: its quality and one footnote mark for all
// the row's notes, so no other column widens with marks.
std::string with_mark(const std::string &cell, const std::vector<std::string> &row_notes, Footnotes &notes) {
    return row_notes.empty() ? cell : cell + " " + notes.mark(fmt::format("{}", fmt::join(row_notes, "; ")));
}

// A change for a person: "+4.1%", or "6018x" from 10x up, where a percentage
// would run to eight digits.
std::string change_text(double ratio) {
    return ratio >= 10 ? fmt::format("{:.0f}x", ratio) : signed_percent(ratio - 1);
}

// A side's median as every view shows it: the metrics table's median_s of the
// side's summary (cc.base_median and cc.new_median are those summaries').
std::string median_text(const EntrySummary &side) {
    EntryMetricInputs in;
    in.summary = side;
    return metric_text("median_s", in);
}

// The wide quality cell: the sides' note (their reasons) in full, or
// (footnoted, into `notes` when not null) their flags and a mark for it.
std::string wide_quality(const CaseComparison &cc, Footnotes *notes) {
    if (!notes) return cc.note.empty() ? quality_cell(cc) : cc.note;
    return cc.note.empty() ? quality_cell(cc) : quality_cell(cc) + " " + notes->mark(cc.note);
}

std::vector<std::string> compared_row(const CaseComparison &cc, const std::string &compact_name, const PairLayout &l,
                                      Footnotes &notes, bool wide, bool footnoted = false) {
    const std::string p_text = !std::isfinite(cc.p_value) ? "-"
                               : wide                     ? fmt::format("{:.3g}", cc.p_value)
                                                          : fmt::format("{:.2g}", cc.p_value);
    if (wide)
        return {cc.label,
                cc.backend,
                median_text(cc.base_summary),
                median_text(cc.new_summary),
                fmt::format("{:.3f}", cc.ratio),
                signed_percent(cc.ratio - 1),
                p_text,
                cc.test,
                cc.verdict,
                wide_quality(cc, footnoted ? &notes : nullptr)};
    CompactQuality q = compact_quality(cc, l);
    if (cc.test != l.usual_test) q.notes.insert(q.notes.begin(), "U test: " + cc.test);
    return {compact_name,
            cc.backend,
            median_text(cc.base_summary),
            median_text(cc.new_summary),
            change_text(cc.ratio),
            p_text,
            cc.verdict,
            with_mark(q.flag, q.notes, notes)};
}

std::vector<std::string> skipped_row(const CaseComparison &cc, const std::string &compact_name, const PairLayout &l,
                                     Footnotes &notes, bool wide, bool footnoted = false) {
    if (wide) return {cc.label, cc.backend, cc.verdict, footnoted ? notes.mark(cc.reason) : cc.reason};
    // The table has four columns: the reason may mark the status.
    const CompactQuality q = compact_quality(cc, l);
    return {compact_name, cc.backend, with_mark(cc.verdict, {cc.reason}, notes), with_mark(q.flag, q.notes, notes)};
}

// The notes under the compared table: the counts and the verdict rule, and
// why changes read as noisy (or may be the machine's).
void add_verdict_notes(Table &compared, const PairComparison &p, const Comparison &c, std::size_t no_ratio,
                       nlohmann::json &pj) {
    const CompareOptions &o = c.options;
    std::vector<std::string> counts;
    for (const char *v : {"same", "faster", "slower", "noisy"}) {
        counts.push_back(fmt::format("{} {}", p.count(v), v));
        pj["counts"][v] = p.count(v);
    }
    pj["counts"]["no_ratio"] = no_ratio;
    compared.notes.push_back(fmt::format("{}; {} without a ratio. Verdict: a change under {:g}% is same; over "
                                         "it, faster/slower when the U test gives p < {:g}, else noisy.",
                                         fmt::join(counts, ", "), no_ratio, o.threshold * 100, o.alpha));
    std::size_t with_range = 0, within = 0;
    for (const auto &cc : p.cases) {
        if (cc.run_to_run.runs > 0) ++with_range;
        if (cc.within_run_to_run) ++within;
    }
    if (with_range == 0 && p.count("faster") + p.count("slower") > 0 && !c.interleaved)
        compared.notes.push_back(
            "Both runs took each case's repetitions back to back: a slow spell of the machine during one run "
            "moves all of a case's repetitions at once, and reads as a change. To compare runs, use "
            "--benchmark_enable_random_interleaving=true (each case spread over the run), or --baseline-from "
            "an archive (each case's run-to-run range); docs/measurement.md.");
    if (with_range > 0)
        compared.notes.push_back(fmt::format(
            "{} cases have a run-to-run range from at least {} archived runs (how far their median moved between "
            "runs of unchanged code); {} significant changes fell within it and are noisy.",
            with_range, kMinRunsForRange, within));
    const std::size_t disturbed = static_cast<std::size_t>(
        std::count_if(p.cases.begin(), p.cases.end(), [](const CaseComparison &cc) { return cc.disturbed; }));
    if (disturbed > 0)
        compared.notes.push_back(fmt::format("{} changes read as noisy because a side is disturbed (its times "
                                             "show outside interference; the quality says how).",
                                             disturbed));
    compared.notes.push_back(c.options.wide
                                 ? "quality: clean, noisy (less precise than the noise target asked) or disturbed "
                                   "(interference in the times); base/new when the sides differ. "
                                   "docs/measurement.md"
                                 : "quality: clean, noisy (less precise than the noise target asked) or disturbed "
                                   "(interference in the times); the worse side's when they differ (its footnote "
                                   "gives both). docs/measurement.md");
}

void add_geomean_table(const PairComparison &p, Document &doc, nlohmann::json &pj) {
    Table geo;
    geo.title = pair_title(p) + ": geomean of ratios";
    geo.columns = {"group", "cases", "ratio", "change"};
    for (const auto &g : p.geomeans) {
        geo.rows.push_back(
            {g.group, std::to_string(g.cases), fmt::format("{:.3f}", g.ratio), signed_percent(g.ratio - 1)});
        pj["geomeans"].push_back({{"group", g.group}, {"cases", g.cases}, {"ratio", g.ratio}});
    }
    if (!geo.rows.empty()) doc.tables.push_back(std::move(geo));
}

// A compact table's case column cut in the middle where the row would pass
// 100 columns (a long case name beside footnote marks and p values: a loaded
// machine's run), with a line saying so; --wide keeps every name whole.
void fit_case_names(Table &t) {
    if (fit_column(t, 0, 24))
        t.notes.push_back("case names cut in the middle (…) to fit 100 columns; --wide shows them whole");
}

// One pair's tables (compared, without a ratio, geomeans) into `doc`; returns
// its entry of the "comparisons" JSON.
nlohmann::json add_pair(const PairComparison &p, const Comparison &c, Document &doc) {
    const bool wide = c.options.wide;
    nlohmann::json pj = {{"base", p.base_path},
                         {"new", p.new_path},
                         {"cases", nlohmann::json::array()},
                         {"geomeans", nlohmann::json::array()}};
    Table compared;
    compared.title = pair_title(p);
    Table skipped;
    skipped.title = pair_title(p) + ": no ratio";
    const PairLayout l = pair_layout(p);
    lay_out_tables(compared, skipped, l, wide);
    Footnotes notes;
    std::size_t compared_index = 0, skipped_index = 0;
    const bool footnoted = wide && c.options.footnoted;
    for (const auto &cc : p.cases) {
        if (cc.compared)
            compared.rows.push_back(
                compared_row(cc, wide ? "" : l.names.rows[compared_index++], l, notes, wide, footnoted));
        else
            skipped.rows.push_back(
                skipped_row(cc, wide ? "" : l.skipped_names.rows[skipped_index++], l, notes, wide, footnoted));
        pj["cases"].push_back(case_json(cc));
    }
    add_verdict_notes(compared, p, c, skipped.rows.size(), pj);
    if (!wide) {
        fit_case_names(compared);
        fit_case_names(skipped);
        add_legend(compared, l.names);
        add_legend(skipped, l.skipped_names);
    }
    if (skipped.rows.empty() || (wide && !footnoted)) notes.add_to(compared);
    doc.tables.push_back(std::move(compared));
    if (!skipped.rows.empty()) {
        if (!wide || footnoted) notes.add_to(skipped); // the footnotes after the last table that marks them
        doc.tables.push_back(std::move(skipped));
    }
    add_geomean_table(p, doc, pj);
    return pj;
}

} // namespace

Document comparison_document(const Comparison &c) {
    Document doc;
    const CompareOptions &o = c.options;
    nlohmann::json data;
    data["threshold"] = o.threshold;
    data["alpha"] = o.alpha;
    data["sets"] = c.set_names;
    add_differing_settings(c, doc, data);
    data["comparisons"] = nlohmann::json::array();
    for (const auto &p : c.pairs) data["comparisons"].push_back(add_pair(p, c, doc));
    data["regression"] = c.has_regression();
    doc.data = std::move(data);
    return doc;
}

} // namespace opbench
