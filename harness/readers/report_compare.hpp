// The report's comparison parts (opbench report A B ...): the A->B
// comparison (verdict table, ratio chart with 95% intervals, geomeans per
// backend and op), each case's sample distributions as box plots, and the
// archived history as one small chart per case. Verdicts, intervals and
// geomeans come from readers/compare (compare_sets), never recomputed here.
// Every chart keeps its text at 11 px: a chart wider than the window
// scrolls inside its section instead of shrinking.
#pragma once

#include "readers/result_set_reader.hpp"

#include <string>
#include <vector>

namespace opbench {

// The first set against each later one: counts, a sortable and filterable
// verdict table, the ratio chart and the geomeans. Needs two or more sets.
[[nodiscard]] std::string comparison_html(const std::vector<ResultSet> &sets);

// One small box plot per case: a box per set and backend from its samples
// (quartiles, median, whiskers at the Tukey fences, min and max beyond as
// dots), on a log time axis.
[[nodiscard]] std::string distributions_html(const std::vector<ResultSet> &sets);

// One small chart per case of its median across archived runs, x labelled
// with run dates, each point's tooltip with its date, commit and time.
// `runs` and `cases` are archive_history()'s data ("runs", "cases"); a case
// with `changes` (history --changes' JSON of the case) has each change
// marked by a dashed line between its runs (line.change, issue 43).
[[nodiscard]] std::string history_small_multiples_html(const nlohmann::json &runs, const nlohmann::json &cases);
// The title each history chart shows for `cases` (history's JSON cases):
// the case's label without its backend, cut to fit (unique); the change
// table names its rows by them too.
[[nodiscard]] std::vector<std::string> history_chart_titles(const nlohmann::json &cases);

// The page's one script: click a header of a table.sortable to sort by it
// (numbers by their data-v), type in an input.filter to keep the rows of its
// data-table that contain the text. No network, no library.
[[nodiscard]] std::string report_script();

} // namespace opbench
