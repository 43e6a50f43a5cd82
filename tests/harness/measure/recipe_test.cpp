// The measurement recipe driven by a fake clock and a fake backend: no
// plugin, no Google Benchmark, no real time.
#include "measure/recipe.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <string>
#include <vector>

using namespace opbench;

namespace {

// Time moves only when the fake work says so.
class FakeClock final : public MeasureClock {
public:
    double t = 0, cpu = 0;
    double now() override { return t; }
    double cpu_now() override { return cpu; }
};

// Each execute costs `call_seconds` of clock time (and of CPU time); each
// flush costs `flush_seconds`. Counts every call.
class FakeWork final : public MeasuredWork {
public:
    explicit FakeWork(FakeClock &clock, double call_seconds) : clock_(clock), call_seconds_(call_seconds) {}
    void prepare() override {
        ++prepares;
        if (fail_prepare) throw MeasureFailure{CaseStatus::skipped, "fake: unsupported"};
    }
    void execute() override {
        ++executes;
        // Alternating costs give the samples a spread (a real CI).
        const double jitter = (executes % 2 ? 1.0 : -1.0) * jitter_fraction * call_seconds_;
        clock_.t += (call_seconds_ + jitter) * slowdown;
        clock_.cpu += call_seconds_ * slowdown;
    }
    void synchronize() override {
        ++syncs;
        clock_.t += sync_seconds;
    }
    void flush_cache() override {
        ++flushes;
        clock_.t += flush_seconds;
    }
    bool has_device_timer() const override { return device_timer; }
    void device_timer_start() override { device_t0 = clock_.t; }
    double device_timer_stop() override { return clock_.t - device_t0; }

    int prepares = 0, executes = 0, syncs = 0, flushes = 0;
    bool fail_prepare = false, device_timer = false;
    double flush_seconds = 0, jitter_fraction = 0, device_t0 = 0;
    double sync_seconds = 0; // the host's wait for the device, after the calls
    double slowdown = 1; // a profiled sample's calls cost more

private:
    FakeClock &clock_;
    double call_seconds_;
};

struct PhaseLog final : RecipeObserver {
    std::vector<std::string> events;
    std::size_t samples = 0;
    void on_phase_begin(std::string_view p) override { events.push_back("begin " + std::string(p)); }
    void on_phase_end(std::string_view p) override { events.push_back("end " + std::string(p)); }
    void on_sample_end(std::size_t, double) override { ++samples; }
};

MeasureSettings quick() {
    MeasureSettings s;
    s.warmup = 4;
    s.min_time = 0.01;
    s.max_time = 0.1;
    s.min_samples = 10;
    s.noise = 0.01;
    s.repetitions = 3;
    return s;
}

CheckVerdict pass(MeasuredWork &) { return {true, 1e-9, ""}; }

} // namespace

TEST(Recipe, PhasesRunInOrderAndObserverSeesEachOnce) {
    FakeClock clock;
    FakeWork work(clock, 1e-3);
    PhaseLog log;
    Recipe recipe(work, quick(), {&clock, &log, 0.0});
    (void)recipe.prepare(pass);
    (void)recipe.measure_repetition();
    const std::vector<std::string> expected = {"begin prepare", "end prepare", "begin check",        "end check",
                                               "begin warmup",  "end warmup",  "begin choose_batch", "end choose_batch",
                                               "begin sample",  "end sample",  "begin summarise",    "end summarise"};
    EXPECT_EQ(log.events, expected);
    EXPECT_EQ(work.prepares, 1);
}

TEST(Recipe, WarmupCountsAreTheSettingAndAtLeastOne) {
    for (int warmup : {0, 1, 7}) {
        FakeClock clock;
        FakeWork work(clock, 1e-3);
        MeasureSettings s = quick();
        s.warmup = warmup;
        Recipe recipe(work, s, {&clock, nullptr, 0.0});
        const PreparationRecord p = recipe.prepare({}); // no check: only warm-up calls execute
        EXPECT_EQ(p.warmup_calls, std::max(1, warmup));
        EXPECT_EQ(work.executes, std::max(1, warmup)) << "no probe call of its own";
        // The last of two or more calls is warm: it is the batch probe.
        // After a single (cold) one, the first sample chooses the batch.
        EXPECT_DOUBLE_EQ(p.batch_probe_seconds, warmup >= 2 ? 1e-3 : 0.0);
        EXPECT_EQ(p.calls_per_sample, warmup >= 2 ? 1 : 0);
    }
}

