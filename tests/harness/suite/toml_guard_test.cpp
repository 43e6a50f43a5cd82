// The guard in front of TOML++ 3.3.0: non-ASCII text outside strings and
// comments is refused with its position before the parser's undefined
// behaviour can be reached; inside strings and comments it is left alone.
#include "suite/toml_guard.hpp"

#include "suite/suite.hpp"

#include <gtest/gtest.h>
#include <toml++/toml.h>

using namespace opbench;

TEST(TomlGuard, LeavesNonAsciiInStringsAndCommentsAlone) {
    for (const char *ok :
         {"name = \"gpt-2 \xc3\xa9\"\n", "# caf\xc3\xa9\nx = 1\n", "x = 'caf\xc3\xa9'\n",
          "x = \"\"\"\ncaf\xc3\xa9\n\"\"\"\n", "x = '''\xc3\xa9'''\n", "\"\xc3\xa9\" = 1\n", "x = \"a\\\"\xc3\xa9\"\n",
          "x = \"\"\"a\\\"\"\"\xc3\xa9\"\"\"\n", "x = \"\"\"\"\xc3\xa9\"\"\"\"\n", "\xEF\xBB\xBFx = 1\n",
          "x = \"\"\"\\\n  a\xc3\xa9\"\"\"\n"})
        EXPECT_FALSE(find_non_ascii_outside_strings(ok)) << ok;
}

TEST(TomlGuard, FindsNonAsciiOutsideStringsWithItsPosition) {
    auto p = find_non_ascii_outside_strings("[suite]\na = 1 \xc2\xa7\n");
    ASSERT_TRUE(p);
    EXPECT_EQ(p->line, 2);
    EXPECT_EQ(p->column, 7);
    EXPECT_NE(p->message.find("outside a string or comment"), std::string::npos);

    // What the fuzzer found: a mangled byte order mark, and malformed UTF-8 (toml++ #295).
    p = find_non_ascii_outside_strings("\xef\xbb\xa3x = 1\n");
    ASSERT_TRUE(p);
    EXPECT_EQ(p->line, 1);
    EXPECT_EQ(p->column, 1);
    EXPECT_TRUE(find_non_ascii_outside_strings("\xcc\xaa"));
    EXPECT_TRUE(find_non_ascii_outside_strings("x = \"a\"\xc3\xa9\n")) << "after a string closes";
    EXPECT_TRUE(find_non_ascii_outside_strings("x = 'a'\n\xc3\xa9\n"));
}

TEST(TomlGuard, FindsNonAsciiRightAfterALineEndingBackslash) {
    // toml++ #190: s = """\<newline>§"""
    auto p = find_non_ascii_outside_strings("s = \"\"\"\\\n\xc2\xa7\"\"\"\n");
    ASSERT_TRUE(p);
    EXPECT_EQ(p->line, 2);
    EXPECT_EQ(p->column, 1);
    EXPECT_NE(p->message.find("line-ending backslash"), std::string::npos);
}

TEST(TomlGuard, TheSuiteLoaderReportsItAsASyntaxError) {
    try {
        (void)parse_suite("[suite]\nname = \"s\" \xef\xbc\x83\n", "t.toml");
        FAIL() << "accepted";
    } catch (const SuiteError &e) {
        EXPECT_EQ(e.where().line, 2);
        EXPECT_EQ(e.where().column, 12);
        EXPECT_NE(std::string(e.what()).find("TOML syntax error: a non-ASCII character outside a string"),
                  std::string::npos)
            << e.what();
    }
}

TEST(TomlGuard, AQuoteInsideABareTokenDoesNotOpenAString) {
    // fuzz_suite's second finding: TOML++ reads the number token `1\x02 6'''666...` on
    // through the quotes and classifies the U+00FD after them through the faulty lookup.
    auto p = find_non_ascii_outside_strings("[suite]\nx = 1\x02"
                                            "6'''66==\xc3\xbd==\n");
    ASSERT_TRUE(p);
    EXPECT_EQ(p->line, 2);
    EXPECT_EQ(p->column, 15);
    EXPECT_TRUE(find_non_ascii_outside_strings("x = 1.'\xc3\xa9'\n")) << "a number's point is not a dotted key";
    EXPECT_TRUE(find_non_ascii_outside_strings("x = true\"\xc3\xa9\"\n"));
    EXPECT_TRUE(find_non_ascii_outside_strings("x = [1\"\xc3\xa9\"]\n"));
    // fuzz_suite's third finding: `0` then control characters then `["...ý..."]`
    // is one bare token for TOML++; its bracket opens no array, its quote no string.
    EXPECT_TRUE(find_non_ascii_outside_strings("name =0\x15\x15[\"\xc3\xbd\"]\n"));
    EXPECT_TRUE(find_non_ascii_outside_strings("x = 1{\"\xc3\xa9\" = 1}\n"));
}

TEST(TomlGuard, StringsWhereverTomlAllowsThemStayAccepted) {
    for (const char *ok :
         {"a.\"\xc3\xa9\" = 1\n", "a . '\xc3\xa9' = 1\n", "[\"\xc3\xa9\"]\nx = 1\n", "[[a.'\xc3\xa9']]\nx = 1\n",
          "x = [\"\xc3\xa9\", '\xc3\xbc']\n", "x = [\n  \"\xc3\xa9\", # c\xc3\xa9\n  '\xc3\xbc',\n]\n",
          "x = { \"\xc3\xa9\" = 1, b.'\xc3\xbc' = \"\xc3\xbd\" }\n", "x = [[\"\xc3\xa9\"], ['\xc3\xbc']]\n",
          "# c\xc3\xa9\n\"\xc3\xa9\" = 1\n", "x = 1 # '\n\"\xc3\xa9\" = 2\n"}) {
        EXPECT_FALSE(find_non_ascii_outside_strings(ok)) << ok;
        EXPECT_NO_THROW((void)toml::parse(ok)) << ok << " (the cases must be valid TOML)";
    }
}
