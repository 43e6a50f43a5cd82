#include "run/entry_loop.hpp"

#include "run/gb_context.hpp"
#include "run/gb_reporter.hpp"
#include "run/gbench_args.hpp"
#include "run/interrupt.hpp"
#include "measure/entry_summary.hpp"
#include "writers/table_writers.hpp"
#include "writers/text_wrap.hpp"
#include "writers/writer.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <map>
#include <unistd.h>

namespace opbench {

namespace {

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

} // namespace

EntryLoop::EntryLoop(std::vector<std::unique_ptr<Entry>> &entries, Setup setup)
    : entries_(entries), setup_(std::move(setup)) {
    measured_.assign(entries_.size(), 0);
    ran_.assign(entries_.size(), false);
    interrupted_.assign(entries_.size(), false);
    profile_case_.assign(entries_.size(), SIZE_MAX);
}

void EntryLoop::fail_active(const std::string &reason) {
    if (active_ == SIZE_MAX) return;
    entries_[active_]->result.status = CaseStatus::failed;
    entries_[active_]->result.reason = reason;
    entry_done(active_);
}

// Skips known before anything runs: the backend is missing, unusable here,
// failed its probe, refuses the op case, or the entry would not fit.
std::optional<MeasureFailure> EntryLoop::skip_before_running(std::size_t i) const {
    const Entry &e = *entries_[i];
    if (auto cannot = setup_.backends.cannot_run(e.backend())) return cannot;
    if (const std::optional<std::size_t> place = e.probe_place()) {
        const SupportAnswer s = setup_.backends.support(e.backend(), *place);
        if (s.status != CaseStatus::passed) return MeasureFailure{s.status, s.reason};
    }
    if (auto why = memory_skip_reason(e.memory_need(setup_.backends.options().verify), available_memory(setup_.options.mem_limit)))
        return MeasureFailure{CaseStatus::skipped, *why};
    return std::nullopt;
}

// Which entries run: those the filter keeps and a resumed run's journal does
// not hold. Those that cannot run are logged as skipped at once; the rest go
// to Google Benchmark a pass at a time.
void EntryLoop::run() {
    const std::optional<NameFilter> filter = NameFilter::from_args(setup_.options.benchmark_args);
    std::vector<std::size_t> to_measure;
    for (std::size_t i = 0; i < entries_.size(); ++i) {
        Entry &e = *entries_[i];
        if (filter && !filter->matches_entry(e.name())) continue;
        wanted_.push_back(e.name());
        if (setup_.log.has_case(e.name())) continue; // finished before the interruption (--resume)
        planned_.push_back(i);
    }
    console_ = std::make_unique<RunConsole>(setup_.backends.options().reference, isatty(STDOUT_FILENO));
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
    std::vector<EntryPlan> plan;
    for (std::size_t i : to_measure) {
        const Entry &e = *entries_[i];
        const MeasureSettings &m = e.settings();
        eta_index_[i] = plan.size();
        const Case *c = e.op_case();
        const std::string kind = c ? fmt::format("{}/{}", int(c->desc.op), int(c->desc.dtype)) : "";
        plan.push_back({e.backend(), m.repetitions, m.warmup, m.min_samples, m.min_time, m.max_time, e.call_work().flops,
                        kind, m.starved_retries, setup_.backends.host().processes_of_case(m)});
    }
    eta_ = std::make_unique<RunEta>(std::move(plan));
    std::vector<std::string> args = gbench_argv(setup_.options.benchmark_args);
    std::vector<char *> argv;
    for (auto &a : args) argv.push_back(a.data());
    int argc = static_cast<int>(argv.size());
    benchmark::Initialize(&argc, argv.data());
    if (benchmark::ReportUnrecognizedArguments(argc, argv.data()))
        throw std::runtime_error("unrecognised Google Benchmark arguments (see above)");
    setup_.log.set_gb_context(benchmark_context());
    context_ = setup_.log.context();
    run_facts_ = RunFacts{setup_.backends.contexts(), setup_.backends.call_overheads(), setup_.peaks};
    const std::size_t per_pass = interleaved(setup_.options.benchmark_args) ? to_measure.size() : kEntriesPerPass;
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
void EntryLoop::run_pass(const std::vector<std::size_t> &pass) {
    for (std::size_t i : pass) {
        auto *b = benchmark::RegisterBenchmark(entries_[i]->name().c_str(),
                                               [this, i](benchmark::State &st) { bench(st, i); });
        b->UseManualTime();
        b->Iterations(1);
        b->Repetitions(std::max(1, entries_[i]->settings().repetitions));
    }
    if (setup_.options.verbose) {
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

void EntryLoop::bench(benchmark::State &state, std::size_t i) {
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
    // Why the entry ends without a time: what Google Benchmark is told.
    auto failure = [&] {
        return interrupted_[i] ? std::string("interrupted")
                               : std::string(case_status_name(r.status)) + ": " + r.reason;
    };
    if (r.status != CaseStatus::passed) {
        state.SkipWithError(failure().c_str());
        for (auto _ : state) {} // Google Benchmark's loop runs once per call, here empty
    } else {
        for (auto _ : state) {
            try {
                // The sampling's share of the run's time (the summary line),
                // seen from here: a worker's reply is a few microseconds more.
                const auto t0 = std::chrono::steady_clock::now();
                RepetitionRecord rec = setup_.backends.host().measure_repetition();
                r.measure_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
                state.SetIterationTime(rec.summary.median);
                r.repetitions.push_back(std::move(rec));
                refresh_progress(i);
            } catch (const MeasureFailure &f) {
                r.status = f.status;
                r.reason = f.reason;
                if (setup_.backends.host().interrupted()) interrupted_[i] = true;
                state.SkipWithError(failure().c_str());
                break;
            }
        }
    }
    if (last || r.status != CaseStatus::passed) {
        if (active_ == i) finish_active();
        if (!interrupted_[i]) entry_done(i);
    }
}

// The recipe's untimed steps, once per entry before its first repetition (and
// again when interleaved repetitions come back to it): in its backend's
// worker, or here.
void EntryLoop::activate(std::size_t i) {
    if (active_ == i) return;
    finish_active();
    Entry &e = *entries_[i];
    if (e.result.status != CaseStatus::passed) return; // failed in an earlier repetition
    ran_[i] = true;
    show_progress(i);
    active_ = i;
    const JobDefaults defaults{setup_.timer_overhead, setup_.backends.options().verify, setup_.backends.reference_store_dir(),
                               setup_.backends.reference_store_key()};
    if (setup_.profile) profile_mark_ = setup_.profile->cases().size();
    const Activation a = setup_.backends.host().activate(e.job(defaults));
    if (setup_.backends.host().interrupted()) interrupted_[i] = true;
    e.activated(a);
    if (!a.reference_problem.empty()) std::cerr << "opbench: " << a.reference_problem << "\n";
    if (a.status != CaseStatus::passed) {
        active_ = SIZE_MAX; // nothing held
        take_profiled_case(i);
    }
}

// The case the profile closed since entry i's activation is i's (the last,
// when interleaved repetitions activated it again).
void EntryLoop::take_profiled_case(std::size_t i) {
    if (setup_.profile && setup_.profile->cases().size() > profile_mark_)
        profile_case_[i] = setup_.profile->cases().size() - 1;
}

// Memory figures (and a workload's tail), release, and the roofline at the
// median of the repetitions' medians.
void EntryLoop::finish_active() {
    if (active_ == SIZE_MAX) return;
    const std::size_t i = active_;
    active_ = SIZE_MAX;
    Entry &e = *entries_[i];
    if (e.result.status != CaseStatus::passed) return;
    try {
        e.finished(setup_.backends.host().finish());
    } catch (const MeasureFailure &f) {
        e.result.status = f.status;
        e.result.reason = f.reason;
        if (setup_.backends.host().interrupted()) interrupted_[i] = true;
    }
    take_profiled_case(i);
    // Every repetition starved even after its re-measures: no time of the op.
    if (e.result.status == CaseStatus::passed)
        if (auto why = starved_reason(e.result.repetitions)) {
            e.result.status = CaseStatus::starved;
            e.result.reason = *why;
        }
    if (auto median = e.median_seconds(); median && e.result.status == CaseStatus::passed) {
        const CallWork w = e.call_work();
        e.result.roofline =
            setup_.backends.roofline(w.flops, w.bytes, w.dtype, w.threads, e.backend(), *median, setup_.peaks,
                                     e.settings().cache == CacheState::warm);
    }
}

// A finished entry: into the log (and so the journal) with its result-set
// entries, and onto the console when `shown`.
void EntryLoop::entry_done(std::size_t i, bool shown) {
    Entry &e = *entries_[i];
    if (setup_.log.has_case(e.name())) return;
    std::vector<nlohmann::json> records = result_entries(e);
    if (e.result.status == CaseStatus::passed) {
        e.result.summary = summary_of(e);
        const nlohmann::json summary = e.result.summary->to_json();
        const nlohmann::json metrics = entry_metrics_json(metric_inputs(e));
        const std::optional<Bottleneck> bottleneck = entry_bottleneck(*e.result.summary, e.bottleneck_facts(), run_facts_);
        // On the repetitions' entries; Google Benchmark's aggregates have their own.
        for (auto &r : records)
            if (r.value("run_type", "") == "iteration") {
                r["summary"] = summary;
                r["metrics"] = metrics;
                if (bottleneck) r["bottleneck"] = to_json(*bottleneck);
            }
    }
    if (const std::size_t p = profile_case_[i]; p != SIZE_MAX) {
        if (auto median = e.median_seconds()) setup_.profile->set_measured_median(p, *median);
        if (setup_.profile->options().hot_path) attach_case_profile(records, setup_.profile->cases()[p]);
    }
    setup_.log.add_case(i, e.name(), std::string(case_status_name(e.result.status)), std::move(records));
    if (!shown) return;
    const Entry *ref = reference_of(e);
    console_->entry_done(e, ref ? &ref->result : nullptr);
}

// One summary per entry (measure/entry_summary.hpp), from its repetition
// records, judged against the set's context as a reader judges the entries
// it wrote.
EntrySummary EntryLoop::summary_of(const Entry &e) const {
    std::vector<RepetitionFigures> reps;
    for (const RepetitionRecord &rec : e.result.repetitions) reps.push_back(repetition_figures(rec));
    if (reps.empty()) return summarize_entry(reps, EntryConditions{});
    const int resolved = e.call_work().threads;
    return summarize_entry(reps, entry_conditions(e.settings().noise, resolved >= 1 ? resolved : e.settings().threads,
                                                  e.backend(), context_));
}

const Entry *EntryLoop::reference_of(const Entry &e) const {
    const Case *c = e.op_case();
    if (!c || e.result.is_reference) return nullptr;
    for (const auto &other : entries_)
        if (other->op_case() == c && other->backend() == setup_.backends.options().reference) return other.get();
    return nullptr;
}

namespace {

// A call's time as this machine ran it, for the time left: the median over
// every repetition, starved ones too (they time the machine, as the entries
// left will be timed); NaN without a repetition.
double call_seconds_as_run(const CaseResult &r) {
    std::vector<double> medians;
    for (const auto &rec : r.repetitions) medians.push_back(rec.summary.median);
    return medians.empty() ? NAN : summarize(medians).median;
}

// Its repetitions' samplings, re-measures of starved ones included.
int tries_of(const CaseResult &r) {
    int tries = 0;
    for (const auto &rec : r.repetitions) tries += 1 + rec.remeasured;
    return tries;
}

} // namespace

// "[3/12  4s elapsed, ~12s left]  name": counts the entries this run measures.
void EntryLoop::show_progress(std::size_t i) {
    if (!setup_.options.progress || !isatty(STDERR_FILENO)) return;
    print_progress_line(i, eta_text(i), "");
}

// A long entry's line again after one of its repetitions (not its last), at
// most every kRefreshSeconds: the time left from its own pace so far, where
// the line at its start had only its neighbours' to go on.
void EntryLoop::refresh_progress(std::size_t i) {
    constexpr double kRefreshSeconds = 2;
    if (!setup_.options.progress || !isatty(STDERR_FILENO) || eta_last_ != i) return;
    const auto now = std::chrono::steady_clock::now();
    if (std::chrono::duration<double>(now - progress_printed_).count() < kRefreshSeconds) return;
    const Entry &e = *entries_[i];
    const int done = static_cast<int>(e.result.repetitions.size()), planned = std::max(1, e.settings().repetitions);
    if (done >= planned) return;
    const double so_far = std::chrono::duration<double>(now - eta_last_start_).count();
    eta_->in_progress(eta_index_.at(i),
                      {so_far, e.result.measure_seconds, tries_of(e.result), call_seconds_as_run(e.result)}, done);
    const double left = seconds_left(now);
    print_progress_line(i, left < 0 ? "?" : fmt::format("{:.0f}s", left),
                        fmt::format("  (repetition {} of {} done)", done, planned));
}

void EntryLoop::print_progress_line(std::size_t i, const std::string &eta, const std::string &suffix) {
    const auto at = std::find(planned_.begin(), planned_.end(), i) - planned_.begin();
    progress_printed_ = std::chrono::steady_clock::now();
    const double elapsed = std::chrono::duration<double>(progress_printed_ - started_).count();
    const std::string counter =
        fmt::format("[{}/{}  {:.0f}s elapsed, ~{} left]  ", at + 1, planned_.size(), elapsed, eta);
    // A long name is cut in the middle, so the line never wraps on a 100-column terminal.
    const std::size_t used = display_width(counter) + display_width(suffix);
    const std::size_t room = kTerminalColumns - std::min(kTerminalColumns - 20, used);
    std::cerr << "\x1b[2m" << counter << shorten_middle(entries_[i]->name(), room) << suffix << "\x1b[0m\n";
}

// The time left as the progress line shows it ("12s", "?" before an entry
// finished), after telling the estimate how long the entry before `i` took.
std::string EntryLoop::eta_text(std::size_t i) {
    const auto now = std::chrono::steady_clock::now();
    if (eta_last_ != SIZE_MAX && eta_last_ != i) {
        const double took = std::chrono::duration<double>(now - eta_last_start_).count();
        const CaseResult &r = entries_[eta_last_]->result;
        eta_->finished(eta_index_.at(eta_last_), {took, r.measure_seconds, tries_of(r), call_seconds_as_run(r)});
    }
    eta_last_ = i;
    eta_last_start_ = now;
    const double left = seconds_left(now);
    return left < 0 ? "?" : fmt::format("{:.0f}s", left);
}

// The estimate's time left. In a run of thousands of entries it costs tens
// of milliseconds (RunEta evaluates up to 4096 of them), so it is made again
// at most every second, the time since taken off, not at each entry.
double EntryLoop::seconds_left(std::chrono::steady_clock::time_point now) {
    constexpr std::size_t kCheapRun = 1000;
    const double since = std::chrono::duration<double>(now - eta_made_at_).count();
    if (planned_.size() > kCheapRun && eta_made_ >= 0 && since < 1) return std::max(0.0, eta_made_ - since);
    eta_made_ = eta_->seconds_left();
    eta_made_at_ = now;
    return eta_made_;
}

// After the entries: what was not measured and why, and the per-backend
// table (the runner adds the workloads' whole-model figures).
void EntryLoop::report_after_run() const {
    std::vector<const CaseResult *> not_measured;
    for (std::size_t i : not_measured_) not_measured.push_back(&entries_[i]->result);
    print_not_measured(not_measured, std::cout);
    // The op cases this run finished, as the summary line counts them: not
    // an abandoned one (interrupted: not in the result set, --resume runs it).
    std::vector<CaseResult> ran;
    for (std::size_t i = 0; i < entries_.size(); ++i)
        if (finished_here(i) && entries_[i]->op_case()) ran.push_back(entries_[i]->result);
    if (!ran.empty()) { // a suite of workloads only has no op-case table
        Document summary;
        summary.tables.push_back(backend_summary(ran, setup_.backends.options().reference));
        std::cout << "\n" << write_console(summary);
    }
}

} // namespace opbench
