// The measurement recipe, in named steps:
//
//   prepare -> check -> warm up -> choose batch  (Recipe::prepare, once per case)
//   sample until the stopping rule -> summarise  (Recipe::measure_repetition, per repetition)
//
// It knows nothing of plugins or Google Benchmark: the thing measured is a
// MeasuredWork, time comes from a MeasureClock, the check is a Verifier, and
// an observer sees every phase and sample. The runner plugs a backend case in
// (backend_work.hpp) and hands each repetition to Google Benchmark; tests plug
// in fakes (tests/harness/recipe_test.cpp).
#pragma once

#include "measure/records.hpp"
#include "measure/starvation.hpp"
#include "measure/settings.hpp"
#include "measure/stack_offset.hpp"
#include "measure/throttle.hpp"
#include "measure/statistics.hpp"

#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace opbench {

// What is measured: one op on one backend (plugin/backend_work.hpp), or a
// sequence of plugin ops such as a decoder layer (workload/). Any step may
// throw MeasureFailure.
class MeasuredWork {
public:
    virtual ~MeasuredWork() = default;
    // Everything untimed that must exist before the first call (memory, plans).
    virtual void prepare() = 0;
    // One call; it may return before the work is done (a GPU stream).
    virtual void execute() = 0;
    // Waits until every call issued so far is done.
    virtual void synchronize() = 0;
    // Leaves no operand in the caches, before each sample of a cold-cache run.
    virtual void flush_cache() = 0;
    // An optional device-side timer around a sample (GPU events).
    [[nodiscard]] virtual bool has_device_timer() const { return false; }
    virtual void device_timer_start() {}
    // Seconds since device_timer_start(); a negative value means no figure.
    [[nodiscard]] virtual double device_timer_stop() { return -1; }
    // Host seconds the plugin spent inside execute since device_timer_start()
    // (the launches' own cost), read after device_timer_stop(); < 0: none.
    [[nodiscard]] virtual double host_timer_seconds() { return -1; }
    // The device's clock (throttle.hpp): the clock it sustains under load
    // (0: none, and no repetition is judged throttled), and a reading over
    // one repetition: clock_begin() before its first sample, clock_end()
    // after its last. A test's fake plays a fixture clock through these.
    [[nodiscard]] virtual double sustained_clock_mhz() { return 0; }
    virtual void clock_begin() {}
    [[nodiscard]] virtual ClockReading clock_end() { return {}; }
    // The graph launch mode (settings.hpp's LaunchMode::graph): capture
    // `calls` executions once into a replayable graph. Returns why not
    // ("" when captured); the recipe then measures batch instead.
    [[nodiscard]] virtual std::string graph_prepare(int /*calls*/) { return "this work has no graph capture"; }
    // One replay of the captured calls; it may return before they are done.
    virtual void graph_launch() {}
    // Frees the graph; nothing when none is held. Safe to call twice.
    virtual void graph_release() {}
};

// The check step's verdict. `error` goes into PreparationRecord::check_error.
struct CheckVerdict {
    bool passed = true;
    double error = -1;  // e.g. the NMSE against the reference; < 0: none
    std::string reason; // why it failed
};
// Called once after one execute + synchronize of the prepared work.
using Verifier = std::function<CheckVerdict(MeasuredWork &)>;

// Time sources, in seconds from an arbitrary origin.
class MeasureClock {
public:
    virtual ~MeasureClock() = default;
    [[nodiscard]] virtual double now() = 0;     // wall clock (monotonic)
    [[nodiscard]] virtual double cpu_now() = 0; // CPU time of the process
    // The run-queue counters of the process's threads (starvation.hpp). A
    // clock that cannot see them (a test's fake) reads nothing, and no
    // repetition it times is judged starved.
    [[nodiscard]] virtual RunQueueReading run_queue() { return {}; }
};
// std::chrono::steady_clock, CLOCK_PROCESS_CPUTIME_ID and /proc's schedstat.
[[nodiscard]] MeasureClock &steady_measure_clock();

// The recipe's phases, as observers see them.
namespace phase {
inline constexpr std::string_view prepare = "prepare";
inline constexpr std::string_view check = "check";
inline constexpr std::string_view warmup = "warmup";
inline constexpr std::string_view choose_batch = "choose_batch";
inline constexpr std::string_view sample = "sample";
inline constexpr std::string_view summarise = "summarise";
} // namespace phase

