#include "readers/paired_compare.hpp"

#include "measure/statistics.hpp"
#include "measure/settings.hpp"
#include "readers/compact_table.hpp"
#include "writers/result_schema.hpp"
#include "writers/units.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>

namespace opbench {

namespace {

double positive_time(const nlohmann::json &pair, const char *key, const std::string &where) {
    if (!pair.contains(key) || !pair[key].is_number() || !(pair[key].get<double>() > 0) ||
        !std::isfinite(pair[key].get<double>()))
        throw ResultSetError(fmt::format("{}: pair.{} is not a positive number of seconds", where, key));
    return pair[key].get<double>();
}

// The blocks `ab` left out, by entry name (the new side's iterations): block
// -> "starved" or "throttled" (`pair_left_out`; sets before it have none).
std::map<std::string, std::map<std::size_t, std::string>> left_out_blocks(const nlohmann::json &entries) {
    std::map<std::string, std::map<std::size_t, std::string>> out;
    for (const nlohmann::json &e : entries) {
        const auto why = e.find("pair_left_out");
        const auto index = e.find("repetition_index");
        if (why == e.end() || !why->is_string() || index == e.end() || !index->is_number_unsigned() ||
            e.value("run_type", "iteration") != "iteration")
            continue;
        out[entry_name_of(e.value("run_name", e.value("name", "")))][index->get<std::size_t>() / 2] = *why;
    }
    return out;
}

// A case of the new side whose entry passed: its pairs' verdict, or, with
// none, why not (every block left out); and the blocks left out.
void judge_pairs(PairedCaseVerdict &v, const std::map<std::size_t, std::pair<double, double>> &pairs,
                 const std::map<std::size_t, std::string> &left_out, const PairedOptions &options) {
    std::size_t starved = 0, throttled = 0;
    for (const auto &[block, why] : left_out) ++(why == "starved" ? starved : throttled);
    const BlocksStatus blocks = blocks_status(pairs.size(), starved, throttled, MeasureSettings{}.starved_retries);
    if (blocks.status != "passed") {
        v.reason = blocks.status + ": " + blocks.reason;
        return;
    }
    if (pairs.empty()) {
        v.reason = "no pairs recorded";
        return;
    }
    for (const auto &[index, t] : pairs) {
        v.base_times.push_back(t.first);
        v.new_times.push_back(t.second);
    }
    v.verdict = paired_verdict(v.base_times, v.new_times, options);
    v.left_out = left_out_note(pairs.size() + left_out.size(), starved, throttled);
}

// Every iteration entry's stats.sm_clock_mhz (null, absent or not a number:
// none). Reads any JSON without throwing: the fuzzed readers come here.
std::vector<double> sm_clocks_of(const nlohmann::json &entries) {
    std::vector<double> mhz;
    for (const nlohmann::json &e : entries) {
        if (!e.is_object()) continue;
        const auto run_type = e.find("run_type");
        if (run_type != e.end() && !(run_type->is_string() && *run_type == "iteration")) continue;
        const auto stats = e.find("stats");
        if (stats == e.end() || !stats->is_object()) continue;
        const auto clock = stats->find("sm_clock_mhz");
        if (clock != stats->end() && clock->is_number()) mhz.push_back(clock->get<double>());
    }
    return mhz;
}

} // namespace

bool is_paired_set(const ResultSet &set) {
    const nlohmann::json &ob = set.opbench();
    return ob.is_object() && ob.contains("paired") && ob["paired"].is_object();
}

std::size_t PairedComparison::count(const std::string &verdict) const {
    return std::count_if(cases.begin(), cases.end(), [&](const PairedCaseVerdict &c) {
        return c.reason.empty() && c.verdict.verdict == verdict;
    });
}

std::optional<std::vector<CanaryReading>> canary_of(const ResultSet &set) {
    const nlohmann::json &ob = set.opbench();
    if (!ob.is_object() || !ob.contains("canary")) return std::nullopt;
    try {
        return canary_from_json(ob["canary"]);
    } catch (const std::invalid_argument &e) {
        throw ResultSetError(fmt::format("{}: context.opbench.canary: {}", set.path, e.what()));
    }
}

PairedComparison compare_paired(const ResultSet &set, const PairedOptions &options) {
    PairedComparison c;
    c.path = set.path;
    c.options = options;
    const nlohmann::json &paired = set.opbench()["paired"];
    c.base = paired.value("base", "");
    c.next = paired.value("new", "");
    // The new side's iteration entries carry each pair once: by its run name, pair index -> (base, new).
    std::map<std::string, std::map<std::size_t, std::pair<double, double>>> pairs;
    const nlohmann::json &entries = set.raw.at("benchmarks");
    auto left_out = left_out_blocks(entries);
    c.device_clock = clock_range(sm_clocks_of(entries));
    for (std::size_t i = 0; i < entries.size(); ++i) {
        const nlohmann::json &e = entries[i];
        if (!e.contains("pair") || e.value("run_type", "iteration") != "iteration") continue;
        const std::string where = fmt::format("{}: benchmarks[{}]", set.path, i);
        const nlohmann::json &p = e["pair"];
        if (!p.is_object() || !p.contains("index") || !p["index"].is_number_unsigned())
            throw ResultSetError(fmt::format("{}: pair.index is not a non-negative integer", where));
        if (p.value("role", "") != "new") continue;
        auto &of_case = pairs[entry_name_of(e.value("run_name", e.value("name", "")))];
        const auto index = p["index"].get<std::size_t>();
        const std::pair<double, double> times{positive_time(p, "base_time", where), positive_time(p, "new_time", where)};
        auto [it, inserted] = of_case.emplace(index, times);
        if (!inserted && it->second != times)
            throw ResultSetError(fmt::format("{}: pair {} of this case holds two different times", where, index));
    }
    for (const CaseRecord &rec : set.cases) {
        if (rec.backend != c.next) continue;
        PairedCaseVerdict v;
        v.label = rec.label();
        v.base_backend = c.base;
        v.new_backend = c.next;
        if (rec.status != "passed")
            v.reason = rec.status + ": " + rec.reason;
        else
            judge_pairs(v, pairs[rec.name], left_out[rec.name], options);
        c.cases.push_back(std::move(v));
    }
    if (auto canary = canary_of(set)) {
        c.canary = *canary;
        c.canary_drift = canary_drift(c.canary);
    }
    return c;
}

Document paired_document(const PairedComparison &c) {
    Document doc;
    nlohmann::json data = {{"set", c.path},
                           {"base", c.base},
                           {"new", c.next},
                           {"test", "Wilcoxon signed-rank on log(new/base) per pair; Hodges-Lehmann ratio"},
                           {"threshold", c.options.threshold},
                           {"alpha", c.options.alpha},
                           {"canary_drift", c.canary_drift},
                           {"cases", nlohmann::json::array()}};
    // To fit 100 columns, as compare's other tables: what every case shares
    // goes to a header line, each row keeps what varies, reasons are footnotes.
    std::vector<std::string> labels;
    for (const auto &v : c.cases) labels.push_back(v.label);
    const SharedSegments names = split_shared_segments(labels);
    Table t;
    t.title = fmt::format("{}: paired {} -> {}", c.path, c.base, c.next);
    t.columns = {"case", "base", "new", "ratio", "95% CI", "pairs", "p", "verdict"};
    Table skipped;
    skipped.title = t.title + ": no verdict";
    skipped.columns = {"case", "reason"};
    Footnotes reasons;
    if (!names.shared.empty())
        t.title = title_with_header(t.title, {fmt::format("every case: {}", fmt::join(names.shared, " "))});
    for (std::size_t i = 0; i < c.cases.size(); ++i) {
        const auto &v = c.cases[i];
        const std::string &row_label = names.rows[i];
        nlohmann::json cj = {{"case", v.label}};
        if (!v.reason.empty()) {
            cj["reason"] = v.reason;
            const auto colon = v.reason.find(':');
            skipped.rows.push_back({row_label, v.reason.substr(0, colon) + " " + reasons.mark(v.reason)});
        } else {
            const double base = summarize(v.base_times).median, next = summarize(v.new_times).median;
            cj.update({{"base_median_seconds", base},
                       {"new_median_seconds", next},
                       {"ratio", v.verdict.ratio},
                       {"ratio_ci95", {v.verdict.ratio_low, v.verdict.ratio_high}},
                       {"pairs", v.verdict.pairs},
                       {"p_value", v.verdict.p_value},
                       {"verdict", v.verdict.verdict}});
            t.rows.push_back(
                {row_label, format_seconds(base), format_seconds(next), fmt::format("{:.3f}", v.verdict.ratio),
                 fmt::format("{:.3f}-{:.3f}", v.verdict.ratio_low, v.verdict.ratio_high),
                 std::to_string(v.verdict.pairs), fmt::format("{:.3g}", v.verdict.p_value), v.verdict.verdict});
            if (!v.left_out.empty()) {
                cj["blocks_left_out"] = v.left_out;
                t.notes.push_back(fmt::format("{}: {}", row_label, v.left_out));
            }
        }
        data["cases"].push_back(std::move(cj));
    }
    t.notes.push_back(fmt::format("{} same, {} slower, {} faster, {} noisy; a change under {:g}% is same, over it "
                                  "slower/faster when the signed-rank test gives p < {:g}",
                                  c.count("same"), c.count("slower"), c.count("faster"), c.count("noisy"),
                                  c.options.threshold * 100, c.options.alpha));
    if (!c.canary.empty())
        t.notes.push_back(fmt::format("{} speed (drift canary, {} readings): moved {:.0f}% over the run{}",
                                      c.device_clock ? "host" : "machine", c.canary.size(), c.canary_drift * 100,
                                      c.canary_drift > c.options.threshold
                                          ? "; each pair was measured within one block, so this drift is in both "
                                            "sides of a pair and cancels in its ratio"
                                          : ""));
    if (c.device_clock) {
        const ClockRange &r = *c.device_clock;
        data["device_clock"] = {{"min_mhz", r.min_mhz},
                                {"median_mhz", r.median_mhz},
                                {"max_mhz", r.max_mhz},
                                {"readings", r.readings}};
        t.notes.push_back(clock_range_text(r) + "; the drift canary above times the host");
    }
    add_legend(t, names);
    reasons.add_to(skipped);
    doc.tables.push_back(std::move(t));
    if (!skipped.rows.empty()) doc.tables.push_back(std::move(skipped));
    doc.data = std::move(data);
    return doc;
}

void normalize_by_canary(ResultSet &set, double reference_seconds) {
    const auto canary = canary_of(set);
    const double own = canary ? canary_median_seconds(*canary) : 0;
    if (!(own > 0))
        throw std::invalid_argument(fmt::format("--normalize canary: {} has no drift canary (context.opbench.canary); "
                                                "sets written by `opbench ab` have one",
                                                set.path));
    const double scale = reference_seconds / own;
    for (CaseRecord &c : set.cases)
        for (RepetitionTime &r : c.repetitions) {
            r.median_seconds *= scale;
            for (double &s : r.sample_times) s *= scale;
        }
}

} // namespace opbench
