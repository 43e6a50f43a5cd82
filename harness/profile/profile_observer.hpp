// The profiler's two hooks into the recipe (issue 12), used only when the run
// profiles (--profile, --trace):
//   ProfiledWork      wraps the measured work: each execute and synchronize
//                     of a recorded sample becomes a span, and the device
//                     timer's figure is kept for the sample's device span;
//   ProfilingObserver the recipe's phases and samples as the session's spans;
//                     a recorded sample is extra (recipe.hpp sample_is_extra):
//                     in no statistic. It forwards every hook to `next` (the
//                     memory observer), after opening a span and before
//                     closing one, so the profiler's own allocations stay
//                     outside the memory figures' windows.
#pragma once

#include "profile/profile_session.hpp"
#include "measure/recipe.hpp"
#include "plugin/backend_sessions.hpp"

#include "opbench/plugin.h"

#include <nlohmann/json.hpp>

#include <functional>
#include <memory>
#include <string>

namespace opbench {

class ProfiledWork final : public MeasuredWork {
public:
    ProfiledWork(MeasuredWork &inner, ProfileSession &session) : inner_(inner), session_(session) {}

    void prepare() override { inner_.prepare(); }
    void execute() override;
    void synchronize() override;
    void flush_cache() override { inner_.flush_cache(); }
    [[nodiscard]] bool has_device_timer() const override { return inner_.has_device_timer(); }
    void device_timer_start() override { inner_.device_timer_start(); }
    [[nodiscard]] double device_timer_stop() override;
    // Launch graph: the profiled sample replays the graph as the others do.
    [[nodiscard]] std::string graph_prepare(int calls) override { return inner_.graph_prepare(calls); }
    void graph_launch() override { inner_.graph_launch(); }
    void graph_release() override { inner_.graph_release(); }

    // The device timer's last figure (seconds for the whole sample), < 0: none.
    [[nodiscard]] double last_device_seconds() const { return last_device_seconds_; }

private:
    MeasuredWork &inner_;
    ProfileSession &session_;
    double last_device_seconds_ = -1;
};

class ProfilingObserver final : public RecipeObserver {
public:
    ProfilingObserver(ProfileSession &session, RecipeObserver *next, const ProfiledWork *work)
        : session_(session), next_(next), work_(work) {}

    void on_phase_begin(std::string_view phase) override;
    void on_phase_end(std::string_view phase) override;
    void on_sample_begin(std::size_t index, int calls) override;
    void on_sample_end(std::size_t index, double seconds_per_call) override;
    [[nodiscard]] bool sample_is_extra() const override { return recorded_; }
    void on_sample_excluded(std::size_t index) override;
    void on_counted_calls_begin() override {
        if (next_) next_->on_counted_calls_begin();
    }
    void on_counted_calls_end(int calls) override {
        if (next_) next_->on_counted_calls_end(calls);
    }

private:
    ProfileSession &session_;
    RecipeObserver *next_;
    const ProfiledWork *work_;
    bool recorded_ = false;
};

// Instruments cases measured in this process (profiling: --profile, --trace):
// hears a case begin and end, and wraps the work and the observer the recipe
// sees. The op cases' and workloads' jobs (entry/op_case_job.hpp,
// workload/workload_session.hpp) take one when the run profiles, so they
// run in this process: what it records stays here.
class CaseInstrumentation {
public:
    virtual ~CaseInstrumentation() = default;
    // An op case `name`: `desc` on `backend_name`.
    virtual void case_begin(const std::string &name, const std::string &backend_name, const opb_op_desc &desc,
                            BackendInstance &backend) = 0;
    [[nodiscard]] virtual MeasuredWork &wrap_work(MeasuredWork &work) = 0;
    [[nodiscard]] virtual RecipeObserver &wrap_observer(RecipeObserver &observer) = 0;
    virtual void case_end() = 0;
    // A workload entry (workload/workload_session.hpp) instead of an op case:
    // `args` go on its case span, `on_recording` hears the plugin's scope
    // switch flip at each recorded sample; its component spans record into
    // profiler(); finish_case() ends it with what was recorded.
    virtual void begin(const std::string &name, const std::string &backend_name, nlohmann::json args,
                       BackendInstance &backend, std::function<void(bool)> on_recording) = 0;
    [[nodiscard]] virtual Profiler &profiler() = 0;
    virtual const CaseProfile &finish_case() = 0;
};

// The profiler's side of the op case's and the workload's jobs: opens a case
// span in the session as each case begins, gives the recipe the profiled work
// and observer, and closes the span as the case ends.
class ProfileInstrumentation final : public CaseInstrumentation {
public:
    explicit ProfileInstrumentation(ProfileSession &session) : session_(session) {}

    void case_begin(const std::string &name, const std::string &backend_name, const opb_op_desc &desc,
                    BackendInstance &backend) override;
    // Any measured unit on `backend` (a workload entry): `args` go on the
    // case span; `on_recording` hears the plugin's scope switch flip, at
    // each recorded sample's start and end.
    void begin(const std::string &name, const std::string &backend_name, nlohmann::json args, BackendInstance &backend,
               std::function<void(bool)> on_recording) override;
    [[nodiscard]] Profiler &profiler() override { return session_.profiler(); }
    [[nodiscard]] MeasuredWork &wrap_work(MeasuredWork &work) override;
    [[nodiscard]] RecipeObserver &wrap_observer(RecipeObserver &observer) override;
    void case_end() override { (void)finish_case(); }
    // Ends the case; what it recorded (valid until the next case ends).
    const CaseProfile &finish_case() override;

private:
    ProfileSession &session_;
    std::unique_ptr<ProfiledWork> work_;
    std::unique_ptr<ProfilingObserver> observer_;
};

// The span name of a recipe phase: the sampling phase is one repetition.
[[nodiscard]] std::string_view span_name_of_phase(std::string_view phase);

} // namespace opbench