// Issue 44: every worker process makes settings.warmup calls before its
// first sample, the checked call among them (it is the process's first, and
// pays for lazy setup as a warm-up call does). A call of its own cost 1.2 s
// a case on gemm's 4096 x 11008 layer.
TEST(Recipe, TheCheckedCallIsOneOfTheWarmupCalls) {
    for (int warmup : {1, 2, 5}) {
        FakeClock clock;
        FakeWork work(clock, 1e-3);
        MeasureSettings s = quick();
        s.warmup = warmup;
        Recipe recipe(work, s, {&clock, nullptr, 0.0});
        const PreparationRecord p = recipe.prepare(pass);
        EXPECT_EQ(work.executes, warmup) << "calls before sampling, the checked one included";
        EXPECT_EQ(p.warmup_calls, warmup - 1) << "warm-up calls after the checked one";
    }
}

// After the check, the last warm-up call is warm: it is the batch probe, no
// call of its own. Its time chooses the batch as the probe's did.
TEST(Recipe, AfterTheCheckTheLastWarmupCallIsTheBatchProbe) {
    FakeClock clock;
    FakeWork work(clock, 1e-6);
    MeasureSettings s = quick();
    s.warmup = 2;
    Recipe recipe(work, s, {&clock, nullptr, 1e-6});
    const PreparationRecord p = recipe.prepare(pass);
    EXPECT_EQ(work.executes, 2) << "the checked call and one warm-up call, no probe call";
    EXPECT_DOUBLE_EQ(p.batch_probe_seconds, 1e-6);
    EXPECT_EQ(p.calls_per_sample, calls_per_sample(1e-6, 1e-6));
}

// With no warm call before sampling (warmup = 1), the first sample, of one
// call, chooses the batch. A call too short for the clock alone makes that
// sample the probe only (in no statistic); a long one keeps it.
TEST(Recipe, WithoutAWarmCallTheFirstSampleChoosesTheBatch) {
    MeasureSettings s = quick();
    s.warmup = 1;
    {
        FakeClock clock;
        FakeWork work(clock, 1e-6);
        Recipe recipe(work, s, {&clock, nullptr, 1e-6});
        EXPECT_EQ(recipe.prepare(pass).calls_per_sample, 0) << "0: chosen by the first sample";
        const RepetitionRecord r = recipe.measure_repetition();
        const int batch = calls_per_sample(1e-6, 1e-6);
        EXPECT_EQ(r.calls_per_sample, batch);
        EXPECT_EQ(recipe.calls_per_sample(), batch);
        EXPECT_EQ(work.executes, 1 + 1 + batch * static_cast<int>(r.summary.n))
            << "the checked call, the probe sample, then whole batches";
        const RepetitionRecord again = recipe.measure_repetition();
        EXPECT_EQ(again.calls_per_sample, batch) << "later repetitions keep the batch";
    }
    {
        FakeClock clock;
        FakeWork work(clock, 1e-3);
        Recipe recipe(work, s, {&clock, nullptr, 1e-6});
        (void)recipe.prepare(pass);
        const RepetitionRecord r = recipe.measure_repetition();
        EXPECT_EQ(r.calls_per_sample, 1);
        EXPECT_EQ(work.executes, 1 + static_cast<int>(r.summary.n)) << "the first sample counts";
    }
}

// The memory observer counts allocations over the first counted sample's
// calls: warm calls of the work as measured (the only call before sampling
// may be the first, which pays for lazy setup). Once per prepared recipe,
// never on an extra (profiled) sample.
TEST(Recipe, CountedCallsAreTheFirstCountedSamplesOnce) {
    struct CountedLog final : RecipeObserver {
        int begins = 0, ends = 0, calls = 0, extra_left = 2;
        std::size_t executes_at_begin = 0;
        FakeWork *work = nullptr;
        bool sample_is_extra() const override { return extra_left > 0; }
        void on_sample_end(std::size_t, double) override {}
        void on_sample_excluded(std::size_t) override { --extra_left; }
        void on_counted_calls_begin() override {
            ++begins;
            executes_at_begin = std::size_t(work->executes);
        }
        void on_counted_calls_end(int n) override {
            ++ends;
            calls = n;
            EXPECT_EQ(std::size_t(work->executes), executes_at_begin + std::size_t(n)) << "only executions inside";
        }
    };
    FakeClock clock;
    FakeWork work(clock, 1e-6);
    CountedLog log;
    log.work = &work;
    MeasureSettings s = quick();
    s.warmup = 3;
    Recipe recipe(work, s, {&clock, &log, 1e-6});
    const PreparationRecord p = recipe.prepare(pass);
    (void)recipe.measure_repetition();
    (void)recipe.measure_repetition();
    EXPECT_EQ(log.begins, 1);
    EXPECT_EQ(log.ends, 1);
    EXPECT_EQ(log.calls, p.calls_per_sample) << "a whole counted sample";
    EXPECT_EQ(log.executes_at_begin, std::size_t(3 + 2 * p.calls_per_sample)) << "after the two extra samples";
}

