// Trace schedule and Chrome Trace Event JSON; see trace.hpp.
#include "profile/trace.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <map>
#include <set>

namespace opbench {

namespace {

constexpr std::string_view kValidKeys = "skip_first, wait, warmup, active, repeat";

std::string_view trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
    return s;
}

} // namespace

TraceSchedule parse_trace_schedule(std::string_view text) {
    TraceSchedule s;
    const std::string all(text);
    if (trim(text).empty())
        throw ScheduleError(fmt::format("--trace-schedule is empty; expected key=N pairs such as "
                                        "'wait=1,warmup=1,active=3,repeat=1' (keys: {})",
                                        kValidKeys));
    std::set<std::string, std::less<>> seen;
    std::size_t pos = 0;
    while (pos <= text.size()) {
        std::size_t comma = text.find(',', pos);
        if (comma == std::string_view::npos) comma = text.size();
        const std::string_view part = trim(text.substr(pos, comma - pos));
        const std::size_t column = pos + 1;
        pos = comma + 1;
        if (part.empty())
            throw ScheduleError(fmt::format("--trace-schedule '{}': empty item at column {}", all, column));
        const std::size_t eq = part.find('=');
        if (eq == std::string_view::npos)
            throw ScheduleError(fmt::format("--trace-schedule '{}': '{}' at column {} is not key=N (keys: {})", all,
                                            part, column, kValidKeys));
        const std::string_view key = trim(part.substr(0, eq)), value = trim(part.substr(eq + 1));
        int *field = key == "skip_first" ? &s.skip_first
                     : key == "wait"     ? &s.wait
                     : key == "warmup"   ? &s.warmup
                     : key == "active"   ? &s.active
                     : key == "repeat"   ? &s.repeat
                                         : nullptr;
        if (!field)
            throw ScheduleError(fmt::format("--trace-schedule '{}': unknown key '{}' at column {} (valid: {})", all,
                                            key, column, kValidKeys));
        if (!seen.insert(std::string(key)).second)
            throw ScheduleError(fmt::format("--trace-schedule '{}': '{}' is given twice", all, key));
        int v = 0;
        const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
        if (ec != std::errc() || end != value.data() + value.size() || value.empty() || v < 0)
            throw ScheduleError(
                fmt::format("--trace-schedule '{}': {}='{}' is not a whole number >= 0", all, key, value));
        *field = v;
        if (comma == text.size()) break;
    }
    if (s.active < 1)
        throw ScheduleError(fmt::format("--trace-schedule '{}': active must be at least 1 (the steps "
                                        "that are traced)",
                                        all));
    return s;
}

std::string to_string(const TraceSchedule &s) {
    std::string out = fmt::format("wait={},warmup={},active={},repeat={}", s.wait, s.warmup, s.active, s.repeat);
    if (s.skip_first) out = fmt::format("skip_first={},", s.skip_first) + out;
    return out;
}

StepAction step_action(const TraceSchedule &s, uint64_t step) {
    if (step < uint64_t(s.skip_first)) return StepAction::none;
    step -= uint64_t(s.skip_first);
    const uint64_t cycle = uint64_t(s.wait) + uint64_t(s.warmup) + uint64_t(s.active);
    if (cycle == 0) return StepAction::none;
    if (s.repeat > 0 && step / cycle >= uint64_t(s.repeat)) return StepAction::none;
    const uint64_t in_cycle = step % cycle;
    if (in_cycle < uint64_t(s.wait)) return StepAction::none;
    if (in_cycle < uint64_t(s.wait) + uint64_t(s.warmup)) return StepAction::warmup;
    return StepAction::record;
}

bool schedule_finished(const TraceSchedule &s, uint64_t step) {
    if (s.repeat == 0) return false;
    const uint64_t cycle = uint64_t(s.wait) + uint64_t(s.warmup) + uint64_t(s.active);
    return step >= uint64_t(s.skip_first) + cycle * uint64_t(s.repeat);
}

// ---- Chrome Trace Event JSON ----------------------------------------------------

namespace {

constexpr int kHostPid = 1, kDevicePid = 2, kDeviceTid = 1;

double to_us(int64_t ns) { return double(ns) / 1000.0; }

// A kernel-timeline span's track: the device's process, one thread per
// stream after the device timer's (tid 2 + stream).
int kernel_tid(int32_t thread) { return kDeviceTid + 1 + int(stream_of_thread(thread)); }

nlohmann::json metadata(const char *what, int pid, int tid, nlohmann::json args) {
    return {{"name", what}, {"ph", "M"}, {"pid", pid}, {"tid", tid}, {"args", std::move(args)}};
}

} // namespace

