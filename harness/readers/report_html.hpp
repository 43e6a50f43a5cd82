// opbench report: one self-contained HTML page about one or more result
// sets. No network reference: styles and one short script (sorting and
// filtering, report_compare.hpp) inline, charts as inline SVG (svg_chart.hpp).
// Sections: with two or more sets, the comparison of the first with each
// later one first (report_compare.hpp); the contexts side by side, time per
// case by backend and set, each case's sample distributions, a roofline per
// set against its machine's measured peaks, time and peak memory against each
// swept dimension, the archived history as one small chart per case (with a
// history directory), and the level tables (first, as the entry table, in a
// one-set report). Text stays at its size: bar and ratio charts take the
// page's width (their plots are in %), and a table wider than the window
// scrolls inside its section with its key column sticky.
#pragma once

#include "readers/result_set_reader.hpp"
#include "writers/writer.hpp"

#include <string>
#include <vector>

namespace opbench {

struct ReportOptions {
    std::string title;       // default: "opbench report: <suite names>"
    std::string history_dir; // an archive: chart the first set's suite on its machine
};

// A sweep: cases of one op and case name that differ only in one shape
// parameter (and parameters equal to it, as seq_q = seq_kv).
struct Sweep {
    std::string op, case_name, dtype, axis; // axis: the parameter, "M", "Skv", ...
    std::string axis_label;                 // with the parameters that move along: "Skv=Sq"
    std::string fixed;                      // the other parameters, "B:1 H:16 D:64 causal:false"
    std::vector<const CaseRecord *> cases;  // every backend and variant, every set
    std::vector<std::size_t> set_of;        // the set index of each case
};

// The sweeps in `sets` with at least two values on their axis.
[[nodiscard]] std::vector<Sweep> find_sweeps(const std::vector<ResultSet> &sets);

[[nodiscard]] std::string render_report_html(const std::vector<ResultSet> &sets, const ReportOptions &options);

// A Table as an HTML <table> (escaped), its notes as paragraphs.
[[nodiscard]] std::string html_table(const Table &t);

} // namespace opbench
