// parse_toml_safely, the way into TOML++ 3.3.0: non-ASCII text outside
// strings and comments is refused with its position before the parser's
// undefined behaviour can be reached; inside strings and comments it is read
// as TOML says. Every fuzz_suite finding so far is a case here.
#include "suite/toml_guard.hpp"

#include "suite/suite.hpp"

#include <gtest/gtest.h>

#include <string>

using namespace opbench;

namespace {

// The error parse_toml_safely throws for the text; fails the test when it parses.
TomlSyntaxError refusal(std::string_view text) {
    try {
        (void)parse_toml_safely(text, "t.toml");
    } catch (const TomlSyntaxError &e) {
        return e;
    }
    ADD_FAILURE() << "accepted: " << text;
    return TomlSyntaxError(0, 0, "");
}

bool mentions(const TomlSyntaxError &e, std::string_view what) {
    return std::string(e.what()).find(what) != std::string::npos;
}

} // namespace

TEST(TomlGuard, LeavesNonAsciiInStringsAndCommentsAlone) {
    for (const char *ok :
         {"name = \"gpt-2 \xc3\xa9\"\n", "# caf\xc3\xa9\nx = 1\n", "x = 'caf\xc3\xa9'\n",
          "x = \"\"\"\ncaf\xc3\xa9\n\"\"\"\n", "x = '''\xc3\xa9'''\n", "\"\xc3\xa9\" = 1\n", "x = \"a\\\"\xc3\xa9\"\n",
          "x = \"\"\"a\\\"\"\"\xc3\xa9\"\"\"\n", "x = \"\"\"\"\xc3\xa9\"\"\"\"\n", "\xEF\xBB\xBFx = 1\n",
          "x = \"\"\"\\\n  a\xc3\xa9\"\"\"\n"})
        EXPECT_NO_THROW((void)parse_toml_safely(ok, "t.toml")) << ok;
    const auto t = parse_toml_safely("name = \"caf\xc3\xa9\" # \xc3\xa9\n", "t.toml");
    EXPECT_EQ(t["name"].value_or(std::string()), "caf\xc3\xa9") << "the real text is parsed, not the stand-in";
}

TEST(TomlGuard, FindsNonAsciiOutsideStringsWithItsPosition) {
    auto e = refusal("[suite]\na = 1 \xc2\xa7\n");
    EXPECT_EQ(e.line(), 2);
    EXPECT_EQ(e.column(), 7);
    EXPECT_TRUE(mentions(e, "a non-ASCII character '\xc2\xa7' (U+00A7) outside a string or comment")) << e.what();

    // What the fuzzer found: a mangled byte order mark, and toml++ #295's two bytes.
    e = refusal("\xef\xbb\xa3x = 1\n");
    EXPECT_EQ(e.line(), 1);
    EXPECT_EQ(e.column(), 1);
    EXPECT_TRUE(mentions(e, "U+FEE3")) << e.what();
    e = refusal("\xcc\xaa");
    EXPECT_TRUE(mentions(e, "U+032A")) << e.what();
    EXPECT_TRUE(mentions(refusal("x = \"a\"\xc3\xa9\n"), "U+00E9")) << "after a string closes";
    EXPECT_TRUE(mentions(refusal("x = 'a'\n\xc3\xa9\n"), "U+00E9"));
}

TEST(TomlGuard, RefusesTextThatIsNotUtf8) {
    const auto e = refusal("x = \"a\"\ny = \"\xd4z\"\n");
    EXPECT_EQ(e.line(), 2);
    EXPECT_EQ(e.column(), 6);
    EXPECT_TRUE(mentions(e, "not UTF-8 (byte 0xD4")) << e.what();
}

TEST(TomlGuard, RefusesNonAsciiRightAfterALineEndingBackslash) {
    // toml++ #190: s = """\<newline>§""" is valid TOML that 3.3.0 cannot read.
    const auto e = refusal("s = \"\"\"\\\n\xc2\xa7\"\"\"\n");
    EXPECT_EQ(e.line(), 2);
    EXPECT_EQ(e.column(), 1);
    EXPECT_TRUE(mentions(e, "line-ending backslash")) << e.what();
}

TEST(TomlGuard, TheSuiteLoaderReportsItAsASyntaxError) {
    try {
        (void)parse_suite("[suite]\nname = \"s\" \xef\xbc\x83\n", "t.toml");
        FAIL() << "accepted";
    } catch (const SuiteError &e) {
        EXPECT_EQ(e.where().line, 2);
        EXPECT_EQ(e.where().column, 12);
        EXPECT_NE(std::string(e.what()).find("TOML syntax error: a non-ASCII character"), std::string::npos)
            << e.what();
    }
}

TEST(TomlGuard, EveryFuzzFindingIsRefused) {
    const std::string findings[] = {
        // A quote inside a bare token opens no string for TOML++: it reads the
        // token `1\x02 6'''66==` on and classifies the U+00FD after it.
        "[suite]\nx = 1\x02"
        "6'''66==\xc3\xbd==\n",
        "x = 1.'\xc3\xa9'\n", "x = true\"\xc3\xa9\"\n", "x = [1\"\xc3\xa9\"]\n", "name =0\x15\x15[\"\xc3\xbd\"]\n",
        "x = 1{\"\xc3\xa9\" = 1}\n",
        // The fourth finding (CI, 2026-11-25): a multi-line string where a key
        // stands, then quotes an earlier guard paired differently from TOML++.
        std::string("\"\"\"b\"\nrf\"yyyyyy[sui!te]\n\"a\\\xc4\x83/o\x19V\0\0u000\xd4"
                    "b\"\nrf\"na\"\"ows = 1\nco \xa8seq_kv\x93\x8c = 1\n",
                    75),
        // the same without its bytes that are not UTF-8
        std::string("\"\"\"b\"\nrf\"yyyyyy[sui!te]\n\"a\\\xc4\x83/o\x19V\0\0u000b\"\nrf\"na\"\"ows = 1\n", 57),
    };
    for (const auto &bad : findings) (void)refusal(bad);
}

TEST(TomlGuard, StringsWhereverTomlAllowsThemStayAccepted) {
    for (const char *ok :
         {"a.\"\xc3\xa9\" = 1\n", "a . '\xc3\xa9' = 1\n", "[\"\xc3\xa9\"]\nx = 1\n", "[[a.'\xc3\xa9']]\nx = 1\n",
          "x = [\"\xc3\xa9\", '\xc3\xbc']\n", "x = [\n  \"\xc3\xa9\", # c\xc3\xa9\n  '\xc3\xbc',\n]\n",
          "x = { \"\xc3\xa9\" = 1, b.'\xc3\xbc' = \"\xc3\xbd\" }\n", "x = [[\"\xc3\xa9\"], ['\xc3\xbc']]\n",
          "# c\xc3\xa9\n\"\xc3\xa9\" = 1\n", "x = 1 # '\n\"\xc3\xa9\" = 2\n"})
        EXPECT_NO_THROW((void)parse_toml_safely(ok, "t.toml")) << ok;
}
