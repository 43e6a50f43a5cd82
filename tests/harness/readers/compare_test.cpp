#include "readers/compare.hpp"
#include "../metric_text.hpp"
#include "readers/tidy_records.hpp"
#include "writers/table_writers.hpp"
#include "writers/text_wrap.hpp"

#include "../parsed_fake_set.hpp"

#include <gtest/gtest.h>

using namespace opbench;
using namespace opbench::test;

namespace {

FakeCase timed(const std::string &backend, double center, double spread = 0.005) {
    FakeCase c;
    c.backend = backend;
    c.medians = reps(center, 9, spread);
    return c;
}

const CaseComparison *find(const PairComparison &p, const std::string &backend) {
    for (const auto &c : p.cases)
        if (c.backend == backend) return &c;
    return nullptr;
}

} // namespace

TEST(Compare, VerdictRule) {
    CompareOptions o;                               // 5%, alpha 0.05
    EXPECT_EQ(verdict_for(1.02, 0.001, o), "same"); // significant but under the threshold
    EXPECT_EQ(verdict_for(1.20, 0.001, o), "slower");
    EXPECT_EQ(verdict_for(0.80, 0.001, o), "faster");
    EXPECT_EQ(verdict_for(1.20, 0.3, o), "noisy"); // large but not significant
    EXPECT_EQ(verdict_for(1.20, NAN, o), "noisy"); // no test possible
    o.threshold = 0.25;
    EXPECT_EQ(verdict_for(1.20, 0.001, o), "same");
}

TEST(Compare, IdenticalRunsAreSameAndSkippedEntriesGetNoRatio) {
    FakeSet a;
    FakeCase skipped;
    skipped.backend = "onednn";
    skipped.op = "attention";
    skipped.variant = "fused";
    skipped.status = "skipped";
    skipped.reason = "no fused primitive";
    a.cases = {timed("naive", 1e-5), skipped};
    FakeSet b = a;
    b.commit = "fedcba987654";
    const Comparison c = compare_sets({parsed_set(a, "a"), parsed_set(b, "b")}, {});
    ASSERT_EQ(c.pairs.size(), 1u);
    const PairComparison &p = c.pairs[0];
    ASSERT_EQ(p.cases.size(), 2u);
    EXPECT_EQ(find(p, "naive")->verdict, "same");
    EXPECT_DOUBLE_EQ(find(p, "naive")->ratio, 1.0);
    const CaseComparison *s = find(p, "onednn");
    EXPECT_FALSE(s->compared);
    EXPECT_EQ(s->verdict, "skipped");
    EXPECT_EQ(s->reason, "no fused primitive");
    EXPECT_EQ(s->ratio, 0.0);
    EXPECT_FALSE(c.has_regression());
    // Only the commit differs, which --strict tolerates.
    ASSERT_EQ(c.differing.size(), 1u);
    EXPECT_EQ(c.differing[0].setting, "commit");
    EXPECT_FALSE(c.differing[0].strict);
}

TEST(Compare, ASlowdownIsSlowerAndARegression) {
    FakeSet a, b;
    a.cases = {timed("naive", 1e-5), timed("onednn", 2e-6)};
    b.cases = {timed("naive", 3e-5), timed("onednn", 2e-6)};
    const Comparison c = compare_sets({parsed_set(a, "a"), parsed_set(b, "b")}, {});
    const CaseComparison *n = find(c.pairs[0], "naive");
    EXPECT_EQ(n->verdict, "slower");
    EXPECT_NEAR(n->ratio, 3.0, 1e-9);
    EXPECT_LT(n->p_value, 0.001);
    EXPECT_EQ(n->test, "repetitions 9 vs 9");
    EXPECT_EQ(find(c.pairs[0], "onednn")->verdict, "same");
    EXPECT_TRUE(c.has_regression());
    // Geomeans: all, per backend, per op.
    const auto &g = c.pairs[0].geomeans;
    ASSERT_GE(g.size(), 4u);
    EXPECT_EQ(g[0].group, "all");
    EXPECT_NEAR(g[0].ratio, std::sqrt(3.0), 1e-9);
    bool found = false;
    for (const auto &x : g)
        if (x.group == "backend naive") {
            found = true;
            EXPECT_NEAR(x.ratio, 3.0, 1e-9);
        }
    EXPECT_TRUE(found);
}

