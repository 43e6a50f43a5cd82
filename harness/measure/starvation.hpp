// Starvation: a repetition whose threads waited in the scheduler's run queue
// long enough that its median is the machine's time, not the op's.
//
// On a busy machine an OpenMP team spins at its barrier while one of its
// threads waits for a CPU for a whole scheduler slice (1-4 ms), so every
// sample of a 4 us op lasts 4-16 ms, with a tight spread: spread,
// bimodality and CPU time cannot see it; the run-queue wait can. Linux
// counts it per thread in /proc/self/task/<tid>/schedstat (second field,
// ns; the third counts the times the thread was put on a CPU).
//
// The rule (docs/measurement.md, "Starved repetitions"), from a
// repetition's totals and its samples:
//   - the threads waited W in all, in E waits, over T threads that ran,
//     during a repetition whose samples took S of its wall time R (the rest
//     is the clock, the stopping rule, flushes: untimed);
//   - a wait lands in a sample as often as the sampling is running (the
//     scheduler's tick does not know our loop), so W * S / R of it fell in
//     samples, and delayed them by at least W * S / R / T (waits of
//     different threads may overlap; one thread's do not);
//   - the delay the samples above the median show is their excess over it;
//     what is left, W * S / R / T - excess, must have delayed the median sample
//     itself. Its share of the samples' time is the repetition's
//     `starved_share`;
//   - the repetition is starved when that share exceeds kStarvedShare AND
//     the mean wait W / E is at least kSchedulerWaitSeconds: a wait for
//     another task's slice, not the microseconds a thread takes to wake up
//     on an idle CPU (which are part of the op's own time).
#pragma once

#include <cmath>
#include <cstdint>
#include <map>
#include <span>

namespace opbench {

inline constexpr double kStarvedShare = 0.05;
inline constexpr double kSchedulerWaitSeconds = 100e-6;

// The run-queue counters of every thread of this process, and the
// involuntary context switches of the process, at one moment.
struct RunQueueReading {
    struct Thread {
        double wait_s = 0;     // run-queue wait so far
        std::uint64_t ran = 0; // times put on a CPU so far
    };
    std::map<long, Thread> threads; // by thread id; empty when unreadable
    long involuntary_switches = -1; // getrusage(RUSAGE_SELF).ru_nivcsw; -1 unknown
    bool readable = false;
};
// /proc/self/task/*/schedstat and getrusage. Not readable (no procfs, no
// schedstat): readable false, and no repetition is ever judged starved.
[[nodiscard]] RunQueueReading read_run_queue();

// One repetition's figures: the difference of two readings.
struct RunQueueFigures {
    double wait_s = NAN;       // W: run-queue wait of every thread, summed; NaN unknown
    std::int64_t waits = 0;    // E: times a thread was put on a CPU
    int threads = 0;           // T: threads that ran
    long involuntary_switches = -1;
};
[[nodiscard]] RunQueueFigures run_queue_between(const RunQueueReading &before, const RunQueueReading &after);

struct StarvationVerdict {
    bool starved = false;
    double share = NAN; // the unexplained wait's share of the samples' time; NaN unknown
};
// `sample_seconds`: each sample's whole time (all its calls).
// `wall_seconds`: the repetition's sampling from first to last sample, untimed work included.
[[nodiscard]] StarvationVerdict judge_starvation(const RunQueueFigures &figures,
                                                 std::span<const double> sample_seconds, double wall_seconds);

} // namespace opbench
