// readers/compact_table and the default (not --wide) console tables: names
// split into what every row shares and what varies, numbered footnotes, and
// compare, compare --by backend, history and analyze fitting 100 columns on
// a set shaped like the quick suite's (long attention names, a disturbed
// entry with long reasons), while --wide keeps the full names.
#include "readers/analyze.hpp"
#include "readers/archive.hpp"
#include "readers/compact_table.hpp"
#include "readers/compare.hpp"
#include "readers/level_table.hpp"
#include "writers/writer.hpp"

#include "../result_set_fixture.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>

using namespace opbench;
using namespace opbench::test;

namespace {

// Widest line in display columns (UTF-8 continuation bytes take none).
std::size_t widest(const std::string &text) {
    std::size_t best = 0, cur = 0;
    for (unsigned char c : text) {
        if (c == '\n') {
            best = std::max(best, cur);
            cur = 0;
        } else if ((c & 0xC0) != 0x80) {
            ++cur;
        }
    }
    return std::max(best, cur);
}

// Some line of `text` holds every one of `parts`.
bool has_line_with(const std::string &text, std::initializer_list<const char *> parts) {
    std::size_t start = 0;
    while (start < text.size()) {
        std::size_t end = text.find('\n', start);
        if (end == std::string::npos) end = text.size();
        const std::string line = text.substr(start, end - start);
        if (std::all_of(parts.begin(), parts.end(), [&](const char *p) { return line.find(p) != std::string::npos; }))
            return true;
        start = end + 1;
    }
    return false;
}

std::string console(const Document &d) { return find_writer("console")->write(d); }

FakeSet quick_like() {
    FakeSet s;
    for (const char *backend : {"naive", "onednn"}) {
        FakeCase att;
        att.op = "attention";
        att.backend = backend;
        att.variant = "composed";
        att.name = "attention.prefill.small";
        att.params = {{"B", 1}, {"H", 2}, {"Sq", 64}, {"Skv", 64}, {"D", 32}, {"causal", 0}};
        att.medians = reps(std::string(backend) == "naive" ? 400e-6 : 30e-6);
        FakeCase mm;
        mm.op = "matmul";
        mm.backend = backend;
        mm.name = "matmul.batched";
        mm.params = {{"B", 4}, {"M", 16}, {"N", 24}, {"K", 32}, {"trans_a", 1}, {"bias", 0}};
        mm.medians = reps(std::string(backend) == "naive" ? 50e-6 : 5e-6);
        FakeCase add;
        add.backend = backend;
        add.name = "add.residual";
        if (std::string(backend) == "onednn") {
            add.medians = {27e-6, 28e-6, 29e-6, 24e-3, 26e-3, 28e-3, 30e-3, 31e-3, 32e-3};
            add.target_met = {true, true, true, false, false, false, false, false, false};
        }
        s.cases.insert(s.cases.end(), {att, mm, add});
    }
    return s;
}

} // namespace

TEST(CompactTable, SharedSegmentsGoToTheHeaderAndRowsKeepWhatVaries) {
    const auto s = split_shared_segments({"attention/B:1/H:2/dt:f32", "attention/B:1/H:4/dt:f32"});
    EXPECT_EQ(s.shared, (std::vector<std::string>{"attention", "B:1", "dt:f32"}));
    EXPECT_EQ(s.rows, (std::vector<std::string>{"H:2", "H:4"}));
    // One row keeps its whole name; identical rows say so.
    EXPECT_EQ(split_shared_segments({"add/R:1/dt:f32"}).rows[0], "add/R:1/dt:f32");
    EXPECT_EQ(split_shared_segments({"a/b", "a/b"}).rows[0], "(all)");
}

TEST(CompactTable, RowsWithASuiteCaseNameAreGroupedByIt) {
    // Two dtypes of one case and one other case: each row is the case name
    // and what varies within it; what the case's rows share is its legend.
    const auto s = split_shared_segments({"matmul/B:4/M:16/dt:f32/case:mm.batched",
                                          "matmul/B:4/M:16/dt:bf16/case:mm.batched",
                                          "matmul/B:1/M:64/dt:f32/case:mm.square"});
    EXPECT_EQ(s.shared, (std::vector<std::string>{"matmul"}));
    EXPECT_EQ(s.rows, (std::vector<std::string>{"mm.batched/dt:f32", "mm.batched/dt:bf16", "mm.square"}));
    EXPECT_EQ(s.legend, (std::vector<std::string>{"mm.batched: B:4/M:16", "mm.square: B:1/M:64/dt:f32"}));
    Table t;
    add_legend(t, s);
    EXPECT_EQ(t.notes, (std::vector<std::string>{"cases: mm.batched: B:4/M:16; mm.square: B:1/M:64/dt:f32"}));
}

