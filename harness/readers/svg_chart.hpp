// Charts as inline SVG text, for the HTML report: horizontal bar charts and
// x-y charts (lines and markers), linear or logarithmic axes. No script, no
// external resource: the SVG is complete as written. Every chart is an
// <svg class="chart" data-chart="KIND">, every bar a <rect class="bar">,
// every marker a <circle class="point">, each with a <title> tooltip.
#pragma once

#include <string>
#include <vector>

namespace opbench {

// How tick labels read: seconds ("10 us"), bytes ("1 MiB"), or plain
// numbers ("0.1", "10", "1k").
enum class AxisUnit { number, seconds, bytes };

struct BarSeries {
    std::string name;
    std::vector<double> values;        // one per category; NaN or <= 0 on a log axis: no bar
    std::vector<std::string> tooltips; // optional, one per category
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

[[nodiscard]] std::string render_bar_chart(const BarChart &chart);
[[nodiscard]] std::string render_xy_chart(const XyChart &chart);

// Escapes &, <, >, " and ' for HTML text and attributes.
[[nodiscard]] std::string html_escape(const std::string &s);

// A tick label in the axis' unit: 1e-5 s -> "10 us", 1048576 B -> "1 MiB".
[[nodiscard]] std::string tick_label(double v, AxisUnit unit);

} // namespace opbench
