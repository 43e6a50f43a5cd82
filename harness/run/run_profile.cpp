#include "run/run_profile.hpp"

#include "build_config.hpp"
#include "files/atomic_file.hpp"
#include "writers/chrome_trace_writer.hpp"
#include "writers/table_writers.hpp"
#include "writers/text_wrap.hpp"
#include "writers/units.hpp"

#include <fmt/format.h>

#include <iostream>
#include <set>

namespace opbench {

void begin_profiled_run(ProfileSession &profile, BackendSessions &sessions, const Suite &suite) {
    // Never the reference's instance: its work is not the entry's.
    for (auto &[name, inst] : sessions.backends) inst->attach_scope_sink(&profile.profiler());
    profile.run_begin(
        {{"suite", suite.name}, {"path", suite.path}, {"schedule", to_string(profile.options().schedule)}});
}

std::string profile_disagreement(double profiled_per_call, double measured_median) {
    if (!(profiled_per_call > 0) || !(measured_median > 0)) return "";
    const double ratio = profiled_per_call / measured_median;
    if (ratio <= 2 && ratio >= 0.5) return "";
    return fmt::format("profile and measurement disagree: execute took {} per call in the recorded samples, {} "
                       "measured ({:.2g}x); the profiler's own cost or another machine state, so read the "
                       "profile's shares, and the measured time as the case's time",
                       format_seconds(profiled_per_call), format_seconds(measured_median), ratio);
}

namespace {

void print_hot_paths(const ProfileSession &profile) {
    std::cout << "\n"
              << wrap_words(fmt::format("Hot paths: the samples the schedule recorded ({}), per case x backend; "
                                        "they are not in the timings above",
                                        to_string(profile.options().schedule)),
                            2, 0);
    for (const CaseProfile &c : profile.cases()) {
        if (c.recorded_samples == 0) continue; // failed or skipped before sampling
        std::cout << "\n" << render_text_table(hot_path_table(c.tree, c.name));
        const ScopeNode *execute = c.tree.find("case/repetition/sample/execute");
        if (execute && c.measured_median)
            if (const std::string line = profile_disagreement(execute->mean_s(), *c.measured_median); !line.empty())
                std::cout << wrap_words(line, 4, 2);
    }
    std::cout << "\n" << render_text_table(profile.top_scopes());
}

// Each case's kernel timeline in one line (issue 42); a refusal once per
// backend and reason: the run went on without it.
void print_kernel_timelines(const ProfileSession &profile) {
    std::set<std::string> refusals;
    bool header = false;
    for (const CaseProfile &c : profile.cases()) {
        if (!c.timeline.offered || c.recorded_samples == 0) continue;
        if (!c.timeline.refused.empty()) {
            const std::string line = fmt::format("opbench: {}: no kernel timeline: {}; the run carries on without it",
                                                 c.backend, c.timeline.refused);
            if (refusals.insert(line).second) std::cout << "\n" << wrap_words(line, 2, 0);
            continue;
        }
        if (!header) std::cout << "\nKernel timeline (device work of the recorded samples, per execute call):\n";
        header = true;
        std::cout << wrap_name(c.name, 2) << wrap_words(kernel_timeline_line(c.timeline), 6, 4);
    }
}

} // namespace

std::optional<std::string> end_profiled_run(ProfileSession &profile, BackendSessions &sessions, const Suite &suite) {
    profile.run_end();
    for (auto &[name, inst] : sessions.backends) inst->attach_scope_sink(nullptr);
    const ProfileOptions &o = profile.options();
    if (o.hot_path) print_hot_paths(profile);
    print_kernel_timelines(profile);
    if (o.trace_path.empty()) return std::nullopt;
    TraceInfo info;
    info.process_name = fmt::format("opbench run {}", suite.name);
    info.device_name = "device (backend timer)";
    info.metadata = {{"suite", suite.name},
                     {"suite_path", suite.path},
                     {"schedule", to_string(o.schedule)},
                     {"opbench_version", OPBENCH_VERSION}};
    Document doc;
    doc.data = profile.trace(info);
    const std::size_t events = doc.data["traceEvents"].size();
    try {
        write_file_atomically(o.trace_path, write_chrome_trace(doc));
        // Wrapped: a long path put the line past 100 columns.
        std::cout << "\n"
                  << wrap_words(fmt::format("opbench: trace of {} events -> {} (open in ui.perfetto.dev, "
                                            "chrome://tracing or speedscope)",
                                            events, o.trace_path),
                                2, 0);
    } catch (const std::exception &e) {
        return fmt::format("--trace {}: not written: {}", o.trace_path, e.what());
    }
    return std::nullopt;
}

} // namespace opbench