TEST(CompactTable, FootnotesAreNumberedOnceEach) {
    Footnotes f;
    EXPECT_EQ(f.mark("long reason"), "[1]");
    EXPECT_EQ(f.mark("other"), "[2]");
    EXPECT_EQ(f.mark("long reason"), "[1]");
    Table t;
    f.add_to(t);
    EXPECT_EQ(t.notes, (std::vector<std::string>{"[1] long reason", "[2] other"}));
}

TEST(CompactTable, HeaderLinesWrapAtOneHundredColumns) {
    const std::string words(30, 'x');
    const std::string t = title_with_header("Title", {words + " " + words + " " + words + " " + words, "short"});
    EXPECT_LE(widest(t), kConsoleColumns) << t;
    EXPECT_EQ(t.rfind("Title\n  xxx", 0), 0u) << t;
    EXPECT_NE(t.find("\n    xxx"), std::string::npos) << "continuations indented: " << t;
    EXPECT_NE(t.find("\n  short"), std::string::npos) << t;
}

TEST(CompactTable, ReaderTablesFitOneHundredColumnsByDefaultAndWideKeepsFullNames) {
    TempDir tmp;
    const FakeSet a_fake = quick_like();
    FakeSet b_fake = a_fake;
    b_fake.timestamp = "2026-11-22T15:50:51Z";
    const ResultSet a = read_result_set(write_fake_set(tmp.path, "quick-2026-11-22T14-50-51Z.json", a_fake));
    const ResultSet b = read_result_set(write_fake_set(tmp.path, "quick-2026-11-22T15-50-51Z.json", b_fake));

    CompareOptions narrow, wide;
    wide.wide = true;
    const std::string cmp = console(comparison_document(compare_sets({a, b}, narrow)));
    EXPECT_LE(widest(cmp), kConsoleColumns) << cmp;
    EXPECT_TRUE(has_line_with(cmp, {"add.residual ", " onednn ", "26 ms", "disturbed ["}))
        << "rows named by the suite's case, the quality with its footnote:\n" << cmp;
    EXPECT_NE(cmp.find("cases: attention.prefill.small: attention/B:1/D:32"), std::string::npos) << cmp;
    EXPECT_NE(cmp.find("] base disturbed: bimodal"), std::string::npos) << cmp;
    const std::string cmp_wide = console(comparison_document(compare_sets({a, b}, wide)));
    EXPECT_GT(widest(cmp_wide), kConsoleColumns) << "--wide keeps the full names";
    EXPECT_NE(cmp_wide.find("attention/B:1/D:32/H:2/Skv:64/Sq:64/causal:0/variant:composed/dt:f32/case:"),
              std::string::npos);

    LevelOptions lo;
    const std::string levels = console(by_backend({a}, lo));
    EXPECT_LE(widest(levels), kConsoleColumns) << levels;
    // One flag, the worst backend's, as compare shows the worse side's; the
    // footnote gives each backend's.
    EXPECT_TRUE(has_line_with(levels, {"add.residual ", " disturbed ["})) << levels;
    EXPECT_EQ(levels.find("clean/disturbed"), std::string::npos) << levels;
    EXPECT_NE(levels.find("] naive clean; onednn disturbed: bimodal"), std::string::npos) << levels;
    lo.wide = true;
    EXPECT_GT(widest(console(by_backend({a}, lo))), kConsoleColumns);

    const auto archive = tmp.path / "archive";
    for (int i = 0; i < 10; ++i) {
        FakeSet run = a_fake;
        run.timestamp = "2026-11-22T1" + std::to_string(i) + ":00:00Z";
        run.commit = "c0ffee" + std::to_string(i);
        (void)archive_store(archive, read_result_set(write_fake_set(tmp.path, "run.json", run)));
    }
    HistoryOptions ho;
    ho.suite = "quick";
    const std::string hist = console(archive_history(archive, ho));
    EXPECT_LE(widest(hist), kConsoleColumns) << hist;
    EXPECT_TRUE(has_line_with(hist, {"add.residual [onednn]", "disturbed ["})) << hist;
    ho.wide = true;
    EXPECT_GT(widest(console(archive_history(archive, ho))), kConsoleColumns);

    std::ostringstream out, err;
    ASSERT_EQ(cmd_analyze(a.path, 20, out, err), 0) << err.str();
    EXPECT_LE(widest(out.str()), kConsoleColumns) << out.str();
    EXPECT_NE(out.str().find("disturbed"), std::string::npos) << out.str();
}

