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

// Walks the text byte by byte as TOML++'s lexer sees it (outside strings,
// in comments, in each kind of string), keeping line and column current.
class NonAsciiScan {
public:
    explicit NonAsciiScan(std::string_view text) : text_(text) {
        if (starts("\xEF\xBB\xBF")) i_ = 3; // a UTF-8 byte order mark, which TOML++ skips
    }

    std::optional<TomlTextProblem> run() {
        while (i_ < text_.size()) {
            std::optional<TomlTextProblem> found;
            switch (state_) {
            case State::Normal: found = normal(); break;
            case State::Comment: comment(); break;
            case State::Basic: basic(); break;
            case State::Literal: literal(); break;
            case State::MultiBasic: found = multi_basic(); break;
            case State::MultiLiteral: multi_literal(); break;
            }
            if (found) return found;
        }
        return std::nullopt;
    }

private:
    enum class State { Normal, Comment, Basic, Literal, MultiBasic, MultiLiteral };
    std::string_view text_;
    State state_ = State::Normal;
    TokenStarts tokens_;
    int line_ = 1, column_ = 0;
    std::size_t i_ = 0;

    unsigned char current() const { return static_cast<unsigned char>(text_[i_]); }
    // Advances over one byte, keeping line and column (code points) current.
    void step() {
        const auto c = static_cast<unsigned char>(text_[i_++]);
        if (c == '\n') {
            ++line_;
            column_ = 0;
        } else if ((c & 0xC0) != 0x80) {
            ++column_; // not a UTF-8 continuation byte: a new code point
        }
    }
    bool starts(std::string_view s) const { return text_.substr(i_, s.size()) == s; }
    TomlTextProblem problem(const char *where) {
        step(); // the column of the offending character itself
        return TomlTextProblem{line_, column_,
                               std::string("a non-ASCII character ") + where +
                                   "; TOML allows non-ASCII text only inside quoted strings and comments"};
    }

    std::optional<TomlTextProblem> normal() {
        const auto c = current();
        if (c >= 0x80) return problem("outside a string or comment");
        if (c == '#') {
            state_ = State::Comment;
        } else if ((c == '"' || c == '\'') && tokens_.string_may_start_here()) {
            if (starts("\"\"\"")) {
                step();
                step();
                state_ = State::MultiBasic;
            } else if (starts("'''")) {
                step();
                step();
                state_ = State::MultiLiteral;
            } else
                state_ = c == '"' ? State::Basic : State::Literal;
            tokens_.saw_string();
        } else {
            tokens_.saw(static_cast<char>(c));
        }
        step();
        return std::nullopt;
    }
    void comment() {
        if (current() == '\n') {
            state_ = State::Normal;
            tokens_.saw('\n');
        }
        step();
    }
    void basic() {
        const auto c = current();
        if (c == '\\' && i_ + 1 < text_.size())
            step(); // the escaped character
        else if (c == '"' || c == '\n')
            state_ = State::Normal;
        step();
    }
    void literal() {
        const auto c = current();
        if (c == '\'' || c == '\n') state_ = State::Normal;
        step();
    }
    std::optional<TomlTextProblem> multi_basic() {
        if (current() == '\\') {
            step();
            // A line-ending backslash trims the whitespace that follows,
            // through the same faulty lookup.
            std::size_t j = i_;
            while (j < text_.size() && (text_[j] == ' ' || text_[j] == '\t' || text_[j] == '\r')) ++j;
            if (j < text_.size() && text_[j] == '\n') {
                while (i_ < text_.size() &&
                       (text_[i_] == ' ' || text_[i_] == '\t' || text_[i_] == '\r' || text_[i_] == '\n'))
                    step();
                if (i_ < text_.size() && current() >= 0x80) return problem("right after a line-ending backslash");
            } else if (i_ < text_.size()) {
                step(); // the escaped character
            }
        } else if (starts("\"\"\"")) {
            while (i_ < text_.size() && text_[i_] == '"') step(); // """ plus up to two quotes of content
            state_ = State::Normal;
        } else {
            step();
        }
        return std::nullopt;
    }
    void multi_literal() {
        if (starts("'''")) {
            while (i_ < text_.size() && text_[i_] == '\'') step();
            state_ = State::Normal;
        } else {
            step();
        }
    }
};

} // namespace

std::optional<TomlTextProblem> find_non_ascii_outside_strings(std::string_view text) {
    return NonAsciiScan(text).run();
}

} // namespace opbench
