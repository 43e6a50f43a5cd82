#include "readers/report_compare.hpp"

#include "measure/entry_metrics.hpp"
#include "measure/statistics.hpp"
#include "readers/compare.hpp"
#include "readers/svg_chart.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

namespace opbench {

namespace {

const char *verdict_color(const std::string &verdict) {
    if (verdict == "faster") return "#009E73";
    if (verdict == "slower") return "#D55E00";
    if (verdict == "noisy") return "#E69F00";
    if (verdict == "same") return "#0072B2";
    return "#999999";
}

// At most `n` characters, "..." marking a cut (the full text goes in a <title>).
std::string clip(const std::string &s, std::size_t n) { return s.size() <= n ? s : s.substr(0, n - 3) + "..."; }

// A median as every view shows it: the metrics table's median_s text ("24.1 us").
std::string median_text(double seconds) { return metric("median_s").text(seconds); }

// A table cell; a finite `sort_value` becomes its data-v, so the sort is numeric.
std::string cell(const std::string &text, double sort_value = NAN, const std::string &cls = "") {
    return fmt::format("<td{}{}>{}</td>", std::isfinite(sort_value) ? fmt::format(" data-v=\"{:g}\"", sort_value) : "",
                       cls.empty() ? "" : " class=\"" + cls + "\"", html_escape(text));
}

std::string filter_box(const std::string &target, const std::string &what) {
    return fmt::format("<p><input class=\"filter\" data-target=\"{}\" placeholder=\"filter {}\" size=\"40\"></p>\n",
                       html_escape(target), html_escape(what));
}

// What the verdict table's filter matches, with an example taken from the
// pair's own first case (its backend, a verdict, its op).
std::string verdict_filter_hint(const PairComparison &p) {
    if (p.cases.empty()) return "cases";
    return fmt::format("cases (e.g. {}, slower, {})", p.cases.front().backend, p.cases.front().op);
}

// Log-scale ratio axis around 1, with ticks that read as ratios.
struct RatioAxis {
    double lo, hi;
    [[nodiscard]] double frac(double v) const { return (std::log(v) - std::log(lo)) / (std::log(hi) - std::log(lo)); }
};

// The axis' extent (log of the largest distance from 1) and the rows drawn,
// slowest first.
std::vector<const CaseComparison *> ratio_rows(const PairComparison &p, double threshold, double &extent) {
    std::vector<const CaseComparison *> rows;
    extent = std::log(1 + 2 * threshold);
    for (const auto &c : p.cases) {
        if (!c.compared) continue;
        rows.push_back(&c);
        for (double v : {c.ratio, c.ratio_low, c.ratio_high})
            if (std::isfinite(v) && v > 0) extent = std::max(extent, std::fabs(std::log(v)));
    }
    std::stable_sort(rows.begin(), rows.end(), [](auto *a, auto *b) { return a->ratio > b->ratio; });
    extent *= 1.08;
    return rows;
}

// Ticks outward from 1, each at least 6% of the plot from the last one drawn.
std::vector<double> ratio_ticks(const RatioAxis &ax) {
    std::vector<double> ticks{1.0};
    for (const auto &side : {std::vector<double>{0.9, 0.8, 0.5, 0.2, 0.1, 0.05, 0.02, 0.01, 0.005, 0.002, 0.001},
                             std::vector<double>{1.1, 1.25, 2, 5, 10, 20, 50, 100, 200, 500, 1000}}) {
        double last = ax.frac(1.0);
        for (double t : side)
            if (t >= ax.lo && t <= ax.hi && std::fabs(ax.frac(t) - last) >= 0.06) {
                ticks.push_back(t);
                last = ax.frac(t);
            }
    }
    return ticks;
}

// Three columns (HTML grid): the case names (px), the plot as wide as the
// page leaves (x in %), and each row's verdict as a word.
std::string ratio_chart(const PairComparison &p, double threshold) {
    double extent = 0;
    const std::vector<const CaseComparison *> rows = ratio_rows(p, threshold, extent);
    if (rows.empty()) return "<p>No case has a time in both sets: no ratio to draw.</p>\n";
    const RatioAxis ax{std::exp(-extent), std::exp(extent)};
    const double top = 6, row_h = 16, bottom = top + row_h * double(rows.size()), height = bottom + 36;
    auto X = [&](double v) { return 1 + std::clamp(ax.frac(v), 0.0, 1.0) * 98; }; // % of the plot
    std::vector<std::string> names;
    for (const auto *c : rows) names.push_back(c->label + " [" + c->backend + "]");
    const std::vector<std::string> shown = clip_unique(names, 50);
    std::size_t longest = 0;
    for (const auto &n : shown) longest = std::max(longest, n.size());
    const double left = std::clamp(12 + 6.2 * double(longest), 120.0, 420.0);
    std::string lab = fmt::format("<svg class=\"chart-labels\" width=\"{0}\" height=\"{1}\" font-family=\"sans-serif\" "
                                  "font-size=\"11\">\n",
                                  svg_num(left), svg_num(height));
    std::string words = fmt::format("<svg class=\"chart-words\" width=\"56\" height=\"{}\" font-family=\"sans-serif\" "
                                    "font-size=\"11\">\n",
                                    svg_num(height));
    std::string o = fmt::format("<svg class=\"chart\" data-chart=\"ratio\" width=\"100%\" height=\"{}\" "
                                "font-family=\"sans-serif\" font-size=\"11\">\n",
                                svg_num(height));
    o += fmt::format("<rect x=\"{:.2f}%\" y=\"{}\" width=\"{:.2f}%\" height=\"{}\" fill=\"#eef3f8\"/>\n",
                     X(1 - threshold), svg_num(top), X(1 + threshold) - X(1 - threshold), svg_num(bottom - top));
    for (double t : ratio_ticks(ax))
        o += fmt::format("<line x1=\"{0:.2f}%\" y1=\"{1}\" x2=\"{0:.2f}%\" y2=\"{2}\" stroke=\"{3}\"/><text "
                         "x=\"{0:.2f}%\" y=\"{4}\" text-anchor=\"middle\" fill=\"#444\">{5:g}</text>\n",
                         X(t), svg_num(top), svg_num(bottom), t == 1.0 ? "#333" : "#ddd", svg_num(bottom + 14), t);
    o += fmt::format("<text x=\"50%\" y=\"{}\" text-anchor=\"middle\">new / base (log scale)</text>\n",
                     svg_num(bottom + 30));
    for (std::size_t i = 0; i < rows.size(); ++i) {
        const CaseComparison &c = *rows[i];
        const double y = top + row_h * double(i) + row_h / 2;
        const std::string interval = std::isfinite(c.ratio_low)
                                         ? fmt::format("95% {} to {}", ratio_text(c.ratio_low), ratio_text(c.ratio_high))
                                         : std::string("no interval (under 6 repetitions)");
        const std::string tip = fmt::format("{}: ratio {} ({}), {} -> {}, p {}, {}", names[i], ratio_text(c.ratio),
                                            interval, median_text(c.base_median), median_text(c.new_median),
                                            std::isfinite(c.p_value) ? fmt::format("{:.3g}", c.p_value) : "-",
                                            c.verdict);
        lab += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\"><title>{}</title>{}</text>\n",
                           svg_num(left - 8), svg_num(y + 4), html_escape(tip), html_escape(shown[i]));
        words += fmt::format("<text class=\"verdict-word\" x=\"4\" y=\"{}\" fill=\"{}\">{}</text>\n", svg_num(y + 4),
                             verdict_color(c.verdict), html_escape(c.verdict));
        o += fmt::format("<g class=\"ratio-row\"><title>{}</title>", html_escape(tip));
        if (std::isfinite(c.ratio_low))
            o += fmt::format("<line class=\"ci\" x1=\"{0:.2f}%\" y1=\"{2}\" x2=\"{1:.2f}%\" y2=\"{2}\" stroke=\"{3}\" "
                             "stroke-width=\"2\"/>",
                             X(c.ratio_low), X(c.ratio_high), svg_num(y), verdict_color(c.verdict));
        o += fmt::format("<circle class=\"point\" cx=\"{:.2f}%\" cy=\"{}\" r=\"4\" fill=\"{}\"/></g>\n", X(c.ratio),
                         svg_num(y), verdict_color(c.verdict));
    }
    return fmt::format("<div class=\"barchart\">\n<p class=\"chart-title\">{} / {}: ratio of medians, 95% interval; "
                       "right of 1: slower; the band is the +-{:g}% threshold (same)</p>\n<div class=\"bars three\">\n"
                       "{}</svg>\n{}</svg>\n{}</svg>\n</div>\n</div>\n",
                       html_escape(p.new_name), html_escape(p.base_name), threshold * 100, lab, o, words);
}

// The two sides' quality in one word where they agree: "clean", "base noisy".
std::string pair_quality(const CaseComparison &c) {
    if (c.base_summary.repetitions == 0 && c.new_summary.repetitions == 0) return "-";
    const std::string b(c.base_summary.flag()), n(c.new_summary.flag());
    if (b == n) return b;
    if (b == "clean") return "new " + n;
    if (n == "clean") return "base " + b;
    return "base " + b + ", new " + n;
}

// A long text folded into a details element, so a row stays one line tall.
std::string folded(const std::string &summary, const std::string &text) {
    if (text.empty()) return "<td>" + html_escape(summary) + "</td>";
    return fmt::format("<td class=\"why\"><details><summary>{}</summary>{}</details></td>", html_escape(summary),
                       html_escape(text));
}

// Verdict and ratio lead, right after the case, so they are on screen in an
// 800 px window; the case column is sticky when the table scrolls.
std::string verdict_table(const PairComparison &p, const std::string &id) {
    std::string h = fmt::format("<table class=\"data sortable verdicts\" id=\"{}\">\n<tr class=\"head\">", id);
    for (const char *c : {"case", "backend", "verdict", "ratio", "quality", "base", "new", "95% interval", "p", "dtype",
                          "test"})
        h += fmt::format("<th title=\"click to sort\">{}</th>", c);
    h += "</tr>\n";
    for (const auto &c : p.cases) {
        h += "<tr>" + cell(c.label, NAN, "case") + cell(c.backend);
        if (c.compared) {
            h += cell(c.verdict, NAN, "verdict verdict-" + c.verdict) + cell(ratio_text(c.ratio), c.ratio, "ratio") +
                 cell(pair_quality(c), NAN, "quality") + cell(median_text(c.base_median), c.base_median) +
                 cell(median_text(c.new_median), c.new_median) +
                 cell(std::isfinite(c.ratio_low)
                          ? fmt::format("{} - {}", ratio_text(c.ratio_low), ratio_text(c.ratio_high))
                          : "-",
                      c.ratio_low) +
                 cell(std::isfinite(c.p_value) ? fmt::format("{:.3g}", c.p_value) : "-", c.p_value) + cell(c.dtype) +
                 folded(c.test, c.note);
        } else {
            h += cell(c.verdict, NAN, "verdict verdict-other") + cell("-", NAN, "ratio") +
                 cell(pair_quality(c), NAN, "quality") + cell("-") + cell("-") + cell("-") + cell("-") +
                 cell(c.dtype) + folded("why", c.reason);
        }
        h += "</tr>\n";
    }
    return h + "</table>\n";
}

std::string geomean_table(const PairComparison &p) {
    std::string h = "<table class=\"data\">\n<tr><th>geomean of new / base</th><th>cases</th><th>ratio</th></tr>\n";
    for (const auto &g : p.geomeans)
        h += fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td></tr>\n", html_escape(g.group), g.cases,
                         ratio_text(g.ratio));
    return h + "</table>\n";
}

