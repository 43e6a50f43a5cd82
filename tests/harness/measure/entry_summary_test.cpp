// measure/entry_summary: the one median and quality verdict of an entry,
// from constructed repetitions: each verdict and each reason, the median
// policy (every repetition counts), and the JSON path agreeing with the
// plain-number path.
#include "measure/entry_summary.hpp"

#include <gtest/gtest.h>

#include "measure/starvation.hpp"

#include <algorithm>
#include <cmath>

using namespace opbench;

namespace {

std::vector<RepetitionFigures> reps(std::initializer_list<double> medians, double fastest_factor = 0.95) {
    std::vector<RepetitionFigures> out;
    for (double m : medians) out.push_back({m, 0.005, true, m * fastest_factor});
    return out;
}

EntryConditions quiet() { return {0.01, 1, 2, 0.1}; }

bool has(const EntrySummary &s, const std::string &code) {
    return std::any_of(s.reasons.begin(), s.reasons.end(), [&](const QualityReason &r) { return r.code == code; });
}

} // namespace

TEST(EntrySummary, TightRepetitionsOnAQuietMachineAreClean) {
    const auto s = summarize_entry(reps({10e-6, 10.02e-6, 10.04e-6, 9.99e-6, 10.01e-6}), quiet());
    EXPECT_EQ(s.quality, Quality::clean);
    EXPECT_TRUE(s.reasons.empty());
    EXPECT_EQ(s.verdict(), "clean");
    EXPECT_DOUBLE_EQ(s.median_s, 10.01e-6);
    EXPECT_NEAR(s.spread, (10.04e-6 - 9.99e-6) / 2 / 10.01e-6, 1e-12);
    EXPECT_EQ(s.repetitions, 5u);
}

TEST(EntrySummary, MedianCountsRepetitionsThatMissedTheirNoiseTarget) {
    // Six slow repetitions missed the target, three fast ones met it: the
    // median is over all nine (Google Benchmark's own median aggregate), and
    // the misses are a reason, never a silent drop.
    std::vector<RepetitionFigures> r;
    for (double m : {24e-3, 26e-3, 28e-3, 30e-3, 31e-3, 32e-3}) r.push_back({m, 0.2, false, 27e-6});
    for (double m : {27e-6, 29e-6, 31e-6}) r.push_back({m, 0.004, true, 26e-6});
    const auto s = summarize_entry(r, quiet());
    EXPECT_DOUBLE_EQ(s.median_s, 26e-3); // the fifth of nine, not the fast three's 29 us
    EXPECT_EQ(s.missed_noise_target, 6u);
    EXPECT_EQ(s.quality, Quality::disturbed);
    EXPECT_TRUE(has(s, "bimodal"));
    EXPECT_TRUE(has(s, "missed_noise_target"));
    EXPECT_EQ(s.reasons.front().severity, Quality::disturbed) << "disturbed reasons come first";
}

TEST(EntrySummary, SpreadAboveTheNoiseTargetIsNoisy) {
    const auto s = summarize_entry(reps({10e-6, 11e-6, 12e-6}), quiet());
    EXPECT_EQ(s.quality, Quality::noisy);
    ASSERT_EQ(s.reasons.size(), 1u);
    EXPECT_EQ(s.reasons[0].code, "spread");
    EXPECT_NE(s.verdict().find("noisy: repetitions spread ±9.1% > 1% noise target"), std::string::npos)
        << s.verdict();
    // The same spread under a looser target is clean.
    EntryConditions loose = quiet();
    loose.noise_target = 0.10;
    EXPECT_EQ(summarize_entry(reps({10e-6, 11e-6, 12e-6}), loose).quality, Quality::clean);
}

TEST(EntrySummary, MissedNoiseTargetIsNoisy) {
    auto r = reps({10e-6, 10e-6, 10e-6});
    r[1].noise_target_met = false;
    const auto s = summarize_entry(r, quiet());
    EXPECT_EQ(s.quality, Quality::noisy);
    ASSERT_TRUE(has(s, "missed_noise_target"));
    EXPECT_NE(s.verdict().find("1 of 3 repetitions missed the 1% noise target"), std::string::npos) << s.verdict();
}

TEST(EntrySummary, HundredfoldApartRepetitionsAreDisturbedAsBimodal) {
    const auto s = summarize_entry(reps({27e-6, 28e-6, 2.7e-3, 2.8e-3, 2.9e-3}), EntryConditions{});
    EXPECT_EQ(s.quality, Quality::disturbed);
    ASSERT_TRUE(has(s, "bimodal"));
    EXPECT_NE(s.verdict().find("bimodal: 2 repetitions near 27.5 us, 3 near 2.8 ms"), std::string::npos)
        << s.verdict();
    // Just under the gap: not bimodal.
    EXPECT_FALSE(has(summarize_entry(reps({10e-6, 29e-6}), EntryConditions{}), "bimodal"));
}

