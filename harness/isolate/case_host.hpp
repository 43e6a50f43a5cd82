// Where one case x backend is measured: in a worker process per backend
// (--isolate process, the default) or in opbench's own process
// (--isolate none, for debugging a plugin under gdb).
//
// The runner talks to a CaseHost in three steps per case x backend, which
// mirror the recipe (recipe.hpp): activate (reference, prepare, check, warm
// up, choose batch), measure_repetition (once per Google Benchmark
// repetition), finish (memory figures, release). Everything that crosses
// the host is plain data (records.hpp, MemoryFigures), so the worker host
// sends it over a pipe (worker.hpp: CBOR, converted by nlohmann's macros
// below) and a plugin's crash, abort,
// exit(), exception or hang costs that case x backend only:
//   "crashed: SIGSEGV in execute", "exited with status 0 during execute",
//   "exception: <what> in prepare", "timed out after 60 s in execute".
#pragma once

#include "plugin/backend_facts.hpp"
#include "plugin/backend_sessions.hpp"
#include "measure/json_optional.hpp"
#include "measure/plain_bytes.hpp"
#include "measure/recipe.hpp"
#include "measure/records.hpp"
#include "measure/settings.hpp"
#include "check/verify.hpp"
#include "isolate/worker.hpp"
#include "profile/profile_session.hpp"
#include "workload/workload_job.hpp"

#include "opbench/plugin.h"

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace opbench {

enum class Isolation { process, none };
[[nodiscard]] std::string_view isolation_name(Isolation i);
[[nodiscard]] std::optional<Isolation> isolation_from_name(std::string_view name);

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

// The seconds a case x backend may take before its worker is killed:
// settings.timeout when set, else 60 s + 10 x repetitions x max_time
// (a repetition stops at max_time, or at twice it for untimed work, so this
// leaves five times the longest regular run plus a minute for the
// reference, prepare and warm-up).
[[nodiscard]] double case_timeout_seconds(const MeasureSettings &settings);

// One case x backend as the runner asks for it.
// Under --isolate process, each backend has a pool of this many worker
// processes and a case's repetitions are spread over them (9 repetitions: 3
// in each; interleaved repetitions rotate over them). One process holds one
// memory layout and one state of its runtimes for all its repetitions, and
// on this project's VM a case's time moved by up to 7-15% from one process
// to the next while staying within 1-2% inside each; repetitions drawn from
// several processes let a comparison's U test see that movement as noise
// instead of a change (docs/measurement.md, "Layout and process effects").
inline constexpr int kProcessesPerCase = 3;
// How many repetitions run in one process: ceil(repetitions / kProcessesPerCase).
[[nodiscard]] int repetitions_per_process(const MeasureSettings &s);

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
    // Set: a workload phase (its decoder and phase) instead of the op case
    // `desc`; run by workload/workload_session.hpp, checked layer by layer.
    std::optional<workload::WorkloadJob> workload;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(CaseJob, case_index, name, backend, desc, settings, nmse_threshold, timer_overhead,
                                   verify, check_seed, reference_store_dir, reference_store_key, workload)

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
    std::string reference_problem;                  // the reference store could not be used (the run goes on)
    std::optional<workload::WorkloadActivation> workload; // a workload job's: its check and work per call
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(Activation, status, reason, nmse, preparation, workspace_bytes, checked, verification,
                                   prepare_seconds, verify_seconds, reference_problem, workload)

// What finishing a case gave: its memory figures, and a workload's tail
// (allocations, component times) for its whole-model figures.
struct FinishRecord {
    MemoryFigures memory;
    std::optional<workload::WorkloadTail> workload;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(FinishRecord, memory, workload)

// What probing a backend gave (CaseHost::probe_backend): its facts and call
// overhead, or the fault that ended the probing.
struct BackendProbe {
    BackendFacts facts;                          // when fault is empty
    std::optional<double> call_overhead_seconds; // none: the backend cannot run the tiny add
    std::string fault; // "crashed: SIGSEGV in create", "exited with status 0 during call-overhead", ...
};

class CaseHost {
public:
    virtual ~CaseHost() = default;
    // Before its cases: opens `backend` (create, probe), reads its context,
    // asks supports() for each of `cases` and measures its call overhead
    // (call_overhead.hpp). In a worker each step is a request that may take
    // `timeout_seconds`; a fault there is returned, never thrown.
    [[nodiscard]] virtual BackendProbe probe_backend(const std::string &backend, const std::vector<opb_op_desc> &cases,
                                                     double timeout_seconds) = 0;
    // Runs the reference, then prepare -> check -> warm up -> choose batch
    // of `job`; the case stays active for measure_repetition().
    [[nodiscard]] virtual Activation activate(const CaseJob &job) = 0;
    // One repetition of the active case. Throws MeasureFailure.
    [[nodiscard]] virtual RepetitionRecord measure_repetition() = 0;
    // Memory figures of the active case (when it passed) and its release.
    [[nodiscard]] virtual FinishRecord finish() = 0;
    // Abandons the case in progress as soon as possible; callable from
    // another thread (the signal watcher). In-process: a no-op.
    virtual void interrupt() {}
    // The case in progress was abandoned through interrupt().
    [[nodiscard]] virtual bool interrupted() const { return false; }
};

// Instruments cases measured in this process (profiling: --profile, --trace):
// hears a case begin and end, and wraps the work and the observer the recipe
// sees. Only the in-process host takes one: what it records stays here.
class CaseInstrumentation {
public:
    virtual ~CaseInstrumentation() = default;
    virtual void case_begin(const CaseJob &job, BackendInstance &backend) = 0;
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

// --isolate none: runs in this process on `sessions`' instances. A plugin
// fault here ends opbench; C++ exceptions (bad_alloc included) fail the case.
// `on_phase`, when set, hears each phase as it begins (the worker reports
// them to its parent through it).
[[nodiscard]] std::unique_ptr<CaseHost> make_in_process_host(BackendSessions &sessions, const std::string &reference,
                                                             std::function<void(std::string_view)> on_phase = nullptr,
                                                             CaseInstrumentation *instrumentation = nullptr);

// --isolate process: one worker per backend, started when the backend is
// probed and again after a failure as
//   <worker_command...> BACKEND BACKEND_PLUGIN REFERENCE REFERENCE_PLUGIN
// (normally /proc/self/exe __worker ...): the worker loads just those two
// plugin files. `plugin_paths`: backend name -> its plugin file.
[[nodiscard]] std::unique_ptr<CaseHost> make_worker_host(std::vector<std::string> worker_command, std::string reference,
                                                         std::map<std::string, std::string> plugin_paths);

// The worker's side: opens `backend` and the reference backend from
// `plugins` and serves the host's requests until the parent closes the pipe.
// Returns the exit status.
[[nodiscard]] int serve_case_worker(const PluginSet &plugins, const std::string &backend, const std::string &reference);

// main() of `opbench __worker BACKEND BACKEND_PLUGIN REFERENCE REFERENCE_PLUGIN`.
[[nodiscard]] int case_worker_main(int argc, char **argv);

} // namespace opbench