// Quartiles and Tukey whiskers of one entry's pooled samples, and the
// entry's own median (its summary's: the median of its repetitions'
// medians), which is what every table beside the chart says.
struct Box {
    std::string name;
    std::size_t n = 0;
    double min = 0, q1 = 0, median = 0, q3 = 0, max = 0, lo_whisker = 0, hi_whisker = 0;
    double entry_median = 0;
};

Box box_of(std::string name, std::vector<double> v, double entry_median) {
    std::sort(v.begin(), v.end());
    Box b;
    b.name = std::move(name);
    b.entry_median = entry_median;
    b.n = v.size();
    b.min = v.front();
    b.max = v.back();
    b.q1 = percentile_sorted(v, 0.25);
    b.median = percentile_sorted(v, 0.5);
    b.q3 = percentile_sorted(v, 0.75);
    const double fence_lo = b.q1 - 1.5 * (b.q3 - b.q1), fence_hi = b.q3 + 1.5 * (b.q3 - b.q1);
    b.lo_whisker = *std::lower_bound(v.begin(), v.end(), fence_lo);
    b.hi_whisker = *(std::upper_bound(v.begin(), v.end(), fence_hi) - 1);
    return b;
}

std::string box_chart(const std::string &title, const std::string &shown_title, const std::vector<Box> &boxes) {
    const double width = 360, left = 112, right = 14, top = 30, row_h = 16, plot_w = width - left - right;
    const double height = top + row_h * double(boxes.size()) + 26;
    double lo = INFINITY, hi = 0;
    for (const auto &b : boxes) {
        lo = std::min(lo, b.min);
        hi = std::max(hi, b.max);
    }
    lo = std::max(lo, hi * 1e-6); // a 0-tick sample: keep the log axis finite
    if (!(lo > 0)) lo = hi > 0 ? hi / 10 : 1e-9;
    if (hi <= lo) hi = lo * 1.1;
    const double llo = std::log(lo) - 0.05 * (std::log(hi) - std::log(lo)), lhi = std::log(hi) + 0.05 * (std::log(hi) - std::log(lo));
    auto X = [&](double v) {
        return left + std::clamp((std::log(std::max(v, lo)) - llo) / (lhi - llo), 0.0, 1.0) * plot_w;
    };
    std::string o =
        fmt::format("<svg class=\"chart small\" data-chart=\"box\" width=\"{0}\" height=\"{1}\" "
                    "viewBox=\"0 0 {0} {1}\" font-family=\"sans-serif\" font-size=\"11\">\n<title>{2}</title>\n",
                    svg_num(width), svg_num(height), html_escape(title));
    o += fmt::format("<text x=\"4\" y=\"16\" font-weight=\"bold\">{}</text>\n", html_escape(shown_title));
    const double bottom = top + row_h * double(boxes.size());
    for (double t : {lo, std::sqrt(lo * hi), hi})
        o += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\" stroke=\"#ddd\"/><text x=\"{0}\" y=\"{3}\" "
                         "text-anchor=\"middle\" fill=\"#444\">{4}</text>\n",
                         svg_num(X(t)), svg_num(top), svg_num(bottom), svg_num(bottom + 14), format_seconds(t));
    for (std::size_t i = 0; i < boxes.size(); ++i) {
        const Box &b = boxes[i];
        const double y = top + row_h * double(i), mid = y + row_h / 2;
        const std::string tip =
            fmt::format("{}: median {} (the entry's); {} samples: median {}, quartiles {} - {}, min {}, max {}",
                        b.name, format_seconds(b.entry_median), b.n, format_seconds(b.median), format_seconds(b.q1),
                        format_seconds(b.q3), format_seconds(b.min), format_seconds(b.max));
        o += fmt::format("<g class=\"box\"><title>{}</title><text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>",
                         html_escape(tip), svg_num(left - 6), svg_num(mid + 4), html_escape(clip(b.name, 17)));
        o += fmt::format("<line x1=\"{0}\" y1=\"{2}\" x2=\"{1}\" y2=\"{2}\" stroke=\"#555\"/>",
                         svg_num(X(b.lo_whisker)), svg_num(X(b.hi_whisker)), svg_num(mid));
        o += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"#cfe3f3\" stroke=\"#0072B2\"/>",
                         svg_num(X(b.q1)), svg_num(y + 3), svg_num(std::max(1.0, X(b.q3) - X(b.q1))),
                         svg_num(row_h - 6));
        o += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\" stroke=\"#000\" stroke-width=\"2\"/>",
                         svg_num(X(b.entry_median)), svg_num(y + 2), svg_num(y + row_h - 2));
        for (double v : {b.min, b.max})
            if (v < b.lo_whisker || v > b.hi_whisker)
                o += fmt::format("<circle cx=\"{}\" cy=\"{}\" r=\"2\" fill=\"#555\"/>", svg_num(X(v)), svg_num(mid));
        o += "</g>\n";
    }
    return o + "</svg>\n";
}

} // namespace