TEST(EntrySummary, WholeMillisecondMediansOfMicrosecondWorkAreQuantised) {
    // Every repetition at about 6, 8 or 12 ms while the fastest sample took
    // 30 us: no bimodal gap (all slow), but quantised.
    std::vector<RepetitionFigures> r;
    for (double m : {6.02e-3, 8.0e-3, 7.98e-3, 12.03e-3, 6.0e-3}) r.push_back({m, 0.3, true, 30e-6});
    const auto s = summarize_entry(r, EntryConditions{});
    EXPECT_FALSE(has(s, "bimodal"));
    ASSERT_TRUE(has(s, "quantised"));
    EXPECT_EQ(s.quality, Quality::disturbed);
    EXPECT_NE(s.verdict().find("5 of 5 repetitions at whole milliseconds (6 ms to 12 ms) for work that ran in "
                               "30 us: threads waited for a scheduler slice"),
              std::string::npos)
        << s.verdict();
}

TEST(EntrySummary, WholeMillisecondMediansAtSeveralValuesAreQuantisedWithoutAFastSample) {
    // Measured on this 2-core machine under load: oneDNN softmax (1.8 us on
    // one thread) at 2 threads, every sample 10-26 ms.
    std::vector<RepetitionFigures> r;
    for (double m : {25.990e-3, 25.994e-3, 25.8646e-3, 23.9877e-3, 19.7779e-3, 19.9792e-3, 19.9934e-3, 19.9821e-3,
                     19.9913e-3})
        r.push_back({m, 0.2, false, 9.7e-3});
    const auto s = summarize_entry(r, EntryConditions{});
    ASSERT_TRUE(has(s, "quantised")) << s.verdict();
    EXPECT_EQ(s.quality, Quality::disturbed);
    EXPECT_NE(s.verdict().find("7 of 9 repetitions at whole milliseconds (20 ms to 26 ms), at 3 different ones"), std::string::npos)
        << s.verdict();
    // A steady op that happens to sit on a whole millisecond: one value, not quantised.
    std::vector<RepetitionFigures> steady;
    for (double m : {20.01e-3, 20.02e-3, 20.0e-3, 19.99e-3, 20.03e-3}) steady.push_back({m, 0.002, true, 19.9e-3});
    EXPECT_FALSE(has(summarize_entry(steady, EntryConditions{}), "quantised"));
    // Too few repetitions to tell.
    EXPECT_FALSE(has(summarize_entry(std::span(r).first(4), EntryConditions{}), "quantised"));
}

TEST(EntrySummary, MillisecondWorkAtWholeMillisecondsIsNotQuantised) {
    // A genuinely 6 ms op: its fastest sample is close to its median.
    EXPECT_FALSE(has(summarize_entry(reps({6.0e-3, 6.0e-3, 6.01e-3}), quiet()), "quantised"));
    // Slow but between whole milliseconds: not a slice.
    std::vector<RepetitionFigures> r{{6.5e-3, 0.01, true, 30e-6}, {6.5e-3, 0.01, true, 30e-6}};
    EXPECT_FALSE(has(summarize_entry(r, quiet()), "quantised"));
}

TEST(EntrySummary, MoreRunnableThreadsThanFreeCpusIsNoisy) {
    // 2 threads, 2 CPUs, load 1.6: 0.4 free.
    const auto s = summarize_entry(reps({10e-6, 10e-6}), {0.01, 2, 2, 1.6});
    EXPECT_EQ(s.quality, Quality::noisy);
    ASSERT_TRUE(has(s, "oversubscribed"));
    EXPECT_NE(s.verdict().find("2 threads on 0.4 free CPUs (load 1.60 on 2): --threads 1 or --cpus"),
              std::string::npos)
        << s.verdict();
    // One thread with a CPU free: fine; unknown load: no claim.
    EXPECT_FALSE(has(summarize_entry(reps({10e-6, 10e-6}), {0.01, 1, 2, 0.9}), "oversubscribed"));
    EXPECT_FALSE(has(summarize_entry(reps({10e-6, 10e-6}), {0.01, 2, 2, NAN}), "oversubscribed"));
}

TEST(EntrySummary, NoRepetitionGivesNoMedian) {
    const auto s = summarize_entry({}, quiet());
    EXPECT_EQ(s.repetitions, 0u);
    EXPECT_TRUE(std::isnan(s.median_s));
    EXPECT_TRUE(std::isnan(s.spread));
    EXPECT_TRUE(s.to_json()["median_seconds"].is_null());
}

