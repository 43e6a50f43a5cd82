// Change points of a case's archived runs (issue 43): the fit finds planted
// steps at their run, leaves steady series, lone slow runs and starved runs
// alone, and marks a step that a later one undid; history's runs stand in
// commit order; --changes refuses a series too short to hold a change.
#include "readers/change_history.hpp"
#include "readers/change_points.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

using namespace opbench;

namespace {

// `runs` runs around 10 us with run-to-run noise `sigma` (log), times
// level(i), each with the spread its repetitions would show.
template <class Level>
std::vector<SeriesPoint> series(std::size_t runs, double sigma, Level level, unsigned seed = 43) {
    std::mt19937 rng(seed);
    std::normal_distribution<double> z(0, 1);
    std::vector<SeriesPoint> s;
    for (std::size_t i = 0; i < runs; ++i)
        s.push_back({1e-5 * level(i) * std::exp(sigma * z(rng)), sigma, 3, true});
    return s;
}

double flat(std::size_t) { return 1.0; }

} // namespace

TEST(ChangePoints, SteadySeriesHasNone) {
    for (unsigned seed = 1; seed <= 20; ++seed)
        EXPECT_TRUE(find_change_points(series(300, 0.02, flat, seed)).empty()) << "seed " << seed;
}

TEST(ChangePoints, FindsAStepAtItsRunWithItsSize) {
    const auto s = series(120, 0.01, [](std::size_t i) { return i >= 60 ? 1.10 : 1.0; });
    const auto c = find_change_points(s);
    ASSERT_EQ(c.size(), 1u);
    EXPECT_EQ(c[0].before, 59u);
    EXPECT_EQ(c[0].after, 60u);
    EXPECT_NEAR(c[0].ratio, 1.10, 0.01);
    EXPECT_LT(c[0].ratio_low, 1.10);
    EXPECT_GT(c[0].ratio_high, 1.10);
    EXPECT_GT(c[0].ratio_low, 1.05);
    EXPECT_EQ(c[0].runs_before, 60u);
    EXPECT_EQ(c[0].runs_after, 60u);
    EXPECT_FALSE(c[0].undone_by);
}

TEST(ChangePoints, ALoneSlowRunIsNotAChange) {
    auto s = series(100, 0.005, flat);
    s[50].median_s *= 1.6; // a neighbour's episode on the hypervisor
    s[97].median_s *= 1.5; // among the newest runs too
    EXPECT_TRUE(find_change_points(s).empty());
}

TEST(ChangePoints, UnusableRunsAreLeftOutAndSkippedInTheRange) {
    auto s = series(100, 0.01, [](std::size_t i) { return i >= 50 ? 0.9 : 1.0; });
    for (std::size_t i : {30u, 49u, 50u, 70u}) {
        s[i].usable = false;   // starved or failed: no time of its op
        s[i].median_s = 1e-2; // whatever it holds is not read
    }
    const auto c = find_change_points(s);
    ASSERT_EQ(c.size(), 1u);
    EXPECT_EQ(c[0].before, 48u); // the last run with a time before the step
    EXPECT_EQ(c[0].after, 51u);
    EXPECT_NEAR(c[0].ratio, 0.9, 0.01);
    EXPECT_EQ(c[0].runs_before + c[0].runs_after, 96u);
}

TEST(ChangePoints, AStepThatRevertsIsMarkedUndone) {
    const auto s = series(150, 0.01, [](std::size_t i) { return i >= 50 && i < 90 ? 1.08 : 1.0; });
    const auto c = find_change_points(s);
    ASSERT_EQ(c.size(), 2u);
    EXPECT_EQ(c[0].after, 50u);
    EXPECT_EQ(c[1].after, 90u);
    ASSERT_TRUE(c[0].undone_by);
    EXPECT_EQ(*c[0].undone_by, 1u);
    EXPECT_FALSE(c[1].undone_by);
}

TEST(ChangePoints, TwoStepsTheSameWayAreNotUndone) {
    const auto s = series(150, 0.01, [](std::size_t i) { return i >= 50 ? (i >= 100 ? 1.2 : 1.1) : 1.0; });
    const auto c = find_change_points(s);
    ASSERT_EQ(c.size(), 2u);
    EXPECT_FALSE(c[0].undone_by);
    EXPECT_FALSE(c[1].undone_by);
}

TEST(ChangePoints, TooFewRunsHoldNoChange) {
    const auto s = series(5, 0.01, [](std::size_t i) { return i >= 3 ? 2.0 : 1.0; });
    EXPECT_TRUE(find_change_points(s).empty()); // 5 < 2 x kDefaultMinRuns
}

TEST(ChangePoints, ANoisyRunWeighsLess) {
    // Three runs 6% slower among quiet ones are a change and its return;
    // the same three runs with repetitions that spread 50% say little.
    auto quiet = series(60, 0.01, [](std::size_t i) { return i >= 30 && i < 33 ? 1.06 : 1.0; });
    auto noisy = quiet;
    for (std::size_t i = 30; i < 33; ++i) noisy[i].spread = 0.5;
    EXPECT_EQ(find_change_points(quiet).size(), 2u);
    EXPECT_TRUE(find_change_points(noisy).empty());
}

