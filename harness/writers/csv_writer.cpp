#include "writers/table_writers.hpp"

namespace opbench {

namespace {

// RFC 4180: quote a field holding a comma, quote, CR or LF, or leading or
// trailing spaces; double the quotes inside.
std::string field(const std::string &s) {
    const bool quote =
        s.find_first_of(",\"\r\n") != std::string::npos || (!s.empty() && (s.front() == ' ' || s.back() == ' '));
    if (!quote) return s;
    std::string out = "\"";
    for (char c : s) {
        if (c == '"') out += '"';
        out += c;
    }
    return out + "\"";
}

std::string row(const std::vector<std::string> &cells, std::size_t columns) {
    std::string out;
    for (std::size_t c = 0; c < columns; ++c) {
        if (c) out += ",";
        out += field(c < cells.size() ? cells[c] : "");
    }
    return out + "\r\n";
}

} // namespace

std::string write_csv(const Document &doc) {
    std::string out;
    if (!doc.records.columns.empty()) {
        out += row(doc.records.columns, doc.records.columns.size());
        for (const auto &r : doc.records.rows) out += row(r, doc.records.columns.size());
        return out;
    }
    for (const Table &t : doc.tables) {
        if (!out.empty()) out += "\r\n";
        out += row(t.columns, t.columns.size());
        for (const auto &r : t.rows) out += row(r, t.columns.size());
    }
    return out;
}

} // namespace opbench
