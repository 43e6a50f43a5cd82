// What makes a reader's console table fit 100 columns (issue 17): the parts
// of the case names that every row shares go into one header line, each row
// keeps only what varies, and long notes become numbered footnotes. `--wide`
// skips all of it and shows today's full names.
#pragma once

#include "measure/entry_summary.hpp"
#include "writers/writer.hpp"

#include <map>
#include <set>
#include <string>
#include <vector>

namespace opbench {

// The width every reader's default console table is made to fit.
inline constexpr std::size_t kConsoleColumns = 100;

// Labels split on '/' ("OP/B:1/H:2/dt:f32/case:small"): the segments every
// label holds go to `shared` (the table's header line). A label with a suite
// case name ("case:NAME") is grouped by it: its row is NAME plus what varies
// within its group ("small/dt:bf16"), and what the group shares is its
// `legend` line ("small: OP/B:1/H:2"). A
// label without one keeps what varies, joined by '/', so a row still reads
// as part of the name a filter matches.
struct SharedSegments {
    std::vector<std::string> shared; // in the first label's order
    std::vector<std::string> rows;   // one per label; "(all)" when nothing is left
    std::vector<std::string> legend; // "NAME: segments" per case name with segments of its own
};
[[nodiscard]] SharedSegments split_shared_segments(const std::vector<std::string> &labels);
// Appends the legend lines to a table's notes (wrapped by the console writer).
void add_legend(Table &t, const SharedSegments &names);

// Cuts the cells of `column` in the middle (shorten_middle) so that the table,
// drawn as render_text_table draws it (two spaces between columns, no
// indent), is at most kConsoleColumns wide; the column keeps `min_width`
// at least. Which rows a table shows can depend on the run (analyze ranks by
// time), so its widest name is not known in advance (issue 44). Returns
// whether a cell was cut.
bool fit_column(Table &t, std::size_t column, std::size_t min_width = 16);

// Notes for cells without a time: one line per distinct "status: why",
// naming the columns (backends, sets, levels) it applies to.
void add_reason_notes(Table &t, const std::map<std::string, std::set<std::string>> &reasons);

// A title followed by header lines (what every row shares), each wrapped at
// kConsoleColumns: the table formats print a title as given, so the header
// travels in it (Markdown shows its line breaks as <br>).
[[nodiscard]] std::string title_with_header(const std::string &title, const std::vector<std::string> &header);

// Quality reasons (by text) that every one of `summaries` (those with
// repetitions) gives: a loaded machine's "1 thread on 0.0 free CPUs" is the
// run's, and is said once in the header instead of in every footnote.
[[nodiscard]] std::set<std::string> common_reasons(const std::vector<const EntrySummary *> &summaries);
// The header line for them; empty when there are none.
[[nodiscard]] std::string common_reasons_line(const std::set<std::string> &common);
// A summary's verdict without the common reasons ("noisy: spread ..."), or
// empty when clean or when only common reasons are left.
[[nodiscard]] std::string verdict_beyond(const EntrySummary &s, const std::set<std::string> &common);

// Numbered footnotes, each text once: mark() gives "[n]", add_to() appends
// "[n] text" to a table's notes.
class Footnotes {
public:
    [[nodiscard]] std::string mark(const std::string &text);
    void add_to(Table &t) const;
    [[nodiscard]] bool empty() const { return texts_.empty(); }

private:
    std::vector<std::string> texts_;
    std::map<std::string, std::size_t> index_;
};

} // namespace opbench