TEST(Compare, OverlappingRepetitionsAreNoisyNotSlower) {
    FakeSet a, b;
    a.cases = {timed("naive", 1e-5, 0.6)};
    b.cases = {timed("naive", 1.1e-5, 0.6)};
    // Reorder b's repetitions so the U test sees interleaved values.
    const Comparison c = compare_sets({parsed_set(a, "a"), parsed_set(b, "b")}, {});
    EXPECT_EQ(c.pairs[0].cases[0].verdict, "noisy");
}

TEST(Compare, EntriesWhoseRepetitionsAllMissedTheNoiseTargetAreComparedAndFlaggedNoisy) {
    // One decision in every view (docs/measurement.md, "One median per
    // entry"): such an entry has a time; its quality says the target was missed.
    FakeSet a, b;
    FakeCase t = timed("naive", 1e-5);
    t.target_met.assign(9, false);
    a.cases = {t};
    b.cases = {timed("naive", 1e-5)};
    const Comparison c = compare_sets({parsed_set(a, "a"), parsed_set(b, "b")}, {});
    EXPECT_TRUE(c.pairs[0].cases[0].compared);
    EXPECT_EQ(c.pairs[0].cases[0].verdict, "same");
}

TEST(Compare, AStarvedEntryGetsNoRatioAndItsRepetitionsNeverEnterOne) {
    FakeSet a, b;
    FakeCase starved = timed("naive", 16e-3);
    starved.status = "starved";
    starved.reason = "every repetition starved";
    a.cases = {starved};
    b.cases = {timed("naive", 4e-6)};
    Comparison c = compare_sets({parsed_set(a, "a"), parsed_set(b, "b")}, {});
    EXPECT_FALSE(c.pairs[0].cases[0].compared);
    EXPECT_EQ(c.pairs[0].cases[0].verdict, "starved");
    // A passed entry with some starved repetitions: compared on the others.
    FakeCase partly = timed("naive", 4e-6);
    partly.medians = {4e-6, 4e-6, 16e-3, 4e-6, 16e-3, 4e-6, 4e-6, 4e-6, 4e-6};
    partly.starved = {false, false, true, false, true, false, false, false, false};
    a.cases = {partly};
    c = compare_sets({parsed_set(a, "a"), parsed_set(b, "b")}, {});
    ASSERT_TRUE(c.pairs[0].cases[0].compared);
    EXPECT_EQ(c.pairs[0].cases[0].verdict, "same");
}

TEST(Compare, RunsDifferingOnlyInThreadsMatchAndTheHeaderSaysSo) {
    FakeSet a, b;
    a.cases = {timed("naive", 1e-5)};
    FakeCase one = timed("naive", 1e-5);
    one.threads = 1;
    b.cases = {one};
    const Comparison c = compare_sets({parsed_set(a, "a"), parsed_set(b, "b")}, {});
    ASSERT_EQ(c.pairs[0].cases.size(), 1u);
    EXPECT_TRUE(c.pairs[0].cases[0].compared);
    ASSERT_EQ(c.differing.size(), 1u);
    EXPECT_EQ(c.differing[0].setting, "threads");
    EXPECT_EQ(c.differing[0].values, (std::vector<std::string>{"all cores", "1"}));
    EXPECT_TRUE(c.differing[0].strict);
}

TEST(Compare, ASetThatSweepsThreadsMatchesOnThreads) {
    FakeSet a;
    FakeCase t1 = timed("naive", 2e-5), t2 = timed("naive", 1e-5);
    t1.threads = 1;
    t2.threads = 2;
    a.cases = {t1, t2};
    const std::vector<ResultSet> sets{parsed_set(a, "a"), parsed_set(a, "b")};
    EXPECT_TRUE(needs_settings_in_key(sets));
    const Comparison c = compare_sets(sets, {});
    ASSERT_EQ(c.pairs[0].cases.size(), 2u);
    for (const auto &x : c.pairs[0].cases) EXPECT_DOUBLE_EQ(x.ratio, 1.0);
}

