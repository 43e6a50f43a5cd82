// TOML parsing in front of TOML++ 3.3.0 (Debian 12's). Its parser classifies
// a non-ASCII code point met where whitespace may stand with a lookup that
// can fall through to __builtin_unreachable() (undefined behaviour; found by
// tests/fuzz/fuzz_suite.cpp, upstream marzer/tomlplusplus#295 and #190,
// fixed by #305 after 3.3.0).
//
// TOML allows non-ASCII text only inside strings and comments, so the text
// is first parsed as an ASCII stand-in: every non-ASCII code point replaced
// by '~', a character that, like them, is valid only in strings and
// comments. TOML++ itself decides where strings are, and a non-ASCII
// character outside one is reported at its own position. Once the stand-in
// parses, the one place left where valid text reaches the faulty lookup (a
// line-ending backslash followed by a non-ASCII character) is refused, and
// only then is the real text parsed.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

#include <toml++/toml.h>

namespace opbench {

// A syntax error with its position (1-based line; column in code points).
class TomlSyntaxError : public std::runtime_error {
public:
    TomlSyntaxError(int line, int column, const std::string &message)
        : std::runtime_error(message), line_(line), column_(column) {}
    [[nodiscard]] int line() const { return line_; }
    [[nodiscard]] int column() const { return column_; }

private:
    int line_;
    int column_;
};

// Parses UTF-8 TOML text; throws TomlSyntaxError for text that is not UTF-8,
// not TOML, or that TOML++ 3.3.0 cannot read safely.
[[nodiscard]] toml::table parse_toml_safely(std::string_view text, std::string_view source_name);

} // namespace opbench
