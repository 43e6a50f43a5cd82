#include "run/runner.hpp"

#include "build_config.hpp"
#include "entry/op_case_entry.hpp"
#include "files/atomic_file.hpp"
#include "run/context.hpp"
#include "run/exit_guard.hpp"
#include "run/gb_reporter.hpp"
#include "run/gb_context.hpp"
#include "run/gbench_args.hpp"
#include "run/interrupt.hpp"
#include "run/journal.hpp"
#include "run/result_set.hpp"
#include "run/run_backends.hpp"
#include "run/run_console.hpp"
#include "run/run_environment.hpp"
#include "run/run_log.hpp"
#include "workload/workload_entry.hpp"
#include "writers/chrome_trace_writer.hpp"
#include "writers/table_writers.hpp"
#include "writers/writer.hpp"

#include "opbench/ops.hpp"

#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <unistd.h>

namespace opbench {

std::vector<std::unique_ptr<Entry>> planned_entries(const std::vector<Case> &cases,
                                                    const std::vector<WorkloadCase> &workloads,
                                                    const std::string &reference) {
    std::vector<std::unique_ptr<Entry>> entries;
    for (std::size_t ci = 0; ci < cases.size(); ++ci)
        for (const auto &be : cases[ci].backends)
            entries.push_back(std::make_unique<OpCaseEntry>(cases[ci], ci, be, reference));
    // Workloads after the op cases, as they always ran.
    for (const auto &w : workloads)
        for (auto phase : w.phases)
            for (const auto &be : w.backends)
                entries.push_back(std::make_unique<workload::WorkloadEntry>(w, phase, be, reference));
    return entries;
}

namespace {

CommandLineChanges changes_of(const RunOptions &o) { return CommandLineChanges{o.overrides, o.backends}; }

// Entries per Google Benchmark pass: it is handed a slice of the run at a
// time, so a run of 100,000 entries starts at once and a signal is heard
// between slices. Interleaved repetitions need every entry in one pass.
constexpr std::size_t kEntriesPerPass = 64;

// Google Benchmark drives the repetitions; what a user sees and the result
// set come from opbench's own records, so its reports go nowhere.
class SilentReporter final : public benchmark::BenchmarkReporter {
public:
    bool ReportContext(const Context &) override { return true; }
    void ReportRuns(const std::vector<Run> &) override {}
};

// Walks one list of entries (op cases x backends, then workload phases x
// backends): each is skipped before anything runs, or activated in the case
// host, measured one repetition per Google Benchmark iteration, and finished;
// then it is journaled, shown and kept for the result set.
class SuiteRun {
public:
    SuiteRun(const Suite &suite, const PluginSet &plugins, const RunOptions &options)
        : suite_(suite), plugins_(plugins), options_(options), cases_(effective_cases(suite, changes_of(options))),
          workloads_(effective_workloads(suite, changes_of(options))),
          entries_(planned_entries(cases_, workloads_, options.reference)) {
        measured_.assign(entries_.size(), 0);
        ran_.assign(entries_.size(), false);
        interrupted_.assign(entries_.size(), false);
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
    void open_backends();
    std::optional<MeasureFailure> skip_before_running(std::size_t i) const;
    void run_entries();
    void run_pass(const std::vector<std::size_t> &pass);
    void bench(benchmark::State &state, std::size_t i);
    void activate(std::size_t i);
    void finish_active();
    void entry_done(std::size_t i, bool shown = true);
    void show_progress(std::size_t i);
    void open_log();
    void write_result_set(bool complete);
    [[noreturn]] void on_exit_in_run(int status);
    void start_profiling();
    void finish_profiling();
    void report_after_run() const;
    const Entry *reference_of(const Entry &e) const;
    RunSummary summarize_run(bool complete) const;

    const Suite &suite_;
    const PluginSet &plugins_;
    const RunOptions &options_;
    std::vector<Case> cases_;
    std::vector<WorkloadCase> workloads_;
    std::vector<std::unique_ptr<Entry>> entries_;
    std::vector<int> measured_;       // Google Benchmark iterations each entry had
    std::vector<bool> ran_;           // reached (not filtered out, not finished before a --resume)
    std::vector<bool> interrupted_;   // abandoned by an interrupt: not in the result set
    std::vector<std::size_t> planned_; // the entries this run measures, in order
    std::vector<std::size_t> probe_index_; // an op entry's place in its backend's probe (supports() answers)
    std::vector<std::size_t> not_measured_;
    std::size_t active_ = SIZE_MAX;   // the entry the host holds active
    std::unique_ptr<ProfileSession> profile_; // --profile / --trace only
    std::unique_ptr<RunBackends> backends_;
    std::unique_ptr<RunLog> log_;     // finished entries, mirrored into the journal
    std::unique_ptr<RunConsole> console_;
    std::vector<std::string> output_errors_;
    CachedMachinePeaks machine_;
    std::vector<std::string> warnings_;
    double timer_overhead_ = 0;
    std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();
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
    start_profiling(); // after the call-overhead probe: it is not part of the profile
    open_log();
    run_entries();
    finish_profiling();
    const bool complete = !interrupt_requested();
    write_result_set(complete);
    return summarize_run(complete);
}

// Every backend the entries name, in order of first mention, probed with the
// op cases it will be asked.
void SuiteRun::open_backends() {
    std::vector<std::string> named;
    std::map<std::string, std::vector<opb_op_desc>> cases_of;
    for (const auto &e : entries_) {
        if (std::find(named.begin(), named.end(), e->backend()) == named.end()) named.push_back(e->backend());
        probe_index_.push_back(SIZE_MAX);
        if (auto *op = dynamic_cast<const OpCaseEntry *>(e.get())) {
            probe_index_.back() = cases_of[e->backend()].size();
            cases_of[e->backend()].push_back(op->source().desc);
        }
    }
    backends_ = std::make_unique<RunBackends>(plugins_, options_, profile_.get());
    backends_->open(named, cases_of);
    backends_->choose_reference_store();
}

// Skips known before anything runs: the backend is missing, unusable here,
// failed its probe, refuses the op case, or the entry would not fit.
std::optional<MeasureFailure> SuiteRun::skip_before_running(std::size_t i) const {
    const Entry &e = *entries_[i];
    if (auto cannot = backends_->cannot_run(e.backend())) return cannot;
    if (probe_index_[i] != SIZE_MAX) {
        const SupportAnswer s = backends_->support(e.backend(), probe_index_[i]);
        if (s.status != CaseStatus::passed) return MeasureFailure{s.status, s.reason};
    }
    if (auto why = memory_skip_reason(e.memory_need(options_.verify), available_memory(options_.mem_limit)))
        return MeasureFailure{CaseStatus::skipped, *why};
    return std::nullopt;
}

// Which entries run: those the filter keeps and a resumed run's journal does
// not hold. Those that cannot run are logged as skipped at once; the rest go
// to Google Benchmark a pass at a time.
void SuiteRun::run_entries() {
    const std::optional<NameFilter> filter = NameFilter::from_args(options_.benchmark_args);
    std::vector<std::size_t> to_measure;
    for (std::size_t i = 0; i < entries_.size(); ++i) {
        Entry &e = *entries_[i];
        if (filter && !filter->matches_entry(e.name())) continue;
        if (log_->has_case(e.name())) continue; // finished before the interruption (--resume)
        planned_.push_back(i);
    }
    std::vector<std::string> names;
    for (std::size_t i : planned_) names.push_back(entries_[i]->name());
    console_ = std::make_unique<RunConsole>(names, options_.reference, isatty(STDOUT_FILENO));
    for (std::size_t i : planned_) {
        // Interrupted while the backends were probed: nothing is recorded, so --resume runs every entry.
        if (interrupt_requested()) return;
        if (auto skip = skip_before_running(i)) {
            entries_[i]->result.status = skip->status;
            entries_[i]->result.reason = skip->reason;
            ran_[i] = true;
            not_measured_.push_back(i);
            entry_done(i, /*shown=*/false); // listed under "Not measured" after the run
        } else {
            to_measure.push_back(i);
        }
    }
    std::vector<std::string> args = gbench_argv(options_.benchmark_args);
    std::vector<char *> argv;
    for (auto &a : args) argv.push_back(a.data());
    int argc = static_cast<int>(argv.size());
    benchmark::Initialize(&argc, argv.data());
    if (benchmark::ReportUnrecognizedArguments(argc, argv.data()))
        throw std::runtime_error("unrecognised Google Benchmark arguments (see above)");
    log_->set_gb_context(benchmark_context());
    const std::size_t per_pass = interleaved(options_.benchmark_args) ? to_measure.size() : kEntriesPerPass;
    for (std::size_t from = 0; from < to_measure.size() && !interrupt_requested(); from += per_pass) {
        const auto to = std::min(to_measure.size(), from + per_pass);
        run_pass(std::vector<std::size_t>(to_measure.begin() + long(from), to_measure.begin() + long(to)));
    }
    finish_active();
    benchmark::Shutdown();
    report_after_run();
}

// One Google Benchmark pass over `pass`: one benchmark per entry, whose
// iterations are the entry's repetitions.
void SuiteRun::run_pass(const std::vector<std::size_t> &pass) {
    for (std::size_t i : pass) {
        auto *b = benchmark::RegisterBenchmark(entries_[i]->name().c_str(),
                                               [this, i](benchmark::State &st) { bench(st, i); });
        b->UseManualTime();
        b->Iterations(1);
        b->Repetitions(std::max(1, entries_[i]->settings().repetitions));
    }
    if (options_.verbose) {
        // Google Benchmark's run names add "/iterations:1/repeats:N" to the entry's.
        auto lookup = [this](const std::string &run_name) -> const CaseResult * {
            const std::string name = run_name.substr(0, run_name.find("/iterations:"));
            for (const auto &e : entries_)
                if (e->name() == name) return &e->result;
            return nullptr;
        };
        PerCallReporter shown(std::make_unique<benchmark::ConsoleReporter>(), lookup);
        benchmark::RunSpecifiedBenchmarks(&shown);
    } else {
        SilentReporter silent;
        benchmark::RunSpecifiedBenchmarks(&silent);
    }
    benchmark::ClearRegisteredBenchmarks();
}

void SuiteRun::bench(benchmark::State &state, std::size_t i) {
    Entry &e = *entries_[i];
    const bool last = ++measured_[i] >= std::max(1, e.settings().repetitions);
    if (interrupt_requested() || interrupted_[i]) {
        // Google Benchmark cannot be stopped: the rest pass through at once
        // and stay out of the result set (--resume runs them).
        interrupted_[i] = true;
        if (active_ == i) finish_active();
        state.SkipWithError("interrupted");
        for (auto _ : state) {}
        return;
    }
    activate(i);
    CaseResult &r = e.result;
    if (r.status == CaseStatus::passed) {
        for (auto _ : state) {
            try {
                // The sampling's share of the run's time (the summary line),
                // seen from here: a worker's reply is a few microseconds more.
                const auto t0 = std::chrono::steady_clock::now();
                RepetitionRecord rec = backends_->host().measure_repetition();
                r.measure_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
                state.SetIterationTime(rec.summary.median);
                r.repetitions.push_back(std::move(rec));
            } catch (const MeasureFailure &f) {
                r.status = f.status;
                r.reason = f.reason;
                if (backends_->host().interrupted()) interrupted_[i] = true;
            }
        }
    }
    if (r.status != CaseStatus::passed) {
        state.SkipWithError(interrupted_[i] ? "interrupted" : (std::string(case_status_name(r.status)) + ": " + r.reason).c_str());
        for (auto _ : state) {}
    }
    if (last || r.status != CaseStatus::passed) {
        if (active_ == i) finish_active();
        if (!interrupted_[i]) entry_done(i);
    }
}

// The recipe's untimed steps, once per entry before its first repetition (and
// again when interleaved repetitions come back to it): in its backend's
// worker, or here.
void SuiteRun::activate(std::size_t i) {
    if (active_ == i) return;
    finish_active();
    Entry &e = *entries_[i];
    if (e.result.status != CaseStatus::passed) return; // failed in an earlier repetition
    ran_[i] = true;
    show_progress(i);
    active_ = i;
    const JobDefaults defaults{timer_overhead_, options_.verify, backends_->reference_store_dir(),
                               backends_->reference_store_key()};
    const Activation a = backends_->host().activate(e.job(defaults));
    if (backends_->host().interrupted()) interrupted_[i] = true;
    e.activated(a);
    if (!a.reference_problem.empty()) std::cerr << "opbench: " << a.reference_problem << "\n";
    if (a.status != CaseStatus::passed) active_ = SIZE_MAX; // nothing held
}

// Memory figures (and a workload's tail), release, and the roofline at the
// median of the repetitions' medians.
void SuiteRun::finish_active() {
    if (active_ == SIZE_MAX) return;
    const std::size_t i = active_;
    active_ = SIZE_MAX;
    Entry &e = *entries_[i];
    if (e.result.status != CaseStatus::passed) return;
    try {
        e.finished(backends_->host().finish());
    } catch (const MeasureFailure &f) {
        e.result.status = f.status;
        e.result.reason = f.reason;
        if (backends_->host().interrupted()) interrupted_[i] = true;
    }
    if (auto median = e.median_seconds(); median && e.result.status == CaseStatus::passed) {
        const CallWork w = e.call_work();
        e.result.roofline =
            backends_->roofline(w.flops, w.bytes, w.dtype, w.threads, e.backend(), *median, machine_.peaks);
    }
}

// A finished entry: into the log (and so the journal) with its result-set
// entries, and onto the console when `shown`.
void SuiteRun::entry_done(std::size_t i, bool shown) {
    const Entry &e = *entries_[i];
    if (log_->has_case(e.name())) return;
    log_->add_case(i, e.name(), std::string(case_status_name(e.result.status)), result_entries(e));
    if (!shown) return;
    const Entry *ref = reference_of(e);
    console_->entry_done(e, ref ? &ref->result : nullptr);
}

const Entry *SuiteRun::reference_of(const Entry &e) const {
    auto *op = dynamic_cast<const OpCaseEntry *>(&e);
    if (!op || e.result.is_reference) return nullptr;
    for (const auto &other : entries_)
        if (auto *o = dynamic_cast<const OpCaseEntry *>(other.get());
            o && &o->source() == &op->source() && o->backend() == options_.reference)
            return other.get();
    return nullptr;
}

// "[3/12  4s elapsed, ~12s left]  name": counts the entries this run measures.
void SuiteRun::show_progress(std::size_t i) {
    if (!options_.progress || !isatty(STDERR_FILENO)) return;
    const auto at = std::find(planned_.begin(), planned_.end(), i) - planned_.begin();
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
    std::string eta = "?";
    if (at > 0) eta = fmt::format("{:.0f}s", elapsed / double(at) * double(long(planned_.size()) - at));
    std::cerr << fmt::format("\x1b[2m[{}/{}  {:.0f}s elapsed, ~{} left]  {}\x1b[0m\n", at + 1, planned_.size(),
                             elapsed, eta, entries_[i]->name());
}

// After the entries: what was not measured and why, the per-backend table,
// and the workloads' whole-model figures.
void SuiteRun::report_after_run() const {
    if (!not_measured_.empty()) {
        // Grouped by reason: one backend's reason usually covers many entries.
        std::map<std::string, std::vector<std::string>> by_reason;
        for (std::size_t i : not_measured_)
            by_reason[std::string(case_status_name(entries_[i]->result.status)) + ": " + entries_[i]->result.reason]
                .push_back(entries_[i]->name());
        std::cout << fmt::format("\nNot measured ({} entries):\n", not_measured_.size());
        for (const auto &[reason, names] : by_reason) {
            std::cout << "  " << reason << "\n";
            for (const auto &n : names) std::cout << "      " << n << "\n";
        }
    }
    // The op cases this run finished, as the summary line counts them: not
    // an abandoned one (interrupted: not in the result set, --resume runs it).
    std::vector<CaseResult> ran;
    std::vector<const workload::WorkloadEntry *> workloads;
    for (std::size_t i = 0; i < entries_.size(); ++i) {
        if (!ran_[i] || interrupted_[i]) continue;
        if (dynamic_cast<const OpCaseEntry *>(entries_[i].get())) ran.push_back(entries_[i]->result);
        if (auto *w = dynamic_cast<const workload::WorkloadEntry *>(entries_[i].get())) workloads.push_back(w);
    }
    if (!ran.empty()) { // a suite of workloads only has no op-case table
        Document summary;
        summary.tables.push_back(backend_summary(ran, options_.reference, [](const CaseResult &r) { return r.roofline; }));
        std::cout << "\n" << write_console(summary);
    }
    workload::report_workload_figures(workloads, std::cout);
}

RunSummary SuiteRun::summarize_run(bool complete) const {
    RunSummary summary;
    const auto counts = log_->counts(); // resumed: the earlier sessions' entries too
    summary.passed = counts.count("passed") ? counts.at("passed") : 0;
    summary.failed = counts.count("failed") ? counts.at("failed") : 0;
    summary.skipped = counts.count("skipped") ? counts.at("skipped") : 0;
    summary.complete = complete;
    for (std::size_t i = 0; i < entries_.size(); ++i) {
        if (!ran_[i]) continue; // excluded by the filter, or finished before a --resume
        const CaseResult &r = entries_[i]->result;
        summary.prepare_seconds += r.prepare_seconds;
        summary.verify_seconds += r.verify_seconds;
        summary.measure_seconds += r.measure_seconds;
        if (r.status == CaseStatus::passed && r.checked && !r.verification.verified) ++summary.unverified;
    }
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
    RunContext ctx{&suite_,
                   &cases_,
                   &backends_->contexts(),
                   &backends_->unavailable(),
                   options_.reference,
                   options_.benchmark_args,
                   timer_overhead_,
                   &machine_,
                   backends_->call_overheads(),
                   options_.cpus,
                   warnings_,
                   profile_.get(),
                   options_.shard};
    nlohmann::json opbench = run_context_json(ctx);
    opbench["measurement"]["isolation"] = isolation_name(profile_ ? Isolation::none : options_.isolation);
    if (!workloads_.empty()) opbench["suite"]["workloads"] = workloads_.size();
    log_->set_opbench_context(std::move(opbench));

    // First Ctrl-C: abandon the entry in progress (its worker is killed; in
    // process, the current repetition finishes). Second: write what finished
    // now, from the log, and exit (interrupt.hpp).
    on_first_interrupt([this] { backends_->host().interrupt(); });
    on_second_interrupt([this] {
        if (!options_.out_path.empty()) write_result_set(false);
    });
    // Plugin code in this process (--isolate none, profiling) calling exit()
    // ends the run through here, not silently.
    arm_exit_guard([this](int status) { on_exit_in_run(status); });
}

// exit() called in this process while the run goes (run/exit_guard.hpp): the
// entry in progress is failed with the cause, the result set of what finished
// is written marked incomplete (--resume runs the rest), and opbench exits 1.
void SuiteRun::on_exit_in_run(int status) {
    const std::string where = active_ != SIZE_MAX ? fmt::format(" (case {})", entries_[active_]->name()) : "";
    std::string reason = fmt::format("exited with status {} in opbench's own process{}: plugin code called exit() "
                                     "(--isolate process runs cases in a worker, where this costs only the case)",
                                     status, where);
    std::cerr << "\nopbench: " << reason << "\n";
    try {
        if (active_ != SIZE_MAX) {
            entries_[active_]->result.status = CaseStatus::failed;
            entries_[active_]->result.reason = reason;
            entry_done(active_);
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

// Profiling runs: the session records through every backend instance that
// runs entries (never the reference's, whose work is not the entry's).
void SuiteRun::start_profiling() {
    if (!profile_) return;
    for (auto &[name, inst] : backends_->sessions().backends) inst->attach_scope_sink(&profile_->profiler());
    profile_->run_begin(
        {{"suite", suite_.name}, {"path", suite_.path}, {"schedule", to_string(options_.profile.schedule)}});
}

// Prints the hot paths (--profile) and writes the trace (--trace).
void SuiteRun::finish_profiling() {
    if (!profile_) return;
    profile_->run_end();
    for (auto &[name, inst] : backends_->sessions().backends) inst->attach_scope_sink(nullptr);
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
    if (o.trace_path.empty()) return;
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

} // namespace

RunSummary run_suite(const Suite &suite, const PluginSet &plugins, const RunOptions &options) {
    SuiteRun run(suite, plugins, options);
    return run.run();
}

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
