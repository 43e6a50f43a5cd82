// A guard in front of TOML++ 3.3.0 (Debian 12's): its parser classifies a
// non-ASCII code point met where whitespace may stand with a lookup that can
// fall through to __builtin_unreachable() (undefined behaviour; found by
// tests/fuzz/fuzz_suite.cpp, upstream marzer/tomlplusplus#295 and #190,
// fixed after 3.3.0). TOML allows non-ASCII text only inside strings and
// comments, so such a character is a syntax error anyway: this check finds
// it first and says so, and the parser never reaches the faulty lookup. A
// quote counts as opening a string only where TOML++ would open one (where a
// key or value begins): inside a bare token such as `x = 1'''` the parser
// reads on through the quote (fuzz_suite's second finding).
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace opbench {

struct TomlTextProblem {
    int line = 0;   // 1-based
    int column = 0; // 1-based, in code points
    std::string message;
};

// The first non-ASCII byte outside a string or comment, or right after a
// line-ending backslash in a multi-line basic string; nullopt when none.
[[nodiscard]] std::optional<TomlTextProblem> find_non_ascii_outside_strings(std::string_view text);

} // namespace opbench