TEST(EntrySummary, ResultSetEntriesGiveTheSameSummaryAsPlainNumbers) {
    const nlohmann::json context = {
        {"num_cpus", 2},
        {"load_avg", {9.0, 1.0, 1.0}}, // Google Benchmark's: used only without opbench's own
        {"opbench",
         {{"machine", {{"allowed_cores", 2}, {"load_average", {1.6, 1.0, 1.0}}}},
          {"backends", {{"naive", {{"info", {{"threads", "1"}}}}}, {"onednn", {{"info", nlohmann::json::object()}}}}},
          {"measurement", {{"cpus", nlohmann::json::array()}}}}}};
    auto entry = [](const std::string &backend, double median, bool met, double min) {
        return nlohmann::json{{"backend", backend},
                              {"real_time", 999.0}, // stats.median wins over real_time
                              {"time_unit", "us"},
                              {"settings", {{"noise_target", 0.01}, {"threads", 0}, {"threads_resolved", 2}}},
                              {"stats", {{"median", median}, {"noise", 0.004}, {"noise_target_met", met}, {"min", min}}}};
    };
    const std::vector<nlohmann::json> onednn = {entry("onednn", 27e-6, true, 26e-6),
                                                entry("onednn", 24e-3, false, 26e-6),
                                                entry("onednn", 25e-3, false, 26e-6)};
    std::vector<const nlohmann::json *> ptrs;
    for (const auto &e : onednn) ptrs.push_back(&e);
    const auto from_json = summarize_entry_json(ptrs, context);
    const std::vector<RepetitionFigures> plain = {
        {27e-6, 0.004, true, 26e-6}, {24e-3, 0.004, false, 26e-6}, {25e-3, 0.004, false, 26e-6}};
    const auto from_numbers = summarize_entry(plain, {0.01, 2, 2, 1.6});
    EXPECT_EQ(from_json.to_json(), from_numbers.to_json());
    EXPECT_DOUBLE_EQ(from_json.median_s, 24e-3);
    EXPECT_TRUE(has(from_json, "oversubscribed")) << "threads_resolved 2 on 0.4 free CPUs";

    // The naive backend says it runs one thread whatever the setting.
    const auto naive = entry("naive", 10e-6, true, 9.9e-6);
    EXPECT_EQ(entry_conditions(naive, context).threads, 1);
    // Without stats, Google Benchmark's real_time in its unit.
    nlohmann::json bare = {{"real_time", 12.5}, {"time_unit", "us"}};
    EXPECT_DOUBLE_EQ(repetition_figures(bare).median_s, 12.5e-6);
}

TEST(EntrySummary, TheRunsRepetitionRecordsGiveTheSameFiguresAsItsResultSetEntries) {
    // What the runner would pass while measuring, and what the readers read
    // back from the entry it writes (stats.median, noise, noise_target_met, min).
    RepetitionRecord rec;
    rec.summary.median = 27e-6;
    rec.summary.noise = 0.004;
    rec.summary.min = 26e-6;
    rec.target_met = false;
    const RepetitionFigures from_record = repetition_figures(rec);
    const RepetitionFigures from_entry = repetition_figures(nlohmann::json{
        {"stats", {{"median", 27e-6}, {"noise", 0.004}, {"noise_target_met", false}, {"min", 26e-6}}}});
    EXPECT_DOUBLE_EQ(from_record.median_s, from_entry.median_s);
    EXPECT_DOUBLE_EQ(from_record.noise, from_entry.noise);
    EXPECT_EQ(from_record.noise_target_met, from_entry.noise_target_met);
    EXPECT_FALSE(from_record.noise_target_met);
    EXPECT_DOUBLE_EQ(from_record.fastest_s, from_entry.fastest_s);
}

// ---- Starvation (measure/starvation.hpp): the rule and its figures. ----

namespace {

RunQueueFigures waited(double wait_s, std::int64_t waits, int threads) { return {wait_s, waits, threads, waits}; }

} // namespace

// A starved OpenMP team: every 16 ms sample of a 4 us op had a thread in the
// run queue for most of it; the spread is tight, so only the wait shows it.
TEST(Starvation, EverySampleDelayedByATickIsStarved) {
    const std::vector<double> samples(10, 16e-3);
    const StarvationVerdict v = judge_starvation(waited(0.30, 20, 2), samples, 0.17);
    EXPECT_TRUE(v.starved);
    EXPECT_GT(v.share, 0.5);
}

// One thread preempted now and then: the waits sit in the samples above the
// median (their excess explains them), and the median is the op's.
TEST(Starvation, WaitsInTheSlowSamplesOnlyAreNotStarvation) {
    std::vector<double> samples(100, 1e-3);
    for (int i = 0; i < 10; ++i) samples[std::size_t(i) * 10] += 4e-3; // ten 4 ms waits
    const StarvationVerdict v = judge_starvation(waited(0.04, 10, 1), samples, 0.14);
    EXPECT_FALSE(v.starved);
    EXPECT_DOUBLE_EQ(v.share, 0.0);
}

