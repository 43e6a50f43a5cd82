#include "writers/table_writers.hpp"
#include "writers/text_wrap.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

namespace opbench {

namespace {

std::size_t width(const std::string &s) { return display_width(s); }

std::string pad(const std::string &s, std::size_t w, bool right) {
    const std::size_t fill = w > width(s) ? w - width(s) : 0;
    return right ? std::string(fill, ' ') + s : s + std::string(fill, ' ');
}

// A note longer than a 100-column terminal, wrapped at spaces; the lines
// after the first are indented under its text.
std::string wrapped_note(const std::string &note, std::size_t indent = 2, std::size_t hanging = 6) {
    return wrap_words(note, hanging, indent);
}

// A terminal's width: the rule under the header stops there.
constexpr std::size_t kConsoleColumns = 100;

// The rule's cells: as wide as each column, except a last, text column (a
// sentence per row, as analyze's details) whose rule ends at kConsoleColumns
// rather than drawing a line wider than the terminal.
std::vector<std::string> rule_cells(const Table &t, const std::vector<std::size_t> &w, const std::vector<bool> &right) {
    std::vector<std::string> rule;
    std::size_t before = 1; // the line's leading space
    for (std::size_t c = 0; c < t.columns.size(); ++c) {
        std::size_t len = w[c];
        if (c + 1 == t.columns.size() && !right[c]) {
            const std::size_t room = kConsoleColumns > before + 1 ? kConsoleColumns - before - 1 : 0;
            len = std::max(width(t.columns[c]), std::min(w[c], room));
        }
        rule.push_back(std::string(len, '-'));
        before += 1 + w[c];
    }
    return rule;
}

} // namespace

bool numeric_column(const Table &t, std::size_t col) {
    // Numeric when most filled cells are numbers: a status word ("skipped")
    // among times does not make a column text.
    std::size_t numbers = 0, words = 0;
    for (const auto &row : t.rows) {
        if (col >= row.size()) continue;
        const std::string &cell = row[col];
        if (cell.empty() || cell == "-") continue;
        const unsigned char first = static_cast<unsigned char>(cell[0]);
        const bool number =
            std::isdigit(first) || ((first == '+' || first == '-' || first == '.') && cell.size() > 1 &&
                                    (std::isdigit(static_cast<unsigned char>(cell[1])) || cell[1] == '.'));
        ++(number ? numbers : words);
    }
    return numbers > 0 && numbers >= words;
}

std::size_t console_table_width(const Table &t) {
    std::size_t total = 1; // the line's leading space
    for (std::size_t c = 0; c < t.columns.size(); ++c) {
        std::size_t w = width(t.columns[c]);
        for (const auto &row : t.rows)
            if (c < row.size()) w = std::max(w, width(row[c]));
        total += 1 + w;
    }
    return total;
}

std::string write_console(const Document &doc) {
    std::string out;
    for (const Table &t : doc.tables) {
        if (!out.empty()) out += "\n";
        if (!t.title.empty()) out += t.title + "\n";
        std::vector<std::size_t> w(t.columns.size(), 0);
        std::vector<bool> right(t.columns.size(), false);
        for (std::size_t c = 0; c < t.columns.size(); ++c) {
            w[c] = width(t.columns[c]);
            for (const auto &row : t.rows)
                if (c < row.size()) w[c] = std::max(w[c], width(row[c]));
            right[c] = numeric_column(t, c);
        }
        auto line = [&](const std::vector<std::string> &cells) {
            std::string l = " ";
            for (std::size_t c = 0; c < t.columns.size(); ++c) {
                const std::string cell = c < cells.size() ? cells[c] : "";
                // Not " " + pad(...): GCC 12 warns falsely on it (-Wrestrict, PR 105329).
                l.append(" ").append(pad(cell, w[c], right[c]));
            }
            while (!l.empty() && l.back() == ' ') l.pop_back();
            return l + "\n";
        };
        out += line(t.columns);
        out += line(rule_cells(t, w, right));
        for (const auto &row : t.rows) out += line(row);
        if (t.rows.empty()) out += "  (none)\n";
        for (const auto &n : t.notes) out += wrapped_note(n);
    }
    return out;
}

std::string render_text_table(const Table &table) {
    std::vector<std::size_t> width(table.columns.size(), 0);
    for (std::size_t c = 0; c < table.columns.size(); ++c) width[c] = table.columns[c].size();
    for (const auto &row : table.rows)
        for (std::size_t c = 0; c < row.size() && c < width.size(); ++c) width[c] = std::max(width[c], row[c].size());
    // Text columns (names, kinds) read left-aligned, figures right-aligned: a
    // column is text when none of its cells starts with a digit.
    std::vector<bool> left(width.size(), true);
    for (const auto &row : table.rows)
        for (std::size_t c = 0; c < row.size() && c < left.size(); ++c)
            if (!row[c].empty() && std::isdigit(static_cast<unsigned char>(row[c].front()))) left[c] = false;
    if (!left.empty()) left[0] = true;
    std::string out;
    if (!table.title.empty()) out += table.title + "\n";
    auto line = [&](const std::vector<std::string> &cells) {
        std::string l;
        for (std::size_t c = 0; c < width.size(); ++c) {
            const std::string &cell = c < cells.size() ? cells[c] : std::string();
            if (c > 0) l += "  ";
            l += left[c] ? fmt::format("{:<{}}", cell, width[c]) : fmt::format("{:>{}}", cell, width[c]);
        }
        while (!l.empty() && l.back() == ' ') l.pop_back();
        out += l + "\n";
    };
    line(table.columns);
    std::size_t total = 0;
    for (std::size_t w : width) total += w + 2;
    out += std::string(total > 2 ? total - 2 : 0, '-') + "\n";
    for (const auto &row : table.rows) line(row);
    for (const auto &note : table.notes) out += wrapped_note(note, 0, 2);
    return out;
}

} // namespace opbench
