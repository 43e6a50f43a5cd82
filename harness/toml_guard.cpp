#include "toml_guard.hpp"

namespace opbench {

std::optional<TomlTextProblem> find_non_ascii_outside_strings(std::string_view text) {
    enum class State { Normal, Comment, Basic, Literal, MultiBasic, MultiLiteral };
    State state = State::Normal;
    int line = 1, column = 0;
    std::size_t i = 0;
    // Advances over one byte, keeping line and column (code points) current.
    auto step = [&] {
        const auto c = static_cast<unsigned char>(text[i++]);
        if (c == '\n') {
            ++line;
            column = 0;
        } else if ((c & 0xC0) != 0x80) {
            ++column; // not a UTF-8 continuation byte: a new code point
        }
    };
    auto starts = [&](std::string_view s) { return text.substr(i, s.size()) == s; };
    if (starts("\xEF\xBB\xBF")) i = 3; // a UTF-8 byte order mark, which TOML++ skips
    auto problem = [&](const char *where) {
        step(); // the column of the offending character itself
        return TomlTextProblem{line, column,
                               std::string("a non-ASCII character ") + where +
                                   "; TOML allows non-ASCII text only inside quoted strings and comments"};
    };
    while (i < text.size()) {
        const auto c = static_cast<unsigned char>(text[i]);
        switch (state) {
        case State::Normal:
            if (c >= 0x80) return problem("outside a string or comment");
            if (c == '#') state = State::Comment;
            else if (starts("\"\"\"")) { step(); step(); state = State::MultiBasic; }
            else if (starts("'''")) { step(); step(); state = State::MultiLiteral; }
            else if (c == '"') state = State::Basic;
            else if (c == '\'') state = State::Literal;
            step();
            break;
        case State::Comment:
            if (c == '\n') state = State::Normal;
            step();
            break;
        case State::Basic:
            if (c == '\\' && i + 1 < text.size()) step(); // the escaped character
            else if (c == '"' || c == '\n') state = State::Normal;
            step();
            break;
        case State::Literal:
            if (c == '\'' || c == '\n') state = State::Normal;
            step();
            break;
        case State::MultiBasic:
            if (c == '\\') {
                step();
                // A line-ending backslash trims the whitespace that follows,
                // through the same faulty lookup.
                std::size_t j = i;
                while (j < text.size() && (text[j] == ' ' || text[j] == '\t' || text[j] == '\r')) ++j;
                if (j < text.size() && text[j] == '\n') {
                    while (i < text.size() && (text[i] == ' ' || text[i] == '\t' || text[i] == '\r' ||
                                               text[i] == '\n'))
                        step();
                    if (i < text.size() && static_cast<unsigned char>(text[i]) >= 0x80)
                        return problem("right after a line-ending backslash");
                } else if (i < text.size()) {
                    step(); // the escaped character
                }
            } else if (starts("\"\"\"")) {
                while (i < text.size() && text[i] == '"') step(); // """ plus up to two quotes of content
                state = State::Normal;
            } else {
                step();
            }
            break;
        case State::MultiLiteral:
            if (starts("'''")) {
                while (i < text.size() && text[i] == '\'') step();
                state = State::Normal;
            } else {
                step();
            }
            break;
        }
    }
    return std::nullopt;
}

} // namespace opbench