nlohmann::json chrome_trace(const Profiler &profiler, const TraceInfo &info) {
    nlohmann::json events = nlohmann::json::array();
    const auto &spans = profiler.spans();

    // Threads in order of first appearance: the first is the harness's main thread.
    std::vector<int32_t> threads;
    std::set<int32_t> streams; // kernel-timeline tracks
    bool device = false;
    for (const Span &s : spans) {
        if (s.thread == kDeviceThread)
            device = true;
        else if (is_kernel_thread(s.thread))
            streams.insert(s.thread);
        else if (std::find(threads.begin(), threads.end(), s.thread) == threads.end())
            threads.push_back(s.thread);
    }
    events.push_back(metadata("process_name", kHostPid, 0, {{"name", info.process_name}}));
    events.push_back(metadata("process_sort_index", kHostPid, 0, {{"sort_index", 0}}));
    for (std::size_t i = 0; i < threads.size(); ++i) {
        const std::string name =
            i == 0 ? fmt::format("harness (tid {})", threads[i]) : fmt::format("thread {}", threads[i]);
        events.push_back(metadata("thread_name", kHostPid, threads[i], {{"name", name}}));
        events.push_back(metadata("thread_sort_index", kHostPid, threads[i], {{"sort_index", int(i)}}));
    }
    if (device || !streams.empty()) {
        events.push_back(metadata("process_name", kDevicePid, 0, {{"name", info.device_name}}));
        events.push_back(metadata("process_sort_index", kDevicePid, 0, {{"sort_index", 1}}));
    }
    if (device) events.push_back(metadata("thread_name", kDevicePid, kDeviceTid, {{"name", "device timer"}}));
    for (int32_t t : streams) // the GPU tracks: each stream's kernels (issue 42)
        events.push_back(metadata("thread_name", kDevicePid, kernel_tid(t),
                                  {{"name", fmt::format("GPU stream {} kernels", stream_of_thread(t))}}));

    // Complete events in begin order (parents before their children), then
    // counters; viewers sort by ts themselves, the order only helps reading.
    std::vector<std::size_t> order;
    for (std::size_t i = 0; i < spans.size(); ++i)
        if (spans[i].end_ns >= 0) order.push_back(i);
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
        if (spans[a].begin_ns != spans[b].begin_ns) return spans[a].begin_ns < spans[b].begin_ns;
        return spans[a].end_ns > spans[b].end_ns; // the enclosing span first
    });
    for (std::size_t i : order) {
        const Span &s = spans[i];
        nlohmann::json args = s.args >= 0 ? profiler.args(s.args) : nlohmann::json::object();
        if (!args.is_object()) args = {{"value", args}};
        // Heap figures only where there were allocations: viewers such as
        // speedscope show args in the frame's name.
        if (s.kind != SpanKind::device && s.kind != SpanKind::kernel && s.allocs > 0) {
            args["allocs"] = s.allocs;
            args["alloc_bytes"] = s.alloc_bytes;
        }
        const bool on_device = s.thread == kDeviceThread || is_kernel_thread(s.thread);
        events.push_back({{"name", profiler.name(s.name)},
                          {"cat", span_kind_name(s.kind)},
                          {"ph", "X"},
                          {"ts", to_us(s.begin_ns)},
                          {"dur", to_us(s.end_ns - s.begin_ns)},
                          {"pid", on_device ? kDevicePid : kHostPid},
                          {"tid", is_kernel_thread(s.thread) ? kernel_tid(s.thread)
                                  : on_device                ? kDeviceTid
                                                             : s.thread},
                          {"args", std::move(args)}});
    }
    for (const MemorySample &m : profiler.memory_samples()) {
        nlohmann::json args = {{"heap_bytes", m.heap_bytes}};
        if (m.device_bytes) args["device_bytes"] = *m.device_bytes;
        events.push_back({{"name", "memory"},
                          {"ph", "C"},
                          {"ts", to_us(m.t_ns)},
                          {"pid", kHostPid},
                          {"tid", threads.empty() ? 0 : threads.front()},
                          {"args", std::move(args)}});
    }
    return {{"traceEvents", std::move(events)}, {"displayTimeUnit", "ns"}, {"otherData", info.metadata}};
}

} // namespace opbench
