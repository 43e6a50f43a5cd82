// One workload phase x backend made active in this process: what BackendWork
// and the recipe are for an op case. The case host (isolate/case_host.cpp)
// drives it as a job of the workloads' JobKinds (make_workload_jobs below)
// in three steps, as it does an op case: activate (reference,
// prepare, check layer by layer, warm up, choose batch), measure_repetition,
// finish (memory, component times, release). Under --isolate process that
// happens in the backend's worker, so a plugin fault inside a workload costs
// only its entry.
#pragma once

#include "workload/decoder.hpp"
#include "workload/decoder_work.hpp"
#include "workload/workload_job.hpp"

#include "isolate/case_job.hpp"
#include "measure/recipe.hpp"
#include "plugin/backend_work.hpp"
#include "profile/profile_observer.hpp"

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace opbench::workload {

using LayerOutputs = std::vector<std::vector<std::vector<float>>>; // [step][layer][values]

// Why `backend` cannot run the workload (an op or shape it refuses), or nothing.
[[nodiscard]] std::optional<MeasureFailure> workload_unsupported(BackendInstance &backend,
                                                                 const DecoderConfig &decoder);

// The reference backend's layer outputs of the last workload asked for: the
// phases and backends of one workload run one after another, so one is kept.
class ReferenceLayerOutputs {
public:
    // Throws MeasureFailure (failed) when the reference cannot run it.
    const LayerOutputs &get(BackendInstance *reference, const std::string &reference_name,
                            const std::string &why_missing, const DecoderConfig &decoder);

private:
    std::optional<DecoderConfig> cached_;
    LayerOutputs outputs_;
    std::string error_;
};

class WorkloadSession {
public:
    struct Setup {
        std::string name;    // the entry's name, for the profile
        std::string backend; // the backend's name
        MeasureSettings settings;
        double timer_overhead = 0;
        CacheEvictor *evictor = nullptr;                  // cold cache: evicts between samples
        std::function<void(std::string_view)> on_phase;   // hears each recipe phase begin
        CaseInstrumentation *instrumentation = nullptr;   // profiling runs
    };
    WorkloadSession(BackendInstance &backend, WorkloadJob job, Setup setup);
    ~WorkloadSession();

    // Prepares, checks every layer output against `reference`, warms up and
    // chooses the batch. Throws MeasureFailure; `nmse` is set once checked.
    WorkloadActivation activate(const LayerOutputs &reference, double &nmse, PreparationRecord &preparation);
    // One repetition, with the units it timed. Throws MeasureFailure.
    RepetitionRecord measure_repetition();
    // Memory figures and the tail (allocations, component times); releases.
    std::pair<MemoryFigures, WorkloadTail> finish();

private:
    class Observer;
    class Work;
    BackendInstance &backend_;
    WorkloadJob job_;
    Setup setup_;
    MemoryFigures memory_;
    PreparationRecord preparation_;
    std::vector<double> call_seconds_; // this session's timed calls (the component timing's budget)
    std::unique_ptr<DecoderRun> run_;
    std::unique_ptr<DecoderPhaseWork> phase_;
    std::unique_ptr<Work> work_;
    std::unique_ptr<Observer> observer_;
    std::unique_ptr<class ComponentSpans> spans_;
    bool profiled_ = false;
    std::unique_ptr<Recipe> recipe_;
};

// The workload phases' kind of job alone: a job whose `detail` is a
// WorkloadJob (workload_job.hpp); its Activation's and FinishRecord's details
// are a WorkloadActivation and a WorkloadTail. `instrumentation` (may be
// null) outlives it.
[[nodiscard]] std::unique_ptr<JobKinds> make_workload_jobs(CaseInstrumentation *instrumentation = nullptr);

} // namespace opbench::workload
