#include "run/runner.hpp"

#include "files/atomic_file.hpp"
#include "plugin/backend_facts.hpp"
#include "plugin/backend_sessions.hpp"
#include "plugin/backend_work.hpp"
#include "machine/bottleneck.hpp"
#include "build_config.hpp"
#include "isolate/case_host.hpp"
#include "run/context.hpp"
#include "run/exit_guard.hpp"
#include "run/gb_capture.hpp"
#include "run/gbench_args.hpp"
#include "run/interrupt.hpp"
#include "run/journal.hpp"
#include "measure/memory_estimate.hpp"
#include "plugin/memory_figures.hpp"
#include "profile/profile_observer.hpp"
#include "measure/recipe.hpp"
#include "check/reference_cache.hpp"
#include "check/reference_store.hpp"
#include "run/gb_reporter.hpp"
#include "run/result_set.hpp"
#include "run/run_console.hpp"
#include "run/run_environment.hpp"
#include "run/run_log.hpp"
#include "measure/statistics.hpp"
#include "check/verify.hpp"
#include "writers/chrome_trace_writer.hpp"
#include "writers/table_writers.hpp"
#include "writers/writer.hpp"
#include "workload/workload_runner.hpp"

#include "opbench/ops.hpp"

#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <unistd.h>

namespace opbench {

int apply_command_line(MeasureSettings &settings, std::vector<std::string> &backends, const SourceLocation &where,
                       const RunOptions &options) {
    options.overrides.apply(settings);
    if (auto why = check_settings(settings)) throw SuiteError(where, *why + " (after the command-line overrides)");
    if (!options.backends.empty()) backends = options.backends;
    return resolve_threads(settings.threads);
}

std::vector<Case> effective_cases(const Suite &suite, const RunOptions &options) {
    std::vector<Case> cases;
    for (const auto &c : suite.cases) {
        Case effective = c;
        effective.desc.threads = apply_command_line(effective.settings, effective.backends, c.where, options);
        cases.push_back(std::move(effective));
    }
    check_unique_names(cases); // after overrides: --backends can change the lists
    return cases;
}

std::vector<CaseResult> planned_results(const std::vector<Case> &cases, const std::string &reference) {
    std::vector<CaseResult> results;
    for (const auto &c : cases)
        for (const auto &be : c.backends) {
            CaseResult r;
            r.source = &c;
            r.backend = be;
            r.name = benchmark_name(c, be);
            r.is_reference = be == reference;
            r.nmse_threshold = tolerance_for(c.desc).max_nmse;
            results.push_back(std::move(r));
        }
    return results;
}

namespace {

// The fast checks' randomness for case number `ci`: fixed by the case's
// position like its inputs, so a run repeats exactly; recorded in the entry.
uint64_t fast_check_seed(std::size_t ci) { return ReferenceCache::input_seed(ci) ^ 0x9e3779b97f4a7c15ull; }

std::string noise_label(const RepetitionRecord &rec) {
    std::string label = std::isfinite(rec.summary.noise) ? fmt::format("noise {:.2f}%", rec.summary.noise * 100.0)
                                                         : fmt::format("noise n/a ({} samples)", rec.summary.n);
    if (rec.timed_out) label += ", max_time reached";
    return label;
}

// The case x backend the host holds active while Google Benchmark runs its
// repetitions (the host keeps its tensors, plan and recipe).
struct ActiveCase {
    std::size_t result_index = SIZE_MAX;
    bool prepared = false; // activation passed: repetitions may be measured
};

// Walks cases x backends: each case x backend is one Google Benchmark
// benchmark whose iterations are the recipe's repetitions.
class SuiteRun {
public:
    SuiteRun(const Suite &suite, const PluginSet &plugins, const RunOptions &options)
        : suite_(suite), plugins_(plugins), options_(options), cases_(effective_cases(suite, options)),
          results_(planned_results(cases_, options.reference)),
          workload_cases_(workload::effective_workloads(suite, options)) {
        for (std::size_t ci = 0, ri = 0; ci < cases_.size(); ++ci)
            for (std::size_t b = 0; b < cases_[ci].backends.size(); ++b, ++ri) {
                case_of_result_.push_back(ci);
                result_by_name_[results_[ri].name] = ri;
            }
        ran_.assign(results_.size(), false);
        interrupted_.assign(results_.size(), false);
        timer_overhead_ = measure_timer_overhead();
    }
    ~SuiteRun() {
        // The watcher thread and the exit guard must not reach this run once it is gone.
        on_first_interrupt(nullptr);
        on_second_interrupt(nullptr);
        arm_exit_guard(nullptr);
    }