std::string comparison_html(const std::vector<ResultSet> &sets) {
    if (sets.size() < 2) return "";
    const Comparison cmp = compare_sets(sets, CompareOptions{});
    std::string h;
    for (std::size_t i = 0; i < cmp.pairs.size(); ++i) {
        const PairComparison &p = cmp.pairs[i];
        h += fmt::format("<h3>{} -> {}</h3>\n<p class=\"counts\">", html_escape(p.base_name), html_escape(p.new_name));
        for (const char *v : {"slower", "faster", "noisy", "same"})
            h += fmt::format("<span class=\"verdict-{0}\">{1} {0}</span> ", v, p.count(v));
        std::size_t no_ratio = 0;
        for (const auto &c : p.cases)
            if (!c.compared) ++no_ratio;
        h += fmt::format("<span>{} without a ratio</span></p>\n", no_ratio);
        h += fmt::format("<p class=\"note\">As opbench compare decides: a change under {:g}% is same; over it, "
                         "faster or slower when the U test gives p &lt; {:g} and the change is beyond the spread "
                         "between worker processes, else noisy. The interval is the new median's 95% interval over "
                         "the base's (conservative).</p>\n",
                         cmp.options.threshold * 100, cmp.options.alpha);
        h += "<div class=\"scroll\">" + geomean_table(p) + "</div>\n";
        h += "<div class=\"scroll\">" + ratio_chart(p, cmp.options.threshold) + "</div>\n";
        const std::string id = fmt::format("verdicts-{}", i + 1);
        h += filter_box("#" + id + " tr", verdict_filter_hint(p));
        h += "<div class=\"scroll\">" + verdict_table(p, id) + "</div>\n";
    }
    if (!cmp.differing.empty()) {
        std::vector<std::string> names;
        for (const auto &d : cmp.differing) names.push_back(d.setting);
        h += fmt::format("<p class=\"note\">The sets differ in: {} (see Contexts).</p>\n",
                         html_escape(fmt::format("{}", fmt::join(names, ", "))));
    }
    return h;
}