// Waits that fell between samples (the clock and stopping rule of a tiny
// op take longer than its samples) did not delay them.
TEST(Starvation, WaitsBetweenTheSamplesAreNotStarvation) {
    // 13 ms of samples in a 100 ms repetition; of four 5 ms waits, the one
    // that hit a sample shows as its excess.
    std::vector<double> samples(4000, 3.3e-6);
    samples[100] += 5e-3;
    const StarvationVerdict v = judge_starvation(waited(0.020, 4, 1), samples, 0.100);
    EXPECT_FALSE(v.starved) << v.share;
}

// Microsecond waits of threads waking on idle CPUs are part of the op: many
// of them add up, but no wait is a scheduler slice.
TEST(Starvation, WakeUpLatencyIsNotStarvation) {
    const std::vector<double> samples(1000, 10e-6);
    const StarvationVerdict v = judge_starvation(waited(1000 * 2 * 3e-6, 2000, 2), samples, 0.01);
    EXPECT_GT(v.share, kStarvedShare);
    EXPECT_FALSE(v.starved); // mean wait 3 us < kSchedulerWaitSeconds
}

TEST(Starvation, UnknownFiguresNeverStarve) {
    const std::vector<double> samples(10, 16e-3);
    const StarvationVerdict v = judge_starvation(RunQueueFigures{}, samples, 0.2);
    EXPECT_FALSE(v.starved);
    EXPECT_TRUE(std::isnan(v.share));
}

// Two readings of the counters: threads that did not run are not the work's;
// a thread born between them (an OpenMP team's first region) counts from 0.
TEST(Starvation, FiguresBetweenTwoReadingsCountTheThreadsThatRan) {
    RunQueueReading a, b;
    a.readable = b.readable = true;
    a.involuntary_switches = 3;
    b.involuntary_switches = 10;
    a.threads[1] = {0.5, 100};
    b.threads[1] = {0.6, 120};  // ran 20 times, waited 0.1 s
    a.threads[2] = {9.0, 50};
    b.threads[2] = {9.0, 50};   // asleep throughout
    b.threads[3] = {0.02, 4};   // new
    const RunQueueFigures f = run_queue_between(a, b);
    EXPECT_NEAR(f.wait_s, 0.12, 1e-12);
    EXPECT_EQ(f.waits, 24);
    EXPECT_EQ(f.threads, 2);
    EXPECT_EQ(f.involuntary_switches, 7);
    EXPECT_TRUE(std::isnan(run_queue_between(RunQueueReading{}, b).wait_s));
}

// This process's own counters are readable on Linux and move while it runs.
TEST(Starvation, ThisProcessReadsItsOwnRunQueue) {
    const RunQueueReading r = read_run_queue();
    if (!r.readable) GTEST_SKIP() << "no /proc/self/task/*/schedstat here";
    EXPECT_GE(r.threads.size(), 1u);
    EXPECT_GE(r.involuntary_switches, 0);
}

// A starved repetition is left out of the median, with its reason; all
// starved: no median, and the run's status reason names the remedy.
TEST(EntrySummary, StarvedRepetitionsAreLeftOutAndAllStarvedHasNoMedian) {
    std::vector<RepetitionFigures> r = reps({4e-6, 16e-3, 4.2e-6, 16e-3, 4.1e-6});
    r[1].starved = r[3].starved = true;
    const auto s = summarize_entry(r, quiet());
    EXPECT_DOUBLE_EQ(s.median_s, 4.1e-6);
    EXPECT_EQ(s.repetitions, 3u);
    EXPECT_EQ(s.starved_repetitions, 2u);
    EXPECT_TRUE(has(s, "starved"));
    EXPECT_FALSE(s.all_starved());
    for (auto &x : r) x.starved = true;
    const auto all = summarize_entry(r, quiet());
    EXPECT_TRUE(all.all_starved());
    EXPECT_TRUE(std::isnan(all.median_s));

    std::vector<RepetitionRecord> records(3);
    for (auto &rec : records) {
        rec.summary.median = 16e-3;
        rec.starved = true;
        rec.starved_share = 0.7;
        rec.threads_ran = 2;
        rec.remeasured = 2;
    }
    const auto why = starved_reason(records);
    ASSERT_TRUE(why.has_value());
    EXPECT_NE(why->find("--threads 1"), std::string::npos) << *why;
    EXPECT_NE(why->find("16 ms"), std::string::npos) << *why;
    records[1].starved = false;
    EXPECT_FALSE(starved_reason(records).has_value());
}