    RunSummary run();

private:
    std::vector<std::string> backends_named(bool with_cases = true) const;
    void open_backends();
    void probe_backends();
    [[nodiscard]] double probe_timeout() const;
    [[nodiscard]] bool reference_opens();
    void choose_reference_store();
    [[nodiscard]] std::optional<MeasureFailure> backend_cannot_run(const std::string &backend) const;
    Roofline roofline_of(const Case &c, const std::string &backend, double seconds_per_call) const;
    std::optional<MeasureFailure> skip_before_running(std::size_t ri);
    void register_benchmarks();
    void run_benchmarks();
    void bench(benchmark::State &state, std::size_t ri);
    void activate(std::size_t ri);
    void deactivate();
    void report_not_registered() const;
    void show_progress(std::size_t ri);
    void open_log();
    void log_case(std::size_t ri, std::vector<nlohmann::json> gb_entries);
    void on_gb_entries(std::vector<nlohmann::json> entries);
    void write_result_set(bool complete);
    [[noreturn]] void on_exit_in_run(int status);
    void open_host();
    void start_profiling();
    void finish_profiling();
    std::unique_ptr<benchmark::BenchmarkReporter> display_reporter();
    std::optional<Roofline> roofline_at_median(const CaseResult &r) const;
    const CaseResult *reference_of(const CaseResult &r) const;
    void log_workload(std::size_t wi, std::vector<nlohmann::json> gb_entries);
    int global_repetitions() const;

    const Suite &suite_;
    const PluginSet &plugins_;
    const RunOptions &options_;
    std::vector<Case> cases_;
    std::vector<CaseResult> results_;
    std::vector<std::size_t> case_of_result_;
    std::map<std::string, std::size_t> result_by_name_;
    std::vector<bool> ran_;                    // reached by Google Benchmark (not filtered out)
    std::vector<std::size_t> not_registered_;  // skipped before running, in order
    std::vector<WorkloadCase> workload_cases_; // [[workload]]s after the command line
    std::unique_ptr<workload::WorkloadRunner> workloads_;

