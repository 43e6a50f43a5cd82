#include "readers/svg_chart.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <string_view>

namespace opbench {

namespace {

// Colour-blind-safe palette (Okabe & Ito), then greys.
constexpr const char *kPalette[] = {"#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9",
                                    "#D55E00", "#F0E442", "#000000", "#999999", "#666666"};
const char *color(int i) { return kPalette[static_cast<std::size_t>(i) % std::size(kPalette)]; }

struct Axis {
    double lo = 0, hi = 1;
    bool log = false;
    bool binary = false; // log ticks at powers of two (bytes)
    // Position in [0, 1] of value v.
    [[nodiscard]] double frac(double v) const {
        if (log) return (std::log10(v) - std::log10(lo)) / (std::log10(hi) - std::log10(lo));
        return (v - lo) / (hi - lo);
    }
    [[nodiscard]] std::vector<double> ticks() const {
        std::vector<double> t;
        if (log && binary) {
            // Powers of two, every k-th, so about six ticks: 1 KiB, 4 KiB, 16 KiB...
            const double e_lo = std::ceil(std::log2(lo)), e_hi = std::floor(std::log2(hi));
            const double k = std::max(1.0, std::round((e_hi - e_lo) / 6));
            for (double e = std::ceil(e_lo / k) * k; e <= e_hi; e += k) t.push_back(std::pow(2.0, e));
            return t;
        }
        if (log) {
            // Every decade up to a dozen, then every k-th: a subnormal value
            // (5e-324) spans 300 decades (issue 44).
            const double e_lo = std::floor(std::log10(lo)), e_hi = std::ceil(std::log10(hi));
            const double k = std::max(1.0, std::ceil((e_hi - e_lo) / 12));
            for (double e = e_lo; e <= e_hi; e += k) {
                const double v = std::pow(10.0, e);
                if (v >= lo * (1 - 1e-9) && v <= hi * (1 + 1e-9)) t.push_back(v);
            }
            return t;
        }
        const double span = hi - lo;
        const double raw = span / 5;
        const double mag = std::pow(10.0, std::floor(std::log10(raw)));
        double step = mag;
        for (double m : {1.0, 2.0, 5.0, 10.0})
            if (m * mag >= raw) {
                step = m * mag;
                break;
            }
        // A span too small for a double's steps (subnormal values: step 0,
        // an endless loop that grew the report without bound, issue 44)
        // gets its two ends only.
        if (!(step > 0) || !std::isfinite(step) || span / step > 20) return {lo, hi};
        for (double v = std::ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) t.push_back(v);
        return t;
    }
};

// An axis covering `values` (only positive ones on a log axis), padded to
// whole decades on a log axis.
Axis make_axis(std::vector<double> values, bool log, bool from_zero) {
    Axis a;
    a.log = log;
    values.erase(
        std::remove_if(values.begin(), values.end(), [&](double v) { return !std::isfinite(v) || (log && v <= 0); }),
        values.end());
    if (values.empty()) {
        a.lo = log ? 1 : 0;
        a.hi = log ? 10 : 1;
        return a;
    }
    const auto [mn, mx] = std::minmax_element(values.begin(), values.end());
    if (log) {
        a.lo = std::pow(10.0, std::floor(std::log10(*mn)));
        a.hi = std::pow(10.0, std::ceil(std::log10(*mx)));
        if (a.hi <= a.lo) a.hi = a.lo * 10;
    } else {
        a.lo = from_zero ? std::min(0.0, *mn) : *mn;
        a.hi = *mx;
        if (a.hi <= a.lo) a.hi = a.lo + 1;
        a.hi += (a.hi - a.lo) * 0.05;
    }
    return a;
}

} // namespace

std::string svg_num(double v) { return fmt::format("{:.1f}", v); }

std::string html_escape(const std::string &s) {
    std::string out;
    out.reserve(s.size());
    for (char c : s) {
        switch (c) {
        case '&': out += "&amp;"; break;
        case '<': out += "&lt;"; break;
        case '>': out += "&gt;"; break;
        case '"': out += "&quot;"; break;
        case '\'': out += "&#39;"; break;
        default: out += c;
        }
    }
    return out;
}

std::string tick_label(double v, AxisUnit unit) {
    if (unit == AxisUnit::seconds) {
        const double a = std::fabs(v);
        if (a == 0) return "0";
        if (a < 1e-6) return fmt::format("{:g} ns", v * 1e9);
        if (a < 1e-3) return fmt::format("{:g} us", v * 1e6);
        if (a < 1) return fmt::format("{:g} ms", v * 1e3);
        return fmt::format("{:g} s", v);
    }
    if (unit == AxisUnit::bytes) {
        const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
        int i = 0;
        double x = v;
        while (std::fabs(x) >= 1024 && i < 4) {
            x /= 1024;
            ++i;
        }
        return i == 0 ? fmt::format("{:.0f} B", x) : fmt::format("{:.3g} {}", x, units[i]);
    }
    const double a = std::fabs(v);
    if (a >= 1e9) return fmt::format("{:g}G", v / 1e9);
    if (a >= 1e6) return fmt::format("{:g}M", v / 1e6);
    if (a >= 1e3) return fmt::format("{:g}k", v / 1e3);
    return fmt::format("{:g}", v);
}

namespace {

// `s` with only the characters `keep` marks; each run of dropped ones
// longer than "..." becomes "...".
std::string keep_marked(const std::string &s, const std::vector<bool> &keep) {
    std::string out;
    for (std::size_t i = 0; i < s.size();) {
        std::size_t j = i;
        while (j < s.size() && keep[j] == keep[i]) ++j;
        out += keep[i] || j - i <= 3 ? s.substr(i, j - i) : "...";
        i = j;
    }
    return out;
}

} // namespace

namespace {

// For each distinct name, the places where it first differs from every other
// name: the distinct common-prefix lengths it has with the others. Sorted,
// a name's common prefix with another is the smallest adjacent one between
// them, so the distinct values are the chain of strictly smaller adjacent
// prefixes walking out from it, each way: at most its length long. O(n log n)
// in all, where comparing every pair took 261 s on a 50,000-entry report
// (issue 44).
std::map<std::string_view, std::vector<std::size_t>> differ_places(const std::vector<std::string> &names) {
    std::vector<std::string_view> u(names.begin(), names.end());
    std::sort(u.begin(), u.end());
    u.erase(std::unique(u.begin(), u.end()), u.end());
    const std::size_t m = u.size();
    std::vector<std::size_t> lcp(m, 0); // lcp[k]: u[k-1] with u[k] (k >= 1)
    for (std::size_t k = 1; k < m; ++k)
        lcp[k] = std::size_t(std::mismatch(u[k - 1].begin(), u[k - 1].end(), u[k].begin(), u[k].end()).first -
                             u[k - 1].begin());
    // prev[k]: the nearest k' < k with lcp[k'] < lcp[k] (0 for none); next[k]:
    // the nearest k' > k with lcp[k'] < lcp[k] (m for none).
    // Strictly smaller both ways, so a run of equal prefixes is one step.
    std::vector<std::size_t> prev(m, 0), next(m, m), stack;
    for (std::size_t k = 1; k < m; ++k) {
        while (!stack.empty() && lcp[stack.back()] >= lcp[k]) stack.pop_back();
        prev[k] = stack.empty() ? 0 : stack.back();
        stack.push_back(k);
    }
    stack.clear();
    for (std::size_t k = m; k-- > 1;) {
        while (!stack.empty() && lcp[stack.back()] >= lcp[k]) stack.pop_back();
        next[k] = stack.empty() ? m : stack.back();
        stack.push_back(k);
    }
    std::map<std::string_view, std::vector<std::size_t>> places;
    for (std::size_t p = 0; p < m; ++p) {
        std::vector<std::size_t> &at = places[u[p]];
        for (std::size_t k = p; k >= 1; k = prev[k]) at.push_back(lcp[k]);        // the names before it
        for (std::size_t k = p + 1; k < m && k >= 1; k = next[k]) at.push_back(lcp[k]); // and after it
    }
    return places;
}

} // namespace

std::vector<std::string> clip_unique(const std::vector<std::string> &names, std::size_t n) {
    n = std::max<std::size_t>(n, 20);
    const auto places = differ_places(names);
    std::vector<std::string> out;
    for (const std::string &s : names) {
        const std::vector<std::size_t> &differs = places.at(s);
        const std::size_t shared = differs.empty() ? 0 : *std::max_element(differs.begin(), differs.end());
        if (s.size() <= n || shared + 4 <= n - 3) { // short, or it differs within what a plain cut keeps
            out.push_back(s.size() <= n ? s : s.substr(0, n - 3) + "...");
            continue;
        }
        // Keep the head and a few characters around each place it differs.
        std::vector<bool> keep(s.size(), false);
        std::fill(keep.begin(), keep.begin() + std::ptrdiff_t(std::min(s.size(), n / 3)), true);
        for (std::size_t at : differs)
            for (std::size_t k = at >= 6 ? at - 6 : 0; k < std::min(s.size(), at + 10); ++k) keep[k] = true;
        std::fill(keep.end() - std::ptrdiff_t(std::min<std::size_t>(s.size(), 8)), keep.end(), true); // the end ("[onednn]")
        out.push_back(keep_marked(s, keep));
    }
    // A collision left (rare): every name of a clipped form that two
    // different names share, in full.
    std::map<std::string, std::vector<std::size_t>> by_clip;
    for (std::size_t i = 0; i < out.size(); ++i) by_clip[out[i]].push_back(i);
    for (const auto &[clip, members] : by_clip) {
        const std::string &first = names[members.front()]; // clang 14 cannot capture a structured binding
        const bool mixed =
            std::any_of(members.begin(), members.end(), [&](std::size_t i) { return names[i] != first; });
        if (mixed)
            for (std::size_t i : members) out[i] = names[i];
    }
    return out;
}

std::string ratio_text(double r) {
    if (!std::isfinite(r)) return "-";
    if (std::fabs(r) >= 100) return fmt::format("{:.0f}", r); // every integer digit
    // Rounded to three significant digits first, so the decimals follow the
    // rounded value (0.99995 is "1.00", not "1.000"; CI found it).
    r = std::strtod(fmt::format("{:.3g}", r).c_str(), nullptr);
    if (std::fabs(r) >= 100) return fmt::format("{:.0f}", r);
    if (r == 0) return "0";
    // {:.3g} would write 1e-05; below 0.001 the digits follow the leading zeros.
    const int decimals = std::max(0, 2 - int(std::floor(std::log10(std::fabs(r)))));
    // Past nine decimals (a subnormal: 325 of them) the exponent reads better.
    if (decimals > 9) return fmt::format("{:.3g}", r);
    return fmt::format("{:.{}f}", r, decimals);
}

namespace {

// The hatch laid over a bar whose quality is not clean (one per chart: ids
// are unique in the page).
std::string hatch_pattern(const std::string &id) {
    return fmt::format("<defs><pattern id=\"{}\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\" "
                       "patternTransform=\"rotate(45)\"><rect width=\"3\" height=\"6\" fill=\"#fff\" "
                       "fill-opacity=\"0.65\"/></pattern></defs>\n",
                       id);
}

std::string bar_legend(const BarChart &c, bool any_mark, const std::string &hatch) {
    std::string o = "<p class=\"legend\">";
    for (std::size_t s = 0; s < c.series.size(); ++s)
        o += fmt::format("<span><i style=\"background:{}\"></i>{}</span> ", color(int(s)),
                         html_escape(c.series[s].name));
    if (any_mark)
        o += fmt::format("<span><svg width=\"12\" height=\"12\"><rect width=\"12\" height=\"12\" fill=\"#666\"/>"
                         "<rect width=\"12\" height=\"12\" fill=\"url(#{})\"/></svg> hatched, with its word: "
                         "the entry is not clean (noisy or disturbed)</span>",
                         hatch);
    return o + "</p>\n";
}

} // namespace

std::string render_bar_chart(const BarChart &c) {
    static int charts = 0; // hatch ids unique in the page
    const std::string hatch = fmt::format("hatch-{}-{}", html_escape(c.kind), ++charts);
    constexpr std::size_t kLabelChars = 52;
    const std::vector<std::string> labels = clip_unique(c.categories, kLabelChars);
    std::size_t longest = 0;
    for (const auto &l : labels) longest = std::max(longest, l.size());
    const double left = std::clamp(12 + 6.2 * double(longest), 120.0, 420.0), top = 6, row_gap = 6, bar_h = 9;
    const double group_h = bar_h * double(std::max<std::size_t>(c.series.size(), 1)) + row_gap;
    const double plot_h = group_h * double(c.categories.size()), height = top + plot_h + 40;
    // Bars span 0..kSpan % of the plot: room right of the longest for its mark.
    constexpr double kSpan = 88;
    std::vector<double> all;
    for (const auto &s : c.series) all.insert(all.end(), s.values.begin(), s.values.end());
    const Axis ax = make_axis(all, c.log_scale, true);
    std::string lab = fmt::format("<svg class=\"chart-labels\" width=\"{0}\" height=\"{1}\" font-family=\"sans-serif\" "
                                  "font-size=\"11\">\n",
                                  svg_num(left), svg_num(height));
    std::string o = fmt::format("<svg class=\"chart\" data-chart=\"{}\" width=\"100%\" height=\"{}\" "
                                "font-family=\"sans-serif\" font-size=\"11\">\n",
                                html_escape(c.kind), svg_num(height));
    o += hatch_pattern(hatch);
    for (double t : ax.ticks())
        o += fmt::format("<line x1=\"{0:.2f}%\" y1=\"{1}\" x2=\"{0:.2f}%\" y2=\"{2}\" stroke=\"#ddd\"/>"
                         "<text x=\"{0:.2f}%\" y=\"{3}\" text-anchor=\"middle\" fill=\"#444\">{4}</text>\n",
                         std::max(0.5, ax.frac(t) * kSpan), svg_num(top), svg_num(top + plot_h),
                         svg_num(top + plot_h + 14), html_escape(tick_label(t, c.unit)));
    o += fmt::format("<text x=\"{:.0f}%\" y=\"{}\" text-anchor=\"middle\">{}</text>\n", kSpan / 2,
                     svg_num(top + plot_h + 32), html_escape(c.value_label));
    bool any_mark = false;
    for (std::size_t i = 0; i < c.categories.size(); ++i) {
        const double y0 = top + double(i) * group_h;
        lab += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\"><title>{}</title>{}</text>\n",
                           svg_num(left - 6), svg_num(y0 + (group_h - row_gap) / 2 + 4), html_escape(c.categories[i]),
                           html_escape(labels[i]));
        for (std::size_t s = 0; s < c.series.size(); ++s) {
            const BarSeries &se = c.series[s];
            const double v = i < se.values.size() ? se.values[i] : NAN;
            if (!std::isfinite(v) || (ax.log && v <= 0)) continue;
            const double w = std::max(0.2, std::clamp(ax.frac(v), 0.0, 1.0) * kSpan);
            const std::string tip = i < se.tooltips.size() && !se.tooltips[i].empty()
                                        ? se.tooltips[i]
                                        : fmt::format("{}: {}", se.name, tick_label(v, c.unit));
            const std::string mark = i < se.marks.size() ? se.marks[i] : "";
            const double y = y0 + double(s) * bar_h;
            o += fmt::format("<rect class=\"bar\" x=\"0\" y=\"{}\" width=\"{:.2f}%\" height=\"{}\" fill=\"{}\"{}>"
                             "<title>{}</title></rect>\n",
                             svg_num(y), w, svg_num(bar_h - 1), color(int(s)),
                             mark.empty() ? "" : " data-quality=\"" + html_escape(mark) + "\"", html_escape(tip));
            if (mark.empty()) continue;
            any_mark = true;
            o += fmt::format("<rect class=\"hatch\" x=\"0\" y=\"{0}\" width=\"{1:.2f}%\" height=\"{2}\" "
                             "fill=\"url(#{3})\"/><text class=\"mark\" x=\"{1:.2f}%\" dx=\"3\" y=\"{4}\" "
                             "font-size=\"9\" fill=\"#333\">{5}</text>\n",
                             svg_num(y), w, svg_num(bar_h - 1), hatch, svg_num(y + bar_h - 1), html_escape(mark));
        }
    }
    o += fmt::format("<line x1=\"0\" y1=\"{0}\" x2=\"0\" y2=\"{1}\" stroke=\"#333\"/>\n", svg_num(top),
                     svg_num(top + plot_h));
    return fmt::format("<div class=\"barchart\">\n<p class=\"chart-title\">{}</p>\n<div class=\"bars\">\n{}</svg>\n{}"
                       "</svg>\n</div>\n{}</div>\n",
                       html_escape(c.title), lab, o, bar_legend(c, any_mark, hatch));
}

