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
    if (groups_.empty()) // a run's: each entry alone, its repetitions in turn
        for (std::size_t i = 0; i < entries_.size(); ++i) {
            EntryGroup g{{i}, {}};
            for (int r = 0; r < std::max(1, entries_[i]->settings().repetitions); ++r)
                g.order.push_back({0, std::size_t(r)});
            groups_.push_back(std::move(g));
        }
    measured_.assign(groups_.size(), 0);
    group_done_.assign(groups_.size(), false);
    ran_.assign(entries_.size(), false);
    interrupted_.assign(entries_.size(), false);
    held_.assign(entries_.size(), false);
    profile_case_.assign(entries_.size(), SIZE_MAX);
}

void EntryLoop::fail_active(const std::string &reason) {
    if (active_ == SIZE_MAX) return;
    for (std::size_t i : groups_[active_].members) {
        entries_[i]->result.status = CaseStatus::failed;
        entries_[i]->result.reason = reason;
    }
    group_done(active_);
}

// Skips known before anything runs: the backend is missing, unusable here,
// failed its probe, refuses the op case, or the entry would not fit: in host
// memory, or on a GPU backend in its device's free memory (as probed).
std::optional<MeasureFailure> EntryLoop::skip_before_running(std::size_t i) const {
    const Entry &e = *entries_[i];
    if (auto cannot = setup_.host.cannot_run(e)) return cannot;
    if (auto why = memory_skip_reason(e.memory_need(setup_.job_defaults.verify), available_memory(setup_.options.mem_limit)))
        return MeasureFailure{CaseStatus::skipped, *why};
    if (auto device = gpu_memory_.find(e.backend()); device != gpu_memory_.end())
        if (const std::optional<DeviceMemoryNeed> need = e.device_memory_need())
            if (auto why = device_memory_skip_reason(*need, device->second))
                return MeasureFailure{CaseStatus::skipped, *why};
    return std::nullopt;
}

// A group none of whose entries can run alone is skipped whole: logged at
// once, listed under "Not measured" after the run. True: skipped.
bool EntryLoop::skip_group(std::size_t g) {
    for (std::size_t i : groups_[g].members)
        if (auto skip = skip_before_running(i)) {
            entries_[i]->result.status = skip->status;
            entries_[i]->result.reason = skip->reason;
            stop_group(g, i);
            for (std::size_t j : groups_[g].members) {
                ran_[j] = true;
                not_measured_.push_back(j);
            }
            group_done(g, /*shown=*/false);
            return true;
        }
    return false;
}

// Entry `failed` stopped: the rest of its group is not measured further.
void EntryLoop::stop_group(std::size_t g, std::size_t failed) {
    const CaseResult &f = entries_[failed]->result;
    for (std::size_t j : groups_[g].members)
        if (j != failed && entries_[j]->result.status == CaseStatus::passed) {
            entries_[j]->result.status = f.status;
            entries_[j]->result.reason =
                fmt::format("stopped with {} ({}: {})", f.backend, case_status_name(f.status), f.reason);
        }
}

bool EntryLoop::group_failed(std::size_t g) const {
    return std::any_of(groups_[g].members.begin(), groups_[g].members.end(),
                       [&](std::size_t i) { return entries_[i]->result.status != CaseStatus::passed; });
}

void EntryLoop::set_interrupted(std::size_t g) {
    for (std::size_t i : groups_[g].members) interrupted_[i] = true;
}

