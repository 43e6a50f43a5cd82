#include "readers/tidy_records.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

namespace opbench {

namespace {

// Shortest text that reads back as the same double; empty when not finite.
std::string number(double v) { return std::isfinite(v) ? fmt::format("{}", v) : std::string(); }

// A parameter's value as text: numbers and booleans as JSON writes them.
std::string param_text(const nlohmann::json &v) { return v.is_string() ? v.get<std::string>() : v.dump(); }

double roofline_number(const CaseRecord &c, const char *key) {
    if (!c.roofline.is_object()) return NAN;
    auto it = c.roofline.find(key);
    return it != c.roofline.end() && it->is_number() ? it->get<double>() : NAN;
}

// case: the suite's [[case]] name, or its op for an unnamed one; key: the
// entry without its backend (entry_key), so backends pair by it.
const std::vector<std::string> kLeading = {"set", "commit",  "timestamp", "machine_id", "suite",  "name",
                                           "case", "key",    "op",        "backend",    "dtype", "variant"};
// After the shape parameters; then the metrics table's columns (measure/entry_metrics.hpp).
// quality: the entry's summary flag (clean | noisy | disturbed; empty without
// a time), quality_reasons its reason codes; then the starvation figures:
// repetitions left out as starved, the median of the repetitions'
// starved_share (measure/starvation.hpp), and the tries measured again.
const std::vector<std::string> kSettingsAndStatus = {
    "threads", "cache", "status", "reason", "quality", "quality_reasons", "starved_repetitions", "starved_share",
    "remeasured"};

// The starvation columns of an entry: empty for a set without the figures.
std::vector<std::string> starvation_cells(const CaseRecord &c) {
    std::size_t starved = 0;
    long remeasured = 0;
    std::vector<double> shares;
    for (const auto &r : c.repetitions) {
        starved += r.starved ? 1 : 0;
        remeasured += r.remeasured;
        if (std::isfinite(r.starved_share)) shares.push_back(r.starved_share);
    }
    if (shares.empty()) return {c.repetitions.empty() ? "" : std::to_string(starved), "", ""};
    std::sort(shares.begin(), shares.end());
    const std::size_t n = shares.size();
    const double median = n % 2 ? shares[n / 2] : 0.5 * (shares[n / 2 - 1] + shares[n / 2]);
    return {std::to_string(starved), number(median), std::to_string(remeasured)};
}

// The threads the entry ran with: settings.threads_resolved (0 in
// settings.threads means "all", which says nothing); `threads` for a set
// from before threads_resolved.
std::string threads_used(const CaseRecord &c) {
    for (const char *k : {"threads_resolved", "threads"})
        if (auto it = c.settings.find(k); it != c.settings.end() && !it->is_null()) return param_text(*it);
    return "";
}

// After the metrics table's `spread` (a fraction, which the set stores under
// that name): the same figure in percent, named with its unit.
constexpr const char *kSpreadPercent = "spread_pct";

struct Layout {
    std::vector<std::string> params; // every parameter name, in order of first appearance
    std::vector<std::string> columns;
};

Layout layout_of(const std::vector<ResultSet> &sets, const std::vector<std::string> &extra) {
    Layout l;
    std::set<std::string> seen;
    for (const auto &s : sets)
        for (const auto &c : s.cases)
            if (c.params.is_object())
                for (const auto &[k, v] : c.params.items())
                    if (seen.insert(k).second) l.params.push_back(k);
    l.columns = kLeading;
    for (const auto &p : l.params) l.columns.push_back("param_" + p);
    l.columns.insert(l.columns.end(), kSettingsAndStatus.begin(), kSettingsAndStatus.end());
    for (const MetricInfo &m : entry_metrics()) {
        l.columns.emplace_back(m.key);
        if (m.key == "spread") l.columns.emplace_back(kSpreadPercent);
    }
    l.columns.insert(l.columns.end(), extra.begin(), extra.end());
    return l;
}

std::vector<std::string> entry_row(const Layout &l, const ResultSet &s, const CaseRecord &c) {
    const ValidTimes v = valid_times(c);
    const bool timed = v.status == "ok";
    const std::string &case_cell = c.case_name.empty() ? c.op : c.case_name; // never empty
    std::vector<std::string> row = {s.short_name(), s.commit(), s.timestamp(), s.machine_id(), s.suite_name(),
                                    c.name,         case_cell,  entry_key(c.name), c.op,       c.backend,
                                    c.dtype,        c.variant};
    for (const auto &p : l.params) {
        auto it = c.params.is_object() ? c.params.find(p) : c.params.end();
        row.push_back(c.params.is_object() && it != c.params.end() ? param_text(*it) : "");
    }
    const auto setting = [&](const char *k) {
        auto it = c.settings.find(k);
        return it == c.settings.end() ? std::string() : param_text(*it);
    };
    row.insert(row.end(), {threads_used(c), setting("cache"), v.status,
                           timed ? v.why : (v.why.empty() ? c.reason : v.why),
                           timed ? std::string(v.summary.flag()) : std::string(),
                           timed ? v.summary.reason_codes() : std::string()});
    const std::vector<std::string> starvation = starvation_cells(c);
    row.insert(row.end(), starvation.begin(), starvation.end());
    const std::vector<double> values = entry_metric_values(metric_inputs(c, v));
    const auto metrics = entry_metrics();
    for (std::size_t m = 0; m < values.size(); ++m) {
        row.push_back(number(values[m]));
        if (metrics[m].key == "spread") row.push_back(number(100 * values[m]));
    }
    return row;
}

std::string key_of(const CaseRecord &c, bool with_settings) {
    return with_settings ? c.match_key_with_settings() : c.match_key();
}

} // namespace

std::string entry_key(const std::string &name) {
    std::string key;
    std::size_t from = 0;
    while (from <= name.size()) {
        std::size_t to = name.find('/', from);
        if (to == std::string::npos) to = name.size();
        const std::string_view part(name.data() + from, to - from);
        if (!part.starts_with("be:")) {
            if (!key.empty()) key += '/';
            key.append(part);
        }
        from = to + 1;
    }
    return key;
}

EntryMetricInputs metric_inputs(const CaseRecord &c, const ValidTimes &v) {
    EntryMetricInputs in;
    in.summary = v.summary;
    if (v.status != "ok") in.summary.median_s = NAN; // no time to show (failed, skipped, noisy unaccepted)
    // Every repetition's samples (none where a reader dropped them: history).
    for (const auto &r : c.repetitions) in.samples += r.sample_times.size();
    in.flops = c.flops;
    in.bytes = c.bytes;
    in.pct_peak_compute = roofline_number(c, "pct_peak_compute");
    in.pct_peak_bandwidth = roofline_number(c, "pct_peak_bandwidth");
    if (c.roofline.is_object()) {
        // A damaged set may hold any type here: a non-string reads as absent
        // (json::value would throw type_error; fuzz_history found it).
        auto text = [&](const char *key, const char *absent) {
            const auto it = c.roofline.find(key);
            return it != c.roofline.end() && it->is_string() ? it->get<std::string>() : std::string(absent);
        };
        in.bound = text("bound", "");
        // Sets from before the cache roofs judged every case against DRAM's.
        in.bandwidth_roof = text("bandwidth_roof", "DRAM");
        // Sets from before issue 28 name no compute roof.
        const auto by_isa = c.roofline.find("compute_roof_by_isa"), name = c.roofline.find("compute_roof");
        if (by_isa != c.roofline.end() && by_isa->is_boolean() && by_isa->get<bool>() && name != c.roofline.end() &&
            name->is_string())
            in.compute_roof = name->get<std::string>();
        if (const auto cause = c.roofline.find("above_roof_cause"); cause != c.roofline.end() && cause->is_string())
            in.above_roof_cause = cause->get<std::string>();
        // A GPU entry judged on its device's measured roofs (issue 41; sets before it have none).
        if (const auto dev = c.roofline.find("device_roof"); dev != c.roofline.end() && dev->is_object()) {
            const auto roof = dev->find("roof");
            in.device_roof = roof != dev->end() && roof->is_string() ? roof->get<std::string>() : "none";
            if (name != c.roofline.end() && name->is_string()) in.compute_roof = name->get<std::string>();
        }
    }
    return in;
}

Table entry_records(const std::vector<ResultSet> &sets,
                    const std::function<bool(const CaseRecord &)> &keep) {
    const Layout l = layout_of(sets, {});
    Table t;
    t.title = "entries";
    t.columns = l.columns;
    for (const auto &s : sets)
        for (const auto &c : s.cases)
            if (!keep || keep(c)) t.rows.push_back(entry_row(l, s, c));
    return t;
}

Table comparison_records(const std::vector<ResultSet> &sets, const Comparison &cmp) {
    const Layout l = layout_of(sets, {"base_set", "ratio", "ratio_ci95_low", "ratio_ci95_high", "p_value", "test",
                                      "verdict"});
    const bool with_settings = needs_settings_in_key(sets);
    Table t;
    t.title = "entries";
    t.columns = l.columns;
    for (std::size_t i = 0; i < sets.size(); ++i) {
        // The pair of this set against the first, by match key.
        std::map<std::string, const CaseComparison *> by_key;
        if (i > 0 && i - 1 < cmp.pairs.size())
            for (const auto &cc : cmp.pairs[i - 1].cases) by_key.emplace(cc.key, &cc);
        for (const auto &c : sets[i].cases) {
            std::vector<std::string> row = entry_row(l, sets[i], c);
            if (i == 0) {
                row.insert(row.end(), {"", "", "", "", "", "", "base"});
            } else if (auto it = by_key.find(key_of(c, with_settings)); it != by_key.end()) {
                const CaseComparison &cc = *it->second;
                row.insert(row.end(), {sets[0].short_name(), cc.compared ? number(cc.ratio) : "",
                                       number(cc.ratio_low), number(cc.ratio_high), number(cc.p_value), cc.test,
                                       cc.verdict});
            } else {
                row.insert(row.end(), {sets[0].short_name(), "", "", "", "", "", ""});
            }
            t.rows.push_back(std::move(row));
        }
    }
    return t;
}

} // namespace opbench