TEST(Recipe, FailedCheckStopsBeforeAnythingIsTimed) {
    FakeClock clock;
    FakeWork work(clock, 1e-3);
    PhaseLog log;
    Recipe recipe(work, quick(), {&clock, &log, 0.0});
    try {
        (void)recipe.prepare([](MeasuredWork &) { return CheckVerdict{false, 0.5, "fake: wrong output"}; });
        FAIL() << "a failed check must throw";
    } catch (const MeasureFailure &f) {
        EXPECT_EQ(f.status, CaseStatus::failed);
        EXPECT_EQ(f.reason, "fake: wrong output");
    }
    EXPECT_EQ(work.executes, 1) << "only the checked call";
    EXPECT_EQ(log.events.back(), "end check");
    EXPECT_THROW((void)recipe.measure_repetition(), MeasureFailure) << "nothing is timed after a failed check";
}

TEST(Recipe, PrepareFailurePassesThroughWithItsStatus) {
    FakeClock clock;
    FakeWork work(clock, 1e-3);
    work.fail_prepare = true;
    Recipe recipe(work, quick(), {&clock, nullptr, 0.0});
    try {
        (void)recipe.prepare(pass);
        FAIL();
    } catch (const MeasureFailure &f) {
        EXPECT_EQ(f.status, CaseStatus::skipped);
    }
    EXPECT_EQ(work.executes, 0);
}

TEST(Recipe, BatchChosenFromTimerOverheadAndNeverWhenCold) {
    FakeClock clock;
    FakeWork work(clock, 1e-6);
    // A 1 us call and a 1 us timer: 1% of a sample needs 100 calls + 1.
    Recipe warm(work, quick(), {&clock, nullptr, 1e-6});
    const PreparationRecord p = warm.prepare(pass);
    EXPECT_EQ(p.calls_per_sample, calls_per_sample(1e-6, 1e-6));
    EXPECT_GT(p.calls_per_sample, 100);
    EXPECT_DOUBLE_EQ(p.batch_probe_seconds, 1e-6);

    MeasureSettings cold = quick();
    cold.cache = CacheState::cold;
    FakeWork work2(clock, 1e-6);
    Recipe cold_recipe(work2, cold, {&clock, nullptr, 1e-6});
    EXPECT_EQ(cold_recipe.prepare(pass).calls_per_sample, 1);
    const RepetitionRecord r = cold_recipe.measure_repetition();
    EXPECT_EQ(work2.flushes, static_cast<int>(r.summary.n)) << "one flush before every sample";
}

// A case's later worker process takes the batch its first process chose
// (issue 44: a probe of gemm's largest layer is a whole second-long call).
TEST(Recipe, AKnownBatchIsTakenWithoutAProbeCall) {
    FakeClock clock;
    FakeWork work(clock, 1e-6);
    MeasureSettings s = quick();
    s.warmup = 2;
    Recipe recipe(work, s, {&clock, nullptr, 1e-6, 37});
    const PreparationRecord p = recipe.prepare({});
    EXPECT_EQ(p.calls_per_sample, 37);
    EXPECT_EQ(p.batch_probe_seconds, 0) << "0: not probed";
    EXPECT_EQ(work.executes, 2) << "the warm-up calls only";
    const RepetitionRecord r = recipe.measure_repetition();
    EXPECT_EQ(r.calls_per_sample, 37);
    EXPECT_EQ(work.executes, 2 + 37 * static_cast<int>(r.summary.n)) << "every sample is 37 calls";
}

