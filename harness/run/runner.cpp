#include "run/runner.hpp"

#include "entry/op_case_entry.hpp"
#include "files/atomic_file.hpp"
#include "files/scratch_file.hpp"
#include "run/context.hpp"
#include "run/exit_guard.hpp"
#include "run/entry_loop.hpp"
#include "run/gbench_args.hpp"
#include "run/interrupt.hpp"
#include "run/journal.hpp"
#include "run/result_set.hpp"
#include "run/run_backends.hpp"
#include "run/run_console.hpp"
#include "run/run_environment.hpp"
#include "run/run_log.hpp"
#include "run/run_profile.hpp"
#include "run/set_file.hpp"
#include "workload/workload_entry.hpp"
#include "writers/table_writers.hpp"
#include "writers/text_wrap.hpp"
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
#include <mutex>
#include <thread>
#include <unistd.h>

namespace opbench {

std::vector<std::unique_ptr<Entry>> planned_entries(const std::vector<Case> &cases,
                                                    const std::vector<WorkloadCase> &workloads,
                                                    const std::string &reference, WorkloadEntries *made) {
    std::vector<std::unique_ptr<Entry>> entries;
    for (std::size_t ci = 0; ci < cases.size(); ++ci)
        for (const auto &be : cases[ci].backends)
            entries.push_back(std::make_unique<OpCaseEntry>(cases[ci], ci, be, reference));
    // Workloads after the op cases, as they always ran.
    for (const auto &w : workloads)
        for (auto phase : w.phases)
            for (const auto &be : w.backends) {
                auto entry = std::make_unique<workload::WorkloadEntry>(w, phase, be, reference);
                if (made) made->emplace_back(entries.size(), entry.get());
                entries.push_back(std::move(entry));
            }
    return entries;
}

namespace {

CommandLineChanges changes_of(const RunOptions &o);

// How alike a name is to a filter's pattern: the share of the pattern's
// three-character pieces (regex syntax left out) found in the name.
double likeness(const std::string &pattern, const std::string &name) {
    std::string plain;
    for (char ch : pattern)
        if (std::string_view("^$.*+?()[]{}|\\").find(ch) == std::string_view::npos) plain += ch;
    if (plain.size() < 3) return name.find(plain) != std::string::npos ? 1.0 : 0.0;
    std::size_t found = 0, pieces = plain.size() - 2;
    for (std::size_t i = 0; i < pieces; ++i) found += name.find(plain.substr(i, 3)) != std::string::npos;
    return double(found) / double(pieces);
}

} // namespace

std::vector<std::string> entry_names(const Suite &suite, const RunOptions &options) {
    const std::vector<Case> cases = effective_cases(suite, changes_of(options));
    const std::vector<WorkloadCase> workloads = effective_workloads(suite, changes_of(options));
    const auto entries = planned_entries(cases, workloads, options.backend.reference);
    const std::optional<NameFilter> filter = NameFilter::from_args(options.loop.benchmark_args);
    std::vector<std::string> names;
    for (const auto &e : entries)
        if (!filter || filter->matches_entry(e->name())) names.push_back(e->name());
    if (names.empty() && filter && !entries.empty()) {
        std::vector<std::pair<double, std::string>> ranked;
        for (const auto &e : entries) ranked.emplace_back(-likeness(filter->pattern(), e->name()), e->name());
        std::stable_sort(ranked.begin(), ranked.end(),
                         [](const auto &a, const auto &b) { return a.first < b.first; });
        std::string nearest;
        for (std::size_t i = 0; i < ranked.size() && i < 5; ++i) nearest += "\n  " + ranked[i].second;
        throw SuiteError(SourceLocation{suite.path, 0, 0},
                         fmt::format("--benchmark_filter={} matches none of its {} entries (an extended regex "
                                     "searched in each name; `opbench run {} --list` lists them); the nearest:{}",
                                     filter->pattern(), entries.size(), suite.path, nearest));
    }
    return names;
}

namespace {

CommandLineChanges changes_of(const RunOptions &o) { return CommandLineChanges{o.overrides, o.backends}; }

// Walks one list of entries (op cases x backends, then workload phases x
// backends): each is skipped before anything runs, or activated in the case
// host, measured one repetition per Google Benchmark iteration, and finished;
// then it is journaled, shown and kept for the result set.
class SuiteRun {
public:
    SuiteRun(const Suite &suite, const PluginSet &plugins, const RunOptions &options)
        : suite_(suite), plugins_(plugins), options_(options), cases_(effective_cases(suite, changes_of(options))),
          workloads_(effective_workloads(suite, changes_of(options))),
          entries_(planned_entries(cases_, workloads_, options.backend.reference, &workload_entries_)) {
        timer_overhead_ = measure_timer_overhead();
    }
    ~SuiteRun() {
        // The watcher thread, the in-process deadline and the exit guard must
        // not reach this run once it is gone.
        end_deadline();
        on_first_interrupt(nullptr);
        on_second_interrupt(nullptr);
        arm_exit_guard(nullptr);
    }

