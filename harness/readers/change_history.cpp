#include "readers/change_history.hpp"

#include "readers/compact_table.hpp"

#include <fmt/format.h>

#include <cmath>
#include <stdexcept>

namespace opbench {

namespace {

constexpr std::size_t kShortCommit = 7;

// A run as the fit reads it: a time (status ok) or left out. A throttled
// run's time is the fallen clock's (issue 41): left out, as it gives no
// speed-up, so no change either.
SeriesPoint series_point(const ValidTimes &v) {
    SeriesPoint p;
    p.usable = v.status == "ok" && std::isfinite(v.median) && v.median > 0 && !gives_no_rate(v.summary.quality);
    p.median_s = v.median;
    p.spread = v.summary.spread;
    p.repetitions = v.summary.repetitions;
    return p;
}

std::string short_commit(const ArchiveEntry &run) {
    const std::string &c = run_commit(run);
    return c.empty() ? "?" : c.substr(0, kShortCommit);
}

nlohmann::json run_json(const std::vector<ArchiveEntry> &runs, std::size_t i) {
    return {{"run", i}, {"commit", run_commit(runs[i])}, {"timestamp", runs[i].timestamp}};
}

nlohmann::json confirmed_json(const std::optional<Confirmation> &c) {
    if (!c) return nullptr;
    const auto num = [](double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); };
    return {{"verdict", c->verdict}, {"ratio", num(c->ratio)}, {"ratio_ci95", {num(c->ratio_low), num(c->ratio_high)}},
            {"set", c->set}};
}

nlohmann::json change_json(const std::vector<ArchiveEntry> &runs, const ChangePoint &c,
                           const std::optional<Confirmation> &confirmed) {
    return {{"confirmed", confirmed_json(confirmed)},
            {"last_before", run_json(runs, c.before)},
            {"first_after", run_json(runs, c.after)},
            {"ratio", c.ratio},
            {"ratio_ci95", {c.ratio_low, c.ratio_high}},
            {"direction", c.ratio > 1 ? "slower" : "faster"},
            {"runs_before", c.runs_before},
            {"runs_after", c.runs_after},
            {"undone_by", c.undone_by ? nlohmann::json(*c.undone_by) : nlohmann::json(nullptr)}};
}

std::string interval(const ChangePoint &c) { return fmt::format("{:.3f}-{:.3f}", c.ratio_low, c.ratio_high); }

std::string undone_cell(const CaseChanges &cc, const std::vector<ArchiveEntry> &runs, const ChangePoint &c) {
    return c.undone_by ? short_commit(runs[cc.changes[*c.undone_by].after]) : "-";
}

void add_rows(Table &t, Table &records, const std::string &row_name, const CaseChanges &cc,
              const std::vector<ArchiveEntry> &runs) {
    for (const ChangePoint &c : cc.changes) {
        t.rows.push_back({row_name, fmt::format("{}..{}", short_commit(runs[c.before]), short_commit(runs[c.after])),
                          fmt::format("{}|{}", c.runs_before, c.runs_after), fmt::format("{:.3f}", c.ratio),
                          interval(c), undone_cell(cc, runs, c)});
        records.rows.push_back({cc.label, run_commit(runs[c.before]), run_commit(runs[c.after]),
                                std::to_string(c.before), std::to_string(c.after), fmt::format("{}", c.ratio),
                                fmt::format("{}", c.ratio_low), fmt::format("{}", c.ratio_high),
                                std::to_string(c.runs_before), std::to_string(c.runs_after),
                                c.undone_by ? std::to_string(*c.undone_by) : ""});
    }
}

Table change_table(const ChangeHistory &h, const ChangePointOptions &o, std::size_t found) {
    Table t;
    t.columns = {"case [backend]", "commits (before..after)", "runs", "after/before", "95% interval", "undone at"};
    const auto &runs = h.series.runs;
    t.notes.push_back(fmt::format("{} change{} in {} cases; runs {} {} .. {} {}", found, found == 1 ? "" : "s",
                                  h.cases.size(), runs.front().timestamp.substr(0, 16), short_commit(runs.front()),
                                  runs.back().timestamp.substr(0, 16), short_commit(runs.back())));
    t.notes.push_back(fmt::format("A piecewise-constant fit of each case's log medians, each run weighted by its "
                                  "interval (penalty {}, segments of >= {} runs; starved and failed runs left out: "
                                  "docs/measurement.md, \"Change points in the archive\").",
                                  o.penalty, o.min_runs));
    t.notes.push_back("runs: runs with a time on each side, up to the next change; undone at: the commit after which "
                      "a later change brought the case back");
    return t;
}

} // namespace