std::string render_xy_chart(const XyChart &c) {
    // Room right of the plot for the longest series name in the legend.
    std::size_t longest = 0;
    for (const auto &s : c.series) longest = std::max(longest, s.name.size());
    const double right = std::clamp(44 + 6.2 * double(longest), 120.0, 420.0);
    const double width = 540 + right, height = 440, left = 80, top = 40, bottom = 50;
    const double pw = width - left - right, ph = height - top - bottom;
    std::vector<double> xs, ys;
    for (const auto &s : c.series)
        for (const auto &p : s.points) {
            xs.push_back(p.x);
            ys.push_back(p.y);
        }
    Axis ax = make_axis(xs, c.log_x, false), ay = make_axis(ys, c.log_y, true);
    ax.binary = c.x_unit == AxisUnit::bytes;
    ay.binary = c.y_unit == AxisUnit::bytes;
    auto X = [&](double v) { return left + std::clamp(ax.frac(v), -0.02, 1.02) * pw; };
    auto Y = [&](double v) { return top + ph - std::clamp(ay.frac(v), -0.02, 1.02) * ph; };
    std::string o = fmt::format("<svg class=\"chart\" data-chart=\"{}\" width=\"{}\" height=\"{}\" "
                                "viewBox=\"0 0 {} {}\" font-family=\"sans-serif\" font-size=\"11\">\n",
                                html_escape(c.kind), svg_num(width), svg_num(height), svg_num(width), svg_num(height));
    o += fmt::format("<text x=\"{}\" y=\"20\" font-size=\"14\" font-weight=\"bold\">{}</text>\n", svg_num(left),
                     html_escape(c.title));
    for (double t : ax.ticks())
        o += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\" stroke=\"#ddd\"/>"
                         "<text x=\"{0}\" y=\"{3}\" text-anchor=\"middle\" fill=\"#444\">{4}</text>\n",
                         svg_num(X(t)), svg_num(top), svg_num(top + ph), svg_num(top + ph + 14),
                         html_escape(tick_label(t, c.x_unit)));
    for (double t : ay.ticks())
        o += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\" stroke=\"#ddd\"/>"
                         "<text x=\"{3}\" y=\"{4}\" text-anchor=\"end\" fill=\"#444\">{5}</text>\n",
                         svg_num(left), svg_num(Y(t)), svg_num(left + pw), svg_num(left - 5), svg_num(Y(t) + 4),
                         html_escape(tick_label(t, c.y_unit)));
    o += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"#333\"/>\n",
                     svg_num(left), svg_num(top), svg_num(pw), svg_num(ph));
    o += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n", svg_num(left + pw / 2),
                     svg_num(height - 12), html_escape(c.x_label));
    o += fmt::format("<text transform=\"translate(16 {}) rotate(-90)\" text-anchor=\"middle\">{}</text>\n",
                     svg_num(top + ph / 2), html_escape(c.y_label));
    for (std::size_t s = 0; s < c.series.size(); ++s) {
        const XySeries &se = c.series[s];
        const char *col = color(se.color >= 0 ? se.color : int(s));
        std::vector<XyPoint> pts;
        for (const auto &p : se.points)
            if (std::isfinite(p.x) && std::isfinite(p.y) && (!ax.log || p.x > 0) && (!ay.log || p.y > 0))
                pts.push_back(p);
        if (se.line && pts.size() > 1) {
            std::string d;
            for (const auto &p : pts)
                d += fmt::format("{}{},{}", d.empty() ? "M" : " L", svg_num(X(p.x)), svg_num(Y(p.y)));
            o += fmt::format("<path class=\"line\" d=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"2\"{}/>\n", d,
                             col, se.dashed ? " stroke-dasharray=\"6 4\"" : "");
        }
        if (se.markers)
            for (const auto &p : pts)
                o += fmt::format("<circle class=\"point\" cx=\"{}\" cy=\"{}\" r=\"4\" fill=\"{}\" fill-opacity=\"0.8\">"
                                 "<title>{}</title></circle>\n",
                                 svg_num(X(p.x)), svg_num(Y(p.y)), col,
                                 html_escape(p.tooltip.empty() ? se.name : p.tooltip));
        const double ly = top + 10 + 16 * double(s);
        o += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\" stroke=\"{3}\" stroke-width=\"{4}\"{5}/>"
                         "<text x=\"{6}\" y=\"{7}\">{8}</text>\n",
                         svg_num(left + pw + 12), svg_num(ly), svg_num(left + pw + 30), col, se.line ? 2 : 8,
                         se.dashed ? " stroke-dasharray=\"6 4\"" : "", svg_num(left + pw + 34), svg_num(ly + 4),
                         html_escape(se.name));
    }
    o += "</svg>\n";
    return o;
}

} // namespace opbench