    // Instances in this process: every backend with --isolate none or when
    // profiling; else only those [[workload]]s name (none without workloads).
    BackendSessions sessions_;
    std::unique_ptr<CaseHost> host_; // where cases run: a worker per backend, or here
    // Each backend the run names, as its probe found it (probe_backends), and
    // supports() for each case x backend (by result index).
    std::map<std::string, BackendFacts> facts_;
    std::map<std::string, std::string> unavailable_; // backends that cannot run: why
    std::vector<SupportAnswer> supports_;
    std::vector<std::string> output_errors_;                  // outputs besides the result set that failed (RunSummary)
    std::string reference_store_dir_, reference_store_key_;   // full mode's reference store (empty: none)
    std::unique_ptr<ProfileSession> profile_;                 // --profile / --trace only
    std::unique_ptr<ProfileInstrumentation> instrumentation_; // its hooks in the in-process host
    ActiveCase active_;
    std::vector<bool> interrupted_;  // abandoned by an interrupt: not in the result set
    std::unique_ptr<RunLog> log_;    // finished cases, mirrored into the journal
    JsonCapture *capture_ = nullptr; // Google Benchmark's JSON, per benchmark
    CachedMachinePeaks machine_;
    std::map<std::string, double> call_overhead_;
    std::map<std::string, nlohmann::json> backend_contexts_; // device kind and info, for rooflines
    std::vector<std::string> warnings_;
    double timer_overhead_ = 0;
    std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();
    std::size_t progress_shown_ = SIZE_MAX;
};

RunSummary SuiteRun::run() {
    warnings_ = measurement_warnings();
    for (const auto &w : warnings_) std::cerr << "***WARNING*** " << w << "\n";
    // Printed where they were found (main.cpp); recorded with the others.
    warnings_.insert(warnings_.end(), options_.setting_warnings.begin(), options_.setting_warnings.end());
    machine_ = load_or_measure();
    if (!machine_.from_cache)
        std::cerr << fmt::format("opbench: measured this machine's peaks for the rooflines in {:.1f} s "
                                 "(once; cached in {})\n",
                                 machine_.peaks.measure_seconds, machine_.path.string());
    if (!machine_.warning.empty()) std::cerr << "opbench: " << machine_.warning << "\n";
    if (options_.profile.enabled()) profile_ = std::make_unique<ProfileSession>(options_.profile);
    open_backends();
    open_host();
    probe_backends(); // in the workers under --isolate process: no plugin call here
    choose_reference_store();
    // Workloads run in this process on the parent's own backend instances
    // (never in a worker): docs/decoder.md.
    workloads_ = std::make_unique<workload::WorkloadRunner>(
        workload_cases_, sessions_, options_.reference, timer_overhead_,
        [this](double flops, double bytes, int dtype, int threads, const std::string &backend, double seconds) {
            auto it = call_overhead_.find(backend);
            auto be = backend_contexts_.find(backend);
            return roofline_for(flops, bytes, seconds, be != backend_contexts_.end() ? be->second : nlohmann::json(),
                                threads, machine_.peaks, it != call_overhead_.end() ? it->second : 0.0,
                                dtype == OPB_DTYPE_F32 ? PeakKind::f32 : PeakKind::bf16);
        },
        options_.mem_limit);
    start_profiling(); // after the call-overhead probe: it is not part of the profile
    open_log();
    register_benchmarks();
    run_benchmarks();
    finish_profiling();
    const bool complete = !interrupt_requested();
    write_result_set(complete);
    RunSummary summary;
    const auto counts = log_->counts(); // resumed: the earlier sessions' cases too; workloads too
    summary.passed = counts.count("passed") ? counts.at("passed") : 0;
    summary.failed = counts.count("failed") ? counts.at("failed") : 0;
    summary.skipped = counts.count("skipped") ? counts.at("skipped") : 0;
    summary.complete = complete;
    for (std::size_t ri = 0; ri < results_.size(); ++ri) {
        if (!ran_[ri]) continue; // excluded by --benchmark_filter
        const CaseResult &r = results_[ri];
        summary.prepare_seconds += r.prepare_seconds;
        summary.verify_seconds += r.verify_seconds;
        summary.measure_seconds += r.measure_seconds;
        if (r.status == CaseStatus::passed && !r.verification.verified) ++summary.unverified;
    }
    workloads_->add_measure_seconds(summary);
    summary.out_path = options_.out_path;
    summary.output_errors = output_errors_;
    summary.verify = options_.verify;
    summary.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
    return summary;
}

// What the journal's first line says about the run: enough for --resume to
// run the same command again and to check that the suite did not change.
void SuiteRun::open_log() {
    std::optional<std::string> journal;
    // Absolute: an incomplete result set names it, for --resume from anywhere.
    if (!options_.out_path.empty()) {
        journal = std::filesystem::absolute(journal_path_for(options_.out_path)).string();
        std::error_code ec; // the result set's directory, made as the writer would make it
        std::filesystem::create_directories(std::filesystem::path(*journal).parent_path(), ec);
    }
    if (!options_.resume_journal.empty()) {
        log_ = RunLog::resume(options_.resume_journal);
        const std::string was = log_->header().value("suite_sha256", std::string());
        if (was != suite_.content_hash)
            throw JournalError(fmt::format("{}: the suite changed since the interrupted run (SHA-256 {} then, "
                                           "{} now); its finished cases would not match: run it afresh",
                                           suite_.path, was, suite_.content_hash));
    } else {
        std::error_code ec;
        const nlohmann::json header = {
            {"suite", suite_.path},
            {"suite_sha256", suite_.content_hash},
            {"cwd", std::filesystem::current_path(ec).string()},
            {"out", options_.out_path},
            {"args", options_.command_args},
        };
        log_ = std::make_unique<RunLog>(header, journal);
    }
    RunContext ctx{
        &suite_,         &cases_,   &backend_contexts_, &unavailable_, options_.reference, options_.benchmark_args,
        timer_overhead_, &machine_, call_overhead_,     options_.cpus, warnings_,          profile_.get(),
        options_.shard};
    nlohmann::json opbench = run_context_json(ctx);
    opbench["measurement"]["isolation"] = isolation_name(profile_ ? Isolation::none : options_.isolation);
    if (!workload_cases_.empty()) opbench["suite"]["workloads"] = workload_cases_.size();
    log_->set_opbench_context(std::move(opbench));

    // First Ctrl-C: abandon the case in progress (its worker is killed; in
    // process, the current repetition finishes). Second: write what finished
    // now, from the log, and exit (interrupt.hpp).
    on_first_interrupt([this] {
        if (host_) host_->interrupt();
    });
    on_second_interrupt([this] {
        if (!options_.out_path.empty()) write_result_set(false);
    });
    // Plugin code in this process (--isolate none, profiling, workloads)
    // calling exit() ends the run through here, not silently.
    arm_exit_guard([this](int status) { on_exit_in_run(status); });
}

// exit() called in this process while the run goes (run/exit_guard.hpp): the
// case in progress is failed with the cause, the result set of what finished
// is written marked incomplete (--resume runs the rest), and opbench exits 1.
void SuiteRun::on_exit_in_run(int status) {
    const std::string where =
        active_.result_index != SIZE_MAX ? fmt::format(" (case {})", results_[active_.result_index].name) : "";
    std::string reason = fmt::format("exited with status {} in opbench's own process{}: plugin code called exit() "
                                     "(--isolate process runs cases in a worker, where this costs only the case)",
                                     status, where);
    std::cerr << "\nopbench: " << reason << "\n";
    try {
        if (active_.result_index != SIZE_MAX) {
            CaseResult &r = results_[active_.result_index];
            r.status = CaseStatus::failed;
            r.reason = reason;
            log_case(active_.result_index, {});
        }
        if (!options_.out_path.empty()) {
            write_result_set(false);
            std::cerr << fmt::format("opbench: the result set of what finished is in {} (incomplete); "
                                     "opbench run --resume {} runs the rest\n",
                                     options_.out_path, options_.out_path);
        }
    } catch (const std::exception &e) {
        std::cerr << "opbench: could not write the partial result set: " << e.what() << "\n";
    }
    std::cerr.flush();
    std::cout.flush();
    ::_exit(1);
}

// A finished case x backend goes into the log (and so the journal) with its
// result-set entries. Abandoned ones do not: --resume runs them again.
void SuiteRun::log_case(std::size_t ri, std::vector<nlohmann::json> gb_entries) {
    if (interrupted_[ri] || log_->has_case(results_[ri].name)) return;
    log_->add_case(ri, results_[ri].name, std::string(case_status_name(results_[ri].status)),
                   case_entries(std::move(gb_entries), results_[ri]));
}

// A finished workload entry goes into the log like a case (journaled, in
// the result set, counted), placed after every op case.
void SuiteRun::log_workload(std::size_t wi, std::vector<nlohmann::json> gb_entries) {
    const auto &r = workloads_->results()[wi];
    if (workloads_->interrupted(wi) || log_->has_case(r.core.name)) return;
    log_->add_case(results_.size() + wi, r.core.name, std::string(case_status_name(r.core.status)),
                   workloads_->entries_of(wi, std::move(gb_entries)));
}

// Google Benchmark's entries of one benchmark, as it reports them.
void SuiteRun::on_gb_entries(std::vector<nlohmann::json> entries) {
    if (entries.empty()) return;
    const std::string name = strip_manual_time(entries.front().value("run_name", std::string()));
    auto it = result_by_name_.find(name);
    if (it == result_by_name_.end()) {
        if (auto wi = workloads_->index_of(name)) {
            workloads_->finish(); // its figures and memory first
            log_workload(*wi, std::move(entries));
        }
        return;
    }
    if (active_.result_index == it->second) deactivate(); // memory figures and roofline first
    log_case(it->second, std::move(entries));
}

void SuiteRun::write_result_set(bool complete) {
    if (options_.out_path.empty()) return;
    const Writer *writer = find_writer(options_.out_format);
    if (!writer)
        throw std::runtime_error("no output writer '" + options_.out_format + "' (known: " + writer_names() + ")");
    Document doc;
    doc.data = log_->result_set(complete);
    add_run_analysis(doc.data, profile_.get());
    write_file_atomically(options_.out_path, writer->write(doc));
    if (complete) log_->finish(); // the journal is no longer needed
}

// Every backend the cases (unless !with_cases) and workloads name, in order
// of first mention.
std::vector<std::string> SuiteRun::backends_named(bool with_cases) const {
    std::vector<std::string> named;
    auto add = [&](const std::vector<std::string> &list) {
        for (const auto &b : list)
            if (std::find(named.begin(), named.end(), b) == named.end()) named.push_back(b);
    };
    if (with_cases)
        for (const auto &c : cases_) add(c.backends);
    for (const auto &w : workload_cases_) add(w.backends);
    return named;
}

// Instances in this process. Cases run here with --isolate none and when
// profiling; workloads always do (docs/decoder.md), so under --isolate
// process only their backends are opened here, and none without workloads:
// then every plugin call of the run happens in a worker.
void SuiteRun::open_backends() {
    const bool cases_run_here = profile_ || options_.isolation == Isolation::none;
    const std::vector<std::string> here = backends_named(/*with_cases=*/cases_run_here);
    if (here.empty()) return;
    sessions_ = open_backend_sessions(plugins_, here, options_.reference);
}

// What each backend the run names can do, asked through the host (in the
// backend's worker under --isolate process). A fault while asking costs that
// backend only: its cases fail with the cause, phase and backend
// ("crashed: SIGSEGV in create (backend 'x')"), and the run goes on.
void SuiteRun::probe_backends() {
    supports_.assign(results_.size(), SupportAnswer{});
    for (const std::string &name : backends_named()) {
        const LoadedPlugin *plugin = plugins_.find(name);
        if (!plugin) { // refused by the loader (with its reason), or absent
            facts_[name] = BackendFacts{CaseStatus::skipped, plugins_.why_unavailable(name), nullptr, {}};
            unavailable_[name] = facts_[name].reason;
            continue;
        }
        std::vector<std::size_t> asked; // this backend's case x backend, in order
        std::vector<opb_op_desc> descs;
        for (std::size_t ri = 0; ri < results_.size(); ++ri)
            if (results_[ri].backend == name) {
                asked.push_back(ri);
                descs.push_back(cases_[case_of_result_[ri]].desc);
            }
        BackendProbe probe = host_->probe_backend(name, descs, probe_timeout());
        BackendFacts facts =
            probe.fault.empty() ? std::move(probe.facts) : faulted_backend(*plugin->api, name, probe.fault);
        if (!facts.context.is_null()) backend_contexts_[name] = facts.context;
        if (!facts.usable()) unavailable_[name] = facts.reason;
        if (facts.usable() && facts.supports.size() == asked.size())
            for (std::size_t k = 0; k < asked.size(); ++k) supports_[asked[k]] = facts.supports[k];
        if (probe.call_overhead_seconds) call_overhead_[name] = *probe.call_overhead_seconds;
        facts_[name] = std::move(facts);
    }
}

// The seconds each step of probing a backend may take: --case-timeout when
// given, else a minute (a GPU backend's create can take seconds).
double SuiteRun::probe_timeout() const {
    const std::optional<double> timeout = options_.overrides.get("timeout");
    return timeout && *timeout > 0 ? *timeout : 60.0;
}

// Whether the reference backend opens, for the reference store: known from
// its probe when the run names it, else asked now.
bool SuiteRun::reference_opens() {
    auto it = facts_.find(options_.reference);
    if (it != facts_.end()) return it->second.usable();
    const BackendProbe probe = host_->probe_backend(options_.reference, {}, probe_timeout());
    return probe.fault.empty() && probe.facts.usable();
}

// Full mode keeps its references on disk: a re-run computes none again.
// The key names the reference build exactly (version, libraries, the
// plugin file's hash), so a rebuilt reference never serves old outputs.
void SuiteRun::choose_reference_store() {
    const LoadedPlugin *ref = plugins_.find(options_.reference);
    if (options_.verify != VerifyMode::full || !options_.reference_store || !ref || !reference_opens()) return;
    const std::string dir =
        options_.reference_store_dir.empty() ? ReferenceStore::default_dir().string() : options_.reference_store_dir;
    if (std::string why = cache_dir_problem(std::filesystem::path(dir)); !why.empty()) {
        std::cerr << "opbench: references not cached: " << why << "\n";
        return;
    }
    reference_store_dir_ = dir;
    reference_store_key_ = fmt::format("{} | {} | plugin sha256 {}", ref->api->version, ref->api->library_versions,
                                       file_sha256(ref->path));
}

// Where cases run: a worker process per backend, which also answers the
// probes (probe_backends), or this process. A profiling run measures here:
// its scopes, spans and hot paths are recorded in this process, not in a
// worker.
void SuiteRun::open_host() {
    if (profile_) {
        if (options_.isolation == Isolation::process)
            std::cerr << "opbench: --profile / --trace run the cases in this process (as --isolate none): "
                         "a plugin crash ends this run\n";
        instrumentation_ = std::make_unique<ProfileInstrumentation>(*profile_);
        host_ = make_in_process_host(sessions_, options_.reference, nullptr, instrumentation_.get());
    } else if (options_.isolation == Isolation::process) {
        std::map<std::string, std::string> paths;
        for (const auto &p : plugins_.plugins) paths[p.name()] = p.path;
        host_ = make_worker_host({"/proc/self/exe", "__worker"}, options_.reference, std::move(paths));
    } else {
        host_ = make_in_process_host(sessions_, options_.reference);
    }
}

// Judged against the threads the backend really uses (naive: one), or a GPU
// backend's own peaks (bottleneck.hpp roofline_for).
Roofline SuiteRun::roofline_of(const Case &c, const std::string &backend, double seconds_per_call) const {
    auto it = call_overhead_.find(backend);
    const double fixed = it != call_overhead_.end() ? it->second : 0.0;
    const PeakKind kind = c.desc.dtype == OPB_DTYPE_F32 ? PeakKind::f32 : PeakKind::bf16;
    auto be = backend_contexts_.find(backend);
    return roofline_for(op_flops(c.desc), op_bytes(c.desc), seconds_per_call,
                        be != backend_contexts_.end() ? be->second : nlohmann::json(), c.desc.threads, machine_.peaks,
                        fixed, kind);
}

// Why `backend` cannot run cases (from its probe), or nothing.
std::optional<MeasureFailure> SuiteRun::backend_cannot_run(const std::string &backend) const {
    auto it = facts_.find(backend);
    if (it == facts_.end())
        return MeasureFailure{CaseStatus::skipped, fmt::format("backend '{}' was not probed", backend)};
    if (!it->second.usable()) return MeasureFailure{it->second.status, it->second.reason};
    return std::nullopt;
}

// Skips known before anything runs: the backend is missing, unusable here,
// failed its probe, or does not support the case.
std::optional<MeasureFailure> SuiteRun::skip_before_running(std::size_t ri) {
    const CaseResult &r = results_[ri];
    if (auto cannot = backend_cannot_run(r.backend)) return cannot;
    if (supports_[ri].status != CaseStatus::passed) return MeasureFailure{supports_[ri].status, supports_[ri].reason};
    // Would it fit? Skipped before it starts rather than killed half-way.
    const opb_op_desc &desc = cases_[case_of_result_[ri]].desc;
    const OpInfo *row = op_info(desc.op);
    const bool reference_runs =
        options_.verify == VerifyMode::full || (options_.verify == VerifyMode::fast && !(row && row->fast_check));
    const MemoryEstimate need = estimate_case_memory(desc, reference_runs);
    if (auto why = memory_skip_reason(need, available_memory(options_.mem_limit)))
        return MeasureFailure{CaseStatus::skipped, *why};
    return std::nullopt;
}

// The recipe's untimed steps, once per case x backend, before its first
// repetition: in the case's worker (or here with --isolate none).
void SuiteRun::activate(std::size_t ri) {
    if (active_.result_index == ri) return;
    deactivate();
    workloads_->finish();            // interleaved runs: a workload's memory must not count here
    if (capture_) capture_->flush(); // the previous case's entries go to the journal now
    active_ = ActiveCase{ri, false};
    ran_[ri] = true;
    CaseResult &r = results_[ri];
    const std::size_t ci = case_of_result_[ri];
    const Case &c = cases_[ci];
    show_progress(ri);
    if (auto skip = skip_before_running(ri)) {
        r.status = skip->status;
        r.reason = skip->reason;
        return;
    }
    CaseJob job;
    job.case_index = ci;
    job.name = r.name;
    job.backend = r.backend;
    job.desc = c.desc;
    job.settings = c.settings;
    job.nmse_threshold = r.nmse_threshold;
    job.timer_overhead = timer_overhead_;
    job.verify = options_.verify;
    job.check_seed = fast_check_seed(ci);
    job.reference_store_dir = reference_store_dir_;
    job.reference_store_key = reference_store_key_;
    const Activation a = host_->activate(job);
    if (host_->interrupted()) interrupted_[ri] = true;
    r.status = a.status;
    r.reason = a.reason;
    r.nmse = a.nmse;
    r.memory.workspace_bytes = a.workspace_bytes;
    r.checked = a.checked;
    r.verification = a.verification;
    r.prepare_seconds = a.prepare_seconds;
    r.verify_seconds = a.verify_seconds;
    if (!a.reference_problem.empty()) std::cerr << "opbench: " << a.reference_problem << "\n";
    active_.prepared = a.status == CaseStatus::passed;
}

void SuiteRun::deactivate() {
    if (active_.result_index == SIZE_MAX) return;
    const std::size_t ri = active_.result_index;
    CaseResult &r = results_[ri];
    if (r.status == CaseStatus::passed && active_.prepared) {
        try {
            const uint64_t workspace = r.memory.workspace_bytes;
            r.memory = host_->finish();
            if (r.memory.workspace_bytes == 0) r.memory.workspace_bytes = workspace;
        } catch (const MeasureFailure &f) {
            r.status = f.status;
            r.reason = f.reason;
            if (host_->interrupted()) interrupted_[ri] = true;
        }
        if (r.status == CaseStatus::passed && !r.repetitions.empty()) {
            std::vector<double> medians;
            for (const auto &rec : r.repetitions) medians.push_back(rec.summary.median);
            r.roofline = roofline_of(*r.source, r.backend, summarize(medians).median);
        }
    }
    active_ = ActiveCase{};
}

// Profiling runs: the session records through every backend instance that
// runs cases (never the reference's, whose work is not the case's).
void SuiteRun::start_profiling() {
    if (!profile_) return;
    for (auto &[name, inst] : sessions_.backends) inst->attach_scope_sink(&profile_->profiler());
    workloads_->profile_with(profile_.get());
    profile_->run_begin(
        {{"suite", suite_.name}, {"path", suite_.path}, {"schedule", to_string(options_.profile.schedule)}});
}

// Prints the hot paths (--profile) and writes the trace (--trace).
void SuiteRun::finish_profiling() {
    if (!profile_) return;
    profile_->run_end();
    for (auto &[name, inst] : sessions_.backends) inst->attach_scope_sink(nullptr);
    const ProfileOptions &o = profile_->options();
    if (o.hot_path) {
        std::cout << fmt::format("\nHot paths: the samples the schedule recorded ({}), per case x backend; "
                                 "they are not in the timings above\n",
                                 to_string(o.schedule));
        for (const CaseProfile &c : profile_->cases()) {
            if (c.recorded_samples == 0) continue; // failed or skipped before sampling
            std::cout << "\n" << render_text_table(hot_path_table(c.tree, c.name));
        }
        std::cout << "\n" << render_text_table(profile_->top_scopes());
    }
    if (!o.trace_path.empty()) {
        TraceInfo info;
        info.process_name = fmt::format("opbench run {}", suite_.name);
        info.device_name = "device (backend timer)";
        info.metadata = {{"suite", suite_.name},
                         {"suite_path", suite_.path},
                         {"schedule", to_string(o.schedule)},
                         {"opbench_version", OPBENCH_VERSION}};
        Document doc;
        doc.data = profile_->trace(info);
        const std::size_t events = doc.data["traceEvents"].size();
        // A trace that cannot be written never costs the result set: it is
        // written after this, and the run exits 3 with the reason.
        try {
            write_file_atomically(o.trace_path, write_chrome_trace(doc));
            std::cout << fmt::format("\nopbench: trace of {} events -> {} (open in ui.perfetto.dev, "
                                     "chrome://tracing or speedscope)\n",
                                     events, o.trace_path);
        } catch (const std::exception &e) {
            output_errors_.push_back(fmt::format("--trace {}: not written: {}", o.trace_path, e.what()));
        }
    }
}

void SuiteRun::bench(benchmark::State &state, std::size_t ri) {
    CaseResult &r = results_[ri];
    if (interrupt_requested()) {
        // Google Benchmark cannot be stopped: the rest pass through at once
        // and stay out of the result set (--resume runs them).
        interrupted_[ri] = true;
        deactivate();
        state.SkipWithError("interrupted");
        for (auto _ : state) {}
        return;
    }
    activate(ri);
    const Case &c = cases_[case_of_result_[ri]];
    auto fail = [&] {
        // An abandoned case says only that (the console leaves it out).
        const std::string message =
            interrupted_[ri] ? std::string("interrupted") : std::string(case_status_name(r.status)) + ": " + r.reason;
        state.SkipWithError(message.c_str());
    };
    if (r.status != CaseStatus::passed) {
        fail();
        for (auto _ : state) {}
        return;
    }
    RepetitionRecord rec;
    for (auto _ : state) {
        try {
            // The sampling's share of the run's time (the summary line),
            // seen from here: a worker's reply is a few microseconds more.
            const auto t0 = std::chrono::steady_clock::now();
            rec = host_->measure_repetition();
            r.measure_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        } catch (const MeasureFailure &f) {
            r.status = f.status;
            r.reason = f.reason;
            if (host_->interrupted()) interrupted_[ri] = true;
            fail();
            break;
        }
        state.SetIterationTime(rec.summary.median);
    }
    if (r.status != CaseStatus::passed) return;
    r.repetitions.push_back(rec);

    // Rates divide by the iteration's manual time: the median time per call.
    state.counters["FLOP/s"] = benchmark::Counter(op_flops(c.desc), benchmark::Counter::kIsRate);
    state.counters["bytes/s"] = benchmark::Counter(op_bytes(c.desc), benchmark::Counter::kIsRate);
    state.counters["AI"] = arithmetic_intensity(c.desc);
    state.counters["samples"] = double(rec.summary.n);
    const nlohmann::json params = shape_params(c.desc);
    for (const auto &[key, value] : params.items())
        if (value.is_number()) state.counters[key] = value.get<double>();
    // The noise goes into the label: it is infinite when too few samples
    // exist for a confidence interval, and JSON has no infinity.
    // An unverified entry says so on every console line (and in JSON: "verified": false).
    state.SetLabel((r.verification.mode == VerifyMode::off ? std::string("UNVERIFIED, ") : std::string()) +
                   noise_label(rec) + ", " + roofline_of(c, r.backend, rec.summary.median).bound);
}

void SuiteRun::show_progress(std::size_t ri) {
    if (!options_.progress || !isatty(STDERR_FILENO) || progress_shown_ == ri) return;
    progress_shown_ = ri;
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
    std::string eta = "?";
    if (ri > 0) eta = fmt::format("{:.0f}s", elapsed / double(ri) * double(results_.size() - ri));
    std::cerr << fmt::format("\x1b[2m[{}/{}  {:.0f}s elapsed, ~{} left]  {}\x1b[0m\n", ri + 1, results_.size(), elapsed,
                             eta, results_[ri].name);
}

// Cases skipped before running are not registered with Google Benchmark;
// they are reported after the run and written into the result set.
void SuiteRun::register_benchmarks() {
    const std::optional<NameFilter> filter = NameFilter::from_args(options_.benchmark_args);
    for (std::size_t ri = 0; ri < results_.size(); ++ri) {
        // Interrupted while the backends were probed: nothing is recorded,
        // so --resume runs every case.
        if (interrupt_requested()) break;
        CaseResult &r = results_[ri];
        if (filter && !filter->matches(r.name + "/manual_time")) continue;
        if (log_->has_case(r.name)) continue; // finished before the interruption (--resume)
        if (auto skip = skip_before_running(ri)) {
            r.status = skip->status;
            r.reason = skip->reason;
            ran_[ri] = true;
            not_registered_.push_back(ri);
            log_case(ri, {});
            continue;
        }
        // Repetitions: one global flag when every case agrees; a case that
        // differs sets its own (Google Benchmark then adds "/repeats:N").
        const Case &c = cases_[case_of_result_[ri]];
        auto *b = benchmark::RegisterBenchmark(r.name.c_str(), [this, ri](benchmark::State &st) { bench(st, ri); });
        b->UseManualTime();
        b->Unit(benchmark::kMicrosecond);
        if (c.settings.repetitions != global_repetitions()) b->Repetitions(c.settings.repetitions);
    }
    // Workloads after the op cases; the active op case is released before a
    // workload entry starts, so its memory never shows in a workload's figures.
    // Entries skipped before running go into the log at once, as op cases do.
    workloads_->register_benchmarks(
        filter, global_repetitions(),
        [this] {
            deactivate();
            if (capture_) capture_->flush(); // the previous entry's results go to the journal now
        },
        [this](const std::string &name) { return log_->has_case(name); });
    for (std::size_t wi : workloads_->not_registered()) log_workload(wi, {});
}

// The --benchmark_repetitions every entry gets unless it sets its own.
int SuiteRun::global_repetitions() const {
    if (!cases_.empty()) return cases_.front().settings.repetitions;
    if (!workload_cases_.empty()) return workload_cases_.front().settings.repetitions;
    return 0;
}

// One aligned line per case x backend (run_console.hpp); Google Benchmark's
// per-repetition lines, made per call, with --verbose.
std::unique_ptr<benchmark::BenchmarkReporter> SuiteRun::display_reporter() {
    auto lookup = [this](const std::string &name) -> const CaseResult * {
        auto it = result_by_name_.find(name);
        return it == result_by_name_.end() ? nullptr : &results_[it->second];
    };
    const bool terminal = isatty(STDOUT_FILENO);
    if (options_.verbose)
        return std::make_unique<PerCallReporter>(
            std::make_unique<benchmark::ConsoleReporter>(terminal ? benchmark::ConsoleReporter::OO_Color
                                                                  : benchmark::ConsoleReporter::OO_None),
            lookup);
    std::vector<std::string> names;
    for (const auto &r : results_) names.push_back(r.name);
    RunConsoleHooks hooks{lookup, [this](const CaseResult &r) { return roofline_at_median(r); },
                          [this](const CaseResult &r) { return reference_of(r); }};
    return std::make_unique<RunConsoleReporter>(std::move(hooks), names, options_.reference, terminal);
}

std::optional<Roofline> SuiteRun::roofline_at_median(const CaseResult &r) const {
    if (r.status != CaseStatus::passed || r.repetitions.empty()) return std::nullopt;
    std::vector<double> medians;
    for (const auto &rec : r.repetitions) medians.push_back(rec.summary.median);
    return roofline_of(*r.source, r.backend, summarize(medians).median);
}

const CaseResult *SuiteRun::reference_of(const CaseResult &r) const {
    if (r.is_reference) return nullptr;
    for (const auto &other : results_)
        if (other.source == r.source && other.backend == options_.reference) return &other;
    return nullptr;
}

void SuiteRun::report_not_registered() const {
    if (not_registered_.empty()) return;
    // Grouped by reason: one backend's reason usually covers many cases.
    std::map<std::string, std::vector<std::string>> by_reason;
    for (std::size_t ri : not_registered_)
        by_reason[std::string(case_status_name(results_[ri].status)) + ": " + results_[ri].reason].push_back(
            results_[ri].name);
    std::cout << fmt::format("\nNot measured ({} case x backend):\n", not_registered_.size());
    for (const auto &[reason, names] : by_reason) {
        std::cout << "  " << reason << "\n";
        for (const auto &n : names) std::cout << "      " << n << "\n";
    }
}

void SuiteRun::run_benchmarks() {
    // Google Benchmark's own JSON is captured in memory, one benchmark at a
    // time (gb_capture.hpp): each finished case goes to the run log and its
    // journal at once, and the result set is made from the log.
    std::vector<std::string> args = gbench_argv(global_repetitions(), options_.benchmark_args, "");
    std::vector<char *> argv;
    for (auto &a : args) argv.push_back(a.data());
    int argc = static_cast<int>(argv.size());
    benchmark::Initialize(&argc, argv.data());
    if (benchmark::ReportUnrecognizedArguments(argc, argv.data()))
        throw std::runtime_error("unrecognised Google Benchmark arguments (see above)");

    auto lookup = [this](const std::string &name) -> const CaseResult * {
        auto it = result_by_name_.find(name);
        return it == result_by_name_.end() ? workloads_->find(name) : &results_[it->second];
    };
    std::unique_ptr<benchmark::BenchmarkReporter> display = display_reporter();
    auto capture =
        std::make_unique<JsonCapture>([this](nlohmann::json c) { log_->set_gb_context(std::move(c)); },
                                      [this](std::vector<nlohmann::json> e) { on_gb_entries(std::move(e)); });
    capture_ = capture.get();
    PerCallReporter captured(std::move(capture), lookup);
    // The console leaves out the cases an interrupt abandoned (the rest
    // still pass through Google Benchmark, as errors; the one in progress
    // may have measured some repetitions): they are not in the result set.
    FilterReporter shown(*display, [this](const benchmark::BenchmarkReporter::Run &run) {
        auto it = result_by_name_.find(strip_manual_time(run.run_name.str()));
        return it == result_by_name_.end() || !interrupted_[it->second];
    });
    TeeReporter both({&shown, &captured});
    benchmark::RunSpecifiedBenchmarks(&both);
    capture_ = nullptr;
    deactivate();
    workloads_->finish();
    report_not_registered();
    // The cases this run finished, as the summary line counts them: not an
    // abandoned one (interrupted: not in the result set, --resume runs it).
    std::vector<CaseResult> ran;
    for (std::size_t ri = 0; ri < results_.size(); ++ri)
        if (ran_[ri] && !interrupted_[ri]) ran.push_back(results_[ri]);
    if (!ran.empty()) { // a suite of workloads only has no op-case table
        Document summary;
        summary.tables.push_back(
            backend_summary(ran, options_.reference, [this](const CaseResult &r) { return roofline_at_median(r); }));
        std::cout << "\n" << write_console(summary);
    }
    workloads_->report_not_registered();
    workloads_->report_figures(std::cout);
    benchmark::ClearRegisteredBenchmarks();
    benchmark::Shutdown();
}

} // namespace

RunSummary run_suite(const Suite &suite, const PluginSet &plugins, const RunOptions &options) {
    SuiteRun run(suite, plugins, options);
    return run.run();
}

} // namespace opbench

namespace opbench {

std::string summary_line(const RunSummary &s) {
    std::string line = fmt::format("opbench: {} passed, {} failed, {} skipped", s.passed, s.failed, s.skipped);
    if (s.unverified) line += fmt::format(" ({} passed UNVERIFIED: --verify off)", s.unverified);
    auto share = [&](double part) { return s.wall_seconds > 0 ? 100.0 * part / s.wall_seconds : 0.0; };
    line += fmt::format(" in {:.1f} s: measuring {:.1f} s ({:.0f}%), verifying {:.1f} s ({:.0f}%, {}), "
                        "preparing {:.1f} s",
                        s.wall_seconds, s.measure_seconds, share(s.measure_seconds), s.verify_seconds,
                        share(s.verify_seconds), verify_mode_name(s.verify), s.prepare_seconds);
    return line;
}

} // namespace opbench