std::string distributions_html(const std::vector<ResultSet> &sets) {
    // Rows are what a case computes (backend and set are boxes within it).
    std::vector<std::string> order;
    std::map<std::string, std::vector<Box>> groups;
    std::map<std::string, std::string> titles;
    for (std::size_t si = 0; si < sets.size(); ++si)
        for (const auto &c : sets[si].cases) {
            const ValidTimes v = valid_times(c);
            if (v.status != "ok" || v.samples.empty()) continue;
            CaseRecord k = c;
            k.backend.clear();
            const std::string key = k.match_key_with_settings();
            if (!groups.count(key)) {
                order.push_back(key);
                titles[key] = c.label();
            }
            const std::string name =
                sets.size() > 1 ? fmt::format("{}: {}", clip(sets[si].short_name(), 8), c.backend) : c.backend;
            groups[key].push_back(box_of(name, v.samples, v.median));
        }
    if (order.empty()) return "<p>No samples in these sets.</p>\n";
    std::string h = "<p class=\"note\">Every sample of the repetitions (time per call): box from the first to the "
                    "third quartile, black line the entry's median (the median of its repetitions' medians, as every table says; the tooltip also gives the samples' own), whiskers to the furthest sample within 1.5 IQR, dots "
                    "the minimum and maximum beyond them. Log time axis, one per case.</p>\n";
    h += filter_box("#distributions-all > svg", "cases");
    h += "<div class=\"multiples\" id=\"distributions-all\">\n";
    std::vector<std::string> full;
    for (const auto &k : order) full.push_back(titles[k]);
    const std::vector<std::string> shown = clip_unique(full, 54);
    for (std::size_t i = 0; i < order.size(); ++i) h += box_chart(full[i], shown[i], groups[order[i]]);
    return h + "</div>\n";
}

