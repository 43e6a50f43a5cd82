#include "suite/toml_guard.hpp"

#include <vector>

namespace opbench {
namespace {

// Where a quote opens a string. TOML++ does so only where a key or a value
// begins; elsewhere (inside a bare number, date or word) it scans the quote
// as part of that token and goes on to the characters after it through the
// faulty lookup, so such a quote must not hide what follows it. Exact for
// valid TOML; on invalid text it errs towards "not a string", and TOML++
// stops at its first error anyway.
class TokenStarts {
public:
    [[nodiscard]] bool string_may_start_here() const {
        if (in_bare_value_) return false;
        switch (previous_) {
        case '\n':
        case '=':
        case '[':
        case ',':
        case '{': return true;
        case '.': return in_key_; // a dotted key: a."b"; in a value it is a number's point
        default: return false;
        }
    }
    void saw_string() { previous_ = '"'; }
    // Every character outside strings and comments.
    void saw(char c) {
        // A bare value (number, date, boolean; or garbage) runs to a value
        // terminator for TOML++: a bracket or quote inside it is part of it.
        if (in_bare_value_) {
            if (c != ' ' && c != '\t' && c != '\r' && c != '\n' && c != ',' && c != ']' && c != '}') {
                previous_ = c;
                return;
            }
            in_bare_value_ = false;
        }
        switch (c) {
        case ' ':
        case '\t':
        case '\r': return; // whitespace keeps the previous token
        case '\n':
            if (nesting_.empty()) in_key_ = true; // a new line at the top level starts with a key
            break;
        case '=': in_key_ = false; break;
        case '{':
            nesting_.push_back('{');
            in_key_ = true;
            break;
        case '[':
            if (nesting_.empty() && previous_ == '\n') {
                nesting_.push_back('H');
                in_key_ = true;
            } // [table]
            else if (!nesting_.empty() && nesting_.back() == 'H' && previous_ == '[')
                nesting_.push_back('H'); // [[
            else {
                nesting_.push_back('[');
                in_key_ = false;
            } // an array
            break;
        case ',': in_key_ = !nesting_.empty() && nesting_.back() == '{'; break;
        case ']':
        case '}':
            if (!nesting_.empty()) nesting_.pop_back();
            in_key_ = false;
            break;
        default:
            if (!in_key_) in_bare_value_ = true;
            break;
        }
        previous_ = c;
    }

private:
    char previous_ = '\n'; // the last character outside whitespace; the text starts like a line
    bool in_key_ = true;
    bool in_bare_value_ = false; // inside a value that is not a string, array or inline table
    std::vector<char> nesting_;  // H: a table header's brackets, [: an array, {: an inline table
};

} // namespace

std::optional<TomlTextProblem> find_non_ascii_outside_strings(std::string_view text) {
    enum class State { Normal, Comment, Basic, Literal, MultiBasic, MultiLiteral };
    State state = State::Normal;
    TokenStarts tokens;
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
            if (c == '#') {
                state = State::Comment;
            } else if ((c == '"' || c == '\'') && tokens.string_may_start_here()) {
                if (starts("\"\"\"")) {
                    step();
                    step();
                    state = State::MultiBasic;
                } else if (starts("'''")) {
                    step();
                    step();
                    state = State::MultiLiteral;
                } else
                    state = c == '"' ? State::Basic : State::Literal;
                tokens.saw_string();
            } else {
                tokens.saw(static_cast<char>(c));
            }
            step();
            break;
        case State::Comment:
            if (c == '\n') {
                state = State::Normal;
                tokens.saw('\n');
            }
            step();
            break;
        case State::Basic:
            if (c == '\\' && i + 1 < text.size())
                step(); // the escaped character
            else if (c == '"' || c == '\n')
                state = State::Normal;
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
                    while (i < text.size() && (text[i] == ' ' || text[i] == '\t' || text[i] == '\r' || text[i] == '\n'))
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