ChangeHistory change_history(HistorySeries series, const ChangePointOptions &options) {
    const std::size_t least = 2 * std::max<std::size_t>(1, options.min_runs);
    if (series.runs.size() < least)
        throw ArchiveError(fmt::format("history --changes: suite '{}' has {} run{} on machine '{}'; change points "
                                       "need at least {} (a change stands on >= {} runs each side)",
                                       series.runs.empty() ? std::string("?") : series.runs.front().suite,
                                       series.runs.size(), series.runs.size() == 1 ? "" : "s", series.machine, least,
                                       options.min_runs));
    ChangeHistory h;
    for (CaseHistory &c : series.cases) {
        std::vector<SeriesPoint> points;
        for (const ValidTimes &v : c.times) points.push_back(series_point(v));
        CaseChanges cc{c.label, find_change_points(points, options), 0};
        for (const SeriesPoint &p : points) cc.usable_runs += p.usable;
        h.cases.push_back(std::move(cc));
    }
    h.series = std::move(series);
    return h;
}

Document change_history_document(const ChangeHistory &h, const ChangePointOptions &o,
                                 const std::vector<std::string> &shown_names) {
    if (!shown_names.empty() && shown_names.size() != h.cases.size())
        throw std::invalid_argument(fmt::format("change_history_document: {} shown names for {} cases",
                                                shown_names.size(), h.cases.size()));
    std::vector<std::string> labels;
    for (const auto &c : h.cases) labels.push_back(c.label.substr(0, c.label.rfind(" [")));
    SharedSegments names;
    if (shown_names.empty()) names = split_shared_segments(labels);
    else names.rows = shown_names;
    std::size_t found = 0;
    for (const auto &c : h.cases) found += c.changes.size();
    Table t = change_table(h, o, found);
    const std::string suite = h.series.runs.front().suite;
    t.title = fmt::format("Change points of suite '{}' on {} ({} runs in commit order, {} cases)", suite,
                          h.series.machine, h.series.runs.size(), h.cases.size());
    if (!names.shared.empty()) t.title = title_with_header(t.title, {fmt::format("every case: {}", fmt::join(names.shared, " "))});
    Table records;
    records.columns = {"case", "last_before_commit", "first_after_commit", "last_before_run", "first_after_run",
                       "ratio", "ratio_ci95_low", "ratio_ci95_high", "runs_before", "runs_after", "undone_by"};
    nlohmann::json data = {{"suite", suite}, {"machine_id", h.series.machine}, {"penalty", o.penalty},
                           {"min_runs", o.min_runs}, {"runs", nlohmann::json::array()}, {"cases", nlohmann::json::array()}};
    for (std::size_t i = 0; i < h.series.runs.size(); ++i) data["runs"].push_back(run_json(h.series.runs, i));
    for (std::size_t i = 0; i < h.cases.size(); ++i) {
        const CaseChanges &cc = h.cases[i];
        const std::string &label = cc.label;
        add_rows(t, records, names.rows[i] + label.substr(label.rfind(" [")), cc, h.series.runs);
        nlohmann::json cj = {{"case", label}, {"usable_runs", cc.usable_runs}, {"changes", nlohmann::json::array()}};
        for (const ChangePoint &c : cc.changes) {
            const auto confirmed = confirmation_of(h.confirmations, label, run_commit(h.series.runs[c.before]),
                                                   run_commit(h.series.runs[c.after]));
            cj["changes"].push_back(change_json(h.series.runs, c, confirmed));
            if (confirmed)
                t.notes.push_back(fmt::format("confirmed by opbench ab: {} {}..{}: {} x{:.3f} ({:.3f}-{:.3f}), {}",
                                              label, short_commit(h.series.runs[c.before]),
                                              short_commit(h.series.runs[c.after]), confirmed->verdict,
                                              confirmed->ratio, confirmed->ratio_low, confirmed->ratio_high,
                                              confirmed->set));
        }
        data["cases"].push_back(std::move(cj));
    }
    add_legend(t, names);
    t.notes.insert(t.notes.end(), h.series.notes.begin(), h.series.notes.end());
    if (h.series.machines.size() > 1)
        t.notes.push_back(fmt::format("The archive holds this suite on {} machines ({}); --machine picks one.",
                                      h.series.machines.size(), fmt::join(h.series.machines, ", ")));
    Document doc;
    doc.tables.push_back(std::move(t));
    doc.data = std::move(data);
    doc.records = std::move(records);
    return doc;
}

std::vector<std::string> newest_regressions(const ChangeHistory &h, std::size_t newest) {
    std::vector<std::string> out;
    const auto &runs = h.series.runs;
    const std::size_t from = runs.size() > newest ? runs.size() - newest : 0;
    for (const CaseChanges &cc : h.cases)
        for (const ChangePoint &c : cc.changes)
            if (c.after >= from && c.ratio_low > 1 && !c.undone_by)
                out.push_back(fmt::format("{}: {:.1f}% slower ({}) between {} (run {}) and {} (run {})", cc.label,
                                          (c.ratio - 1) * 100, interval(c), run_commit(runs[c.before]), c.before,
                                          run_commit(runs[c.after]), c.after));
    return out;
}

} // namespace opbench