namespace {
// A case's change points (its entry's `changes`: history --changes' JSON) on
// its history chart: a dashed line between the last run before and the first
// after each, its commits and size on hover.
template <class XOfRun>
std::string change_marks(const nlohmann::json &changes, XOfRun X, double top, double ph) {
    std::string o;
    for (const auto &c : changes) {
        const std::size_t before = c["last_before"].value("run", std::size_t{0});
        const std::size_t after = c["first_after"].value("run", std::size_t{0});
        const double x = (X(before) + X(after)) / 2;
        const auto ci = c.value("ratio_ci95", nlohmann::json::array());
        const std::string title = fmt::format(
            "change: {}..{}, x{} ({}-{}){}", c["last_before"].value("commit", "").substr(0, 12),
            c["first_after"].value("commit", "").substr(0, 12), ratio_text(c.value("ratio", 1.0)),
            ratio_text(ci.size() == 2 ? ci[0].get<double>() : NAN), ratio_text(ci.size() == 2 ? ci[1].get<double>() : NAN),
            c["undone_by"].is_null() ? "" : ", undone later");
        o += fmt::format("<line class=\"change\" x1=\"{0}\" x2=\"{0}\" y1=\"{1}\" y2=\"{2}\" stroke=\"#D55E00\" "
                         "stroke-width=\"2\" stroke-dasharray=\"4 3\"><title>{3}</title></line>\n",
                         svg_num(x), svg_num(top), svg_num(top + ph), html_escape(title));
    }
    return o;
}
// A history chart's points, each with its run's date, commit (the commit
// under test where recorded) and median on hover.
template <class XOfRun, class YOfTime>
std::string history_points(const nlohmann::json &m, const nlohmann::json &runs, XOfRun X, YOfTime Y) {
    std::string o;
    for (std::size_t i = 0; i < m.size(); ++i) {
        if (!m[i].is_number()) continue;
        const nlohmann::json run = i < runs.size() ? runs[i] : nlohmann::json::object();
        o += fmt::format("<circle class=\"point\" cx=\"{}\" cy=\"{}\" r=\"3\" fill=\"#0072B2\"><title>{} commit "
                         "{}: {}</title></circle>\n",
                         svg_num(X(i)), svg_num(Y(m[i].get<double>())), html_escape(run.value("timestamp", "")),
                         html_escape(run.value("commit_under_test", run.value("commit", "")).substr(0, 12)),
                         median_text(m[i].get<double>()));
    }
    return o;
}
} // namespace

