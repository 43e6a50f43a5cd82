#include "readers/report_html.hpp"

#include "../parsed_fake_set.hpp"
#include "readers/svg_chart.hpp"
#include "../metric_text.hpp"
#include "readers/tidy_records.hpp"

#include <fmt/format.h>

#include <gtest/gtest.h>

#include <regex>

using namespace opbench;
using namespace opbench::test;

namespace {

std::size_t count(const std::string &hay, const std::string &needle) {
    std::size_t n = 0;
    for (auto pos = hay.find(needle); pos != std::string::npos; pos = hay.find(needle, pos + 1)) ++n;
    return n;
}

// attention over seq 64, 128, 256: composed and fused on naive.
FakeSet attention_sweep() {
    FakeSet s;
    s.suite = "attention-sweep";
    for (const char *variant : {"composed", "fused"})
        for (int seq : {64, 128, 256}) {
            FakeCase c;
            c.op = "attention";
            c.variant = variant;
            c.name = "prefill";
            c.params = {{"B", 1}, {"H", 2}, {"Sq", seq}, {"Skv", seq}, {"D", 32}, {"causal", false}, {"scale", 0.17}};
            c.medians = reps(1e-6 * seq * seq / 100);
            c.flops = 4.0 * seq * seq * 32 * 2;
            c.bytes = 4.0 * seq * 32 * 4 * 2;
            c.plugin_peak_bytes = std::string(variant) == "composed" ? uint64_t(seq) * seq * 8 : 65536;
            s.cases.push_back(c);
        }
    return s;
}

} // namespace

TEST(ReportHtml, FindsTheSeqSweepOnceWithBothVariants) {
    const std::vector<ResultSet> sets{parsed_set(attention_sweep(), "a")};
    const auto sweeps = find_sweeps(sets);
    ASSERT_EQ(sweeps.size(), 1u); // Sq and Skv move together: one axis
    EXPECT_EQ(sweeps[0].axis, "Skv");
    EXPECT_EQ(sweeps[0].axis_label, "Skv=Sq");
    EXPECT_EQ(sweeps[0].cases.size(), 6u);
    EXPECT_EQ(sweeps[0].fixed, "B:1 D:32 H:2 causal:false");
}

// Issue 16: the report's figures are the metrics table's. Every case's bar
// and roofline point say its median and FLOP/s in the table's rows' text for
// the inputs the tidy CSV reads, and the roofline's axis is the row's label.
TEST(ReportHtml, FiguresAreTheMetricsTablesRows) {
    const std::vector<ResultSet> sets{parsed_set(attention_sweep(), "a")};
    const std::string html = render_report_html(sets, {});
    for (const CaseRecord &c : sets[0].cases) {
        const EntryMetricInputs in = metric_inputs(c, valid_times(c));
        const std::string bar = fmt::format("{} [{}]: {}", c.label(), c.backend, table_text("median_s", in));
        const std::string point = fmt::format("{} [{}]: {} at", c.label(), c.backend, table_text("flop_per_s", in));
        EXPECT_NE(html.find(html_escape(bar)), std::string::npos) << bar;
        EXPECT_NE(html.find(html_escape(point)), std::string::npos) << point;
    }
    EXPECT_NE(html.find(">" + std::string(metric("flop_per_s").label) + "<"), std::string::npos)
        << "the roofline's y axis is labelled with the row's label";
}

// Issue 16: the report's comparison table shows each side's median as the
// metrics table's median_s text for that side's record.
TEST(ReportHtml, ComparisonMediansAreTheMetricsTablesRow) {
    FakeSet a, b;
    FakeCase c;
    c.medians = reps(1.234e-5);
    a.cases = {c};
    c.medians = reps(2.346e-3);
    b.cases = {c};
    const std::vector<ResultSet> sets{parsed_set(a, "a"), parsed_set(b, "b")};
    const std::string html = render_report_html(sets, {});
    for (const ResultSet &set : sets) {
        const CaseRecord &r = set.cases.at(0);
        const std::string median = table_text("median_s", metric_inputs(r, valid_times(r)));
        EXPECT_NE(html.find(">" + median + "</td>"), std::string::npos) << median;
    }
    EXPECT_NE(html.find(">12.3 us</td>"), std::string::npos);
    EXPECT_NE(html.find(">2.35 ms</td>"), std::string::npos);
}

