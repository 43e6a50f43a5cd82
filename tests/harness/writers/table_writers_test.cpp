#include "writers/table_writers.hpp"
#include "writers/chrome_trace_writer.hpp"
#include "writers/json_writer.hpp"

#include <gtest/gtest.h>

using namespace opbench;

namespace {
Document sample() {
    Document d;
    Table t;
    t.title = "a -> b";
    t.columns = {"case", "ratio", "verdict"};
    t.rows = {{"matmul/M:64", "1.023", "same"}, {"add, \"big\" | odd", "0.5", "faster"}};
    t.notes = {"2 cases"};
    d.tables.push_back(t);
    Table g;
    g.columns = {"group", "ratio"};
    g.rows = {{"all", "0.7"}};
    d.tables.push_back(g);
    return d;
}
} // namespace

TEST(TableWriters, CsvQuotesAndSeparatesTables) {
    EXPECT_EQ(write_csv(sample()), "case,ratio,verdict\r\n"
                                   "matmul/M:64,1.023,same\r\n"
                                   "\"add, \"\"big\"\" | odd\",0.5,faster\r\n"
                                   "\r\n"
                                   "group,ratio\r\n"
                                   "all,0.7\r\n");
}

TEST(TableWriters, CsvWritesOnlyTheTidyRecordsWhenADocumentHasThem) {
    Document d = sample();
    d.records.columns = {"name", "median_s"};
    d.records.rows = {{"add", "2.5e-06"}, {"mm, big", ""}};
    EXPECT_EQ(write_csv(d), "name,median_s\r\nadd,2.5e-06\r\n\"mm, big\",\r\n");
}

TEST(TableWriters, MarkdownEscapesPipesAndRightAlignsNumbers) {
    const std::string md = write_markdown(sample());
    EXPECT_NE(md.find("### a -> b\n\n| case | ratio | verdict |\n| --- | ---: | --- |\n"), std::string::npos) << md;
    EXPECT_NE(md.find("| add, \"big\" \\| odd | 0.5 | faster |"), std::string::npos) << md;
    EXPECT_NE(md.find("\n2 cases\n"), std::string::npos) << md;
}

// Names are text in Markdown: no HTML tag can open, no emphasis, code or
// link forms (issue 19: a case named <script> went through raw).
TEST(TableWriters, MarkdownEscapesHtmlAndFormattingInNames) {
    Document d;
    Table t;
    t.columns = {"case"};
    t.rows = {{"<script>alert(1)</script>"}, {"a_b_c *x* `y` [l](u) R&D \\"}};
    d.tables = {t};
    const std::string md = write_markdown(d);
    EXPECT_EQ(md.find("<script"), std::string::npos) << md;
    EXPECT_NE(md.find("| &lt;script>alert(1)&lt;/script> |"), std::string::npos) << md;
    EXPECT_NE(md.find("| a\\_b\\_c \\*x\\* \\`y\\` \\[l\\](u) R&amp;D \\\\ |"), std::string::npos) << md;
}

TEST(TableWriters, ConsoleAlignsColumns) {
    const std::string out = write_console(sample());
    EXPECT_NE(out.find("a -> b\n"
                       "  case             ratio verdict\n"
                       "  ---------------- ----- -------\n"
                       "  matmul/M:64      1.023 same\n"
                       "  add, \"big\" | odd   0.5 faster\n"
                       "  2 cases\n\n"
                       "  group ratio\n"),
              std::string::npos)
        << out;
}

// A last column of sentences (analyze's details) keeps its text whole, but
// the rule under its header ends at 100 columns; other columns' rules do not.
TEST(TableWriters, ConsoleRuleOfALongTextColumnEndsAt100Columns) {
    Document d;
    Table t;
    t.columns = {"#", "field", "text"};
    const std::string sentence(150, 'x');
    t.rows = {{"1", "suggestion", sentence}};
    d.tables.push_back(t);
    const std::string out = write_console(d);
    EXPECT_NE(out.find("  # field      text\n  - ---------- " + std::string(100 - 15, '-') + "\n"), std::string::npos)
        << out;
    EXPECT_NE(out.find("  1 suggestion " + sentence + "\n"), std::string::npos) << out;
}

TEST(TableWriters, NumericColumnDetection) {
    Table t;
    t.columns = {"a", "b", "c"};
    t.rows = {{"+3.4%", "12.5 us", "x"}, {"-", "-1.2", "1"}, {"skipped", "3 ms", "y"}};
    EXPECT_TRUE(numeric_column(t, 0)); // one number, one word: a tie counts as numeric
    EXPECT_TRUE(numeric_column(t, 1));
    EXPECT_FALSE(numeric_column(t, 2)); // one number, two words
}

TEST(TableWriters, EveryFormatIsInTheTable) {
    for (const char *f : {"json", "console", "markdown", "csv"}) EXPECT_NE(find_writer(f), nullptr) << f;
    EXPECT_EQ(find_writer("xml"), nullptr);
}

// A file name or a plugin message that is not UTF-8 is written as U+FFFD:
// the set (or trace) is still written, and reads back.
TEST(JsonWriters, BytesThatAreNotUtf8AreWrittenAsReplacementCharacters) {
    Document d;
    d.data = {{"suite_path", std::string("/tmp/bad\xffname.toml")}, {"traceEvents", nlohmann::json::array()}};
    d.data["traceEvents"].push_back({{"name", std::string("span\xc3")}});
    for (bool compact : {true, false}) {
        d.compact = compact;
        const nlohmann::json back = nlohmann::json::parse(write_json(d));
        EXPECT_EQ(back["suite_path"], "/tmp/bad\xef\xbf\xbdname.toml");
    }
    const nlohmann::json trace = nlohmann::json::parse(write_chrome_trace(d));
    EXPECT_EQ(trace["traceEvents"][0]["name"], "span\xef\xbf\xbd");
}