std::vector<std::string> history_chart_titles(const nlohmann::json &cases) {
    // "label [backend]": the backend goes right, so a cut label never hides it.
    std::vector<std::string> labels;
    for (const auto &c : cases) {
        const std::string name = c.value("case", std::string());
        labels.push_back(name.substr(0, std::min(name.size(), name.rfind(" ["))));
    }
    return clip_unique(labels, 34);
}

std::string history_small_multiples_html(const nlohmann::json &runs, const nlohmann::json &cases) {
    // The first and last runs' dates under each chart; their times too when
    // the runs are of one day.
    const auto stamp = [&](std::size_t i) {
        return i < runs.size() ? runs[i].value("timestamp", std::string()) : std::string();
    };
    const bool one_day = !runs.empty() && stamp(0).substr(0, 10) == stamp(runs.size() - 1).substr(0, 10);
    const auto date_of = [&](std::size_t i) {
        const std::string t = stamp(i);
        if (!one_day || t.size() < 16) return t.substr(0, 10);
        return t.substr(0, 10) + " " + t.substr(11, 5);
    };
    std::string h = filter_box("#history-all > svg", "cases");
    h += "<div class=\"multiples\" id=\"history-all\">\n";
    const std::vector<std::string> shown_labels = history_chart_titles(cases);
    std::size_t index = 0;
    for (const auto &c : cases) {
        const std::string &shown_label = shown_labels[index++];
        const std::string name = c.value("case", std::string());
        const auto &m = c["median_seconds"];
        double lo = INFINITY, hi = 0, first = NAN, last = NAN;
        for (const auto &v : m)
            if (v.is_number()) {
                lo = std::min(lo, v.get<double>());
                hi = std::max(hi, v.get<double>());
                if (!std::isfinite(first)) first = v.get<double>();
                last = v.get<double>();
            }
        if (!(hi > 0)) continue;
        const double pad = std::max((hi - lo) * 0.1, hi * 0.01);
        const double ylo = std::max(0.0, lo - pad), yhi = hi + pad;
        const double width = 360, height = 150, left = 62, right = 14, top = 30, bottom = 30;
        const double pw = width - left - right, ph = height - top - bottom;
        const std::size_t n = m.size();
        auto X = [&](std::size_t i) { return left + (n > 1 ? double(i) / double(n - 1) : 0.5) * pw; };
        auto Y = [&](double v) { return top + ph - (v - ylo) / (yhi - ylo) * ph; };
        const auto bracket = name.rfind(" [");
        const std::string backend = bracket == std::string::npos ? "" : name.substr(bracket + 2, name.size() - bracket - 3);
        const std::string title = fmt::format("{}: last / first {}", name, ratio_text(last / first));
        std::string o = fmt::format("<svg class=\"chart small\" data-chart=\"history\" width=\"{0}\" height=\"{1}\" "
                                    "viewBox=\"0 0 {0} {1}\" font-family=\"sans-serif\" font-size=\"11\">\n"
                                    "<title>{2}</title>\n",
                                    svg_num(width), svg_num(height), html_escape(title));
        o += fmt::format("<text x=\"4\" y=\"16\" font-weight=\"bold\">{}</text>\n", html_escape(shown_label));
        o += fmt::format("<text x=\"{}\" y=\"16\" text-anchor=\"end\" fill=\"#555\">{} x{}</text>\n",
                         svg_num(width - right), html_escape(clip(backend, 10)), ratio_text(last / first));
        o += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"#ccc\"/>\n",
                         svg_num(left), svg_num(top), svg_num(pw), svg_num(ph));
        for (double t : {ylo + pad, yhi - pad})
            if (t == yhi - pad || Y(ylo + pad) - Y(yhi - pad) >= 14) // no label over another
                o += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\" fill=\"#444\">{}</text>\n",
                                 svg_num(left - 4), svg_num(Y(t) + 4), format_seconds(t));
        o += fmt::format("<text x=\"{}\" y=\"{}\" fill=\"#444\">{}</text>\n", svg_num(left), svg_num(height - 10),
                         date_of(0));
        if (n > 1)
            o += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\" fill=\"#444\">{}</text>\n",
                             svg_num(left + pw), svg_num(height - 10), date_of(n - 1));
        std::string d;
        for (std::size_t i = 0; i < n; ++i) {
            if (!m[i].is_number()) continue;
            d += fmt::format("{}{},{}", d.empty() ? "M" : " L", svg_num(X(i)), svg_num(Y(m[i].get<double>())));
        }
        o += fmt::format("<path d=\"{}\" fill=\"none\" stroke=\"#0072B2\" stroke-width=\"1.5\"/>\n", d);
        o += history_points(m, runs, X, Y);
        if (c.contains("changes")) o += change_marks(c["changes"], X, top, ph);
        h += o + "</svg>\n";
    }
    return h + "</div>\n";
}

std::string report_script() {
    return R"(<script>
// Sort: click a header of a table.sortable (numbers by data-v). Filter: type in an input.filter.
document.querySelectorAll('table.sortable th').forEach(function (th, col) {
  th.addEventListener('click', function () {
    var body = th.closest('table').tBodies[0], rows = Array.from(body.rows).filter(function (r) { return !r.classList.contains('head'); });
    var dir = th.dataset.dir = th.dataset.dir === '1' ? '-1' : '1';
    var key = function (r) { var c = r.cells[col]; return c.dataset.v !== undefined ? parseFloat(c.dataset.v) : c.textContent; };
    rows.sort(function (a, b) { var x = key(a), y = key(b); return (x < y ? -1 : x > y ? 1 : 0) * dir; });
    rows.forEach(function (r) { body.appendChild(r); });
  });
});
document.querySelectorAll('input.filter').forEach(function (f) {
  f.addEventListener('input', function () {
    var q = f.value.toLowerCase();
    document.querySelectorAll(f.dataset.target).forEach(function (e) {
      if (!e.classList.contains('head')) e.style.display = e.textContent.toLowerCase().indexOf(q) < 0 ? 'none' : '';
    });
  });
});
</script>
)";
}

} // namespace opbench