// Which groups run: those the filter keeps one entry of and a resumed run's
// journal does not hold whole. Those that cannot run are logged as skipped
// at once; the rest go to Google Benchmark a pass at a time.
void EntryLoop::run() {
    const std::optional<NameFilter> filter = NameFilter::from_args(setup_.options.benchmark_args);
    for (std::size_t g = 0; g < groups_.size(); ++g) {
        const std::vector<std::size_t> &members = groups_[g].members;
        if (filter && std::none_of(members.begin(), members.end(),
                                   [&](std::size_t i) { return filter->matches_entry(entries_[i]->name()); }))
            continue;
        for (std::size_t i : members) wanted_.push_back(entries_[i]->name());
        // Finished before the interruption (--resume).
        if (std::all_of(members.begin(), members.end(),
                        [&](std::size_t i) { return setup_.log.has_case(entries_[i]->name()); }))
            continue;
        planned_.push_back(g);
    }
    for (const auto &[backend, context] : setup_.host.facts(setup_.peaks).backends)
        if (auto device = gpu_device_memory(context)) gpu_memory_[backend] = *device;
    console_ = std::make_unique<RunConsole>(setup_.reference, isatty(STDOUT_FILENO));
    std::vector<std::size_t> to_measure;
    for (std::size_t g : planned_) {
        // Interrupted while the backends were probed: nothing is recorded, so --resume runs every entry.
        if (interrupt_requested()) return;
        if (!skip_group(g)) to_measure.push_back(g);
    }
    make_eta(to_measure);
    std::vector<std::string> args = gbench_argv(setup_.options.benchmark_args);
    std::vector<char *> argv;
    for (auto &a : args) argv.push_back(a.data());
    int argc = static_cast<int>(argv.size());
    benchmark::Initialize(&argc, argv.data());
    if (benchmark::ReportUnrecognizedArguments(argc, argv.data()))
        throw std::runtime_error("unrecognised Google Benchmark arguments (see above)");
    setup_.log.set_gb_context(benchmark_context());
    context_ = setup_.log.context();
    run_facts_ = setup_.host.facts(setup_.peaks);
    const std::size_t per_pass = interleaved(setup_.options.benchmark_args) ? to_measure.size() : kEntriesPerPass;
    for (std::size_t from = 0; from < to_measure.size() && !interrupt_requested(); from += per_pass) {
        const auto to = std::min(to_measure.size(), from + per_pass);
        run_pass(std::vector<std::size_t>(to_measure.begin() + long(from), to_measure.begin() + long(to)));
    }
    finish_active();
    benchmark::Shutdown();
    if (setup_.options.own_console) report_after_run();
}

// The estimate's plan: a group's steps run like its first entry's
// repetitions, in as many processes as its entries use.
void EntryLoop::make_eta(const std::vector<std::size_t> &to_measure) {
    std::vector<EntryPlan> plan;
    for (std::size_t g : to_measure) {
        const Entry &e = *entries_[groups_[g].members.front()];
        const MeasureSettings &m = e.settings();
        eta_index_[g] = plan.size();
        const std::string kind = e.op_case() ? eta_kind(e.name()) : ""; // a workload phase: by its backend
        const int processes = setup_.host.processes_of_case(m) * int(groups_[g].members.size());
        plan.push_back({e.backend(), int(groups_[g].order.size()), m.warmup, m.min_samples, m.min_time, m.max_time,
                        e.call_work().flops, kind, m.starved_retries, processes, e.call_work().bytes});
    }
    eta_ = std::make_unique<RunEta>(std::move(plan));
}