TEST(Recipe, StopsWhenNoiseTargetMetWithMinimums) {
    FakeClock clock;
    FakeWork work(clock, 1e-3); // identical samples: zero noise
    Recipe recipe(work, quick(), {&clock, nullptr, 0.0});
    (void)recipe.prepare(pass);
    const RepetitionRecord r = recipe.measure_repetition();
    EXPECT_TRUE(r.target_met);
    EXPECT_FALSE(r.timed_out);
    EXPECT_EQ(r.summary.n, 10u) << "min_time 0.01 s = 10 samples of 1 ms, min_samples 10";
    EXPECT_DOUBLE_EQ(r.summary.median, 1e-3);
    EXPECT_DOUBLE_EQ(r.cpu_seconds_per_call, 1e-3);
    EXPECT_EQ(r.sample_times.size(), r.summary.n);
    EXPECT_LT(r.device_seconds_per_call, 0) << "no device timer";
}

TEST(Recipe, NoisySamplesStopAtMaxTime) {
    FakeClock clock;
    FakeWork work(clock, 1e-3);
    work.jitter_fraction = 0.5; // +-50%: never within a 1% target
    Recipe recipe(work, quick(), {&clock, nullptr, 0.0});
    (void)recipe.prepare(pass);
    const RepetitionRecord r = recipe.measure_repetition();
    EXPECT_FALSE(r.target_met);
    EXPECT_TRUE(r.timed_out);
    EXPECT_NEAR(double(r.summary.n) * 1e-3, 0.1, 2e-3) << "about max_time of samples";
}

TEST(Recipe, WallClockCapBoundsUntimedWork) {
    FakeClock clock;
    FakeWork work(clock, 1e-4);
    work.jitter_fraction = 0.5;
    work.flush_seconds = 0.05; // each flush costs 500 calls' worth of wall time
    MeasureSettings s = quick();
    s.cache = CacheState::cold;
    Recipe recipe(work, s, {&clock, nullptr, 0.0});
    (void)recipe.prepare(pass);
    const double t0 = clock.t;
    const RepetitionRecord r = recipe.measure_repetition();
    EXPECT_TRUE(r.timed_out);
    const double wall = clock.t - t0;
    EXPECT_GE(wall, NoiseCriterion::kWallCapFactor * s.max_time);
    EXPECT_LT(wall, NoiseCriterion::kWallCapFactor * s.max_time + 0.06) << "stops within one sample of the cap";
    EXPECT_LT(double(r.summary.n) * 1e-4, s.max_time) << "the cap, not max_time of samples, stopped it";
}

TEST(Recipe, AlwaysAtLeastOneSample) {
    FakeClock clock;
    FakeWork work(clock, 10.0); // one call longer than max_time and its cap
    Recipe recipe(work, quick(), {&clock, nullptr, 0.0});
    (void)recipe.prepare(pass);
    const RepetitionRecord r = recipe.measure_repetition();
    EXPECT_EQ(r.summary.n, 1u);
    EXPECT_DOUBLE_EQ(r.summary.median, 10.0);
    EXPECT_TRUE(r.timed_out);
}

TEST(Recipe, DeviceTimerPerCall) {
    FakeClock clock;
    FakeWork work(clock, 2e-3);
    work.device_timer = true;
    Recipe recipe(work, quick(), {&clock, nullptr, 0.0});
    (void)recipe.prepare(pass);
    EXPECT_DOUBLE_EQ(recipe.measure_repetition().device_seconds_per_call, 2e-3);
}

// The device's end mark is made right behind the last call, before the
// host waits: the wait is host (wall) time, never device time. The device's
// time is the sample: the median, the noise and the entry's time per call.
TEST(Recipe, DeviceTimerStopsBeforeTheHostWaitsAndIsTheSample) {
    FakeClock clock;
    FakeWork work(clock, 2e-3);
    work.device_timer = true;
    work.sync_seconds = 1e-3;
    Recipe recipe(work, quick(), {&clock, nullptr, 0.0});
    (void)recipe.prepare(pass);
    const RepetitionRecord r = recipe.measure_repetition();
    EXPECT_DOUBLE_EQ(r.device_seconds_per_call, 2e-3);
    EXPECT_DOUBLE_EQ(r.summary.median, 2e-3) << "the sample is the device's time";
    EXPECT_NEAR(r.wall_seconds_per_call, 3e-3, 1e-12) << "the host's wall time per call includes its wait";
}

TEST(Recipe, WithoutADeviceTimerTheSampleIsWallTime) {
    FakeClock clock;
    FakeWork work(clock, 2e-3);
    work.sync_seconds = 1e-3;
    Recipe recipe(work, quick(), {&clock, nullptr, 0.0});
    (void)recipe.prepare(pass);
    const RepetitionRecord r = recipe.measure_repetition();
    EXPECT_NEAR(r.summary.median, 3e-3, 1e-12);
    EXPECT_LT(r.device_seconds_per_call, 0);
    EXPECT_LT(r.wall_seconds_per_call, 0);
}

