#include "suite/toml_guard.hpp"

#include <boost/locale/utf.hpp>
#include <fmt/format.h>

#include <vector>

namespace opbench {
namespace {

constexpr std::string_view kByteOrderMark = "\xEF\xBB\xBF"; // TOML++ skips it at the start
constexpr char kStandIn = '~'; // valid in strings and comments only, as non-ASCII text is

// One code point of the text, where it stands.
struct CodePoint {
    char32_t value;
    std::size_t byte; // offset of its first byte
    int line;
    int column;
};

// Decodes the text (after a leading byte order mark) into code points with
// their positions; throws TomlSyntaxError at the first byte that is not UTF-8.
std::vector<CodePoint> decode_utf8(std::string_view text) {
    using utf = boost::locale::utf::utf_traits<char>;
    std::vector<CodePoint> out;
    const char *p = text.data();
    const char *const end = text.data() + text.size();
    if (text.substr(0, kByteOrderMark.size()) == kByteOrderMark) p += kByteOrderMark.size();
    int line = 1, column = 1;
    while (p != end) {
        const char *start = p;
        const auto c = utf::decode(p, end);
        if (c == boost::locale::utf::illegal || c == boost::locale::utf::incomplete)
            throw TomlSyntaxError(line, column,
                                  fmt::format("the text is not UTF-8 (byte 0x{:02X} starts no valid sequence); "
                                              "TOML files must be UTF-8",
                                              static_cast<unsigned char>(*start)));
        out.push_back({static_cast<char32_t>(c), static_cast<std::size_t>(start - text.data()), line, column});
        if (c == U'\n') {
            ++line;
            column = 1;
        } else {
            ++column;
        }
    }
    return out;
}

// The text with each non-ASCII code point replaced by kStandIn: one
// character for one code point, so lines and columns stay the same.
std::string ascii_stand_in(std::string_view text, const std::vector<CodePoint> &code_points) {
    std::string out(text.substr(0, text.substr(0, kByteOrderMark.size()) == kByteOrderMark ? kByteOrderMark.size() : 0));
    out.reserve(text.size());
    for (const auto &cp : code_points) out.push_back(cp.value < 0x80 ? static_cast<char>(cp.value) : kStandIn);
    return out;
}

const CodePoint *code_point_at(const std::vector<CodePoint> &code_points, int line, int column) {
    for (const auto &cp : code_points)
        if (cp.line == line && cp.column == column) return &cp;
    return nullptr;
}

// "a non-ASCII character 'é' (U+00E9)"
std::string describe_non_ascii(std::string_view text, const CodePoint &cp) {
    std::size_t length = 1;
    while (cp.byte + length < text.size() && (static_cast<unsigned char>(text[cp.byte + length]) & 0xC0) == 0x80)
        ++length;
    return fmt::format("a non-ASCII character '{}' (U+{:04X})", text.substr(cp.byte, length),
                       static_cast<std::uint32_t>(cp.value));
}

TomlSyntaxError from_parse_error(const toml::parse_error &e) {
    return TomlSyntaxError(static_cast<int>(e.source().begin.line), static_cast<int>(e.source().begin.column),
                           std::string(e.description()));
}

// In text that is valid TOML, the first non-ASCII character that follows a
// line-ending backslash in a multi-line basic string (TOML++ trims the
// whitespace after the backslash through the faulty lookup). Valid TOML has
// quotes outside strings and comments only where a string opens, so a plain
// scan finds the strings exactly.
const CodePoint *non_ascii_after_line_ending_backslash(const std::vector<CodePoint> &cps) {
    enum class State { Normal, Comment, Basic, Literal, MultiBasic, MultiLiteral } state = State::Normal;
    const auto n = cps.size();
    auto run_of = [&](std::size_t i, char32_t c) {
        std::size_t k = 0;
        while (i + k < n && cps[i + k].value == c) ++k;
        return k;
    };
    auto is_blank = [](char32_t c) { return c == U' ' || c == U'\t' || c == U'\r' || c == U'\n'; };
    for (std::size_t i = 0; i < n;) {
        const char32_t c = cps[i].value;
        switch (state) {
        case State::Normal:
            if (c == U'#') state = State::Comment;
            else if (c == U'"' || c == U'\'') {
                const bool multi = run_of(i, c) >= 3;
                state = c == U'"' ? (multi ? State::MultiBasic : State::Basic)
                                  : (multi ? State::MultiLiteral : State::Literal);
                i += multi ? 3 : 1;
                continue;
            }
            break;
        case State::Comment:
            if (c == U'\n') state = State::Normal;
            break;
        case State::Basic:
            if (c == U'\\') ++i; // the escaped character
            else if (c == U'"') state = State::Normal;
            break;
        case State::Literal:
            if (c == U'\'') state = State::Normal;
            break;
        case State::MultiBasic:
            if (c == U'\\' && i + 1 < n && is_blank(cps[i + 1].value)) {
                ++i;
                while (i < n && is_blank(cps[i].value)) ++i;
                if (i < n && cps[i].value >= 0x80) return &cps[i];
                continue;
            }
            if (c == U'\\') ++i;
            else if (c == U'"' && run_of(i, c) >= 3) {
                i += run_of(i, c); // the delimiter and up to two quotes of content before it
                state = State::Normal;
                continue;
            }
            break;
        case State::MultiLiteral:
            if (c == U'\'' && run_of(i, c) >= 3) {
                i += run_of(i, c);
                state = State::Normal;
                continue;
            }
            break;
        }
        ++i;
    }
    return nullptr;
}

} // namespace

toml::table parse_toml_safely(std::string_view text, std::string_view source_name) {
    const auto code_points = decode_utf8(text);
    try {
        (void)toml::parse(ascii_stand_in(text, code_points), source_name);
    } catch (const toml::parse_error &e) {
        auto error = from_parse_error(e);
        if (const auto *cp = code_point_at(code_points, error.line(), error.column()); cp && cp->value >= 0x80)
            throw TomlSyntaxError(error.line(), error.column(),
                                  describe_non_ascii(text, *cp) +
                                      " outside a string or comment; TOML allows non-ASCII text only inside "
                                      "quoted strings and comments");
        throw error;
    }
    if (const auto *cp = non_ascii_after_line_ending_backslash(code_points))
        throw TomlSyntaxError(
            cp->line, cp->column,
            describe_non_ascii(text, *cp) +
                " right after a line-ending backslash, which TOML++ 3.3.0 cannot read; write it as a \\u "
                "escape or put an ASCII character before it");
    try {
        return toml::parse(text, source_name);
    } catch (const toml::parse_error &e) {
        throw from_parse_error(e);
    }
}

} // namespace opbench