TEST(Compare, CasesInOneSetOnlyAreListedAsMissing) {
    FakeSet a, b;
    FakeCase other = timed("naive", 1e-5);
    other.op = "silu";
    a.cases = {timed("naive", 1e-5), other};
    b.cases = {timed("naive", 1e-5)};
    const Comparison c = compare_sets({parsed_set(a, "a"), parsed_set(b, "b")}, {});
    ASSERT_EQ(c.pairs[0].cases.size(), 2u);
    EXPECT_EQ(c.pairs[0].cases[1].verdict, "missing");
    EXPECT_EQ(c.pairs[0].cases[1].reason, "only in a");
}

TEST(Compare, SeveralNewSetsEachAgainstTheBase) {
    FakeSet a, b, d;
    a.cases = {timed("naive", 1e-5)};
    b.cases = {timed("naive", 2e-5)};
    d.cases = {timed("naive", 0.5e-5)};
    const Comparison c = compare_sets({parsed_set(a, "a"), parsed_set(b, "b"), parsed_set(d, "d")}, {});
    ASSERT_EQ(c.pairs.size(), 2u);
    EXPECT_EQ(c.pairs[0].cases[0].verdict, "slower");
    EXPECT_EQ(c.pairs[1].cases[0].verdict, "faster");
}

TEST(Compare, SettingsHeaderListsTheDifferences) {
    FakeSet a, b;
    a.cases = b.cases = {timed("naive", 1e-5)};
    b.build_type = "debug";
    b.onednn_isa = "avx2";
    b.suite_sha = "0000";
    const auto d = differing_settings({parsed_set(a, "a"), parsed_set(b, "b")});
    std::vector<std::string> names;
    for (const auto &x : d) names.push_back(x.setting);
    EXPECT_NE(std::find(names.begin(), names.end(), "build type"), names.end());
    EXPECT_NE(std::find(names.begin(), names.end(), "oneDNN ISA"), names.end());
    EXPECT_NE(std::find(names.begin(), names.end(), "suite hash"), names.end());
    EXPECT_EQ(std::find(names.begin(), names.end(), "threads"), names.end());
}

TEST(Compare, DocumentHasTablesAndData) {
    FakeSet a, b;
    FakeCase sk;
    sk.backend = "onednn";
    sk.status = "skipped";
    sk.reason = "why";
    a.cases = {timed("naive", 1e-5), sk};
    b.cases = {timed("naive", 3e-5), sk};
    const Document doc = comparison_document(compare_sets({parsed_set(a, "a"), parsed_set(b, "b")}, {}));
    ASSERT_GE(doc.tables.size(), 3u);
    // Default layout: the usual test in the header line under the title, the
    // verdict then each side's quality, the skip reason as a footnote.
    EXPECT_EQ(doc.tables[0].title, "a -> b\n  U test: repetitions 9 vs 9 unless a note says otherwise");
    EXPECT_EQ(doc.tables[0].rows.size(), 1u);
    EXPECT_EQ(doc.tables[0].rows[0][6], "slower");
    EXPECT_EQ(doc.tables[0].rows[0].back(), "clean");
    EXPECT_EQ(doc.tables[1].title, "a -> b: no ratio");
    EXPECT_EQ(doc.tables[1].rows[0][2], "skipped [1]");
    EXPECT_EQ(doc.tables[1].notes.back(), "[1] why");
    // --wide: today's columns, the test and reason in the row, quality last.
    CompareOptions wide;
    wide.wide = true;
    const Document w = comparison_document(compare_sets({parsed_set(a, "a"), parsed_set(b, "b")}, wide));
    EXPECT_EQ(w.tables[0].title, "a -> b");
    EXPECT_EQ(w.tables[0].rows[0][7], "repetitions 9 vs 9");
    EXPECT_EQ(w.tables[0].rows[0][8], "slower");
    EXPECT_EQ(w.tables[0].rows[0][9], "clean");
    EXPECT_EQ(w.tables[1].rows[0][3], "why");
    EXPECT_TRUE(doc.data["regression"].get<bool>());
    const auto &cases = doc.data["comparisons"][0]["cases"];
    EXPECT_NEAR(cases[0]["ratio"].get<double>(), 3.0, 1e-9);
    EXPECT_FALSE(cases[1].contains("ratio"));
    EXPECT_EQ(cases[1]["verdict"], "skipped");
}