    RunSummary run();

private:
    void open_backends();
    void open_log();
    void write_result_set(bool complete);
    [[noreturn]] void on_exit_in_run(int status);
    void start_in_process_deadline();
    void end_deadline() {
        std::lock_guard lock(ending_->mutex);
        ending_->done = true;
    }
    RunSummary summarize_run(bool complete) const;
    bool every_case_logged();

    const Suite &suite_;
    const PluginSet &plugins_;
    const RunOptions &options_;
    std::vector<Case> cases_;
    std::vector<WorkloadCase> workloads_;
    // Declared before entries_, which planned_entries() fills it beside:
    // those of entries_ that are workload phases, for their figures.
    WorkloadEntries workload_entries_;
    std::vector<std::unique_ptr<Entry>> entries_;
    std::unique_ptr<EntryLoop> loop_;
    std::unique_ptr<ProfileSession> profile_; // --profile / --trace only
    std::unique_ptr<RunBackends> backends_;
    std::unique_ptr<RunLog> log_;     // finished entries, mirrored into the journal
    std::vector<std::string> output_errors_;
    CachedMachinePeaks machine_;
    std::vector<std::string> warnings_;
    double timer_overhead_ = 0;
    std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();
    // Shared with the in-process deadline's thread, which may outlive this run:
    // `done` once the run writes its own set (or is gone), under `mutex`.
    struct Ending {
        std::mutex mutex;
        bool done = false;
    };
    std::shared_ptr<Ending> ending_ = std::make_shared<Ending>();
};

RunSummary SuiteRun::run() {
    warnings_ = measurement_warnings();
    for (const auto &w : warnings_) std::cerr << wrapped("***WARNING*** " + w, 4, 0);
    // Printed where they were found (main.cpp); recorded with the others.
    warnings_.insert(warnings_.end(), options_.setting_warnings.begin(), options_.setting_warnings.end());
    machine_ = load_or_measure();
    if (const std::string line = peaks_origin_line(machine_); !line.empty())
        std::cerr << wrap_words(line, 4, 0);
    if (options_.profile.enabled()) profile_ = std::make_unique<ProfileSession>(options_.profile);
    open_backends();
    // After the call-overhead probe: it is not part of the profile.
    if (profile_) begin_profiled_run(*profile_, backends_->sessions(), suite_);
    open_log();
    const JobDefaults defaults{timer_overhead_, backends_->options().verify, backends_->reference_store_dir(),
                              backends_->reference_store_key()};
    loop_ = std::make_unique<EntryLoop>(entries_, EntryLoop::Setup{*backends_, *log_, options_.loop, machine_.peaks,
                                                                   defaults, backends_->options().reference,
                                                                   profile_.get()});
    loop_->run();
    std::vector<const workload::WorkloadEntry *> finished_workloads;
    for (const auto &[i, w] : workload_entries_)
        if (loop_->finished_here(i)) finished_workloads.push_back(w);
    workload::report_workload_figures(finished_workloads, std::cout);
    if (profile_)
        if (auto failed = end_profiled_run(*profile_, backends_->sessions(), suite_)) output_errors_.push_back(*failed);
    const bool complete = !interrupt_requested() && every_case_logged();
    end_deadline(); // this thread writes the set: the deadline, if set, stands down
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
        if (const Case *c = e->op_case()) {
            e->set_probe_place(cases_of[e->backend()].size());
            cases_of[e->backend()].push_back(c->desc);
        }
    }
    backends_ = std::make_unique<RunBackends>(plugins_, options_.backend, probe_timeout_seconds(options_.overrides),
                                              profile_.get());
    backends_->open(named, cases_of);
    backends_->choose_reference_store();
}

// A set is complete only when every case the run was asked for has entries
// (issue 32: damaged journal lines once gave "complete" sets lacking cases).
// Else it is written as an interrupted run's, journal kept for --resume.
bool SuiteRun::every_case_logged() {
    const std::vector<std::string> missing = log_->without_entries(loop_->wanted());
    if (missing.empty()) return true;
    output_errors_.push_back(fmt::format("{} case(s) have no entries (first: {}): the set is marked incomplete, and "
                                         "--resume measures them",
                                         missing.size(), missing.front()));
    return false;
}

RunSummary SuiteRun::summarize_run(bool complete) const {
    RunSummary summary;
    const auto counts = log_->counts(); // resumed: the earlier sessions' entries too
    summary.passed = counts.count("passed") ? counts.at("passed") : 0;
    summary.failed = counts.count("failed") ? counts.at("failed") : 0;
    summary.skipped = counts.count("skipped") ? counts.at("skipped") : 0;
    summary.starved = counts.count("starved") ? counts.at("starved") : 0;
    summary.complete = complete;
    for (std::size_t i = 0; i < entries_.size(); ++i) {
        if (!loop_ || !loop_->ran(i)) continue; // excluded by the filter, or finished before a --resume
        const CaseResult &r = entries_[i]->result;
        summary.prepare_seconds += r.inputs_seconds + r.prepare_seconds + r.process_start_seconds;
        summary.process_start_seconds += r.process_start_seconds;
        summary.verify_seconds += r.verify_seconds;
        summary.measure_seconds += r.measure_seconds;
        if (r.status == CaseStatus::passed && r.checked && !r.verification.verified) ++summary.unverified;
    }
    summary.out_path = options_.log.out_path;
    summary.output_errors = output_errors_;
    summary.verify = options_.backend.verify;
    summary.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
    return summary;
}

// The run log (a new journal, or the one --resume continues), with the
// run's context, and the interrupt and exit() actions that write it.
void SuiteRun::open_log() {
    // First Ctrl-C: abandon the entry in progress (its worker is killed; in
    // process, the current repetition finishes, or 5 s pass: see
    // start_in_process_deadline). Set before the journal exists, so that a
    // signal once the journal is on disk always stops the run with its
    // message and a partial set (a signal between the two once exited 130
    // silently: CI's console_width under ASan).
    on_first_interrupt([this] {
        backends_->host().interrupt();
        if (options_.backend.isolation == Isolation::none || profile_) start_in_process_deadline();
    });
    log_ = open_run_log(suite_, options_.log);
    if (!options_.log.resume_journal.empty()) {
        // A journal line is checked against the run's own cases, never
        // trusted: a forgotten case is measured again (issue 32).
        std::vector<std::string> planned;
        for (const auto &e : entries_) planned.push_back(e->name());
        for (const auto &why : log_->forget_unplanned(planned))
            std::cerr << fmt::format("opbench: {}: journal line dropped ({}); a case of this run is measured again\n",
                                     options_.log.resume_journal, why);
    }
    RunContext ctx{&suite_,
                   &cases_,
                   &backends_->contexts(),
                   &backends_->unavailable(),
                   options_.backend.reference,
                   options_.loop.benchmark_args,
                   timer_overhead_,
                   &machine_,
                   backends_->call_overheads(),
                   options_.cpus,
                   warnings_,
                   profile_.get(),
                   options_.shard};
    nlohmann::json opbench = run_context_json(ctx);
    opbench["measurement"]["isolation"] = isolation_name(profile_ ? Isolation::none : options_.backend.isolation);
    if (!workloads_.empty()) opbench["suite"]["workloads"] = workloads_.size();
    if (options_.insecure_plugins_allowed) opbench["insecure_plugins_allowed"] = *options_.insecure_plugins_allowed;
    if (!options_.code_under_test.is_null()) opbench["code_under_test"] = options_.code_under_test;
    log_->set_opbench_context(std::move(opbench));

    // Second Ctrl-C: write what finished now, from the log, and exit
    // (interrupt.hpp). The first's action is set in open_log, before the log.
    on_second_interrupt([this] {
        if (!options_.log.out_path.empty()) write_result_set(false);
    });
    // Plugin code in this process (--isolate none, profiling) calling exit()
    // ends the run through here, not silently.
    arm_exit_guard([this](int status) { on_exit_in_run(status); });
}

// exit() called in this process while the run goes (run/exit_guard.hpp): the
// entry in progress is failed with the cause, the result set of what finished
// is written marked incomplete (--resume runs the rest), and opbench exits 1.
void SuiteRun::on_exit_in_run(int status) {
    const std::size_t active = loop_ ? loop_->active() : SIZE_MAX;
    const std::string where = active != SIZE_MAX ? fmt::format(" (case {})", entries_[active]->name()) : "";
    std::string reason = fmt::format("exited with status {} in opbench's own process{}: plugin code called exit() "
                                     "(--isolate process runs cases in a worker, where this costs only the case)",
                                     status, where);
    std::cerr << "\nopbench: " << reason << "\n";
    try {
        if (loop_) loop_->fail_active(reason);
        if (!options_.log.out_path.empty()) {
            write_result_set(false);
            std::cerr << fmt::format("opbench: the result set of what finished is in {} (incomplete); "
                                     "opbench run --resume {} runs the rest\n",
                                     options_.log.out_path, options_.log.out_path);
        }
    } catch (const std::exception &e) {
        std::cerr << "opbench: could not write the partial result set: " << e.what() << "\n";
    }
    std::cerr.flush();
    std::cout.flush();
    ::_exit(1);
}

// After a first signal in a run whose cases run in opbench's own process
// (--isolate none, profiling) nothing can abandon the call in progress: the
// run stops once it returns, and a call still running 5 s after the signal
// (hung, or far slower than a repetition) is left behind: what finished is
// written and opbench exits 128 + signal, as on a second signal.
void SuiteRun::start_in_process_deadline() {
    constexpr auto kGrace = std::chrono::seconds(5);
    std::thread([this, ending = ending_, kGrace] {
        std::this_thread::sleep_for(kGrace);
        std::lock_guard lock(ending->mutex);
        if (ending->done) return; // the run is writing its set itself, or is gone
        std::cerr << fmt::format("\nopbench: the call in progress in opbench's own process (--isolate none or "
                                 "profiling) has not returned {} s after the signal: stopping without it "
                                 "(--isolate process abandons only its case)\n",
                                 kGrace.count());
        try {
            write_result_set(false);
        } catch (const std::exception &e) {
            std::cerr << "opbench: could not write the partial result set: " << e.what() << "\n";
        }
        std::cerr.flush();
        std::cout.flush();
        remove_all_scratch_files();
        ::_exit(interrupt_exit_status());
    }).detach();
}

void SuiteRun::write_result_set(bool complete) {
    if (options_.log.out_path.empty()) return;
    write_set_file(*log_, options_.log.out_path, options_.out_format, complete);
    if (complete) log_->finish(); // the journal is no longer needed
}

} // namespace

