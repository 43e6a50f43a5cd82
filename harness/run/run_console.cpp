#include "run/run_console.hpp"

#include "measure/statistics.hpp"
#include "measure/throttle.hpp"
#include "writers/table_writers.hpp"
#include "writers/text_wrap.hpp"

#include <fmt/format.h>

#include <iostream>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

namespace opbench {

namespace {

std::string bound_word(const std::string &bound) {
    const auto pos = bound.find("-bound");
    return pos == std::string::npos ? bound : bound.substr(0, pos);
}

double median_of(const EntryMetricInputs &in) { return metric("median_s").get(in); }

// A throttled entry (issue 41): its time is the fallen clock's, so it gives
// no rate, no % peak and no speed-up, on either side of one.
bool throttled(const CaseResult &r) { return r.summary && gives_no_rate(r.summary->quality); }

// Repetitions that missed their noise target, as the entry's summary counts them.
std::size_t missed_target_repetitions(const CaseResult &r) { return r.summary ? r.summary->missed_noise_target : 0; }

const char *kGreen = "\x1b[32m", *kYellow = "\x1b[33m", *kRed = "\x1b[31m", *kReset = "\x1b[0m";

} // namespace

std::vector<std::string> run_line_columns(const std::string &reference) {
    return {"case x backend",
            std::string(metric("median_s").label),
            std::string(metric("spread").label),
            "throughput", // flop_per_s or byte_per_s, as the bound says; the cell names its unit
            "% peak",
            "bound",
            "vs " + reference,
            "status"};
}

std::vector<std::string> run_line_cells(const CaseResult &r, const EntryMetricInputs &in, const CaseResult *reference) {
    const double median = median_of(in);
    if (r.status != CaseStatus::passed || !std::isfinite(median)) {
        std::string status(case_status_name(r.status));
        return {r.name, "-", "-", "-", "-", "-", "-", status + (r.reason.empty() ? "" : ": " + r.reason)};
    }
    std::string vs = "-";
    if (r.is_reference)
        vs = "ref";
    else if (const double ref = reference && !throttled(*reference) ? median_of(metric_inputs(*reference, {})) : NAN;
             std::isfinite(ref) && !throttled(r))
        vs = fmt::format("{:.3g}x", ref / median);
    std::string status = "passed";
    // The entry's quality (measure/entry_summary.hpp), as compare and the report show it.
    if (r.summary && r.summary->quality != Quality::clean) status += ", " + r.summary->verdict();
    const MetricInfo &rate = throughput_metric(in);
    return {r.name,
            metric_text("median_s", in),
            metric_text("spread", in),
            rate.text(rate.get(in)),
            peak_text(in),
            in.bound.empty() ? "-" : bound_word(in.bound),
            vs,
            status};
}

namespace {

// "memory 10, overhead 5, compute 3": the most frequent bound first.
std::string bounds_text(const std::map<std::string, int> &bounds) {
    std::vector<std::pair<std::string, int>> sorted(bounds.begin(), bounds.end());
    std::stable_sort(sorted.begin(), sorted.end(), [](const auto &a, const auto &b) { return a.second > b.second; });
    std::vector<std::string> parts;
    for (const auto &[kind, n] : sorted) parts.push_back(fmt::format("{} {}", kind, n));
    return fmt::format("{}", fmt::join(parts, ", "));
}

} // namespace

Table backend_summary(const std::vector<CaseResult> &results, const std::string &reference) {
    struct Tally {
        int passed = 0, failed = 0, skipped = 0, starved = 0, missed_target = 0, throttled = 0;
        std::vector<double> speedups, peaks;
        std::map<std::string, int> bounds;
    };
    std::vector<std::string> order;
    std::map<std::string, Tally> by;
    // The reference's time per case, by the case it measures.
    std::map<const Case *, double> ref_time;
    std::set<std::string> above_roof; // a note per entry whose % peak over 100 was shown: its cause
    for (const auto &r : results)
        if (const double t = median_of(metric_inputs(r, {}));
            r.backend == reference && std::isfinite(t) && !throttled(r))
            ref_time[r.source] = t;
    for (const auto &r : results) {
        if (!by.count(r.backend)) order.push_back(r.backend);
        Tally &t = by[r.backend];
        if (r.status == CaseStatus::failed) ++t.failed;
        if (r.status == CaseStatus::skipped) ++t.skipped;
        if (r.status == CaseStatus::starved) ++t.starved;
        const EntryMetricInputs in = metric_inputs(r, {});
        const double median = median_of(in);
        if (r.status != CaseStatus::passed || !std::isfinite(median)) continue;
        ++t.passed;
        if (missed_target_repetitions(r) > 0) ++t.missed_target;
        if (!in.bound.empty()) ++t.bounds[bound_word(in.bound)];
        if (throttled(r)) { // no speed-up, no % peak (issue 41)
            ++t.throttled;
            continue;
        }
        if (auto it = ref_time.find(r.source); it != ref_time.end()) t.speedups.push_back(it->second / median);
        if (const MetricInfo *peak = peak_metric(in)) {
            t.peaks.push_back(peak->get(in));
            if (t.peaks.back() > 100)
                above_roof.insert(in.above_roof_cause.empty()
                                      ? std::string(kAboveRoofNote)
                                      // The name cut in its middle: one word the note cannot wrap.
                                      : fmt::format("% peak above 100% for {} [{}]: {}", shorten_middle(r.name, 60),
                                                    r.backend, in.above_roof_cause));
        }
    }
    Table table;
    table.title = "Per backend";
    // Fixed-width columns only, so the table fits 100 columns for any mix of
    // bounds: the bound counts, which grow with it, go to a note below.
    table.columns = {"backend", "passed", "failed", "skipped", "starved", "missed", "speed-up", "median % peak"};
    std::vector<std::string> bound_counts;
    for (const auto &b : order) {
        const Tally &t = by[b];
        std::string geo = "-";
        if (!t.speedups.empty()) {
            double ls = 0;
            for (double s : t.speedups) ls += std::log(s);
            geo = fmt::format("{:.3g}x", std::exp(ls / double(t.speedups.size())));
        }
        table.rows.push_back({b, std::to_string(t.passed), std::to_string(t.failed), std::to_string(t.skipped),
                              std::to_string(t.starved), std::to_string(t.missed_target), geo,
                              // Both % rows read alike: either's text.
                              metric("pct_peak_compute").text(t.peaks.empty() ? NAN : summarize(t.peaks).median)});
        if (!t.bounds.empty()) bound_counts.push_back(fmt::format("bound (cases) of {}: {}", b, bounds_text(t.bounds)));
    }
    table.notes.push_back(fmt::format("speed-up: the geomean, over the cases both ran, of {}'s median over the "
                                      "backend's.",
                                      reference));
    table.notes.push_back("missed: passed cases with a repetition that missed its noise target (timed, "
                          "quality noisy). starved: every repetition's threads waited for a CPU; no time, in no "
                          "speed-up (--threads 1, --cpus or a quieter machine).");
    for (const auto &b : order)
        if (by[b].throttled > 0)
            table.notes.push_back(fmt::format("throttled: {} passed case{} of {} ran every repetition below {:.0f}% "
                                              "of the sustained SM clock; a time, but no rate, no % peak, in no "
                                              "speed-up.",
                                              by[b].throttled, by[b].throttled == 1 ? "" : "s", b,
                                              100 * kThrottledClockShare));
    table.notes.insert(table.notes.end(), bound_counts.begin(), bound_counts.end());
    table.notes.insert(table.notes.end(), above_roof.begin(), above_roof.end());
    return table;
}

void print_not_measured(const std::vector<const CaseResult *> &entries, std::ostream &out) {
    if (entries.empty()) return;
    std::map<std::string, std::vector<std::string>> by_reason;
    for (const CaseResult *r : entries)
        by_reason[std::string(case_status_name(r->status)) + ": " + r->reason].push_back(r->name);
    out << fmt::format("\nNot measured ({} entries):\n", entries.size());
    // Each reason wrapped to the console, its entries' names under it.
    for (const auto &[reason, names] : by_reason) {
        out << wrap_words(reason, 6, 2);
        for (const auto &n : names) out << wrap_name(n, 6);
    }
}

namespace {

constexpr std::size_t kConsoleWidth = 100;   // columns the run's lines fit
constexpr std::size_t kFigureIndent = 4;   // of a figures line under its name; a detail line has 2 more

// "passed, noisy: spread ±3% > 1% ..." -> {"passed, noisy", "spread ±3% > 1% ..."};
// "passed (3/9 repetitions missed ...)" -> {"passed", "3/9 repetitions missed ..."}.
std::pair<std::string, std::string> split_status(const std::string &status) {
    const std::size_t colon = status.find(": "), paren = status.find(" (");
    if (colon == std::string::npos && paren == std::string::npos) return {status, ""};
    if (paren < colon) {
        std::string detail = status.substr(paren + 2);
        if (!detail.empty() && detail.back() == ')') detail.pop_back();
        return {status.substr(0, paren), detail};
    }
    return {status.substr(0, colon), status.substr(colon + 2)};
}

} // namespace

std::string wrapped(const std::string &text, std::size_t indent, std::size_t first_indent) {
    return wrap_words(text, indent, first_indent, kConsoleWidth);
}

RunConsole::RunConsole(std::string reference, bool colour) : reference_(std::move(reference)), colour_(colour) {
    const auto columns = run_line_columns(reference_);
    // Each name on a line of its own, its figures indented below it: entry
    // names run to 60-90 columns, so name and figures never share 100.
    widths_ = {kFigureIndent - 2, 9, 6, 16, 12, 8, std::max<std::size_t>(9, columns[6].size())};
    std::string line = columns[0] + "\n" + std::string(kFigureIndent, ' ');
    for (std::size_t i = 1; i < widths_.size(); ++i) line += fmt::format("{:>{}}  ", columns[i], widths_[i]);
    line += columns.back();
    header_ = line + "\n" + std::string(kConsoleWidth - 1, '-') + "\n";
}

std::string RunConsole::lines_for(const std::vector<std::string> &cells, CaseStatus status) const {
    std::string text = wrap_name(cells[0], 0, kConsoleWidth) + std::string(kFigureIndent, ' ');
    for (std::size_t i = 1; i < widths_.size(); ++i) text += fmt::format("{:>{}}  ", cells[i], widths_[i]);
    const auto [word, detail] = split_status(cells.back());
    const char *col = status == CaseStatus::failed    ? kRed
                      : status == CaseStatus::skipped ? kYellow
                      : word == "passed"              ? kGreen
                                                      : kYellow;
    text += colour_ ? std::string(col) + word + kReset : word;
    text += "\n";
    // The reason or the quality's verdict, in full, wrapped below the figures.
    if (!detail.empty()) text += wrapped(detail, kFigureIndent + 2);
    return text;
}

void RunConsole::entry_done(const Entry &e, const CaseResult *reference) {
    const CaseResult &r = e.result;
    const auto cells = run_line_cells(r, metric_inputs(e), reference);
    std::cout << header_ << lines_for(cells, r.status) << std::flush;
    header_.clear();
}

} // namespace opbench