// Issue 16: compare's base and new medians are the metrics table's median_s,
// in its text, for the inputs the tidy CSV reads from the same records
// (compact and --wide tables alike).
TEST(Compare, MediansAreTheMetricsTablesRow) {
    FakeSet a, b;
    a.cases = {timed("naive", 1.234e-5)};
    b.cases = {timed("naive", 2.346e-3)};
    const std::vector<ResultSet> sets{parsed_set(a, "a"), parsed_set(b, "b")};
    const std::string base =
        table_text("median_s", metric_inputs(sets[0].cases[0], valid_times(sets[0].cases[0])));
    const std::string next =
        table_text("median_s", metric_inputs(sets[1].cases[0], valid_times(sets[1].cases[0])));
    EXPECT_EQ(base, "12.3 us");
    EXPECT_EQ(next, "2.35 ms");
    for (const bool wide : {false, true}) {
        CompareOptions o;
        o.wide = wide;
        const Document doc = comparison_document(compare_sets(sets, o));
        // case, backend, base, new, ...
        EXPECT_EQ(doc.tables.at(0).rows.at(0)[2], base) << "wide " << wide;
        EXPECT_EQ(doc.tables.at(0).rows.at(0)[3], next) << "wide " << wide;
    }
}

// The run-to-run range from archived runs (--baseline-from): a significant
// change no larger than how far the case moved between earlier runs of
// unchanged code is noisy; a larger one stays slower.
TEST(Compare, AChangeWithinTheArchivedRunToRunRangeIsNoisy) {
    std::vector<ResultSet> history;
    int i = 0;
    // Consecutive changes +9%, -6.4%, +3.9%: the largest left out, the range is 6.4%.
    for (double center : {1.00e-5, 1.09e-5, 1.02e-5, 1.06e-5}) {
        FakeSet h;
        h.cases = {timed("naive", center), timed("onednn", 2e-6)};
        history.push_back(parsed_set(h, "h" + std::to_string(i++)));
    }
    CompareOptions o;
    o.run_to_run = run_to_run_ranges(history);
    ASSERT_EQ(o.run_to_run.size(), 2u);
    RunToRunRange naive;
    for (const auto &[key, range] : o.run_to_run)
        if (key.find("naive") != std::string::npos) naive = range;
    EXPECT_EQ(naive.runs, 4u);
    EXPECT_NEAR(naive.range, 1.0 - 1.02 / 1.09, 1e-9);

    FakeSet a, b, c;
    a.cases = {timed("naive", 1e-5), timed("onednn", 2e-6)};
    b.cases = {timed("naive", 1.06e-5), timed("onednn", 2.4e-6)}; // +6%: within; onednn +20%: beyond its 0%
    c.cases = {timed("naive", 1.2e-5), timed("onednn", 2e-6)};    // +20%: beyond
    const Comparison cmp = compare_sets({parsed_set(a, "a"), parsed_set(b, "b"), parsed_set(c, "c")}, o);
    const CaseComparison *within = find(cmp.pairs[0], "naive");
    EXPECT_EQ(within->verdict, "noisy");
    EXPECT_TRUE(within->within_run_to_run);
    EXPECT_NE(within->test.find("within its run-to-run range 6.4%"), std::string::npos) << within->test;
    EXPECT_EQ(find(cmp.pairs[0], "onednn")->verdict, "slower");
    EXPECT_EQ(find(cmp.pairs[1], "naive")->verdict, "slower");
    EXPECT_FALSE(find(cmp.pairs[1], "naive")->within_run_to_run);
    // Without the archive the +6% is a change.
    EXPECT_EQ(find(compare_sets({parsed_set(a, "a"), parsed_set(b, "b")}, {}).pairs[0], "naive")->verdict, "slower");
    // The document says how many cases had a range and how many it made noisy.
    const Document doc = comparison_document(cmp);
    EXPECT_EQ(doc.data["comparisons"][0]["cases"][0]["within_run_to_run"], true);
    bool noted = false;
    for (const auto &t : doc.tables)
        for (const auto &n : t.notes) noted |= n.find("2 cases have a run-to-run range") != std::string::npos;
    EXPECT_TRUE(noted);
}

