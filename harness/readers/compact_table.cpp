#include "readers/compact_table.hpp"

#include "writers/text_wrap.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

namespace opbench {

namespace {
std::vector<std::string> segments(const std::string &label) {
    std::vector<std::string> out;
    std::size_t start = 0;
    for (;;) {
        const std::size_t slash = label.find('/', start);
        out.push_back(label.substr(start, slash == std::string::npos ? std::string::npos : slash - start));
        if (slash == std::string::npos) return out;
        start = slash + 1;
    }
}
} // namespace

SharedSegments split_shared_segments(const std::vector<std::string> &labels) {
    SharedSegments out;
    if (labels.empty()) return out;
    std::vector<std::vector<std::string>> split;
    for (const auto &l : labels) split.push_back(segments(l));
    // A single row shares everything with itself: keep its name whole.
    if (labels.size() == 1) {
        out.rows.push_back(labels[0]);
        return out;
    }
    auto in_all = [](const std::vector<const std::vector<std::string> *> &group, const std::string &seg) {
        return std::all_of(group.begin(), group.end(), [&](const std::vector<std::string> *s) {
            return std::find(s->begin(), s->end(), seg) != s->end();
        });
    };
    std::vector<const std::vector<std::string> *> everyone;
    for (const auto &s : split) everyone.push_back(&s);
    for (const auto &seg : split.front())
        if (in_all(everyone, seg) && std::find(out.shared.begin(), out.shared.end(), seg) == out.shared.end())
            out.shared.push_back(seg);
    const std::set<std::string> shared(out.shared.begin(), out.shared.end());

    // Groups by suite case name (not when every label has the same one: it
    // is shared); a label without one by its op, its first segment.
    auto case_of = [&](const std::vector<std::string> &s) {
        for (const auto &seg : s)
            if (seg.rfind("case:", 0) == 0 && !shared.count(seg)) return seg;
        return shared.count(s.front()) ? std::string() : "op:" + s.front();
    };
    std::map<std::string, std::vector<const std::vector<std::string> *>> groups;
    std::vector<std::string> group_order;
    for (const auto &s : split) {
        const std::string c = case_of(s);
        if (c.empty()) continue;
        if (!groups.count(c)) group_order.push_back(c);
        groups[c].push_back(&s);
    }
    // The group's name as a row shows it: the case name, or the op.
    auto shown = [](const std::string &c) { return c.substr(c.find(':') + 1); };
    std::map<std::string, std::set<std::string>> group_common;
    for (const auto &c : group_order) {
        const bool by_op = c.rfind("op:", 0) == 0;
        // An op with one row keeps its whole name; a case's own segments
        // always go to the legend (its name stands for them).
        if (by_op && groups[c].size() < 2) continue;
        std::vector<std::string> common;
        for (const auto &seg : *groups[c].front())
            if (seg != c && seg != shown(c) && !shared.count(seg) && in_all(groups[c], seg)) common.push_back(seg);
        group_common[c] = std::set<std::string>(common.begin(), common.end());
        if (!common.empty()) out.legend.push_back(fmt::format("{}: {}", shown(c), fmt::join(common, "/")));
    }
    for (const auto &s : split) {
        const std::string c = case_of(s);
        const bool grouped = group_common.count(c) > 0;
        std::vector<std::string> kept;
        if (!c.empty() && c.rfind("case:", 0) == 0) kept.push_back(shown(c));
        for (const auto &seg : s)
            if (!shared.count(seg) && seg != c && !(grouped && group_common[c].count(seg))) kept.push_back(seg);
        out.rows.push_back(kept.empty() ? "(all)" : fmt::format("{}", fmt::join(kept, "/")));
    }
    return out;
}

bool fit_column(Table &t, std::size_t column, std::size_t min_width) {
    if (column >= t.columns.size()) return false;
    std::vector<std::size_t> width(t.columns.size());
    for (std::size_t c = 0; c < t.columns.size(); ++c) {
        width[c] = t.columns[c].size();
        for (const auto &row : t.rows)
            if (c < row.size()) width[c] = std::max(width[c], row[c].size());
    }
    std::size_t total = 2 * (width.size() - 1);
    for (std::size_t w : width) total += w;
    if (total <= kConsoleColumns) return false;
    // Two more: the renderer counts bytes, and shorten_middle's '…' is three.
    const std::size_t excess = total - kConsoleColumns + 2;
    const std::size_t target = width[column] > excess + min_width ? width[column] - excess : min_width;
    bool cut = false;
    for (auto &row : t.rows)
        if (column < row.size() && row[column].size() > target) {
            row[column] = shorten_middle(row[column], target);
            cut = true;
        }
    return cut;
}

void add_legend(Table &t, const SharedSegments &names) {
    if (names.legend.empty()) return;
    t.notes.push_back(fmt::format("cases: {}", fmt::join(names.legend, "; ")));
}

void add_reason_notes(Table &t, const std::map<std::string, std::set<std::string>> &reasons) {
    for (const auto &[why, where] : reasons) t.notes.push_back(fmt::format("{} ({})", why, fmt::join(where, ", ")));
}

std::string title_with_header(const std::string &title, const std::vector<std::string> &header) {
    std::string out = title;
    for (const auto &line : header) {
        std::string current = "  "; // a header line's indent; its continuations get 4
        bool empty = true;
        std::size_t start = 0;
        while (start < line.size()) {
            std::size_t end = line.find(' ', start);
            if (end == std::string::npos) end = line.size();
            const std::string word = line.substr(start, end - start);
            if (!empty && current.size() + 1 + word.size() > kConsoleColumns) {
                out += "\n" + current;
                current = "    ";
                empty = true;
            }
            current += (empty ? "" : " ") + word;
            empty = false;
            start = end + 1;
        }
        out += "\n" + current;
    }
    return out;
}

std::set<std::string> common_reasons(const std::vector<const EntrySummary *> &summaries) {
    std::set<std::string> common;
    bool first = true;
    for (const EntrySummary *s : summaries) {
        if (s->repetitions == 0) continue;
        std::set<std::string> mine;
        for (const auto &r : s->reasons) mine.insert(r.text);
        if (first) {
            common = mine;
            first = false;
        } else {
            std::set<std::string> both;
            for (const auto &t : common)
                if (mine.count(t)) both.insert(t);
            common = std::move(both);
        }
    }
    return common;
}

std::string common_reasons_line(const std::set<std::string> &common) {
    return common.empty() ? std::string() : fmt::format("every entry: {}", fmt::join(common, "; "));
}

std::string verdict_beyond(const EntrySummary &s, const std::set<std::string> &common) {
    std::vector<std::string> left;
    for (const auto &r : s.reasons)
        if (!common.count(r.text)) left.push_back(r.text);
    return left.empty() ? std::string() : fmt::format("{}: {}", s.flag(), fmt::join(left, "; "));
}

std::string Footnotes::mark(const std::string &text) {
    auto [it, inserted] = index_.emplace(text, texts_.size() + 1);
    if (inserted) texts_.push_back(text);
    return fmt::format("[{}]", it->second);
}

void Footnotes::add_to(Table &t) const {
    for (std::size_t i = 0; i < texts_.size(); ++i) t.notes.push_back(fmt::format("[{}] {}", i + 1, texts_[i]));
}

} // namespace opbench