TEST(ReportHtml, NoSweepInUnrelatedCases) {
    FakeSet s;
    FakeCase a, b;
    b.op = "silu";
    s.cases = {a, b};
    EXPECT_TRUE(find_sweeps({parsed_set(s, "q")}).empty());
}

TEST(ReportHtml, SelfContainedWithEveryChart) {
    FakeSet skipped = attention_sweep();
    FakeCase sk = skipped.cases[0];
    sk.backend = "onednn";
    sk.variant = "fused";
    sk.status = "skipped";
    sk.reason = "no fused <primitive>";
    skipped.cases.push_back(sk);
    const std::string html = render_report_html({parsed_set(skipped, "run-1")}, {});
    EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
    // No network reference of any kind: no URL, no external script or style;
    // the one inline script sorts and filters.
    EXPECT_EQ(html.find("http"), std::string::npos);
    EXPECT_EQ(count(html, "<script"), 1u);
    EXPECT_EQ(html.find("<script src"), std::string::npos);
    EXPECT_EQ(html.find("<link"), std::string::npos);
    EXPECT_EQ(html.find("id=\"comparison\""), std::string::npos); // one set: nothing to compare
    EXPECT_EQ(count(html, "data-chart=\"box\""), 6u);               // a distribution per measured case
    EXPECT_EQ(count(html, "data-chart=\"time-by-case\""), 1u);
    EXPECT_EQ(count(html, "data-chart=\"roofline\""), 1u);
    EXPECT_EQ(count(html, "data-chart=\"sweep-time\""), 1u);
    EXPECT_EQ(count(html, "data-chart=\"sweep-memory\""), 1u);
    EXPECT_EQ(count(html, "<rect class=\"bar\""), 6u);                     // six measured cases
    EXPECT_GE(count(html, "<circle class=\"point\""), 6u + 12u);           // roofline + sweeps
    EXPECT_NE(html.find("no fused &lt;primitive&gt;"), std::string::npos); // escaped, listed
    EXPECT_NE(html.find("id=\"contexts\""), std::string::npos);
}

TEST(ReportHtml, TwoSetsSideBySideHighlightDifferences) {
    FakeSet a = attention_sweep(), b = attention_sweep();
    b.commit = "other";
    const std::string html = render_report_html({parsed_set(a, "a"), parsed_set(b, "b")}, {});
    EXPECT_EQ(count(html, "data-chart=\"roofline\""), 2u);
    EXPECT_NE(html.find("<tr class=\"differs\"><td>commit</td>"), std::string::npos);
    EXPECT_NE(html.find("a: naive"), std::string::npos); // series named by set and backend
}

TEST(ReportHtml, TwoSetsOpenWithTheComparison) {
    FakeSet a = attention_sweep(), b = attention_sweep();
    b.commit = "other";
    for (auto &c : b.cases)
        for (auto &m : c.medians) m *= 2; // every case twice as slow
    const std::string html = render_report_html({parsed_set(a, "a"), parsed_set(b, "b")}, {});
    const auto at = [&](const char *s) { return html.find(s); };
    ASSERT_NE(at("id=\"comparison\""), std::string::npos);
    EXPECT_LT(at("id=\"comparison\""), at("id=\"contexts\"")); // the page opens with it
    EXPECT_EQ(count(html, "data-chart=\"ratio\""), 1u);
    EXPECT_EQ(count(html, "class=\"ratio-row\""), 6u);  // one row per compared case
    EXPECT_EQ(count(html, "<line class=\"ci\""), 6u);   // each with its interval (9 repetitions)
    EXPECT_NE(at("6 slower</span>"), std::string::npos); // compare's verdicts
    EXPECT_NE(at("<td>all</td><td>6</td><td>2.00</td>"), std::string::npos); // compare's geomean, 3 digits
    EXPECT_NE(at("class=\"data sortable verdicts\" id=\"verdicts-1\""), std::string::npos);
    // Verdict and ratio lead (they stay on screen at 800 px), with a quality column.
    EXPECT_NE(at("<th title=\"click to sort\">case</th><th title=\"click to sort\">backend</th><th title=\"click to "
                 "sort\">verdict</th><th title=\"click to sort\">ratio</th><th title=\"click to sort\">quality</th>"),
              std::string::npos);
    EXPECT_NE(at("class=\"ratio\">2.00</td>"), std::string::npos);
    EXPECT_NE(at("<input class=\"filter\""), std::string::npos);
    EXPECT_EQ(count(html, "data-chart=\"box\""), 6u); // one per case, a box per set and backend
    EXPECT_EQ(count(html, "<g class=\"box\""), 12u);
}