// A step in the archive (an optimisation that landed) does not widen the
// range: a later regression back to the old time is still slower.
TEST(Compare, OneStepInTheArchiveDoesNotHideARegression) {
    std::vector<ResultSet> history;
    for (double center : {2e-5, 2e-5, 1e-5, 1e-5, 1e-5}) {
        FakeSet h;
        h.cases = {timed("naive", center)};
        history.push_back(parsed_set(h, "h"));
    }
    CompareOptions o;
    o.run_to_run = run_to_run_ranges(history);
    ASSERT_EQ(o.run_to_run.size(), 1u);
    EXPECT_NEAR(o.run_to_run.begin()->second.range, 0.0, 1e-12);
    FakeSet a, b;
    a.cases = {timed("naive", 1e-5)};
    b.cases = {timed("naive", 1.5e-5)};
    EXPECT_EQ(compare_sets({parsed_set(a, "a"), parsed_set(b, "b")}, o).pairs[0].cases[0].verdict, "slower");
}

TEST(Compare, ThreeArchivedRunsGiveNoRange) {
    std::vector<ResultSet> history;
    for (double center : {1e-5, 1.5e-5, 1.2e-5}) {
        FakeSet h;
        h.cases = {timed("naive", center)};
        history.push_back(parsed_set(h, "h"));
    }
    EXPECT_TRUE(run_to_run_ranges(history).empty());
}

// Back-to-back repetitions move together when the machine has a slow spell:
// a changed verdict then comes with the advice to interleave (or use an
// archive); the order is a setting the header lists when it differs.
TEST(Compare, BackToBackRunsWithAChangeGetTheInterleavingAdvice) {
    FakeSet a, b;
    a.cases = {timed("naive", 1e-5)};
    b.cases = {timed("naive", 1.3e-5)};
    auto has_advice = [](const Comparison &c) {
        for (const auto &t : comparison_document(c).tables)
            for (const auto &n : t.notes)
                if (n.find("--benchmark_enable_random_interleaving=true") != std::string::npos) return true;
        return false;
    };
    const Comparison back_to_back = compare_sets({parsed_set(a, "a"), parsed_set(b, "b")}, {});
    EXPECT_EQ(back_to_back.pairs[0].cases[0].verdict, "slower");
    EXPECT_TRUE(has_advice(back_to_back));

    nlohmann::json interleaved = fake_set_json(b);
    interleaved["context"]["opbench"]["measurement"]["benchmark_args"] = {
        "--benchmark_enable_random_interleaving=true"};
    const Comparison mixed = compare_sets({parsed_set(a, "a"), parse_result_set(interleaved.dump(), "b")}, {});
    EXPECT_FALSE(has_advice(mixed));
    bool listed = false;
    for (const auto &d : mixed.differing)
        if (d.setting == "repetition order") {
            listed = true;
            EXPECT_EQ(d.values, (std::vector<std::string>{"back to back", "interleaved"}));
        }
    EXPECT_TRUE(listed);

    FakeSet same = a;
    EXPECT_FALSE(has_advice(compare_sets({parsed_set(a, "a"), parsed_set(same, "b")}, {}))) << "no change, no advice";
}

// settings.processes (issue 44) is a setting the header lists when the sets
// differ in it; a set from before it has none and was measured in 3
// processes, so it matches a set of 3 and not a set of 1.
TEST(Compare, TheProcessesSettingIsListedWhenTheSetsDiffer) {
    FakeSet a;
    a.cases = {timed("naive", 1e-5)};
    auto with_processes = [&](int n) {
        nlohmann::json j = fake_set_json(a);
        for (auto &e : j["benchmarks"])
            if (e.contains("settings")) e["settings"]["processes"] = n;
        return parse_result_set(j.dump(), "p" + std::to_string(n));
    };
    auto processes_row = [](const Comparison &c) -> std::vector<std::string> {
        for (const auto &d : c.differing)
            if (d.setting == "processes") return d.values;
        return {};
    };
    EXPECT_EQ(processes_row(compare_sets({with_processes(3), with_processes(1)}, {})),
              (std::vector<std::string>{"3", "1"}));
    EXPECT_TRUE(processes_row(compare_sets({parsed_set(a, "old"), with_processes(3)}, {})).empty());
    EXPECT_EQ(processes_row(compare_sets({parsed_set(a, "old"), with_processes(1)}, {})),
              (std::vector<std::string>{"3", "1"}));
}