// Issue 44: analyze's ranking showed rope's 66-character name when the
// ranking reached it (CI's sanitizer run: every naive entry slow), 124
// columns; the case column is now cut to fit, the other columns whole.
TEST(FitColumn, CutsOneColumnSoTheTableFitsTheConsole) {
    Table t;
    t.columns = {"#", "case", "backend", "kind", "util.", "time", "to save", "quality"};
    t.rows = {{"1", "attention/causal:0/variant:composed", "naive", "unoptimised", "0%", "14.9 ms", "14.9 ms",
               "noisy"},
              {"20", "rope/B:1/H:4/KVH:2/S:16/D:32/theta:10000/variant:half_split/dt:f32", "naive", "unoptimised",
               "0%", "132 us", "132 us", "noisy"}};
    fit_column(t, 1);
    const std::string text = render_text_table(t);
    std::size_t widest = 0, start = 0;
    for (std::size_t end; (end = text.find('\n', start)) != std::string::npos; start = end + 1) {
        const std::string line = text.substr(start, end - start);
        // Columns, not bytes: '…' is one.
        widest = std::max<std::size_t>(widest, std::count_if(line.begin(), line.end(), [](char c) {
                                               return (static_cast<unsigned char>(c) & 0xC0) != 0x80;
                                           }));
    }
    EXPECT_LE(widest, kConsoleColumns) << text;
    EXPECT_EQ(t.rows[0][1], "attention/causal:0/variant:composed") << "a name that fits stays whole";
    EXPECT_NE(t.rows[1][1].find("…"), std::string::npos) << t.rows[1][1];
    EXPECT_EQ(t.rows[1][2], "naive");

    Table narrow = t; // already fits: nothing changes
    fit_column(narrow, 1);
    EXPECT_EQ(narrow.rows, t.rows);
}

// Issue 44: `compare` of a quick set with itself printed 104-107 columns in
// CI's sanitizer stage, where every entry was noisy (a loaded machine): the
// rope case's whole name beside a footnote mark and a p value. The compact
// table now cuts the case column in the middle to fit, says so, and --wide
// keeps the names whole.
TEST(CompactTable, CompareOfNoisyEntriesCutsLongCaseNamesToFit) {
    TempDir tmp;
    FakeSet fake;
    int i = 0;
    for (const char *backend : {"naive", "onednn"}) {
        // Two ropes apart in every parameter: each row keeps its whole name.
        FakeCase rope;
        rope.op = "rope";
        rope.backend = backend;
        rope.variant = "half_split";
        rope.params = {{"B", 1}, {"H", 4}, {"KVH", 2}, {"S", 16}, {"D", 32}, {"theta", 10000}};
        FakeCase rope2 = rope;
        rope2.variant = "interleaved";
        rope2.params = {{"B", 2}, {"H", 8}, {"KVH", 4}, {"S", 32}, {"D", 64}, {"theta", 500000}};
        FakeCase add;
        add.backend = backend;
        for (FakeCase *c : {&rope, &rope2, &add}) {
            // A spread of its own per entry: each its own footnote ("[4]").
            c->medians = reps(20e-6 * (i + 1), 9, 0.06 + 0.02 * i);
            c->target_met.assign(9, false);
            ++i;
        }
        fake.cases.insert(fake.cases.end(), {rope, rope2, add});
    }
    const ResultSet a = read_result_set(write_fake_set(tmp.path, "quick-a.json", fake));
    CompareOptions narrow, wide;
    wide.wide = true;
    const std::string cmp = console(comparison_document(compare_sets({a, a}, narrow)));
    EXPECT_LE(widest(cmp), kConsoleColumns) << cmp;
    EXPECT_NE(cmp.find("…"), std::string::npos) << "the rope name cut:\n" << cmp;
    EXPECT_NE(cmp.find("case names cut in the middle"), std::string::npos) << cmp;
    EXPECT_TRUE(has_line_with(cmp, {"rope/", " naive ", "noisy ["})) << cmp;
    const std::string cmp_wide = console(comparison_document(compare_sets({a, a}, wide)));
    EXPECT_NE(cmp_wide.find("rope/B:2/D:64/H:8/KVH:4/S:32/theta:500000/variant:interleaved"), std::string::npos)
        << cmp_wide;
}
