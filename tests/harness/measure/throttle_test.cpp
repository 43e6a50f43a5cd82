// The throttle rule (issue 41) on the CPU: a fake work plays a fixture device
// clock through MeasuredWork's clock entries, as a GPU plugin's probe would.
// A throttled repetition is measured again; an entry that stays throttled is
// quality `throttled`, with no kernel diagnosis.
#include "measure/bottleneck_rules.hpp"
#include "measure/entry_summary.hpp"
#include "measure/recipe.hpp"
#include "measure/throttle.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <deque>
#include <vector>

using namespace opbench;

namespace {

class StillClock final : public MeasureClock {
public:
    double t = 0;
    double now() override { return t; }
    double cpu_now() override { return t; }
};

// Each call costs 1 us; each repetition's clock reading is the next of
// `clocks_mhz` (the last one repeats), against a sustained 1500 MHz. The
// device timer reports what the clock moved, the host time a fixed 3 us a call.
class FixtureClockWork final : public MeasuredWork {
public:
    FixtureClockWork(StillClock &clock, std::deque<double> clocks_mhz) : clock_(clock), clocks_(std::move(clocks_mhz)) {}
    void prepare() override {}
    void execute() override {
        clock_.t += 1e-6;
        ++calls_since_timer;
    }
    void synchronize() override {}
    void flush_cache() override {}
    bool has_device_timer() const override { return true; }
    void device_timer_start() override {
        t0 = clock_.t;
        calls_since_timer = 0;
    }
    double device_timer_stop() override { return clock_.t - t0; }
    double host_timer_seconds() override { return 3e-6 * calls_since_timer; }
    double sustained_clock_mhz() override { return 1500; }
    void clock_begin() override { ++begins; }
    ClockReading clock_end() override {
        ClockReading r;
        r.sm_clock_mhz = clocks_.front();
        if (clocks_.size() > 1) clocks_.pop_front();
        r.power_watts = 600;
        r.temperature_c = 70;
        r.throttle_reasons = r.sm_clock_mhz < 1000 ? 0x44 : 0; // sw power cap, hw thermal slowdown
        ++readings;
        return r;
    }
    int begins = 0, readings = 0, calls_since_timer = 0;
    double t0 = 0;

private:
    StillClock &clock_;
    std::deque<double> clocks_;
};

MeasureSettings few() {
    MeasureSettings s;
    s.warmup = 1;
    s.min_time = 1e-5;
    s.max_time = 1e-3;
    s.min_samples = 3;
    s.noise = 0.5;
    s.repetitions = 1;
    return s;
}

RepetitionRecord measure_with_clocks(std::deque<double> clocks, int *readings = nullptr) {
    StillClock clock;
    FixtureClockWork work(clock, std::move(clocks));
    RecipeOptions o;
    o.clock = &clock;
    Recipe recipe(work, few(), o);
    (void)recipe.prepare({});
    RepetitionRecord r = recipe.measure_repetition();
    EXPECT_EQ(work.begins, work.readings);
    if (readings) *readings = work.readings;
    return r;
}

RepetitionFigures figures(double median_s, bool throttled) {
    RepetitionFigures f;
    f.median_s = median_s;
    f.noise = 0.001;
    f.fastest_s = median_s;
    f.throttled = throttled;
    return f;
}

} // namespace

TEST(Throttle, ARepetitionBelowTheShareOfTheSustainedClockIsThrottled) {
    ClockReading r;
    r.sm_clock_mhz = 1500 * kThrottledClockShare - 1;
    EXPECT_TRUE(judge_throttle(r, 1500).throttled);
    r.sm_clock_mhz = 1500 * kThrottledClockShare;
    EXPECT_FALSE(judge_throttle(r, 1500).throttled);
    EXPECT_NEAR(judge_throttle(r, 1500).clock_share, kThrottledClockShare, 1e-12);
    // No reading or no sustained clock: nothing is judged.
    EXPECT_FALSE(judge_throttle(ClockReading{}, 1500).throttled);
    EXPECT_LT(judge_throttle(ClockReading{}, 1500).clock_share, 0);
    r.sm_clock_mhz = 100;
    EXPECT_FALSE(judge_throttle(r, 0).throttled);
}

