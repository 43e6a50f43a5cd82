// The launch modes of the recipe (issue 41 item 3; settings.hpp's
// LaunchMode): single, batch and graph, each sample's calls and syncs
// counted on a fake device work with a fake clock.
#include "measure/recipe.hpp"
#include "measure/settings.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <string>

using namespace opbench;

// A named namespace: the unit tests build as one unity program.
namespace launch_mode_test {

class FakeClock final : public MeasureClock {
public:
    double t = 0;
    double now() override { return t; }
    double cpu_now() override { return t; }
};

// A device work whose every call takes `call_seconds` of device time (the
// device timer's) and of wall time; it counts calls, syncs and the graph's
// prepares, launches and releases. `refuse_graph` makes graph_prepare fail.
class DeviceWork final : public MeasuredWork {
public:
    DeviceWork(FakeClock &clock, double call_seconds) : clock_(clock), call_seconds_(call_seconds) {}
    void prepare() override {}
    void execute() override {
        ++executes;
        clock_.t += call_seconds_;
    }
    void synchronize() override { ++syncs; }
    void flush_cache() override { ++flushes; }
    bool has_device_timer() const override { return true; }
    void device_timer_start() override { t0_ = clock_.t; }
    double device_timer_stop() override { return clock_.t - t0_; }
    std::string graph_prepare(int calls) override {
        if (refuse_graph) return "fixture: capture refused";
        ++graph_prepares;
        graph_calls = calls;
        return {};
    }
    void graph_launch() override {
        ++graph_launches;
        clock_.t += call_seconds_ * graph_calls;
    }
    void graph_release() override { ++graph_releases; }

