#include "writers/table_writers.hpp"

namespace opbench {

namespace {

// A cell is text, whatever a name holds: it may not break the row (pipes
// escaped, newlines as <br>), inject HTML (< and & as entities: no tag can
// open, so a case named <script> stays text on GitHub) or format (Markdown's
// emphasis, code and link characters escaped).
std::string cell(const std::string &s) {
    std::string out;
    for (char c : s) {
        switch (c) {
        case '\n': out += "<br>"; break;
        case '<': out += "&lt;"; break;
        case '&': out += "&amp;"; break;
        case '|':
        case '\\':
        case '*':
        case '_':
        case '`':
        case '[':
        case ']':
            out += '\\';
            out += c;
            break;
        default: out += c;
        }
    }
    return out.empty() ? " " : out;
}

} // namespace

std::string write_markdown(const Document &doc) {
    std::string out;
    for (const Table &t : doc.tables) {
        if (!out.empty()) out += "\n";
        if (!t.title.empty()) out += "### " + cell(t.title) + "\n\n";
        out += "|";
        // Appended piece by piece, not " " + cell(...): GCC 12 warns falsely
        // (-Wrestrict, PR 105329) on that concatenation inlined.
        for (const auto &c : t.columns) out.append(" ").append(cell(c)).append(" |");
        out += "\n|";
        for (std::size_t c = 0; c < t.columns.size(); ++c) out += numeric_column(t, c) ? " ---: |" : " --- |";
        out += "\n";
        for (const auto &row : t.rows) {
            out += "|";
            for (std::size_t c = 0; c < t.columns.size(); ++c)
                out.append(" ").append(cell(c < row.size() ? row[c] : "")).append(" |");
            out += "\n";
        }
        if (!t.notes.empty()) out += "\n";
        for (const auto &n : t.notes) out += cell(n) + "\n\n";
        if (!t.notes.empty()) out.pop_back();
    }
    return out;
}

} // namespace opbench