RunSummary run_suite(const Suite &suite, const PluginSet &plugins, const RunOptions &options) {
    SuiteRun run(suite, plugins, options);
    return run.run();
}

std::string summary_line(const RunSummary &s) {
    std::string line = fmt::format("opbench: {} passed, {} failed, {} skipped", s.passed, s.failed, s.skipped);
    if (s.starved) line += fmt::format(", {} starved (no time: the machine was busy)", s.starved);
    if (s.unverified) line += fmt::format(" ({} passed UNVERIFIED: --verify off)", s.unverified);
    auto share = [&](double part) { return s.wall_seconds > 0 ? 100.0 * part / s.wall_seconds : 0.0; };
    line += fmt::format(" in {:.1f} s\n  measuring {:.1f} s ({:.0f}%), verifying {:.1f} s ({:.0f}%, {}), "
                        "preparing {:.1f} s ({:.0f}%)",
                        s.wall_seconds, s.measure_seconds, share(s.measure_seconds), s.verify_seconds,
                        share(s.verify_seconds), verify_mode_name(s.verify), s.prepare_seconds,
                        share(s.prepare_seconds));
    // The one part of the preparing a flag removes: say so where it is large.
    if (share(s.process_start_seconds) >= 10)
        line += fmt::format("\n  of which {:.1f} s moved cases to further worker processes (layout draws); "
                            "--processes 1 skips it",
                            s.process_start_seconds);
    return line;
}

} // namespace opbench
