#include "readers/svg_chart.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

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
            for (double e = std::floor(std::log10(lo)); e <= std::ceil(std::log10(hi)); e += 1) {
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

std::string num(double v) { return fmt::format("{:.1f}", v); }

} // namespace

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

std::string render_bar_chart(const BarChart &c) {
    // Room for the longest category label (about 6.2 px a character at 11
    // px), up to kLabelChars: longer ones are cut (in full in their <title>),
    // so the chart fits an 800 px window at its own text size.
    constexpr std::size_t kLabelChars = 52;
    std::size_t longest = 0;
    for (const auto &cat : c.categories) longest = std::max(longest, std::min(cat.size(), kLabelChars));
    const double left = std::clamp(12 + 6.2 * double(longest), 120.0, 340.0), right = 30, top = 40, row_gap = 6;
    const double bar_h = 9;
    const double group_h = bar_h * double(std::max<std::size_t>(c.series.size(), 1)) + row_gap;
    const double plot_h = group_h * double(c.categories.size());
    const double width = left + 420, plot_w = width - left - right;
    const double legend_h = 22;
    // Legend lines: the same wrapping as where it is drawn below.
    double legend_lines = 1, used = 4;
    for (const auto &s : c.series) {
        const double w = 40 + 7 * double(s.name.size());
        if (used > 4 && used + w > width) {
            ++legend_lines;
            used = 4;
        }
        used += w;
    }
    const double height = top + plot_h + 40 + legend_h * legend_lines;
    std::vector<double> all;
    for (const auto &s : c.series) all.insert(all.end(), s.values.begin(), s.values.end());
    const Axis ax = make_axis(all, c.log_scale, true);
    std::string o = fmt::format("<svg class=\"chart\" data-chart=\"{}\" width=\"{}\" height=\"{}\" "
                                "viewBox=\"0 0 {} {}\" font-family=\"sans-serif\" font-size=\"11\">\n",
                                html_escape(c.kind), num(width), num(height), num(width), num(height));
    o += fmt::format("<text x=\"4\" y=\"20\" font-size=\"14\" font-weight=\"bold\">{}</text>\n",
                     html_escape(c.title));
    for (double t : ax.ticks()) {
        const double x = left + ax.frac(t) * plot_w;
        o += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\" stroke=\"#ddd\"/>"
                         "<text x=\"{0}\" y=\"{3}\" text-anchor=\"middle\" fill=\"#444\">{4}</text>\n",
                         num(x), num(top), num(top + plot_h), num(top + plot_h + 14),
                         html_escape(tick_label(t, c.unit)));
    }
    o += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n", num(left + plot_w / 2),
                     num(top + plot_h + 30), html_escape(c.value_label));
    for (std::size_t i = 0; i < c.categories.size(); ++i) {
        const double y0 = top + double(i) * group_h;
        const std::string &cat = c.categories[i];
        o += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\"><title>{}</title>{}</text>\n", num(left - 6),
                         num(y0 + (group_h - row_gap) / 2 + 4), html_escape(cat),
                         html_escape(cat.size() <= kLabelChars ? cat : cat.substr(0, kLabelChars - 3) + "..."));
        for (std::size_t s = 0; s < c.series.size(); ++s) {
            const double v = i < c.series[s].values.size() ? c.series[s].values[i] : NAN;
            if (!std::isfinite(v) || (ax.log && v <= 0)) continue;
            const double w = std::max(1.0, std::clamp(ax.frac(v), 0.0, 1.0) * plot_w);
            const std::string tip = i < c.series[s].tooltips.size() && !c.series[s].tooltips[i].empty()
                                        ? c.series[s].tooltips[i]
                                        : fmt::format("{}: {}", c.series[s].name, tick_label(v, c.unit));
            o += fmt::format("<rect class=\"bar\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\">"
                             "<title>{}</title></rect>\n",
                             num(left), num(y0 + double(s) * bar_h), num(w), num(bar_h - 1), color(int(s)),
                             html_escape(tip));
        }
    }
    o += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\" stroke=\"#333\"/>\n", num(left), num(top),
                     num(top + plot_h));
    // The legend under the plot, wrapped onto as many lines as it needs.
    double lx = 4, ly = top + plot_h + 44;
    for (std::size_t s = 0; s < c.series.size(); ++s) {
        const double w = 40 + 7 * double(c.series[s].name.size());
        if (lx > 4 && lx + w > width) {
            lx = 4;
            ly += legend_h;
        }
        o += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"12\" height=\"12\" fill=\"{}\"/>"
                         "<text x=\"{}\" y=\"{}\">{}</text>\n",
                         num(lx), num(ly - 10), color(int(s)), num(lx + 16), num(ly), html_escape(c.series[s].name));
        lx += w;
    }
    o += "</svg>\n";
    return o;
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
                                html_escape(c.kind), num(width), num(height), num(width), num(height));
    o += fmt::format("<text x=\"{}\" y=\"20\" font-size=\"14\" font-weight=\"bold\">{}</text>\n", num(left),
                     html_escape(c.title));
    for (double t : ax.ticks())
        o += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\" stroke=\"#ddd\"/>"
                         "<text x=\"{0}\" y=\"{3}\" text-anchor=\"middle\" fill=\"#444\">{4}</text>\n",
                         num(X(t)), num(top), num(top + ph), num(top + ph + 14), html_escape(tick_label(t, c.x_unit)));
    for (double t : ay.ticks())
        o += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\" stroke=\"#ddd\"/>"
                         "<text x=\"{3}\" y=\"{4}\" text-anchor=\"end\" fill=\"#444\">{5}</text>\n",
                         num(left), num(Y(t)), num(left + pw), num(left - 5), num(Y(t) + 4),
                         html_escape(tick_label(t, c.y_unit)));
    o += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"#333\"/>\n", num(left),
                     num(top), num(pw), num(ph));
    o += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n", num(left + pw / 2), num(height - 12),
                     html_escape(c.x_label));
    o += fmt::format("<text transform=\"translate(16 {}) rotate(-90)\" text-anchor=\"middle\">{}</text>\n",
                     num(top + ph / 2), html_escape(c.y_label));
    for (std::size_t s = 0; s < c.series.size(); ++s) {
        const XySeries &se = c.series[s];
        const char *col = color(se.color >= 0 ? se.color : int(s));
        std::vector<XyPoint> pts;
        for (const auto &p : se.points)
            if (std::isfinite(p.x) && std::isfinite(p.y) && (!ax.log || p.x > 0) && (!ay.log || p.y > 0))
                pts.push_back(p);
        if (se.line && pts.size() > 1) {
            std::string d;
            for (const auto &p : pts) d += fmt::format("{}{},{}", d.empty() ? "M" : " L", num(X(p.x)), num(Y(p.y)));
            o += fmt::format("<path class=\"line\" d=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"2\"{}/>\n", d,
                             col, se.dashed ? " stroke-dasharray=\"6 4\"" : "");
        }
        if (se.markers)
            for (const auto &p : pts)
                o += fmt::format("<circle class=\"point\" cx=\"{}\" cy=\"{}\" r=\"4\" fill=\"{}\" fill-opacity=\"0.8\">"
                                 "<title>{}</title></circle>\n",
                                 num(X(p.x)), num(Y(p.y)), col, html_escape(p.tooltip.empty() ? se.name : p.tooltip));
        const double ly = top + 10 + 16 * double(s);
        o += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\" stroke=\"{3}\" stroke-width=\"{4}\"{5}/>"
                         "<text x=\"{6}\" y=\"{7}\">{8}</text>\n",
                         num(left + pw + 12), num(ly), num(left + pw + 30), col, se.line ? 2 : 8,
                         se.dashed ? " stroke-dasharray=\"6 4\"" : "", num(left + pw + 34), num(ly + 4),
                         html_escape(se.name));
    }
    o += "</svg>\n";
    return o;
}

} // namespace opbench
