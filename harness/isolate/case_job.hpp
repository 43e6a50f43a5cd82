// A job of the case host (case_host.hpp) and what crosses with it: the
// job (one case x backend, or another kind's, with its `detail`), what
// activating and finishing it gave, and the interface a kind of job
// implements (JobKinds: an op case's, entry/op_case_job.hpp; a workload
// phase's, workload/workload_session.hpp). An entry hands the host a job
// through this header and includes nothing else of isolate/.
#pragma once

#include "plugin/backend_sessions.hpp"
#include "measure/json_optional.hpp"
#include "measure/plain_bytes.hpp"
#include "measure/recipe.hpp"
#include "measure/records.hpp"
#include "measure/settings.hpp"
#include "check/verify.hpp"

#include "opbench/plugin.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

namespace opbench {

class CacheEvictor; // plugin/backend_work.hpp

// Phases a failure is reported in. The recipe's steps map onto them:
// prepare -> prepare, check -> verify, warm-up / batch / samples -> execute.
namespace case_phase {
inline constexpr std::string_view create = "create";       // the backend's create (also "probe": backend_facts.hpp)
inline constexpr std::string_view reference = "reference"; // the reference backend's run
inline constexpr std::string_view prepare = "prepare";
inline constexpr std::string_view verify = "verify";
inline constexpr std::string_view execute = "execute";
inline constexpr std::string_view finish = "finish"; // memory figures, release
} // namespace case_phase
[[nodiscard]] std::string_view case_phase_of(std::string_view recipe_phase);

// The jobs and records below cross the pipe through nlohmann's macros, which
// list every member: a member left out of its list does not cross. A case's
// description and settings cross as their bytes (measure/plain_bytes.hpp):
// every field, with no list of them to keep.
template <>
inline constexpr std::string_view kPlainBytesName<opb_op_desc> = "case description";
template <>
inline constexpr std::string_view kPlainBytesName<MeasureSettings> = "measurement settings";

struct CaseJob {
    std::size_t case_index = 0; // seeds the inputs; keys the reference cache
    std::string name;           // benchmark name, for messages
    std::string backend;
    opb_op_desc desc{};
    MeasureSettings settings;
    double nmse_threshold = 0;
    double timer_overhead = 0; // the recipe's batch choice
    VerifyMode verify = VerifyMode::fast;
    uint64_t check_seed = 0;         // the fast checks' randomness, recorded
    std::string reference_store_dir; // full mode: references kept on disk here ("" = none)
    std::string reference_store_key; // names the reference build exactly
    // A kind of job other than the op case `desc`: its own plain data, which
    // only that kind reads (a workload phase: workload/workload_job.hpp's
    // WorkloadJob); null for an op case.
    nlohmann::json detail;
    // Its repetitions stay in the worker that activated it (a workload: its
    // layer check and whole-model figures belong to that process), instead of
    // spreading over the backend's pool.
    bool one_process = false;
    // > 0: the batch the case's first process chose, taken as it is (no
    // probe call) by a later process of its pool; 0: the recipe probes.
    int calls_per_sample = 0;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(CaseJob, case_index, name, backend, desc, settings, nmse_threshold, timer_overhead,
                                   verify, check_seed, reference_store_dir, reference_store_key, detail, one_process,
                                   calls_per_sample)

// What activating a case gave: passed, or failed / skipped with the reason.
struct Activation {
    CaseStatus status = CaseStatus::passed;
    std::string reason;
    double nmse = -1; // < 0: not verified
    PreparationRecord preparation;
    uint64_t workspace_bytes = 0;
    bool checked = false;                           // reached the check step: `verification` says how it went
    Verification verification;                      // mode, method, what was checked
    double prepare_seconds = 0, verify_seconds = 0; // reference + check for the latter
    double inputs_seconds = 0; // making the host inputs, where the reference did not (then in verify_seconds)
    std::string reference_problem; // the reference store could not be used (the run goes on)
    nlohmann::json detail; // the job kind's own (a workload's check and work per call); null for an op case
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(Activation, status, reason, nmse, preparation, workspace_bytes, checked, verification,
                                   prepare_seconds, verify_seconds, inputs_seconds, reference_problem, detail)

// What finishing a case gave: its memory figures, and the job kind's own
// (a workload's tail: allocations, component times); null for an op case.
struct FinishRecord {
    MemoryFigures memory;
    nlohmann::json detail;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(FinishRecord, memory, detail)

// What a job runs with in the process that runs it: the host's backends,
// its phase (a failure names it; a worker reports it to its parent) and the
// cold cache's evictor.
class JobContext {
public:
    virtual ~JobContext() = default;
    [[nodiscard]] virtual BackendSessions &sessions() = 0;
    [[nodiscard]] virtual const std::string &reference_name() const = 0;
    // `backend`'s open instance; else throws MeasureFailure (skipped) saying why.
    [[nodiscard]] virtual BackendInstance &usable_or_throw(const std::string &backend) = 0;
    // The job enters `case_phase` (case_phase above).
    virtual void enter(std::string_view case_phase) = 0;
    // The evictor of --cache cold, made on first use (outside every case's memory figures).
    [[nodiscard]] virtual CacheEvictor &evictor() = 0;
};

// A job made active in this process, between activation and finish.
class ActiveJob {
public:
    virtual ~ActiveJob() = default; // releases what it holds
    // One repetition. Throws MeasureFailure.
    [[nodiscard]] virtual RepetitionRecord measure_repetition() = 0;
    // Its memory figures (when it passed) and its kind's detail.
    [[nodiscard]] virtual FinishRecord finish() = 0;
};

// The kinds of job a host runs (an op case, a workload phase); keeps what
// outlives one job (the references). A job's observers (profiling) are the
// kinds' to give its recipe: the host knows none.
class JobKinds {
public:
    virtual ~JobKinds() = default;
    // Runs `job`'s reference, prepare, check, warm-up and batch choice,
    // recording them in `a` (the host sets its status). Throws
    // MeasureFailure, or what a plugin threw.
    [[nodiscard]] virtual std::unique_ptr<ActiveJob> activate(const CaseJob &job, JobContext &context,
                                                              Activation &a) = 0;
};
// Makes a host's JobKinds (the worker's host makes its own).
using JobKindsMaker = std::function<std::unique_ptr<JobKinds>()>;

} // namespace opbench