TEST(Throttle, AThrottledRepetitionIsMeasuredAgainAndTheRecoveredOneKept) {
    int readings = 0;
    const RepetitionRecord r = measure_with_clocks({900, 1490}, &readings);
    EXPECT_EQ(readings, 2);
    EXPECT_FALSE(r.throttled);
    EXPECT_EQ(r.remeasured, 1);
    EXPECT_DOUBLE_EQ(r.sm_clock_mhz, 1490);
    EXPECT_NEAR(r.clock_share, 1490.0 / 1500, 1e-12);
    EXPECT_DOUBLE_EQ(r.power_watts, 600);
    EXPECT_DOUBLE_EQ(r.temperature_c, 70);
    // Host time per call beside device time per call.
    EXPECT_NEAR(r.host_seconds_per_call, 3e-6, 1e-12);
    EXPECT_NEAR(r.device_seconds_per_call, 1e-6, 1e-12);
}

TEST(Throttle, ARepetitionThatStaysThrottledIsRecordedSoAfterItsRetries) {
    int readings = 0;
    const RepetitionRecord r = measure_with_clocks({900}, &readings);
    EXPECT_EQ(readings, 1 + kThrottledRetries);
    EXPECT_TRUE(r.throttled);
    EXPECT_EQ(r.remeasured, kThrottledRetries);
    // It goes to the worker pipe and back as it is.
    const RepetitionRecord back = nlohmann::json(r).get<RepetitionRecord>();
    EXPECT_TRUE(back.throttled);
    EXPECT_DOUBLE_EQ(back.sm_clock_mhz, 900);
}

TEST(Throttle, AWorkWithoutAClockIsNeverThrottled) {
    const RepetitionRecord r = measure_with_clocks({0});
    EXPECT_FALSE(r.throttled);
    EXPECT_EQ(r.remeasured, 0);
    EXPECT_LT(r.sm_clock_mhz, 0);
}

TEST(Throttle, SomeThrottledRepetitionsAreLeftOutOfTheMedian) {
    const std::vector<RepetitionFigures> reps = {figures(1e-5, false), figures(2e-5, true), figures(1.02e-5, false)};
    const EntrySummary s = summarize_entry(reps, {});
    EXPECT_EQ(s.repetitions, 2u);
    EXPECT_EQ(s.throttled_repetitions, 1u);
    EXPECT_NEAR(s.median_s, 1.01e-5, 1e-12);
    EXPECT_EQ(s.quality, Quality::noisy);
    EXPECT_EQ(s.reason_codes(), "throttled");
    EXPECT_FALSE(says_nothing_of_kernel(s.quality));
}

TEST(Throttle, AnEntryThatStaysThrottledIsQualityThrottledWithNoKernelVerdict) {
    const std::vector<RepetitionFigures> reps = {figures(2e-5, true), figures(2.1e-5, true)};
    const EntrySummary s = summarize_entry(reps, {});
    EXPECT_EQ(s.quality, Quality::throttled);
    EXPECT_EQ(s.flag(), "throttled");
    EXPECT_TRUE(says_nothing_of_kernel(s.quality));
    EXPECT_EQ(s.to_json()["quality"], "throttled");
    EXPECT_EQ(s.to_json()["throttled_repetitions"], 2);
    const Bottleneck b = disturbed_verdict(s);
    EXPECT_EQ(b.kind, "throttled");
    EXPECT_EQ(b.headroom, 0);
}

TEST(Throttle, AResultSetsRepetitionSaysWhetherItWasThrottled) {
    const nlohmann::json entry = {{"stats", {{"median", 2e-5}, {"throttled", true}}}};
    EXPECT_TRUE(repetition_figures(entry).throttled);
    const nlohmann::json before = {{"stats", {{"median", 2e-5}}}}; // a set from before issue 41
    EXPECT_FALSE(repetition_figures(before).throttled);
}

// NVML's clock-event reasons (issue 41 item 2): recorded per repetition,
// written by name, and named in the throttled note with power and temperature.
TEST(Throttle, ClockEventReasonsGoToNamesAndBack) {
    EXPECT_EQ(clock_event_reason_names(0x44 | 0x200),
              (std::vector<std::string>{"sw_power_cap", "hw_thermal_slowdown", "0x200"}));
    EXPECT_EQ(clock_event_reasons_from_names({"sw_power_cap", "hw_thermal_slowdown", "0x200", "what"}), 0x44u);
    EXPECT_EQ(clock_event_reasons_text(0x84), "sw power cap, hw power brake slowdown");
    EXPECT_EQ(clock_event_reasons_text(0), "");
}