    int executes = 0, syncs = 0, flushes = 0;
    int graph_prepares = 0, graph_launches = 0, graph_releases = 0, graph_calls = 0;
    bool refuse_graph = false;

private:
    FakeClock &clock_;
    double call_seconds_;
    double t0_ = 0;
};

MeasureSettings settings_with(LaunchMode launch) {
    MeasureSettings s;
    s.warmup = 3;
    s.min_time = 0.01;
    s.max_time = 0.1;
    s.min_samples = 10;
    s.repetitions = 3;
    s.launch = launch;
    return s;
}

// Samples, executes and syncs of one repetition.
struct Counted {
    RepetitionRecord rec;
    int executes = 0, syncs = 0;
};
Counted measure(Recipe &recipe, DeviceWork &work) {
    const int e0 = work.executes, s0 = work.syncs;
    Counted c;
    c.rec = recipe.measure_repetition();
    c.executes = work.executes - e0;
    c.syncs = work.syncs - s0;
    return c;
}

// A 7.6 us kernel: a power of two, so the fake clock's sums are exact.
constexpr double kCall = 1.0 / (1 << 17);
constexpr int kBatch = 132;         // ceil(1 ms / kCall)
constexpr double kOverhead = 50e-9; // the clock pair's cost

TEST(LaunchMode, SingleIsOneCallAndOneSyncPerSampleOnADevice) {
    FakeClock clock;
    DeviceWork work(clock, kCall);
    Recipe recipe(work, settings_with(LaunchMode::single), {&clock, nullptr, kOverhead});
    const PreparationRecord p = recipe.prepare({});
    EXPECT_EQ(p.launch, static_cast<int>(LaunchMode::single));
    EXPECT_EQ(p.calls_per_sample, 1) << "a 7.6 us call needs no batch for a 50 ns clock";
    const Counted c = measure(recipe, work);
    EXPECT_EQ(c.executes, static_cast<int>(c.rec.summary.n));
    EXPECT_EQ(c.syncs, static_cast<int>(c.rec.summary.n)) << "one synchronize per sample";
    EXPECT_EQ(work.graph_prepares, 0);
}

TEST(LaunchMode, BatchFillsAMillisecondOfDeviceTimeWithOneSyncPerSample) {
    FakeClock clock;
    DeviceWork work(clock, kCall);
    Recipe recipe(work, settings_with(LaunchMode::batch), {&clock, nullptr, kOverhead});
    const PreparationRecord p = recipe.prepare({});
    EXPECT_EQ(p.launch, static_cast<int>(LaunchMode::batch));
    EXPECT_DOUBLE_EQ(p.batch_probe_seconds, kCall) << "the probe is the device timer's";
    EXPECT_EQ(p.calls_per_sample, kBatch) << "1 ms of the probed call";
    const Counted c = measure(recipe, work);
    EXPECT_EQ(c.rec.calls_per_sample, kBatch);
    EXPECT_EQ(c.executes, kBatch * static_cast<int>(c.rec.summary.n)) << "the calls back to back";
    EXPECT_EQ(c.syncs, static_cast<int>(c.rec.summary.n)) << "one synchronize per sample, none between calls";
    EXPECT_DOUBLE_EQ(c.rec.summary.median, kCall) << "per call";
    EXPECT_EQ(work.flushes, 0) << "the cache stays warm";
    EXPECT_EQ(work.graph_prepares, 0);
}

TEST(LaunchMode, GraphIsPreparedOncePerRecipeAndEachSampleIsOneLaunch) {
    FakeClock clock;
    DeviceWork work(clock, kCall);
    {
        Recipe recipe(work, settings_with(LaunchMode::graph), {&clock, nullptr, kOverhead});
        const PreparationRecord p = recipe.prepare({});
        EXPECT_EQ(p.launch, static_cast<int>(LaunchMode::graph));
        EXPECT_TRUE(p.launch_fallback.empty());
        EXPECT_EQ(work.graph_prepares, 1);
        EXPECT_EQ(work.graph_calls, kBatch) << "the batch's calls are captured";
        int samples = 0;
        for (int r = 0; r < 3; ++r) {
            const Counted c = measure(recipe, work);
            EXPECT_EQ(c.executes, 0) << "no call outside the graph";
            EXPECT_EQ(c.syncs, static_cast<int>(c.rec.summary.n)) << "one synchronize per sample";
            EXPECT_EQ(c.rec.calls_per_sample, kBatch);
            EXPECT_DOUBLE_EQ(c.rec.summary.median, kCall) << "per call, not per launch";
            samples += static_cast<int>(c.rec.summary.n);
        }
        EXPECT_EQ(work.graph_launches, samples) << "one launch per sample";
        EXPECT_EQ(work.graph_prepares, 1) << "captured once for every repetition";
        EXPECT_EQ(work.graph_releases, 0) << "held while the recipe lives";
    }
    EXPECT_EQ(work.graph_releases, 1) << "released with the recipe";
}

TEST(LaunchMode, ARefusedGraphIsMeasuredBatchAndSaysWhy) {
    FakeClock clock;
    DeviceWork work(clock, kCall);
    work.refuse_graph = true;
    {
        Recipe recipe(work, settings_with(LaunchMode::graph), {&clock, nullptr, kOverhead});
        const PreparationRecord p = recipe.prepare({});
        EXPECT_EQ(p.launch, static_cast<int>(LaunchMode::batch)) << "what ran is recorded";
        EXPECT_EQ(p.launch_fallback, "fixture: capture refused");
        const Counted c = measure(recipe, work);
        EXPECT_EQ(c.executes, kBatch * static_cast<int>(c.rec.summary.n));
        EXPECT_EQ(c.syncs, static_cast<int>(c.rec.summary.n));
        EXPECT_EQ(work.graph_launches, 0);
    }
    EXPECT_EQ(work.graph_releases, 0) << "nothing held, nothing released";
}

TEST(LaunchMode, AKnownBatchIsCapturedWithoutAProbe) {
    FakeClock clock;
    DeviceWork work(clock, kCall);
    Recipe recipe(work, settings_with(LaunchMode::graph), {&clock, nullptr, kOverhead, 42});
    const PreparationRecord p = recipe.prepare({});
    EXPECT_EQ(p.batch_probe_seconds, 0);
    EXPECT_EQ(work.executes, 3) << "the warm-up calls only";
    EXPECT_EQ(work.graph_calls, 42);
}

TEST(LaunchMode, BatchAndGraphNeedAWarmCache) {
    MeasureSettings m;
    m.cache = CacheState::cold;
    EXPECT_FALSE(check_settings(m)) << "single with a cold cache is today's cold run";
    for (LaunchMode launch : {LaunchMode::batch, LaunchMode::graph}) {
        m.launch = launch;
        ASSERT_TRUE(check_settings(m));
        EXPECT_EQ(setting_in_conflict(m), "launch");
        const std::string why = *check_settings(m);
        EXPECT_NE(why.find(std::string("launch '") + std::string(launch_mode_name(launch)) + "'"), std::string::npos)
            << why;
        EXPECT_NE(why.find("cache 'warm'"), std::string::npos) << why;
        EXPECT_NE(why.find("launch 'single'"), std::string::npos) << "the valid value: " << why;
    }
    m.cache = CacheState::warm;
    EXPECT_FALSE(check_settings(m));
    EXPECT_TRUE(setting_in_conflict(m).empty());
}

TEST(LaunchMode, TheSettingRowNamesItsValues) {
    const SettingInfo *row = find_setting("launch");
    ASSERT_NE(row, nullptr);
    EXPECT_EQ(row->cli_flag, "--launch");
    EXPECT_EQ(row->result_key, "launch");
    EXPECT_EQ(default_text(*row), "single");
    EXPECT_EQ(range_text(*row), "single, batch or graph");
    EXPECT_EQ(value_text(*row, 2), "graph");
    EXPECT_FALSE(check_setting(*row, 1));
    ASSERT_TRUE(check_setting(*row, 3));
    EXPECT_EQ(*check_setting(*row, 3), "'launch' must be single, batch or graph");
    EXPECT_EQ(launch_mode_from_name("batch"), LaunchMode::batch);
    EXPECT_FALSE(launch_mode_from_name("hot"));
}

TEST(LaunchMode, CallsForSampleSeconds) {
    EXPECT_EQ(calls_for_sample_seconds(10e-6, 1e-3), 100);
    EXPECT_EQ(calls_for_sample_seconds(3e-6, 1e-3), 334);
    EXPECT_EQ(calls_for_sample_seconds(5e-3, 1e-3), 1) << "a long call is a sample by itself";
    EXPECT_EQ(calls_for_sample_seconds(0, 1e-3), kMaxCallsPerSample);
    EXPECT_THROW((void)calls_for_sample_seconds(std::nan(""), 1e-3), std::invalid_argument);
}

} // namespace launch_mode_test