TEST(ChangePoints, SpreadsThatOverstateTheScatterKeepTheirProportions) {
    // A loaded machine: every run's repetitions spread 30% while its median
    // moves 1%; a 5% step is still found (the variances take the series'
    // scale), and an A/A series of such runs still has none.
    auto stepped = series(200, 0.01, [](std::size_t i) { return i >= 100 ? 1.05 : 1.0; });
    auto steady = series(200, 0.01, flat, 7);
    for (auto *s : {&stepped, &steady})
        for (auto &p : *s) p.spread = 0.3;
    const auto c = find_change_points(stepped);
    ASSERT_EQ(c.size(), 1u);
    EXPECT_EQ(c[0].after, 100u);
    EXPECT_TRUE(find_change_points(steady).empty());
}

TEST(ChangePoints, BetweenRunSigmaFromSuccessiveDifferences) {
    const std::vector<double> x{0, 0.02, 0, 0.02, 0, 0.02, 0};
    EXPECT_NEAR(between_run_sigma(x, std::vector<double>(x.size(), 0)), 1.4826 * 0.02 / std::sqrt(2.0), 1e-12);
    // Within-run variance that explains it all leaves nothing between runs.
    EXPECT_EQ(between_run_sigma(x, std::vector<double>(x.size(), 1.0)), 0.0);
}

namespace {
ArchiveEntry run(const std::string &time, const std::string &commit) {
    ArchiveEntry e;
    e.timestamp = time;
    e.commit = "opbench0";
    e.commit_under_test = commit;
    e.suite = "quick";
    return e;
}
} // namespace

TEST(HistoryOrder, RunsOfACommitStandWhereItFirstAppears) {
    std::vector<ArchiveEntry> runs{run("t1", "aaa"), run("t2", "bbb"), run("t3", ""), run("t4", "aaa"),
                                   run("t5", "ccc")};
    std::vector<std::string> notes;
    order_by_commit(runs, notes);
    std::vector<std::string> times;
    for (const auto &r : runs) times.push_back(r.timestamp);
    EXPECT_EQ(times, (std::vector<std::string>{"t1", "t4", "t2", "t3", "t5"}));
    ASSERT_EQ(notes.size(), 1u);
    EXPECT_NE(notes[0].find("aaa"), std::string::npos) << notes[0];
    EXPECT_EQ(run_commit(runs[3]), "opbench0"); // no commit under test: opbench's
}

TEST(HistoryOrder, WithoutCommitsUnderTestTimeOrderStays) {
    std::vector<ArchiveEntry> runs{run("t1", ""), run("t2", ""), run("t3", "")};
    std::vector<std::string> notes;
    order_by_commit(runs, notes);
    EXPECT_EQ(runs[0].timestamp, "t1");
    EXPECT_EQ(runs[2].timestamp, "t3");
    EXPECT_TRUE(notes.empty());
}

namespace {
// A series of `n` runs of one case whose time is times[i].
HistorySeries history_of(const std::vector<double> &times) {
    HistorySeries s;
    s.machine = "m1";
    CaseHistory c{"add/N:1 [naive]", {}};
    for (std::size_t i = 0; i < times.size(); ++i) {
        s.runs.push_back(run("t" + std::to_string(1000 + i), "c" + std::to_string(1000 + i)));
        ValidTimes v;
        v.status = "ok";
        v.median = times[i];
        v.summary.repetitions = 3;
        v.summary.spread = 0.01;
        c.times.push_back(v);
    }
    s.cases.push_back(std::move(c));
    return s;
}
} // namespace

TEST(ChangeHistory, OneRunOnlyIsAClearError) {
    try {
        (void)change_history(history_of({1e-5}), {});
        FAIL() << "no error";
    } catch (const ArchiveError &e) {
        EXPECT_NE(std::string(e.what()).find("has 1 run"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("at least 6"), std::string::npos) << e.what();
    }
}

TEST(ChangeHistory, NewestRegressionNamesItsCommits) {
    std::vector<double> t;
    for (std::size_t i = 0; i < 40; ++i) t.push_back(1e-5 * (i >= 36 ? 1.2 : 1.0) * (1 + 0.003 * (i % 3)));
    const ChangeHistory h = change_history(history_of(t), {});
    const auto found = newest_regressions(h, 5);
    ASSERT_EQ(found.size(), 1u);
    EXPECT_NE(found[0].find("between c1035 (run 35) and c1036 (run 36)"), std::string::npos) << found[0];
    EXPECT_TRUE(newest_regressions(h, 3).empty()); // it began 4 runs ago
    const Document doc = change_history_document(h, {});
    ASSERT_EQ(doc.data["cases"][0]["changes"].size(), 1u);
    EXPECT_EQ(doc.data["cases"][0]["changes"][0]["first_after"]["commit"], "c1036");
    EXPECT_EQ(doc.records.rows.size(), 1u);
    for (const auto &row : doc.tables[0].rows) EXPECT_EQ(row.size(), doc.tables[0].columns.size());
}
