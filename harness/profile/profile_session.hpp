// One run's profiling (issue 12): `opbench run --profile` and `--trace FILE`.
//
// The session turns the run's events into spans in a Profiler: the run, each
// case x backend (with its parameters), the recipe's phases, each recorded
// sample with its execute / synchronize calls, the plugin's scopes inside
// them, device time and live memory. The trace schedule (trace.hpp) chooses
// the recorded samples, counting from 0 for each case x backend: a warmup
// step is recorded and dropped, an active step kept.
//
// Recorded samples pay for their spans (the plugin's scopes above all), so
// they never enter the statistics: sample_begin() says so, and the recipe
// leaves them out of the stopping rule and the published median.
#pragma once

#include "profile/kernel_timeline.hpp"
#include "profile/profiler.hpp"
#include "profile/trace.hpp"

#include <nlohmann/json.hpp>

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace opbench {

struct ProfileOptions {
    bool hot_path = false;  // --profile: hot-path tables and `profile` arrays
    std::string trace_path; // --trace FILE; empty: no trace
    TraceSchedule schedule; // --trace-schedule; also chooses what --profile records
    [[nodiscard]] bool enabled() const { return hot_path || !trace_path.empty(); }
    // For the result set's context: what was recorded, and that timings exclude it.
    [[nodiscard]] nlohmann::json context() const;
};

// A backend's kernel timeline (ABI 1.6 activity_begin / activity_end), as
// the session calls it: each returns "" or why the device refused.
struct ActivitySource {
    std::function<std::string()> begin;
    std::function<std::string(std::vector<DeviceActivity> &)> end;
    [[nodiscard]] bool offered() const { return begin && end; }
};

// What one case x backend recorded.
struct CaseProfile {
    std::string name; // the benchmark name
    std::string backend;
    ScopeTree tree; // rooted at the "case" span
    std::size_t recorded_samples = 0;
    // The entry's measured median, once it finished (the hot-path table
    // compares the profile's per-call time with it).
    std::optional<double> measured_median;
    KernelTimeline timeline; // the kept samples' device work (offered: the backend has ABI 1.6's entries)
};

class ProfileSession {
public:
    explicit ProfileSession(ProfileOptions options);

    [[nodiscard]] const ProfileOptions &options() const { return options_; }
    [[nodiscard]] Profiler &profiler() { return profiler_; }
    [[nodiscard]] const Profiler &profiler() const { return profiler_; }

    void run_begin(nlohmann::json args);
    void run_end();

    // One case x backend. set_scope_recording flips the plugin's scope
    // switch; device_bytes reads the device memory the backend reports
    // (nullopt for CPU backends).
    void case_begin(const std::string &name, const std::string &backend, nlohmann::json args,
                    std::function<void(bool)> set_scope_recording,
                    std::function<std::optional<uint64_t>()> device_bytes);
    // The case's kernel timeline (after case_begin): each recorded sample
    // runs between source.begin and source.end; the kept ones' records go
    // into its CaseProfile and onto the trace's GPU tracks. A refusal stops
    // it for the case, and the reason is kept.
    void set_activity_source(ActivitySource source);
    // Closes the case (and any phase left open by a failure) and keeps its tree.
    const CaseProfile &case_end();

    void phase_begin(std::string_view name, nlohmann::json args = nullptr);
    void phase_end();

    // True when this sample is recorded (a warmup or active step of the
    // schedule): it must not count in the statistics.
    [[nodiscard]] bool sample_begin();
    // device_seconds: the device timer's figure for the sample, shown on the
    // device track from the sample's start.
    void sample_end(std::optional<double> device_seconds = std::nullopt);
    [[nodiscard]] bool sample_recording() const { return in_sample_ && step_action_ != StepAction::none; }

    // Around one execute / synchronize inside a recorded sample (no-ops otherwise).
    void call_begin(const char *what);
    void call_end();

    [[nodiscard]] const std::vector<CaseProfile> &cases() const { return cases_; }
    // The entry that recorded cases()[index] finished with this median.
    void set_measured_median(std::size_t index, double seconds) { cases_.at(index).measured_median = seconds; }
    [[nodiscard]] Table top_scopes(std::size_t limit = 15) const;
    // The Chrome trace of everything recorded (call after run_end()).
    [[nodiscard]] nlohmann::json trace(const TraceInfo &info) const;

private:
    void sample_memory();

    ProfileOptions options_;
    Profiler profiler_;
    std::vector<CaseProfile> cases_;

    bool in_case_ = false;
    std::size_t case_mark_ = 0;
    std::size_t case_depth_ = 0; // spans this session opened inside the case, to close on failure
    std::string case_name_, case_backend_;
    std::function<void(bool)> set_scope_recording_;
    std::function<std::optional<uint64_t>()> device_bytes_;
    uint64_t step_ = 0;        // samples seen in this case x backend
    std::size_t recorded_ = 0; // active samples kept
    bool in_sample_ = false;
    StepAction step_action_ = StepAction::none;
    std::size_t sample_mark_ = 0;
    int64_t sample_begin_ns_ = 0;
    ActivitySource activity_;
    KernelTimeline timeline_;
    bool activity_on_ = false;      // activity_.begin succeeded for this sample
    int64_t first_execute_ns_ = -1; // the sample's first execute, host clock

    void end_activity(bool keep);
};

// Writes the case's `kernel_timeline` object (kernel_timeline_json) into
// one entry's repetition records, when its backend offers the timeline.
void attach_case_timeline(std::vector<nlohmann::json> &records, const CaseProfile &profile);

// Writes the case's `profile` array (profile_json of its tree) into one
// entry's result-set records: the same array on each repetition (not on
// Google Benchmark's aggregates). The run hands over the records of the
// entry that recorded the case (run/entry_loop.cpp), never a name to match.
void attach_case_profile(std::vector<nlohmann::json> &records, const CaseProfile &profile);

} // namespace opbench