// One Google Benchmark pass over `pass`: one benchmark per group (named as
// its first entry), whose iterations are the steps of its order.
void EntryLoop::run_pass(const std::vector<std::size_t> &pass) {
    for (std::size_t g : pass) {
        auto *b = benchmark::RegisterBenchmark(entries_[groups_[g].members.front()]->name().c_str(),
                                               [this, g](benchmark::State &st) { bench(st, g); });
        b->UseManualTime();
        b->Iterations(1);
        b->Repetitions(int(groups_[g].order.size()));
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

// Step `measured_[g]` of group g's order: activated first when it is not
// the group the host holds; finished and logged after its last step or a failure.
void EntryLoop::bench(benchmark::State &state, std::size_t g) {
    const std::size_t k = measured_[g]++;
    const bool last = k + 1 >= groups_[g].order.size();
    if (interrupt_requested() || interrupted_[groups_[g].members.front()]) {
        // Google Benchmark cannot be stopped: the rest pass through at once
        // and stay out of the result set (--resume runs them).
        set_interrupted(g);
        if (active_ == g) finish_active();
        state.SkipWithError("interrupted");
        for (auto _ : state) {}
        return;
    }
    activate(g);
    if (group_failed(g)) {
        // Why the group ends without a time: what Google Benchmark is told.
        const CaseResult &r = entries_[groups_[g].members.front()]->result;
        const std::string why = std::string(case_status_name(r.status)) + ": " + r.reason;
        state.SkipWithError(why.c_str());
        for (auto _ : state) {} // Google Benchmark's loop runs once per call, here empty
    } else {
        (void)measure_step(state, g, k);
    }
    if (last || group_failed(g)) {
        if (active_ == g) finish_active();
        if (!interrupted_[groups_[g].members.front()]) group_done(g);
    }
}

// One repetition of the step's entry, onto its records. False: it failed
// (and stopped its group).
bool EntryLoop::measure_step(benchmark::State &state, std::size_t g, std::size_t k) {
    const GroupStep step = groups_[g].order[k];
    const std::size_t i = groups_[g].members[step.member];
    CaseResult &r = entries_[i]->result;
    for (auto _ : state) {
        try {
            // The sampling's share of the run's time (the summary line),
            // seen from here: a worker's reply is a few microseconds more;
            // a move to a further worker process before it is not sampling.
            const auto t0 = std::chrono::steady_clock::now();
            RepetitionRecord rec = setup_.host.measure(*entries_[i], step.slot);
            const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
            r.measure_seconds += std::max(0.0, took - rec.process_start_seconds);
            r.process_start_seconds += rec.process_start_seconds;
            state.SetIterationTime(rec.summary.median);
            r.repetitions.push_back(std::move(rec));
        } catch (const MeasureFailure &f) {
            r.status = f.status;
            r.reason = f.reason;
            held_[i] = false; // a failed step releases the case in its host
            if (setup_.host.interrupted()) set_interrupted(g);
            stop_group(g, i);
            const std::string why =
                interrupted_[i] ? std::string("interrupted") : std::string(case_status_name(f.status)) + ": " + f.reason;
            state.SkipWithError(why.c_str());
            return false;
        }
    }
    if (setup_.observer) setup_.observer->step_measured(g, k);
    refresh_progress(g);
    return true;
}

// The recipe's untimed steps, once per group before its first step (and
// again when interleaved repetitions come back to it): in its backend's
// worker, or here. A member that fails stops the rest.
void EntryLoop::activate(std::size_t g) {
    if (active_ == g) return;
    finish_active();
    if (group_failed(g)) return; // failed in an earlier repetition
    const std::vector<std::size_t> &members = groups_[g].members;
    for (std::size_t i : members) ran_[i] = true;
    show_progress(g);
    active_ = g;
    if (setup_.profile) profile_mark_ = setup_.profile->cases().size();
    for (std::size_t i : members) {
        Entry &e = *entries_[i];
        const Activation a = setup_.host.activate(e, e.job(setup_.job_defaults));
        if (setup_.host.interrupted()) set_interrupted(g);
        e.activated(a);
        if (!a.reference_problem.empty()) std::cerr << "opbench: " << a.reference_problem << "\n";
        say_launch_fallback(e.result.backend, a.preparation.launch_fallback);
        if (a.status != CaseStatus::passed) {
            stop_group(g, i);
            break;
        }
        held_[i] = true;
    }
    if (std::none_of(members.begin(), members.end(), [&](std::size_t i) { return held_[i]; })) {
        active_ = SIZE_MAX; // nothing held
        take_profiled_case(members.front());
    }
}

// Launch graph measured as batch (the plugin has no graph, or its capture
// failed): said once per backend and reason, as the entry records it.
void EntryLoop::say_launch_fallback(const std::string &backend, const std::string &why) {
    if (why.empty() || !launch_fallbacks_said_.insert(backend + '\n' + why).second) return;
    const std::string line = fmt::format("opbench: {}: launch graph measured as batch: {}", backend, why);
    std::cerr << wrap_words(line, 2, 0);
}

// The case the profile closed since entry i's activation is i's (the last,
// when interleaved repetitions activated it again).
void EntryLoop::take_profiled_case(std::size_t i) {
    if (setup_.profile && setup_.profile->cases().size() > profile_mark_)
        profile_case_[i] = setup_.profile->cases().size() - 1;
}

// Memory figures (and a workload's tail) and release of every entry the
// host holds, then each one judged.
void EntryLoop::finish_active() {
    if (active_ == SIZE_MAX) return;
    const std::size_t g = active_;
    active_ = SIZE_MAX;
    for (std::size_t i : groups_[g].members) {
        if (!held_[i]) continue;
        held_[i] = false;
        Entry &e = *entries_[i];
        try {
            e.finished(setup_.host.finish(e));
        } catch (const MeasureFailure &f) {
            if (e.result.status == CaseStatus::passed) {
                e.result.status = f.status;
                e.result.reason = f.reason;
                stop_group(g, i);
            }
            if (setup_.host.interrupted()) set_interrupted(g);
        }
    }
    take_profiled_case(groups_[g].members.front());
    for (std::size_t i : groups_[g].members) judge_finished(i);
}

// A finished entry's status when every repetition starved, and its roofline
// at the median of its repetitions' medians.
void EntryLoop::judge_finished(std::size_t i) {
    Entry &e = *entries_[i];
    if (e.result.status != CaseStatus::passed) return;
    // Every repetition starved even after its re-measures: no time of the op.
    if (auto why = starved_reason(e.result.repetitions)) {
        e.result.status = CaseStatus::starved;
        e.result.reason = *why;
        return;
    }
    if (auto median = e.median_seconds()) e.result.roofline = entry_roofline(e, *median, run_facts_);
}

// A finished (or skipped) group: its owner hears of it, then each entry goes to the log.
void EntryLoop::group_done(std::size_t g, bool shown) {
    if (group_done_[g]) return;
    group_done_[g] = true;
    if (setup_.observer) setup_.observer->group_finished(g);
    for (std::size_t i : groups_[g].members) entry_done(i, shown);
    if (setup_.observer) setup_.observer->group_logged(g);
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
        attach_case_timeline(records, setup_.profile->cases()[p]); // --profile or --trace (issue 42)
    }
    if (setup_.observer) setup_.observer->add_to_records(i, records);
    setup_.log.add_case(i, e.name(), std::string(case_status_name(e.result.status)), std::move(records));
    if (!shown || !setup_.options.own_console) return;
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
        if (other->op_case() == c && other->backend() == setup_.reference) return other.get();
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

// The calls a try sampled, the mean over its repetitions (the last try of
// each: a starved one measured again keeps its last).
double calls_per_try(const CaseResult &r) {
    double calls = 0;
    for (const auto &rec : r.repetitions) calls += double(rec.summary.n) * std::max(1, rec.calls_per_sample);
    return r.repetitions.empty() ? 0.0 : calls / double(r.repetitions.size());
}

// Its repetitions' samplings, re-measures of starved ones included.
int tries_of(const CaseResult &r) {
    int tries = 0;
    for (const auto &rec : r.repetitions) tries += 1 + rec.remeasured;
    return tries;
}

} // namespace

// "[3/12  4s elapsed, ~12s left]  name": counts the groups this run measures.
void EntryLoop::show_progress(std::size_t g) {
    if (!setup_.options.progress || !isatty(STDERR_FILENO)) return;
    print_progress_line(g, eta_text(g), "");
}

// A long group's line again after one of its steps (not its last), at most
// every kRefreshSeconds: the time left from its own pace so far, where the
// line at its start had only its neighbours' to go on.
void EntryLoop::refresh_progress(std::size_t g) {
    constexpr double kRefreshSeconds = 2;
    if (!setup_.options.progress || !isatty(STDERR_FILENO) || eta_last_ != g) return;
    const auto now = std::chrono::steady_clock::now();
    if (std::chrono::duration<double>(now - progress_printed_).count() < kRefreshSeconds) return;
    const int done = int(measured_[g]), planned = int(groups_[g].order.size());
    if (done >= planned) return;
    const double so_far = std::chrono::duration<double>(now - eta_last_start_).count();
    eta_->in_progress(eta_index_.at(g), took_so_far(g, so_far), done);
    const double left = seconds_left(now);
    print_progress_line(g, left < 0 ? "?" : fmt::format("{:.0f}s", left),
                        fmt::format("  (repetition {} of {} done)", done, planned));
}

void EntryLoop::print_progress_line(std::size_t g, const std::string &eta, const std::string &suffix) {
    const auto at = std::find(planned_.begin(), planned_.end(), g) - planned_.begin();
    progress_printed_ = std::chrono::steady_clock::now();
    const double elapsed = std::chrono::duration<double>(progress_printed_ - started_).count();
    const std::string counter =
        fmt::format("[{}/{}  {:.0f}s elapsed, ~{} left]  ", at + 1, planned_.size(), elapsed, eta);
    // A long name is cut in the middle, so the line never wraps on a 100-column terminal.
    const std::size_t used = display_width(counter) + display_width(suffix);
    const std::size_t room = kTerminalColumns - std::min(kTerminalColumns - 20, used);
    const std::string &label =
        groups_[g].label.empty() ? entries_[groups_[g].members.front()]->name() : groups_[g].label;
    std::cerr << "\x1b[2m" << counter << shorten_middle(label, room) << suffix << "\x1b[0m\n";
}

// What group g's entries took: `seconds` in all, their sampling and tries,
// and a call's time as its first entry ran it.
EntryTook EntryLoop::took_so_far(std::size_t g, double seconds) const {
    const CaseResult &first = entries_[groups_[g].members.front()]->result;
    EntryTook took{seconds, 0, 0, call_seconds_as_run(first), calls_per_try(first)};
    for (std::size_t i : groups_[g].members) {
        // The estimate (run_eta.hpp) counts a further process's preparation within the repetitions' time.
        took.measure_seconds += entries_[i]->result.measure_seconds + entries_[i]->result.process_start_seconds;
        took.tries += tries_of(entries_[i]->result);
    }
    return took;
}

// The time left as the progress line shows it ("12s", "?" before a group
// finished), after telling the estimate how long the group before `g` took.
std::string EntryLoop::eta_text(std::size_t g) {
    const auto now = std::chrono::steady_clock::now();
    if (eta_last_ != SIZE_MAX && eta_last_ != g)
        eta_->finished(eta_index_.at(eta_last_),
                       took_so_far(eta_last_, std::chrono::duration<double>(now - eta_last_start_).count()));
    eta_last_ = g;
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
        summary.tables.push_back(backend_summary(ran, setup_.reference));
        std::cout << "\n" << write_console(summary);
    }
}

} // namespace opbench
