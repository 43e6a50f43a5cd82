#include "run/run_console.hpp"

#include "writers/units.hpp"
#include "opbench/ops.hpp"
#include "measure/statistics.hpp"
#include "writers/table_writers.hpp"
#include "writers/text_wrap.hpp"

#include <fmt/format.h>

#include <iostream>

#include <algorithm>
#include <cmath>
#include <map>

namespace opbench {

namespace {

std::string bound_word(const std::string &bound) {
    const auto pos = bound.find("-bound");
    return pos == std::string::npos ? bound : bound.substr(0, pos);
}

// The % of peak that matters for the bound (level_table.cpp's rule).
std::string peak_text(const Roofline &rl) {
    const std::string b = bound_word(rl.bound);
    auto pct = [](double v, const std::string &what) {
        return v < 10 ? fmt::format("{:.2g}% {}", v, what) : fmt::format("{:.0f}% {}", v, what);
    };
    // "L2 bw": the roof of the cache level the working set fits; DRAM's is plain "bw".
    const std::string bw = rl.bandwidth_roof == "DRAM" ? "bw" : rl.bandwidth_roof + " bw";
    const bool f = std::isfinite(rl.pct_peak_compute), m = std::isfinite(rl.pct_peak_bandwidth);
    if (b == "compute" && f) return pct(rl.pct_peak_compute, "flop");
    if (b == "memory" && m) return pct(rl.pct_peak_bandwidth, bw);
    if (f && (!m || rl.pct_peak_compute >= rl.pct_peak_bandwidth)) return pct(rl.pct_peak_compute, "flop");
    if (m) return pct(rl.pct_peak_bandwidth, bw);
    return "-";
}

double peak_value(const Roofline &rl) {
    const std::string b = bound_word(rl.bound);
    if (b == "memory") return rl.pct_peak_bandwidth;
    if (b == "compute") return rl.pct_peak_compute;
    return std::max(rl.pct_peak_compute, rl.pct_peak_bandwidth);
}

const char *kGreen = "\x1b[32m", *kYellow = "\x1b[33m", *kRed = "\x1b[31m", *kReset = "\x1b[0m";

} // namespace

std::optional<CaseTime> case_time(const CaseResult &r) {
    if (r.status != CaseStatus::passed || r.repetitions.empty()) return std::nullopt;
    CaseTime t;
    std::vector<double> medians;
    for (const auto &rec : r.repetitions) {
        medians.push_back(rec.summary.median);
        if (rec.timed_out) ++t.timed_out;
    }
    t.median = summarize(medians).median;
    if (medians.size() >= 2) {
        const auto [lo, hi] = std::minmax_element(medians.begin(), medians.end());
        t.spread = t.median > 0 ? (*hi - *lo) / 2 / t.median : 0;
    } else {
        t.spread = r.repetitions[0].summary.noise;
    }
    return t;
}

std::vector<std::string> run_line_columns(const std::string &reference) {
    return {"case x backend", "median", "+-", "throughput", "% peak", "bound", "vs " + reference, "status"};
}

std::vector<std::string> run_line_cells(const CaseResult &r, const std::optional<Roofline> &rl,
                                        const CaseResult *reference, std::optional<CallWork> work) {
    const std::optional<CaseTime> t = case_time(r);
    if (!t) {
        std::string status(case_status_name(r.status));
        return {r.name, "-", "-", "-", "-", "-", "-", status + (r.reason.empty() ? "" : ": " + r.reason)};
    }
    if (!work && r.source) work = CallWork{op_flops(r.source->desc), op_bytes(r.source->desc), 0, 0};
    const double flops = work ? work->flops : 0, bytes = work ? work->bytes : 0;
    const std::string bound = rl ? bound_word(rl->bound) : "-";
    const std::string throughput = bound == "memory" || flops <= 0
                                       ? fmt::format("{:.3g} GB/s", bytes / t->median / 1e9)
                                       : fmt::format("{:.3g} GFLOP/s", flops / t->median / 1e9);
    std::string vs = "-";
    if (r.is_reference)
        vs = "ref";
    else if (reference)
        if (auto rt = case_time(*reference)) vs = fmt::format("{:.3g}x", rt->median / t->median);
    std::string status = "passed";
    // The entry's quality (measure/entry_summary.hpp), as compare and the report show it.
    if (r.summary && r.summary->quality != Quality::clean)
        status += ", " + r.summary->verdict();
    else if (t->timed_out > 0)
        status += fmt::format(" ({}/{} repetitions missed the noise target)", t->timed_out, r.repetitions.size());
    return {r.name,
            format_seconds(t->median),
            !std::isfinite(t->spread) ? "n/a"
            : t->spread >= 10         ? ">999%" // repetitions an order of magnitude apart: a disturbed run
                                      : fmt::format("{:.1f}%", t->spread * 100),
            throughput,
            rl ? peak_text(*rl) : "-",
            bound,
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

Table backend_summary(const std::vector<CaseResult> &results, const std::string &reference,
                      const std::function<std::optional<Roofline>(const CaseResult &)> &roofline) {
    struct Tally {
        int passed = 0, failed = 0, skipped = 0, timed_out = 0;
        std::vector<double> speedups, peaks;
        std::map<std::string, int> bounds;
    };
    std::vector<std::string> order;
    std::map<std::string, Tally> by;
    // The reference's time per case, by the case it measures.
    std::map<const Case *, double> ref_time;
    bool above_roof = false; // an entry's % peak over 100 was shown
    for (const auto &r : results)
        if (r.backend == reference)
            if (auto t = case_time(r)) ref_time[r.source] = t->median;
    for (const auto &r : results) {
        if (!by.count(r.backend)) order.push_back(r.backend);
        Tally &t = by[r.backend];
        if (r.status == CaseStatus::failed) ++t.failed;
        if (r.status == CaseStatus::skipped) ++t.skipped;
        const auto ct = case_time(r);
        if (!ct) continue;
        ++t.passed;
        if (ct->timed_out) ++t.timed_out;
        if (auto it = ref_time.find(r.source); it != ref_time.end()) t.speedups.push_back(it->second / ct->median);
        if (auto rl = roofline(r)) {
            if (std::isfinite(peak_value(*rl))) t.peaks.push_back(peak_value(*rl));
            above_roof = above_roof || peak_value(*rl) > 100;
            ++t.bounds[bound_word(rl->bound)];
        }
    }
    Table table;
    table.title = "Per backend";
    // Fixed-width columns only, so the table fits 100 columns for any mix of
    // bounds: the bound counts, which grow with it, go to a note below.
    table.columns = {"backend", "passed", "failed", "skipped", "target missed", "speed-up", "median % peak"};
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
                              std::to_string(t.timed_out), geo,
                              t.peaks.empty() ? "-" : fmt::format("{:.2g}%", summarize(t.peaks).median)});
        if (!t.bounds.empty()) bound_counts.push_back(fmt::format("bound (cases) of {}: {}", b, bounds_text(t.bounds)));
    }
    table.notes.push_back(fmt::format("speed-up: the geomean, over the cases both ran, of {}'s median over the "
                                      "backend's.",
                                      reference));
    table.notes.push_back("target missed: cases with a repetition that reached max_time before its noise target "
                          "(every view counts it; the quality says so).");
    table.notes.insert(table.notes.end(), bound_counts.begin(), bound_counts.end());
    if (above_roof) table.notes.push_back(std::string(kAboveRoofNote));
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
    const auto cells = run_line_cells(r, r.status == CaseStatus::passed ? r.roofline : std::nullopt, reference,
                                      e.call_work());
    std::cout << header_ << lines_for(cells, r.status) << std::flush;
    header_.clear();
}

} // namespace opbench
