// Table formats: console (aligned text), Markdown (GitHub tables, for PR
// comments and $GITHUB_STEP_SUMMARY) and CSV (RFC 4180, for spreadsheets).
// Each formats Document.tables; the data is the json writer's.
#pragma once

#include "writers/writer.hpp"

namespace opbench {

// Each table: its title, the header, a rule, the rows with columns aligned
// (right for numbers), then its notes. Tables separated by a blank line.
[[nodiscard]] std::string write_console(const Document &doc);
// The widest row of `t` as write_console lays it out (its header, rule and
// rows; not its title or notes, which wrap).
[[nodiscard]] std::size_t console_table_width(const Table &t);

// Each table: "### title", a pipe table (numeric columns right-aligned),
// notes as paragraphs.
[[nodiscard]] std::string write_markdown(const Document &doc);

// Each table: a header row and its rows, RFC 4180 quoting; several tables
// are separated by one empty line (a single table is a plain CSV file).
// Titles and notes are not part of CSV.
[[nodiscard]] std::string write_csv(const Document &doc);

// Whether every filled cell of column `col` reads as a number ("1.02",
// "+3.4%", "12.5 us", "3.1x"): such columns are right-aligned.
[[nodiscard]] bool numeric_column(const Table &t, std::size_t col);

} // namespace opbench