TEST(Throttle, NvmlsReasonsAreRecordedAndNamedInTheThrottledNote) {
    const RepetitionRecord r = measure_with_clocks({900});
    EXPECT_EQ(r.clock_event_reasons, 0x44u);
    EXPECT_EQ(nlohmann::json(r).get<RepetitionRecord>().clock_event_reasons, 0x44u); // the worker pipe
    const std::vector<RepetitionFigures> reps = {repetition_figures(r), repetition_figures(r)};
    const EntrySummary s = summarize_entry(reps, {});
    ASSERT_EQ(s.quality, Quality::throttled);
    EXPECT_NE(s.reasons.at(0).text.find("the time is the clock's; NVML: sw power cap, hw thermal slowdown; up to "
                                        "600 W, 70 C"),
              std::string::npos)
        << s.reasons.at(0).text;
    // A recovered repetition's reasons are its own (none here).
    EXPECT_EQ(measure_with_clocks({900, 1490}).clock_event_reasons, 0u);
}

TEST(Throttle, AResultSetsReasonsPowerAndTemperatureReachTheNote) {
    const nlohmann::json throttled = {{"stats",
                                       {{"median", 2e-5},
                                        {"throttled", true},
                                        {"clock_event_reasons", {"sw_thermal_slowdown"}},
                                        {"power_watts", 650.4},
                                        {"temperature_c", nullptr}}}};
    const nlohmann::json clean = {{"stats", {{"median", 1e-5}, {"throttled", false}, {"power_watts", 700}}}};
    const std::vector<RepetitionFigures> reps = {repetition_figures(throttled), repetition_figures(clean),
                                                 repetition_figures(clean)};
    const EntrySummary s = summarize_entry(reps, {});
    ASSERT_EQ(s.reason_codes(), "throttled");
    // The clean repetitions' 700 W is not the throttled one's.
    EXPECT_EQ(s.reasons.at(0).text, "1 of 3 repetitions throttled (SM clock below 85% of sustained) and left out; "
                                    "NVML: sw thermal slowdown; up to 650 W");
    // Without NVML the note is as before.
    const nlohmann::json plain = {{"stats", {{"median", 2e-5}, {"throttled", true}}}};
    const std::vector<RepetitionFigures> before = {repetition_figures(plain), repetition_figures(clean)};
    EXPECT_EQ(summarize_entry(before, {}).reasons.at(0).text,
              "1 of 2 repetitions throttled (SM clock below 85% of sustained) and left out");
}

// ab's device drift reading (issue 41 item 6): the SM clock's range over a
// run's repetitions, readings of 0 or less (none) left out.
TEST(ClockRange, TheRangeAndMedianOfTheReadingsLeaveOutRepetitionsWithoutOne) {
    EXPECT_FALSE(clock_range(std::vector<double>{}).has_value());
    EXPECT_FALSE(clock_range(std::vector<double>{-1, 0, -1}).has_value()); // a CPU backend's records
    const std::vector<double> mhz = {1980, -1, 1800, 1890, 0, 1755};
    const auto r = clock_range(mhz);
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ(r->readings, 4u);
    EXPECT_DOUBLE_EQ(r->min_mhz, 1755);
    EXPECT_DOUBLE_EQ(r->max_mhz, 1980);
    EXPECT_DOUBLE_EQ(r->median_mhz, (1800 + 1890) / 2.0); // even count: the middle two's mean
    EXPECT_NEAR(r->moved(), (1980 - 1755) / 1980.0, 1e-12);
    EXPECT_EQ(clock_range_text(*r), "the device's SM clock: 1755-1980 MHz over 4 repetitions (moved 11%)");
    const auto odd = clock_range(std::vector<double>{1500, 1400, 1450});
    ASSERT_TRUE(odd.has_value());
    EXPECT_DOUBLE_EQ(odd->median_mhz, 1450);
    EXPECT_EQ(clock_range_text(*clock_range(std::vector<double>{900, 900})),
              "the device's SM clock: 900-900 MHz over 2 repetitions (moved 0%)");
}
