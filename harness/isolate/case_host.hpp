// Where one case x backend is measured: in a worker process per backend
// (--isolate process, the default) or in opbench's own process
// (--isolate none, for debugging a plugin under gdb).
//
// The runner talks to a CaseHost in three steps per case x backend, which
// mirror the recipe (recipe.hpp): activate (reference, prepare, check, warm
// up, choose batch), measure_repetition (once per Google Benchmark
// repetition), finish (memory figures, release). The host knows jobs, not
// what they measure: each step goes to the JobKinds it was given (an op
// case's, entry/op_case_job.hpp; a workload phase's,
// workload/workload_session.hpp), which any observer (profiling) comes in
// through too. Everything that crosses
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
#include "isolate/case_job.hpp"
#include "isolate/worker.hpp"

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

// The seconds a case x backend may take before its worker is killed:
// settings.timeout when set, else 60 s + 10 x repetitions x max_time
// (a repetition stops at max_time, or at twice it for untimed work, so this
// leaves five times the longest regular run plus a minute for the
// reference, prepare and warm-up).
[[nodiscard]] double case_timeout_seconds(const MeasureSettings &settings);

// One case x backend as the runner asks for it.
// Under --isolate process, each backend has a pool of worker processes and
// a case's repetitions are spread over settings.processes of them (default
// 3; 9 repetitions: 3 in each; interleaved repetitions rotate over them).
// One process holds one memory layout and one state of its runtimes for all
// its repetitions, and on this project's VM a case's time moved by up to
// 7-15% from one process to the next while staying within 1-2% inside each;
// repetitions drawn from several processes let a comparison's U test see
// that movement as noise instead of a change (docs/measurement.md, "Layout
// and process effects"). Each process after the first prepares the case
// again, which `processes = 1` saves.
// The processes a case's repetitions use: settings.processes, at most one
// per repetition.
[[nodiscard]] int processes_per_case(const MeasureSettings &s);
// How many repetitions run in one process: ceil(repetitions / processes).
[[nodiscard]] int repetitions_per_process(const MeasureSettings &s);

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
    // How many processes a case with these settings runs its repetitions
    // in; each after the first prepares it again within its repetitions'
    // time (the run's time-left estimate counts that).
    [[nodiscard]] virtual int processes_of_case(const MeasureSettings &) const { return 1; }
};

// --isolate none: runs `kinds`' jobs (which it keeps) in this process on `sessions`'
// instances. A plugin fault here ends opbench; C++ exceptions (bad_alloc
// included) fail the case. `on_phase`, when set, hears each phase as it
// begins (the worker reports them to its parent through it).
[[nodiscard]] std::unique_ptr<CaseHost> make_in_process_host(BackendSessions &sessions, const std::string &reference,
                                                             std::unique_ptr<JobKinds> kinds,
                                                             std::function<void(std::string_view)> on_phase = nullptr);

// --isolate process: one worker per backend, started when the backend is
// probed and again after a failure as
//   <worker_command...> BACKEND BACKEND_PLUGIN REFERENCE REFERENCE_PLUGIN
// (normally /proc/self/exe __worker ...): the worker loads just those two
// plugin files. `plugin_paths`: backend name -> its plugin file.
[[nodiscard]] std::unique_ptr<CaseHost> make_worker_host(std::vector<std::string> worker_command, std::string reference,
                                                         std::map<std::string, std::string> plugin_paths);

// The worker's side: opens `backend` and the reference backend from
// `plugins` and serves the host's requests, running the jobs of the kinds
// `make_kinds` makes, until the parent closes the pipe. Returns the exit status.
[[nodiscard]] int serve_case_worker(const PluginSet &plugins, const std::string &backend, const std::string &reference,
                                    const JobKindsMaker &make_kinds);

// main() of `opbench __worker BACKEND BACKEND_PLUGIN REFERENCE REFERENCE_PLUGIN`.
[[nodiscard]] int case_worker_main(int argc, char **argv, const JobKindsMaker &make_kinds);

} // namespace opbench
