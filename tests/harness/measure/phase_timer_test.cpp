// phase_timer.cpp: the recipe's phases timed on the recipe's clock, every
// callback passed on to the next observer.
#include "measure/phase_timer.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

using namespace opbench;

namespace {

class StepClock final : public MeasureClock {
public:
    double t = 0;
    double now() override { return t; }
    double cpu_now() override { return t; }
};

// Each execute costs 1 ms; prepare costs 5 s (a big plan).
class MillisecondWork final : public MeasuredWork {
public:
    explicit MillisecondWork(StepClock &c) : clock(c) {}
    void prepare() override { clock.t += 5.0; }
    void execute() override { clock.t += 0.001; }
    void synchronize() override {}
    void flush_cache() override {}
    StepClock &clock;
};

struct Log final : RecipeObserver {
    std::vector<std::string> events;
    int samples = 0;
    void on_phase_begin(std::string_view p) override { events.push_back("begin " + std::string(p)); }
    void on_phase_end(std::string_view p) override { events.push_back("end " + std::string(p)); }
    void on_sample_end(std::size_t, double) override { ++samples; }
};

} // namespace

TEST(PhaseTimer, TimesEachPhaseAndPassesEverythingOn) {
    StepClock clock;
    MillisecondWork work(clock);
    Log next;
    PhaseTimer timer(&next, clock);
    MeasureSettings s;
    s.warmup = 3;
    s.min_time = 0.01;
    s.max_time = 0.02;
    s.min_samples = 4;
    s.repetitions = 2;
    Recipe recipe(work, s, RecipeOptions{&clock, &timer, 0.0});
    (void)recipe.run([&](MeasuredWork &) {
        clock.t += 2.0; // the check itself: a reference comparison
        return CheckVerdict{true, 0.0, ""};
    });
    EXPECT_DOUBLE_EQ(timer.seconds(phase::prepare), 5.0);
    EXPECT_NEAR(timer.seconds(phase::check), 2.001, 1e-9); // one execute, then the verifier
    EXPECT_NEAR(timer.seconds(phase::warmup), 0.002, 1e-9); // warmup 3: the checked call and two more
    // Two repetitions of at least min_time of samples each.
    EXPECT_GE(timer.seconds(phase::sample), 2 * 0.01 - 1e-9);
    EXPECT_LE(timer.seconds(phase::sample), 2 * 0.02 + 0.002);
    EXPECT_EQ(timer.seconds("no such phase"), 0.0);
    EXPECT_GE(next.samples, 2 * 4);
    ASSERT_GE(next.events.size(), 2u);
    EXPECT_EQ(next.events.front(), "begin prepare");
    EXPECT_EQ(next.events.back(), "end summarise");
}

TEST(PhaseTimer, AThrowingPhaseIsStillTimed) {
    StepClock clock;
    class Failing final : public MeasuredWork {
    public:
        explicit Failing(StepClock &c) : clock(c) {}
        void prepare() override {
            clock.t += 1.5;
            throw MeasureFailure{CaseStatus::failed, "out of memory"};
        }
        void execute() override {}
        void synchronize() override {}
        void flush_cache() override {}
        StepClock &clock;
    } work(clock);
    PhaseTimer timer(nullptr, clock);
    Recipe recipe(work, MeasureSettings{}, RecipeOptions{&clock, &timer, 0.0});
    EXPECT_THROW((void)recipe.prepare({}), MeasureFailure);
    EXPECT_DOUBLE_EQ(timer.seconds(phase::prepare), 1.5);
}
