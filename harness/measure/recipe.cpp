#include "measure/recipe.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <utility>

namespace opbench {

namespace {

class SteadyMeasureClock final : public MeasureClock {
public:
    double now() override {
        return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
    }
    double cpu_now() override {
        timespec ts{};
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
        return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
    }
    RunQueueReading run_queue() override { return read_run_queue(); }
};

// Whether the repetition's threads waited for a CPU (starvation.hpp): the
// machine, not the op, was measured.
void record_starvation(RepetitionRecord &rec, const RunQueueFigures &queue, double sampling_wall) {
    std::vector<double> whole_samples;
    for (double s : rec.sample_times) whole_samples.push_back(s * rec.calls_per_sample);
    const StarvationVerdict starvation = judge_starvation(queue, whole_samples, sampling_wall);
    rec.run_queue_wait_seconds = std::isfinite(queue.wait_s) ? queue.wait_s : -1;
    rec.run_queue_waits = queue.waits;
    rec.threads_ran = queue.threads;
    rec.involuntary_switches = queue.involuntary_switches;
    rec.starved_share = std::isfinite(starvation.share) ? starvation.share : -1;
    rec.starved = starvation.starved;
}

// The device's clock over the repetition, and whether it ran throttled (throttle.hpp).
void record_clock(RepetitionRecord &rec, const ClockReading &clock, double sustained_mhz) {
    const ThrottleVerdict throttle = judge_throttle(clock, sustained_mhz);
    rec.sm_clock_mhz = clock.sm_clock_mhz > 0 ? clock.sm_clock_mhz : -1;
    rec.power_watts = clock.power_watts;
    rec.temperature_c = clock.temperature_c;
    rec.clock_event_reasons = clock.throttle_reasons;
    rec.clock_share = throttle.clock_share;
    rec.throttled = throttle.throttled;
}

} // namespace

MeasureClock &steady_measure_clock() {
    static SteadyMeasureClock clock;
    return clock;
}

Recipe::Recipe(MeasuredWork &work, const MeasureSettings &settings, RecipeOptions options)
    : work_(work), settings_(settings), options_(options) {
    if (!options_.clock) options_.clock = &steady_measure_clock();
}

Recipe::~Recipe() {
    if (graph_active_) work_.graph_release();
}

// Runs f between the observer's begin and end of `name`; end is called on
// the way out of a throw too, so a tracer's spans always close.
template <class F>
auto Recipe::in_phase(std::string_view name, F &&f) {
    RecipeObserver *obs = options_.observer;
    if (obs) obs->on_phase_begin(name);
    struct End {
        RecipeObserver *obs;
        std::string_view name;
        ~End() {
            if (obs) obs->on_phase_end(name);
        }
    } end{obs, name};
    return f();
}

PreparationRecord Recipe::prepare(const Verifier &verify) {
    PreparationRecord rec;
    in_phase(phase::prepare, [&] { work_.prepare(); });

    // Only a correct result is measured.
    if (verify) {
        const CheckVerdict verdict = in_phase(phase::check, [&] {
            work_.execute();
            work_.synchronize();
            return verify(work_);
        });
        rec.check_error = verdict.error;
        if (!verdict.passed) throw MeasureFailure{CaseStatus::failed, verdict.reason};
    }

    // settings.warmup calls (at least one: the first pays for lazy setup)
    // before the first sample, in every worker process alike: the checked
    // call is the process's first, so it counts among them (a call of its
    // own cost 1.2 s on gemm's 4096 x 11008 layer; issue 44).
    const bool checked = static_cast<bool>(verify);
    const int calls_before_sampling = std::max(1, settings_.warmup);
    rec.warmup_calls = calls_before_sampling - (checked ? 1 : 0);
    MeasureClock &clock = *options_.clock;
    double last_warmup_seconds = 0;
    in_phase(phase::warmup, [&] {
        for (int i = 0; i < rec.warmup_calls; ++i) {
            const double t0 = clock.now();
            work_.execute();
            work_.synchronize();
            last_warmup_seconds = clock.now() - t0;
        }
    });

    in_phase(phase::choose_batch, [&] {
        choose_batch(rec, calls_before_sampling, last_warmup_seconds);
        prepare_launch(rec);
    });
    calls_per_sample_ = std::max(1, rec.calls_per_sample);
    prepared_ = true;
    return rec;
}

// Batch tiny ops so the clock's own cost stays under 1% of a sample;
// never in a cold-cache run, where every call must start cold. The batch
// comes from a warm call: the last before sampling when a call came
// before it, else the first sample (measure_once). Launch batch and graph
// fill about kLaunchSampleSeconds from a probed call of their own.
void Recipe::choose_batch(PreparationRecord &rec, int calls_before_sampling, double last_warmup_seconds) {
    const bool back_to_back = settings_.launch != LaunchMode::single;
    if (settings_.cache == CacheState::cold) { // check_settings refuses batch and graph with it
        rec.calls_per_sample = 1;
    } else if (options_.known_calls_per_sample > 0) {
        rec.calls_per_sample = options_.known_calls_per_sample;
    } else if (back_to_back) {
        rec.batch_probe_seconds = probe_call_seconds();
        rec.calls_per_sample =
            std::max(opbench::calls_per_sample(rec.batch_probe_seconds, options_.timer_overhead),
                     calls_for_sample_seconds(rec.batch_probe_seconds, kLaunchSampleSeconds));
    } else if (calls_before_sampling >= 2) {
        rec.batch_probe_seconds = last_warmup_seconds;
        rec.calls_per_sample = opbench::calls_per_sample(rec.batch_probe_seconds, options_.timer_overhead);
    } else {
        rec.calls_per_sample = 0; // chosen by the first sample
        batch_from_first_sample_ = true;
    }
}

// One warm call's time, untimed by the statistics: the device timer's
// (the device's share of a sample, which the batch is sized in) where the
// work has one, else the wall clock's around the call and its wait.
double Recipe::probe_call_seconds() {
    MeasureClock &clock = *options_.clock;
    const bool device_timer = work_.has_device_timer();
    if (device_timer) work_.device_timer_start();
    const double t0 = clock.now();
    work_.execute();
    const double device = device_timer ? work_.device_timer_stop() : -1;
    work_.synchronize();
    const double wall = clock.now() - t0;
    return device > 0 ? device : wall;
}

// Launch graph: the batch captured once, for every sample of this
// process; a work that cannot capture is measured batch, and says why.
void Recipe::prepare_launch(PreparationRecord &rec) {
    rec.launch = static_cast<int>(settings_.launch);
    if (settings_.launch != LaunchMode::graph || graph_active_) return;
    std::string why = work_.graph_prepare(std::max(1, rec.calls_per_sample));
    if (why.empty()) {
        graph_active_ = true;
        return;
    }
    rec.launch = static_cast<int>(LaunchMode::batch);
    rec.launch_fallback = std::move(why);
}

RepetitionRecord Recipe::measure_repetition() {
    RepetitionRecord rec = measure_once();
    // A starved repetition timed the machine, not the op: measure it again
    // while the budget lasts (the machine may have quietened).
    for (int again = 1; rec.starved && again <= std::max(0, settings_.starved_retries); ++again) {
        rec = measure_once();
        rec.remeasured = again;
    }
    // A throttled one timed the clock: measure it again while the clock may recover.
    const int starved_tries = rec.remeasured;
    for (int again = 1; rec.throttled && again <= kThrottledRetries; ++again) {
        rec = measure_once();
        rec.remeasured = starved_tries + again;
    }
    return rec;
}

// One sample: `calls` executions between the clocks' reads. `counted`
// opens the observer's counted-calls window around the executions only.
Recipe::SampleReading Recipe::take_sample(int calls, bool counted) {
    MeasureClock &clock = *options_.clock;
    RecipeObserver *obs = options_.observer;
    const bool device_timer = work_.has_device_timer();
    if (counted && obs) obs->on_counted_calls_begin();
    if (device_timer) work_.device_timer_start();
    const double cpu0 = clock.cpu_now();
    const double t0 = clock.now();
    if (graph_active_)
        work_.graph_launch(); // the `calls` captured executions, in one replay
    else
        for (int k = 0; k < calls; ++k) work_.execute();
    // The device's end mark goes in right behind the last call: made
    // after the host's wait, it timed the wake-up and the mark's own
    // launch too (microseconds, a share of a 10 us kernel's time).
    const double dev = device_timer ? work_.device_timer_stop() : -1;
    work_.synchronize();
    const double t1 = clock.now();
    const double cpu1 = clock.cpu_now();
    SampleReading r;
    r.host = device_timer ? work_.host_timer_seconds() : -1;
    if (counted && obs) obs->on_counted_calls_end(calls);
    r.cpu = cpu1 - cpu0;
    r.wall = std::max(0.0, t1 - t0);
    r.device = dev;
    // A device timer's reading is the sample (as nvbench takes it): the
    // host's wall time adds launch and wake-up jitter (docs/measurement.md).
    r.sample = dev >= 0 ? dev : r.wall;
    return r;
}

// The batch from the first sample (of one call) when no warm call came
// before sampling. False when the call is too short for the clock alone:
// that sample was only the probe, and the batch starts with the next.
bool Recipe::first_sample_keeps_its_batch(double wall_seconds) {
    batch_from_first_sample_ = false;
    calls_per_sample_ = opbench::calls_per_sample(wall_seconds, options_.timer_overhead);
    return calls_per_sample_ == 1;
}

RepetitionRecord Recipe::measure_once() {
    if (!prepared_) throw MeasureFailure{CaseStatus::failed, "internal: measure_repetition before prepare"};
    MeasureClock &clock = *options_.clock;
    RecipeObserver *obs = options_.observer;
    const bool cold = settings_.cache == CacheState::cold;
    int calls = calls_per_sample_;

    NoiseCriterion criterion(settings_.noise, settings_.min_time, settings_.max_time,
                             static_cast<std::size_t>(std::max(1, settings_.min_samples)));
    std::vector<double> samples, wall_samples, host_samples;
    double cpu_total = 0.0;
    auto sample_until_done = [&] {
        const double wall_start = clock.now();
        // At least one sample, so every repetition has a median.
        do {
            if (cold) work_.flush_cache();
            if (obs) obs->on_sample_begin(samples.size(), calls);
            // An extra sample never leaves a repetition without a counted
            // one: past the stopping rule, the next sample counts regardless.
            const bool extra = obs && obs->sample_is_extra() && !(samples.empty() && criterion.done());
            const bool counted_window = !extra && !counted_calls_seen_;
            counted_calls_seen_ = counted_calls_seen_ || counted_window;
            const SampleReading r = take_sample(calls, counted_window);
            const bool probe_only = !extra && batch_from_first_sample_ && !first_sample_keeps_its_batch(r.wall);
            if (extra || probe_only) { // a profiler's recorded sample, or the batch's probe: in no statistic
                if (obs) obs->on_sample_end(samples.size(), r.sample / calls);
                if (obs) obs->on_sample_excluded(samples.size());
                calls = calls_per_sample_;
                criterion.note_wall_time(clock.now() - wall_start);
                continue;
            }
            cpu_total += r.cpu;
            if (r.device >= 0) wall_samples.push_back(r.wall / calls);
            if (r.host >= 0) host_samples.push_back(r.host / calls);
            criterion.add(r.sample);
            samples.push_back(r.sample / calls);
            if (obs) obs->on_sample_end(samples.size() - 1, samples.back());
            criterion.note_wall_time(clock.now() - wall_start);
        } while (!criterion.done() || samples.empty());
    };
    // Each repetition on a new stack layout (stack_offset.hpp).
    const RunQueueReading queue_before = clock.run_queue();
    const double sampling_start = clock.now();
    work_.clock_begin();
    call_with_stack_offset(stack_offsets_.next(), [&] { in_phase(phase::sample, sample_until_done); });
    const ClockReading device_clock = work_.clock_end();
    const double sampling_wall = clock.now() - sampling_start;
    const RunQueueFigures queue = run_queue_between(queue_before, clock.run_queue());

    return in_phase(phase::summarise, [&] {
        RepetitionRecord rec;
        rec.summary = summarize(samples);
        rec.sample_times = std::move(samples);
        rec.calls_per_sample = calls;
        rec.target_met = criterion.target_met();
        rec.timed_out = criterion.timed_out();
        rec.cpu_seconds_per_call = cpu_total / (double(rec.summary.n) * calls);
        if (!wall_samples.empty()) {
            rec.device_seconds_per_call = rec.summary.median;
            rec.wall_seconds_per_call = summarize(wall_samples).median;
        }
        if (!host_samples.empty()) rec.host_seconds_per_call = summarize(host_samples).median;
        record_starvation(rec, queue, sampling_wall);
        record_clock(rec, device_clock, work_.sustained_clock_mhz());
        return rec;
    });
}

Recipe::Measurement Recipe::run(const Verifier &verify) {
    Measurement m;
    m.preparation = prepare(verify);
    for (int i = 0; i < std::max(1, settings_.repetitions); ++i) m.repetitions.push_back(measure_repetition());
    return m;
}

} // namespace opbench
