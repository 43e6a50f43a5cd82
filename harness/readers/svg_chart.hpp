// Charts as inline SVG text, for the HTML report: horizontal bar charts and
// x-y charts (lines and markers), linear or logarithmic axes. No script, no
// external resource: the SVG is complete as written. Every chart is an
// <svg class="chart" data-chart="KIND">, every bar a <rect class="bar">,
// every marker a <circle class="point">, each with a <title> tooltip.
#pragma once

#include <string>
#include <vector>

namespace opbench {

// A coordinate or length as SVG text: one decimal (the charts' and the
// report's own drawings).
[[nodiscard]] std::string svg_num(double v);

// How tick labels read: seconds ("10 us"), bytes ("1 MiB"), or plain
// numbers ("0.1", "10", "1k").
enum class AxisUnit { number, seconds, bytes };

struct BarSeries {
    std::string name;
    std::vector<double> values;        // one per category; NaN or <= 0 on a log axis: no bar
    std::vector<std::string> tooltips; // optional, one per category
    // Optional, one per category: the entry's quality when not clean
    // ("noisy", "disturbed"). Such a bar is hatched and the word is written
    // after it, so quality never rests on colour alone.
    std::vector<std::string> marks;
};

struct BarChart {
    std::string kind; // data-chart attribute
    std::string title, value_label;
    AxisUnit unit = AxisUnit::seconds;
    bool log_scale = true;
    std::vector<std::string> categories; // one row of bars each
    std::vector<BarSeries> series;
};

struct XyPoint {
    double x = 0, y = 0;
    std::string tooltip;
};

struct XySeries {
    std::string name;
    std::vector<XyPoint> points;
    bool line = true;    // join the points
    bool markers = true; // a circle at each point
    bool dashed = false;
    int color = -1; // palette index; -1: the series' position
};

struct XyChart {
    std::string kind;
    std::string title, x_label, y_label;
    AxisUnit x_unit = AxisUnit::number, y_unit = AxisUnit::number;
    bool log_x = true, log_y = true;
    std::vector<XySeries> series;
};

// A bar chart that uses the page's width: the category labels in a column
// of their own (px), the bars in an SVG as wide as what is left (horizontal
// coordinates in %), title and legend as HTML. The <svg class="chart"> holds
// data-chart and the bars.
[[nodiscard]] std::string render_bar_chart(const BarChart &chart);
[[nodiscard]] std::string render_xy_chart(const XyChart &chart);

// Escapes &, <, >, " and ' for HTML text and attributes.
[[nodiscard]] std::string html_escape(const std::string &s);

// Each name cut to at most `n` characters ("..." marks a cut); where a plain
// cut would make two names read alike, the part where a name differs from
// the others is kept ("op.decode...fused B:1 H:16"). Names that differ
// stay different.
[[nodiscard]] std::vector<std::string> clip_unique(const std::vector<std::string> &names, std::size_t n);

// A ratio with three significant digits and no exponent: 0.00123, 0.98,
// 12.3, 1578 ("-" when not finite).
[[nodiscard]] std::string ratio_text(double r);

// A tick label in the axis' unit: 1e-5 s -> "10 us", 1048576 B -> "1 MiB".
[[nodiscard]] std::string tick_label(double v, AxisUnit unit);

} // namespace opbench
