// Running a suite's [[workload]]s inside `opbench run`: each workload x phase
// x backend is one Google Benchmark benchmark, measured by the same recipe as
// an op case (recipe.hpp), checked layer by layer against the reference
// backend, and written as a result entry with the whole-model figures
// (results/README.md, "Workload entries").
//
// The runner (runner.cpp) owns the backends and Google Benchmark; it hands
// this class the sessions, registers its benchmarks after the op cases', and
// lets it add its entries to the result set.
#pragma once

#include "plugin/backend_sessions.hpp"
#include "plugin/backend_work.hpp"
#include "run/gbench_args.hpp"
#include "machine/machine.hpp"
#include "profile/profile_session.hpp"
#include "measure/recipe.hpp"
#include "entry/results.hpp"
#include "run/runner.hpp"
#include "workload/decoder_work.hpp"

#include <benchmark/benchmark.h>
#include <nlohmann/json.hpp>

#include <functional>
#include <iosfwd>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace opbench::workload {

// One workload phase on one backend: what an op case's CaseResult says
// (`core`: name, status, nmse, memory, repetitions, roofline; its `source`
// stays null), plus the workload's own figures.
struct WorkloadResult {
    CaseResult core;
    const WorkloadCase *source = nullptr;
    Phase phase = Phase::prefill;
    std::string check_where; // where the worst NMSE was ("decode step 3, layer 1")
    double flops_per_call = 0, bytes_per_call = 0;
    int64_t tokens_per_call = 0;
    std::vector<double> unit_seconds; // prefill: each call; decode: each step (all repetitions)
    std::optional<DecoderFigures> figures;
};

// "decoder/<name>/phase:<p>/dt:<dtype>/[thr:<n>/][cache:cold/]be:<backend>"
[[nodiscard]] std::string workload_benchmark_name(const WorkloadCase &w, Phase phase, const std::string &backend);

// The suite's workloads with the command line applied (settings overrides,
// --backends), threads resolved. Throws SuiteError when an override makes the
// settings inconsistent.
[[nodiscard]] std::vector<WorkloadCase> effective_workloads(const Suite &suite, const RunOptions &options);

// The result-set fields of a workload entry.
[[nodiscard]] nlohmann::json workload_fields(const WorkloadResult &r);

class WorkloadRunner {
public:
    // Roofline of `flops` and `bytes` done in `seconds` on `backend`
    // (the runner knows the machine's peaks and each backend's call overhead).
    using RooflineFn = std::function<Roofline(double flops, double bytes, int dtype, int threads,
                                              const std::string &backend, double seconds)>;

    // `mem_limit`: --mem-limit; an entry whose estimate (estimate_decoder_memory,
    // on its backend and on the reference) does not fit it or the machine's
    // available memory is skipped before it starts, as an op case is.
    WorkloadRunner(std::vector<WorkloadCase> workloads, const BackendSessions &sessions, std::string reference,
                   double timer_overhead, RooflineFn roofline, std::optional<uint64_t> mem_limit = std::nullopt);
    ~WorkloadRunner();

    // Profiling runs (--profile, --trace): each entry becomes a case of the
    // session, its steps and components spans of the recorded samples, and
    // its component shares come from them. Null: not profiled.
    void profile_with(ProfileSession *session) { profile_ = session; }

    // Backends the workloads name, in order of first mention.
    [[nodiscard]] std::vector<std::string> backends() const;

    // Registers one benchmark per workload x phase x backend that `filter`
    // keeps; those that cannot run (backend missing, op unsupported) are
    // recorded as skipped instead. `release_others` runs whenever a workload
    // entry becomes active (the runner releases its active op case there, so
    // its memory is not counted here; interleaved repetitions switch often).
    // Entries `finished_before` names (held by a resumed run's journal) are
    // not registered again.
    void register_benchmarks(const std::optional<NameFilter> &filter, int global_repetitions,
                             std::function<void()> release_others,
                             const std::function<bool(const std::string &)> &finished_before = {});
    // Finishes and releases the active entry (figures, memory); the runner
    // calls it before an op case becomes active and after Google Benchmark
    // returns. No effect when none is active.
    void finish();

    [[nodiscard]] const CaseResult *find(const std::string &name) const;
    [[nodiscard]] const std::vector<WorkloadResult> &results() const { return results_; }
    // Status counts of the entries that ran or were skipped (not filtered out).
    void count(RunSummary &summary) const;
    // Adds the entries' sampling time to the run's (its summary line).
    void add_measure_seconds(RunSummary &summary) const;
    // The entry named `name` (without "/manual_time"), if it is a workload's.
    [[nodiscard]] std::optional<std::size_t> index_of(const std::string &name) const;
    // Entry i's result-set entries: Google Benchmark's entries for it with the
    // workload fields added; with none, the one entry of an entry skipped
    // before running. The runner hands these to its run log.
    [[nodiscard]] std::vector<nlohmann::json> entries_of(std::size_t i, std::vector<nlohmann::json> gb_entries) const;
    // Entries skipped before running (register_benchmarks), in order.
    [[nodiscard]] const std::vector<std::size_t> &not_registered() const { return not_registered_; }
    // Entries abandoned by an interrupt (Ctrl-C): not in the result set.
    [[nodiscard]] bool interrupted(std::size_t i) const { return interrupted_[i]; }
    // Adds workload fields to Google Benchmark's entries of workloads, and
    // an entry for each workload skipped before running.
    void add_entries(nlohmann::json &gb) const;
    // Names of entries skipped before running, with the reason (console).
    void report_not_registered() const;
    // The whole-model figures of every measured entry, one line each (console).
    void report_figures(std::ostream &out) const;

private:
    struct Active;
    void bench(benchmark::State &state, std::size_t i);
    void activate(std::size_t i);
    void deactivate();
    std::optional<MeasureFailure> skip_before_running(std::size_t i);
    const std::vector<std::vector<std::vector<float>>> &reference_outputs(std::size_t workload);

    std::vector<WorkloadCase> workloads_;
    const BackendSessions &sessions_;
    std::string reference_;
    double timer_overhead_;
    RooflineFn roofline_;
    std::optional<uint64_t> mem_limit_;
    ProfileSession *profile_ = nullptr;
    std::vector<WorkloadResult> results_;
    std::vector<std::size_t> workload_of_;
    std::vector<bool> ran_;
    std::vector<bool> interrupted_;
    std::vector<std::size_t> not_registered_;
    std::function<void()> release_others_;
    std::unique_ptr<CacheEvictor> evictor_;
    std::unique_ptr<Active> active_;
    // The reference's layer outputs of one workload (all its entries run together).
    std::size_t cached_workload_ = SIZE_MAX;
    std::vector<std::vector<std::vector<float>>> cached_reference_;
    std::string reference_error_;
};

} // namespace opbench::workload