TEST(Recipe, RunMakesTheSettingsRepetitions) {
    FakeClock clock;
    FakeWork work(clock, 1e-3);
    PhaseLog log;
    Recipe recipe(work, quick(), {&clock, &log, 0.0});
    const Recipe::Measurement m = recipe.run(pass);
    EXPECT_EQ(m.repetitions.size(), 3u);
    EXPECT_DOUBLE_EQ(m.preparation.check_error, 1e-9);
    std::size_t n = 0;
    for (const auto &r : m.repetitions) n += r.summary.n;
    EXPECT_EQ(log.samples, n) << "one on_sample_end per sample";
}

TEST(Records, RepetitionRoundTripsThroughJson) {
    FakeClock clock;
    FakeWork work(clock, 1e-3);
    work.jitter_fraction = 0.1;
    Recipe recipe(work, quick(), {&clock, nullptr, 0.0});
    const PreparationRecord p = recipe.prepare(pass);
    const RepetitionRecord r = recipe.measure_repetition();
    const auto text = nlohmann::json(r).dump();
    const auto back = nlohmann::json::parse(text).get<RepetitionRecord>();
    EXPECT_EQ(back.sample_times, r.sample_times);
    EXPECT_EQ(back.summary.n, r.summary.n);
    EXPECT_DOUBLE_EQ(back.summary.median, r.summary.median);
    EXPECT_DOUBLE_EQ(back.summary.noise, r.summary.noise);
    EXPECT_EQ(back.timed_out, r.timed_out);
    const auto p2 = nlohmann::json::parse(nlohmann::json(p).dump()).get<PreparationRecord>();
    EXPECT_EQ(p2.calls_per_sample, p.calls_per_sample);
    EXPECT_EQ(p2.warmup_calls, p.warmup_calls);
}

TEST(Records, StatusNamesAreTheResultSetStrings) {
    EXPECT_EQ(case_status_name(CaseStatus::passed), "passed");
    EXPECT_EQ(case_status_name(CaseStatus::failed), "failed");
    EXPECT_EQ(case_status_name(CaseStatus::skipped), "skipped");
    EXPECT_EQ(case_status_from_name("skipped"), CaseStatus::skipped);
    EXPECT_FALSE(case_status_from_name("ok"));
}

// A profiler's recorded samples (sample_is_extra) are timed but kept out of
// the stopping rule and every statistic, however slow they are.
namespace {
struct ExtraSamples final : RecipeObserver {
    FakeWork &work;
    std::size_t extra_from, extra_count, seen = 0, ends = 0, extra_ends = 0, excluded = 0;
    bool current = false;
    ExtraSamples(FakeWork &w, std::size_t from, std::size_t count) : work(w), extra_from(from), extra_count(count) {}
    void on_sample_begin(std::size_t, int) override {
        current = seen >= extra_from && seen < extra_from + extra_count;
        work.slowdown = current ? 5.0 : 1.0;
        ++seen;
    }
    void on_sample_end(std::size_t, double) override {
        ++ends;
        extra_ends += current;
        work.slowdown = 1.0;
    }
    bool sample_is_extra() const override { return current; }
    void on_sample_excluded(std::size_t) override { ++excluded; }
};
} // namespace

TEST(Recipe, ExtraSamplesAreInNoStatistic) {
    FakeClock clock;
    FakeWork work(clock, 1e-3);
    ExtraSamples obs(work, 1, 3);
    Recipe recipe(work, quick(), {&clock, &obs, 0.0});
    (void)recipe.prepare(pass);
    const RepetitionRecord r = recipe.measure_repetition();
    EXPECT_EQ(r.summary.n, 10u) << "the same counted samples as without extras";
    EXPECT_EQ(obs.ends, 13u);
    EXPECT_EQ(obs.extra_ends, 3u);
    EXPECT_EQ(obs.excluded, 3u) << "each extra sample is said to be excluded";
    EXPECT_DOUBLE_EQ(r.summary.max, 1e-3) << "no 5 ms sample in the statistics";
    EXPECT_DOUBLE_EQ(r.cpu_seconds_per_call, 1e-3);
    for (double t : r.sample_times) EXPECT_DOUBLE_EQ(t, 1e-3);
}