// A change no larger than how far the case moved between the worker
// processes of one run (stats.process) is what a new process draw alone
// produces: noisy. Without process indices, or beyond that spread, the U
// test decides.
TEST(Compare, AChangeWithinTheSpreadAcrossWorkerProcessesIsNoisy) {
    auto with_processes = [](std::vector<double> medians) {
        FakeCase c;
        c.medians = std::move(medians);
        c.processes = {0, 0, 0, 1, 1, 1, 2, 2, 2};
        return c;
    };
    FakeSet base, spread_out, tight;
    base.cases = {with_processes(reps(1e-5))};
    // Worker 2 of the new run 7.5% slower than workers 0 and 1 (1.07 vs 1.15).
    spread_out.cases = {
        with_processes({1.07e-5, 1.071e-5, 1.069e-5, 1.07e-5, 1.072e-5, 1.068e-5, 1.15e-5, 1.151e-5, 1.149e-5})};
    tight.cases = {with_processes(reps(1.2e-5))};
    const Comparison c =
        compare_sets({parsed_set(base, "base"), parsed_set(spread_out, "new"), parsed_set(tight, "tight")}, {});
    const CaseComparison &within = c.pairs[0].cases[0];
    EXPECT_NEAR(within.ratio, 1.07, 1e-3);
    EXPECT_LT(within.p_value, 0.05) << "the U test alone would call it slower";
    EXPECT_NEAR(within.process_spread, 0.08 / 1.07, 1e-3);
    EXPECT_EQ(within.verdict, "noisy");
    EXPECT_TRUE(within.within_process_spread);
    EXPECT_NE(within.test.find("within its spread across worker processes 7.5%"), std::string::npos) << within.test;
    const CaseComparison &beyond = c.pairs[1].cases[0];
    EXPECT_EQ(beyond.verdict, "slower") << "+20% beyond a tight spread";
    EXPECT_FALSE(beyond.within_process_spread);

    // The same times without process indices (an older set, --isolate none's
    // single process): no spread to judge by.
    for (auto &set : {&base, &spread_out})
        for (auto &fc : set->cases) fc.processes.clear();
    EXPECT_EQ(compare_sets({parsed_set(base, "base"), parsed_set(spread_out, "new")}, {}).pairs[0].cases[0].verdict,
              "slower");
}

TEST(Compare, ProcessSpreadNeedsTwoProcesses) {
    ValidTimes one;
    one.repetition_medians = {1.0, 1.2, 1.4};
    one.repetition_processes = {0, 0, 0};
    one.median = 1.2;
    EXPECT_EQ(process_spread(one), 0.0);
    ValidTimes two = one;
    two.repetition_processes = {0, 1, 1};
    EXPECT_NEAR(process_spread(two), (1.3 - 1.0) / 1.2, 1e-12);
}

