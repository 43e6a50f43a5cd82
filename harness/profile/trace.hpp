// Traces (issue 12): which samples are traced, and the Chrome Trace Event
// JSON that Perfetto (ui.perfetto.dev), chrome://tracing and speedscope load.
//
// The schedule follows the PyTorch profiler's (torch.profiler.schedule):
// steps are counted from 0; the first `skip_first` are not traced; then
// cycles of `wait` steps (not traced), `warmup` steps (recorded, so their
// start-up cost is paid, then dropped) and `active` steps (recorded and kept),
// `repeat` cycles in all (0: cycles until the steps run out). In opbench a
// step is one sample of one case x backend, and the count starts again for
// each case x backend, so every case gets its traced samples.
#pragma once

#include "profile/profiler.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

namespace opbench {

struct TraceSchedule {
    int skip_first = 0;
    int wait = 1; // the first sample after choosing the batch is often an outlier
    int warmup = 1;
    int active = 3;
    int repeat = 1;
    bool operator==(const TraceSchedule &) const = default;
};

// A --trace-schedule value that cannot be used; what() says which part and
// what would be valid.
class ScheduleError : public std::invalid_argument {
public:
    using std::invalid_argument::invalid_argument;
};

// "wait=N,warmup=N,active=N,repeat=N" (any subset, any order, skip_first=N
// too); keys left out keep TraceSchedule's defaults. active must be >= 1.
[[nodiscard]] TraceSchedule parse_trace_schedule(std::string_view text);
[[nodiscard]] std::string to_string(const TraceSchedule &s);

enum class StepAction {
    none,   // not traced: nothing recorded
    warmup, // recorded, then dropped
    record, // recorded and kept
};
[[nodiscard]] StepAction step_action(const TraceSchedule &s, uint64_t step);

// True when no step at or after `step` is ever recorded (the schedule is
// over: the caller can stop asking).
[[nodiscard]] bool schedule_finished(const TraceSchedule &s, uint64_t step);

struct TraceInfo {
    std::string process_name = "opbench";               // the harness process's track
    std::string device_name = "device";                 // the device track's name
    nlohmann::json metadata = nlohmann::json::object(); // "otherData": suite, commit, schedule...
};

// The trace of every closed span and memory sample in `profiler`:
//   traceEvents: "M" process_name / thread_name / *_sort_index metadata,
//                "X" complete events {name, cat (host|plugin|device), ph, ts,
//                dur (microseconds since the profiler began), pid, tid, args
//                (the span's own, plus allocs / alloc_bytes when it allocated)},
//                "C" counter events "memory" {heap_bytes[, device_bytes]};
//   displayTimeUnit "ns"; otherData: info.metadata.
// The harness is pid 1 (one tid per OS thread); device spans are pid 2: the
// device timer's on tid 1, the kernel timeline's (cat "kernel") on tid
// 2 + stream, one "GPU stream N kernels" track per stream.
[[nodiscard]] nlohmann::json chrome_trace(const Profiler &profiler, const TraceInfo &info);

} // namespace opbench