TEST(Recipe, EverySampleExtraStillEndsWithOneCounted) {
    FakeClock clock;
    FakeWork work(clock, 1e-3);
    ExtraSamples obs(work, 0, 1000000);
    Recipe recipe(work, quick(), {&clock, &obs, 0.0});
    (void)recipe.prepare(pass);
    const RepetitionRecord r = recipe.measure_repetition();
    EXPECT_EQ(r.summary.n, 1u) << "past the wall cap, the next sample counts";
    EXPECT_EQ(obs.excluded, obs.ends - 1) << "the counted one is not said to be excluded";
    EXPECT_TRUE(r.timed_out);
}

namespace {

// A clock whose threads' run-queue counters say, for the first `starved_reads`
// readings after `starving` is set, that two threads waited for a CPU as
// long as the work ran (every sample delayed: a starved OpenMP team).
class StarvingClock final : public MeasureClock {
public:
    double t = 0, cpu = 0;
    int starved_repetitions = 0; // how many repetitions read as starved, from the first
    double now() override { return t; }
    double cpu_now() override { return cpu; }
    RunQueueReading run_queue() override {
        ++reads;
        RunQueueReading r;
        r.readable = true;
        r.involuntary_switches = reads;
        // Two readings per repetition: before and after its sampling.
        const bool starving = (reads + 1) / 2 <= starved_repetitions;
        if (reads % 2 == 0 && starving) wait += t - last_t; // the whole repetition, one thread waiting
        last_t = t;
        r.threads[1] = {wait, std::uint64_t(reads) * 10};
        r.threads[2] = {0.0, std::uint64_t(reads) * 10};
        return r;
    }
    int reads = 0;
    double wait = 0, last_t = 0;
};

class ClockedWork final : public MeasuredWork {
public:
    explicit ClockedWork(StarvingClock &c) : c_(c) {}
    void prepare() override {}
    void execute() override { c_.t += 16e-3; } // a 4 us op that reads as a 16 ms tick
    void synchronize() override {}
    void flush_cache() override {}

private:
    StarvingClock &c_;
};

} // namespace

// Issue 26: a repetition whose threads waited for a CPU as long as its
// samples ran is starved; it is measured again, up to starved_retries times,
// and the record says how often and whether it stayed starved.
namespace {

// One repetition measured under a clock whose first `starved_repetitions`
// repetitions read as starved; `reads` counts the clock's run-queue readings.
RepetitionRecord measure_starving(int starved_repetitions, int starved_retries, int *reads = nullptr) {
    MeasureSettings s = quick();
    s.repetitions = 1;
    s.starved_retries = starved_retries;
    StarvingClock clock;
    clock.starved_repetitions = starved_repetitions;
    ClockedWork work(clock);
    Recipe r(work, s, {&clock, nullptr, 0.0});
    r.prepare({});
    const RepetitionRecord rec = r.measure_repetition();
    if (reads) *reads = clock.reads;
    return rec;
}

} // namespace

TEST(Recipe, AStarvedRepetitionIsMeasuredAgainWithinItsBudget) {
    const RepetitionRecord quietened = measure_starving(1, 2); // the first try only
    EXPECT_FALSE(quietened.starved);
    EXPECT_EQ(quietened.remeasured, 1);
    EXPECT_EQ(quietened.threads_ran, 2);
    EXPECT_DOUBLE_EQ(quietened.run_queue_wait_seconds, 0.0);

    int reads = 0;
    const RepetitionRecord never_quiet = measure_starving(100, 2, &reads);
    EXPECT_TRUE(never_quiet.starved);
    EXPECT_EQ(never_quiet.remeasured, 2);
    EXPECT_GT(never_quiet.starved_share, kStarvedShare);
    EXPECT_EQ(reads, 6); // three tries, two readings each

    const RepetitionRecord no_budget = measure_starving(100, 0); // the budget is the user's: none
    EXPECT_TRUE(no_budget.starved);
    EXPECT_EQ(no_budget.remeasured, 0);
}

// A clock that cannot see the run queue (every fake clock above) never
// starves a repetition: its figures say unknown.
TEST(Recipe, WithoutRunQueueFiguresNoRepetitionIsStarved) {
    FakeClock clock;
    FakeWork work(clock, 1e-5);
    Recipe r(work, quick(), {&clock, nullptr, 0.0});
    r.prepare(pass);
    const RepetitionRecord rec = r.measure_repetition();
    EXPECT_FALSE(rec.starved);
    EXPECT_EQ(rec.run_queue_wait_seconds, -1); // unknown
    EXPECT_EQ(rec.starved_share, -1);
    EXPECT_EQ(rec.remeasured, 0);
}