// The compact table fits 100 columns with the widest cells a loaded machine
// gives: a long case name, a 3000x change, a U test note and a disturbed side
// against a noisy one. The row carries one footnote mark, at its end, and
// the quality is the worse side's, with both sides named in the footnote.
TEST(Compare, TheCompactTableFits100ColumnsOnALoadedMachinesWorstRows) {
    FakeCase attn = timed("onednn", 3e-6, 0.3);
    attn.op = "attention";
    attn.variant = "composed";
    attn.params = {{"B", 1}, {"H", 4}, {"KVH", 2}, {"Sq", 1}, {"Skv", 96}, {"D", 32}, {"causal", 1}};
    attn.name = "attention.gqa";
    FakeCase disturbed = attn;
    disturbed.medians = {12e-3, 12e-3, 24e-3, 12e-3, 36e-3, 12e-3, 3e-6};
    disturbed.target_met = {false, false, false, false, false, false, true};
    // A neighbour that differs in two parameters, so the compact names keep them.
    FakeCase other = attn;
    other.variant = "fused";
    other.params["causal"] = 0;
    other.name = "attention.gqa_long_name";
    FakeSet a, b;
    a.cases = {attn, other, timed("naive", 1e-5)};
    b.cases = {disturbed, other, timed("naive", 1e-5)};
    const Document doc = comparison_document(compare_sets({parsed_set(a, "a"), parsed_set(b, "b")}, {}));
    const std::string text = write_console(doc);
    std::size_t start = 0;
    while (start < text.size()) {
        std::size_t end = text.find('\n', start);
        if (end == std::string::npos) end = text.size();
        const std::string line = text.substr(start, end - start);
        EXPECT_LE(display_width(line), 100u) << line;
        start = end + 1;
    }
    const auto compared = std::find_if(doc.tables.begin(), doc.tables.end(),
                                       [](const Table &t) { return t.title.rfind("a -> b\n", 0) == 0; });
    ASSERT_NE(compared, doc.tables.end());
    const auto &row = compared->rows[0];
    EXPECT_EQ(row[1], "onednn");
    EXPECT_NE(row[4].find('x'), std::string::npos) << "a change of 10x or more reads as a ratio: " << row[4];
    EXPECT_EQ(row.back().rfind("disturbed [", 0), 0u) << row.back();
    for (std::size_t i = 0; i + 1 < row.size(); ++i) EXPECT_EQ(row[i].find('['), std::string::npos) << row[i];
}

// Issue 30: the tidy CSV's rows filter and pair. An unnamed case's `case` is
// its op (never empty); `key` is the entry without its backend, so naive and
// onednn rows of one case share it and different shapes do not; `threads` is
// settings.threads_resolved (what ran), not the requested 0; `spread_pct` is
// `spread` in percent, right after it.
TEST(TidyRecords, CaseKeyThreadsAndSpreadPercent) {
    FakeSet s;
    FakeCase named = timed("naive", 1e-5, 0.02);
    named.name = "square";
    FakeCase other_shape = timed("naive", 1e-5);
    other_shape.params = {{"R", 64}, {"C", 128}};
    s.cases = {timed("naive", 1e-5, 0.02), timed("onednn", 2e-6), other_shape, named};
    nlohmann::json j = fake_set_json(s);
    for (auto &e : j["benchmarks"]) e["settings"]["threads_resolved"] = 2;
    const Table t = entry_records({parse_result_set(j.dump(), "a")});
    const auto col = [&](const std::string &name) {
        const auto it = std::find(t.columns.begin(), t.columns.end(), name);
        EXPECT_NE(it, t.columns.end()) << name;
        return std::size_t(it - t.columns.begin());
    };
    ASSERT_EQ(t.rows.size(), 4u);
    EXPECT_EQ(t.rows[0][col("case")], "add");
    EXPECT_EQ(t.rows[3][col("case")], "square");
    EXPECT_EQ(t.rows[0][col("key")], "add/C:128/R:32/dt:f32");
    EXPECT_EQ(t.rows[0][col("key")], t.rows[1][col("key")]);
    EXPECT_NE(t.rows[0][col("key")], t.rows[2][col("key")]);
    EXPECT_EQ(t.rows[3][col("key")], "add/C:128/R:32/dt:f32/case:square");
    for (const auto &r : t.rows) EXPECT_EQ(r[col("threads")], "2");
    ASSERT_EQ(col("spread_pct"), col("spread") + 1);
    const double spread = std::stod(t.rows[0][col("spread")]);
    EXPECT_GT(spread, 0);
    EXPECT_NEAR(std::stod(t.rows[0][col("spread_pct")]), 100 * spread, 1e-9 * spread);
    // A set from before threads_resolved keeps what it wrote.
    const Table old = entry_records({parsed_set(s, "old")});
    EXPECT_EQ(old.rows[0][col("threads")], "0");
}

TEST(TidyRecords, EntryKeyDropsOnlyTheBackend) {
    EXPECT_EQ(entry_key("matmul/M:64/dt:f32/be:onednn/case:sq"), "matmul/M:64/dt:f32/case:sq");
    EXPECT_EQ(entry_key("decoder/tiny/phase:decode/dt:f32/thr:1/be:naive@base"), "decoder/tiny/phase:decode/dt:f32/thr:1");
    EXPECT_EQ(entry_key("add/R:32/dt:f32"), "add/R:32/dt:f32");
}