TEST(SvgChart, TickLabels) {
    EXPECT_EQ(tick_label(1e-5, AxisUnit::seconds), "10 us");
    EXPECT_EQ(tick_label(1048576, AxisUnit::bytes), "1 MiB");
    EXPECT_EQ(tick_label(1000, AxisUnit::number), "1k");
    EXPECT_EQ(html_escape("<a & 'b'>"), "&lt;a &amp; &#39;b&#39;&gt;");
}

// Issue 30: ratios read with three significant digits, never 0.000.
TEST(SvgChart, RatioTextHasThreeSignificantDigits) {
    EXPECT_EQ(ratio_text(0.000123456), "0.000123");
    EXPECT_EQ(ratio_text(0.98), "0.980");
    EXPECT_EQ(ratio_text(1.0), "1.00");
    EXPECT_EQ(ratio_text(12.345), "12.3");
    EXPECT_EQ(ratio_text(1578.054), "1578");
    // Rounding that reaches the next power of ten takes its digits.
    EXPECT_EQ(ratio_text(0.99995), "1.00");
    EXPECT_EQ(ratio_text(9.9996), "10.0");
    EXPECT_EQ(ratio_text(99.96), "100");
    EXPECT_EQ(ratio_text(0.00099996), "0.00100");
    EXPECT_EQ(ratio_text(NAN), "-");
}

// Issue 44: a subnormal value (a 5e-324 median) made a linear axis' tick step
// 0, and the chart grew without end; a log axis spanned 300 decades.
TEST(SvgChart, ASubnormalValueGivesABoundedChart) {
    EXPECT_EQ(ratio_text(5e-324), "4.94e-324");
    for (bool log : {false, true}) {
        BarChart c;
        c.log_scale = log;
        c.categories = {"tiny", "one"};
        c.series = {{"naive", {5e-324, log ? 1e-3 : 5e-324}, {}, {}}};
        const std::string svg = render_bar_chart(c);
        EXPECT_LT(svg.size(), 20000u) << (log ? "log" : "linear");
    }
}

// Issue 30: cut labels stay apart; the part where names differ is kept.
TEST(SvgChart, ClippedLabelsStayUniqueAndKeepWhereTheyDiffer) {
    const std::vector<std::string> names{
        "attention/B:1/H:2/Sq:1/Skv:96/D:32/causal:1/variant:composed/dt:f32/case:attention.decode [naive]",
        "attention/B:1/H:2/Sq:1/Skv:96/D:32/causal:1/variant:fused/dt:f32/case:attention.decode [naive]",
        "attention/B:1/H:2/Sq:1/Skv:96/D:32/causal:1/variant:fused/dt:f32/case:attention.decode [onednn]",
        "rope/B:1/H:4/KVH:2/S:16/D:32/theta:10000/variant:half_split/dt:f32 [naive]",
        "rope/B:1/H:4/KVH:2/S:16/D:32/theta:10000/variant:interleaved/dt:f32 [naive]",
        "add/R:32/C:128/dt:f32 [naive]"};
    const std::vector<std::string> cut = clip_unique(names, 50);
    ASSERT_EQ(cut.size(), names.size());
    for (std::size_t i = 0; i < cut.size(); ++i) {
        for (std::size_t j = i + 1; j < cut.size(); ++j) EXPECT_NE(cut[i], cut[j]) << cut[i];
        EXPECT_LT(cut[i].size(), names[i].size() + 1);
    }
    EXPECT_NE(cut[0].find("composed"), std::string::npos) << cut[0];
    EXPECT_NE(cut[1].find("fused"), std::string::npos) << cut[1];
    EXPECT_NE(cut[2].find("onednn"), std::string::npos) << cut[2];
    EXPECT_NE(cut[3].find("half"), std::string::npos) << cut[3];
    EXPECT_NE(cut[4].find("interl"), std::string::npos) << cut[4];
    EXPECT_EQ(cut[5], names[5]); // short: whole
}