// Hook points for tracers, profilers, memory accounting, worker isolation.
// Every callback runs on the measuring thread; none is timed except
// on_sample_begin/end's surroundings (keep them cheap).
class RecipeObserver {
public:
    virtual ~RecipeObserver() = default;
    virtual void on_phase_begin(std::string_view /*phase*/) {}
    virtual void on_phase_end(std::string_view /*phase*/) {} // also when the phase threw
    // Around each timed sample of `calls` executions (outside the clock reads).
    virtual void on_sample_begin(std::size_t /*index*/, int /*calls*/) {}
    virtual void on_sample_end(std::size_t /*index*/, double /*seconds_per_call*/) {}
    // Asked after on_sample_begin: true makes the sample extra, timed like the
    // others but kept out of the stopping rule and every statistic (a
    // profiler's recorded sample, whose spans cost time). An extra sample's
    // on_sample_end gets the index the next counted sample will have.
    [[nodiscard]] virtual bool sample_is_extra() const { return false; }
    // Right after on_sample_end of a sample the recipe kept out of every
    // statistic (sample_is_extra, unless the recipe had to count it): what
    // an observer gathered for that sample alone can be dropped too.
    virtual void on_sample_excluded(std::size_t /*index*/) {}
    // Around the executions of the first sample that is not extra, once per
    // prepared recipe (no clock is read between them): warm calls of the
    // work as it is measured, where the memory observer counts the
    // allocations a call makes. The warm-up's first call pays for lazy
    // setup, and it may be the only call before sampling.
    virtual void on_counted_calls_begin() {}
    virtual void on_counted_calls_end(int /*calls*/) {}
};

struct RecipeOptions {
    MeasureClock *clock = &steady_measure_clock();
    RecipeObserver *observer = nullptr; // none: no hooks called
    // Cost of bracketing one sample with the clock (measure_timer_overhead()),
    // for choosing the batch; 0 means no batching.
    double timer_overhead = 0;
    // > 0: the batch (calls per sample) is this, and nothing probes for
    // it: a case's later worker process takes the one its first process
    // chose, for the same code and inputs (isolate/case_host.cpp).
    int known_calls_per_sample = 0;
};

// Device time a sample of the batch and graph launch modes holds, about.
inline constexpr double kLaunchSampleSeconds = 1e-3;

class Recipe {
public:
    Recipe(MeasuredWork &work, const MeasureSettings &settings, RecipeOptions options = {});
    // Releases the graph prepare() captured (launch graph), once.
    ~Recipe();
    Recipe(const Recipe &) = delete;
    Recipe &operator=(const Recipe &) = delete;

    // prepare -> check (when `verify` is set) -> warm up -> choose batch.
    // settings.warmup calls (at least 1) come before the first sample, the
    // checked call among them. Launch batch and graph: the batch is about
    // kLaunchSampleSeconds of one probed call's time (its device timer's,
    // else its wall time), and graph captures it once here (batch where the
    // work cannot: the record says so). The batch comes from the last of them when a
    // call came before it (it is warm), else from the first sample: the
    // record's calls_per_sample is then 0 until measure_repetition() has
    // chosen it (calls_per_sample()). Throws MeasureFailure from the work,
    // or with the verifier's reason when the check fails (nothing is then
    // timed).
    PreparationRecord prepare(const Verifier &verify);

    // sample until the stopping rule (settings' NoiseCriterion, wall-clock
    // cap included) -> summarise. Call after prepare(). Always takes at
    // least one sample. A starved repetition (starvation.hpp) is measured
    // again, up to settings.starved_retries times; the record kept says how
    // often (`remeasured`) and whether it is still starved. So is a
    // throttled one (throttle.hpp), up to kThrottledRetries times. Throws
    // MeasureFailure from the work.
    RepetitionRecord measure_repetition();

    // prepare, then settings.repetitions repetitions: a measurement without
    // Google Benchmark.
    struct Measurement {
        PreparationRecord preparation;
        std::vector<RepetitionRecord> repetitions;
    };
    Measurement run(const Verifier &verify);

    [[nodiscard]] int calls_per_sample() const { return calls_per_sample_; }

private:
    template <class F>
    auto in_phase(std::string_view name, F &&f);
    RepetitionRecord measure_once();
    struct SampleReading {
        double sample = 0; // the device timer's seconds, else the wall clock's
        double wall = 0, cpu = 0;
        double device = -1, host = -1; // < 0: no device timer
    };
    SampleReading take_sample(int calls, bool counted);
    bool first_sample_keeps_its_batch(double wall_seconds);
    void choose_batch(PreparationRecord &rec, int calls_before_sampling, double last_warmup_seconds);
    double probe_call_seconds();
    void prepare_launch(PreparationRecord &rec);

    MeasuredWork &work_;
    MeasureSettings settings_;
    RecipeOptions options_;
    int calls_per_sample_ = 1;
    bool batch_from_first_sample_ = false; // no warm call before sampling: the first sample probes
    bool counted_calls_seen_ = false;      // on_counted_calls_begin/end have been called
    bool prepared_ = false;
    bool graph_active_ = false; // a captured graph replays each sample's calls
    StackOffsets stack_offsets_; // a stack layout per repetition
};

} // namespace opbench
