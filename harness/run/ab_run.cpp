#include "run/ab_run.hpp"

#include "machine/bottleneck.hpp"
#include "machine/machine.hpp"
#include "plugin/plugin_variant.hpp"
#include "run/abba_schedule.hpp"
#include "run/gb_context.hpp"
#include "run/gbench_args.hpp"
#include "run/interrupt.hpp"
#include "run/paired_console.hpp"
#include "run/paired_set.hpp"
#include "run/paired_sides.hpp"
#include "run/result_set.hpp"
#include "run/run_log.hpp"
#include "run/runner.hpp"
#include "run/set_file.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <iostream>
#include <set>

namespace opbench {

namespace {

// The benchmark name without its backend part ("/be:naive@base"): the case's label.
std::string label_of(const std::string &benchmark_name, const std::string &backend) {
    std::string label = benchmark_name;
    const std::string part = "/be:" + backend;
    if (auto at = label.find(part); at != std::string::npos) label.erase(at, part.size());
    return label;
}

// A repetition lasts about half_seconds: the noise target never stops it
// early (1 = 100%), so every half of a block samples the same length of time.
MeasureSettings block_settings(MeasureSettings s, const PairedRunOptions &o) {
    s.min_time = o.half_seconds;
    s.max_time = std::max(1e-3, 2 * o.half_seconds);
    s.min_samples = 5; // a slow case (400 us a call) still takes a median of 5 in each repetition
    s.noise = 1;
    // Each pool's share, spread over its worker processes (case_host.hpp).
    s.repetitions = (2 * o.pairs + kPairedPools - 1) / kPairedPools;
    return s;
}

// Runs the cases' entries, base then new per case, in the ABBA schedule;
// each case's records go to the run log, whose set set_file.hpp writes.
class AbRun {
public:
    AbRun(const Suite &suite, const PluginSet &plugins, const PairedRunOptions &options)
        : suite_(suite), plugins_(plugins), o_(options), cases_(paired_cases(suite, options)),
          entries_(planned_entries(cases_, {}, options.reference)), base_(options.base), new_(options.next),
          log_(nlohmann::json::object(), std::nullopt) {}

    PairedSummary run();

private:
    void open();
    PairedCaseResult measure_case(std::size_t ci);
    bool activate(std::size_t ci);
    PairedTimes measure_blocks(Entry &base, Entry &next);
    void judge(PairedCaseResult &out, const PairedTimes &times, const Case &c);
    void record(std::size_t ci, const PairedTimes &times);
    void add_roofline(Entry &entry) const;

    const Suite &suite_;
    const PluginSet &plugins_;
    const PairedRunOptions &o_;
    std::vector<Case> cases_;
    std::vector<std::unique_ptr<Entry>> entries_; // base then new, per case
    PairedSide base_, new_;
    RunLog log_; // no journal: `ab` has no --resume
    CanarySeries canary_;
    CachedMachinePeaks machine_;
    PairedSide::Probes probes_;
    double timer_overhead_ = measure_timer_overhead();
};

// Both sides' pools and probes, then the set's context as `run` records it
// (result_set.hpp), with what only a paired run has.
void AbRun::open() {
    machine_ = load_or_measure();
    if (!machine_.warning.empty()) std::cerr << "opbench: " << machine_.warning << "\n";
    std::vector<opb_op_desc> descs;
    for (const Case &c : cases_) descs.push_back(c.desc);
    base_.open(plugins_, o_.reference, descs, probes_);
    new_.open(plugins_, o_.reference, descs, probes_);
    RunContext ctx{&suite_,     &cases_,         &probes_.contexts, &probes_.unavailable,   o_.reference,
                   {},          timer_overhead_, &machine_,         probes_.call_overheads, o_.cpus,
                   o_.warnings, nullptr,         std::nullopt};
    nlohmann::json ob = run_context_json(ctx);
    ob["measurement"]["isolation"] = "process";
    if (o_.insecure_plugins_allowed) ob["insecure_plugins_allowed"] = *o_.insecure_plugins_allowed;
    ob["paired"] = paired_context(o_, plugins_);
    log_.set_gb_context(benchmark_context());
    log_.set_opbench_context(std::move(ob));
}

// Both sides activated (the base first; the new side only when it passed).
bool AbRun::activate(std::size_t ci) {
    Entry &base = *entries_[2 * ci], &next = *entries_[2 * ci + 1];
    const JobDefaults defaults{timer_overhead_, o_.verify, {}, {}};
    auto job_of = [&](const Entry &e) {
        CaseJob job = e.job(defaults);
        job.settings = block_settings(job.settings, o_);
        return job;
    };
    bool ok_base = false, ok_new = false;
    if (auto cannot = base_.cannot_run(ci))
        base.result.status = cannot->status, base.result.reason = cannot->reason;
    else
        ok_base = base_.activate(base, job_of(base));
    if (!ok_base) {
        next.result.status = base.result.status;
        next.result.reason =
            fmt::format("not run: the base side ({}) did not: {}", base_.backend(), base.result.reason);
        return false;
    }
    if (auto cannot = new_.cannot_run(ci))
        next.result.status = cannot->status, next.result.reason = cannot->reason;
    else
        ok_new = new_.activate(next, job_of(next));
    if (!ok_new && next.result.reason.empty()) next.result.reason = "not run: the base side failed";
    return ok_new;
}

// The case's repetitions in abba_schedule's order, a canary reading after
// each block; the pairs from the records they left.
PairedTimes AbRun::measure_blocks(Entry &base, Entry &next) {
    const std::vector<AbbaStep> steps = abba_schedule(o_.pairs, kPairedPools);
    std::size_t pool = 0;
    try {
        for (std::size_t k = 0; k < steps.size(); ++k) {
            if (k % 4 == 0 && interrupt_requested()) break; // a whole block or none
            pool = steps[k].pool;
            if (steps[k].side == PairSide::base)
                base_.measure(base, pool);
            else
                new_.measure(next, pool);
            if (k % 4 == 3) (void)canary_.read();
        }
    } catch (const MeasureFailure &f) {
        for (auto [side, entry] : {std::pair{&base_, &base}, std::pair{&new_, &next}})
            if (side->active(pool)) entry->result.status = f.status, entry->result.reason = f.reason;
    }
    return paired_times(base.result.repetitions, next.result.repetitions);
}

// The case's status from its sides' and its blocks', and its verdict.
void AbRun::judge(PairedCaseResult &out, const PairedTimes &times, const Case &c) {
    out.base_times = times.base_times;
    out.new_times = times.new_times;
    if (out.status == "passed" && times.starved_blocks > 0 && out.base_times.empty()) {
        out.status = "starved";
        out.reason = fmt::format("every one of its {} blocks had a starved repetition (threads waited for a CPU "
                                 "after {} more tries): no pair is a time of the builds. Use --threads 1, --cpus "
                                 "with idle CPUs, or a quieter machine",
                                 times.starved_blocks, c.settings.starved_retries);
    }
    if (out.status != "passed") {
        out.base_times.clear();
        out.new_times.clear();
        return;
    }
    if (times.blocks() < std::size_t(o_.pairs))
        out.status = "interrupted"; // mid-case: not recorded
    else
        out.verdict = paired_verdict(out.base_times, out.new_times, o_.verdict);
}

PairedCaseResult AbRun::measure_case(std::size_t ci) {
    Entry &base = *entries_[2 * ci], &next = *entries_[2 * ci + 1];
    PairedCaseResult out;
    out.label = label_of(base.name(), base_.backend());
    const PairedTimes times = activate(ci) ? measure_blocks(base, next) : PairedTimes{};
    base_.finish(base);
    new_.finish(next);
    for (auto [side, entry] : {std::pair{&base_, &base}, std::pair{&new_, &next}})
        if (entry->result.status != CaseStatus::passed) {
            out.status = std::string(case_status_name(entry->result.status));
            out.reason = side->backend() + ": " + entry->result.reason;
            break;
        }
    judge(out, times, cases_[ci]);
    if (out.status == "starved")
        for (Entry *e : {&base, &next}) e->result.status = CaseStatus::starved, e->result.reason = out.reason;
    if (out.status == "passed")
        for (Entry *e : {&base, &next}) add_roofline(*e);
    if (out.status != "interrupted") record(ci, out.status == "passed" ? times : PairedTimes{});
    return out;
}

// The roofline at the entry's median, as `run` places its entries
// (run_backends.hpp): its backend's context and call overhead, this machine's peaks.
void AbRun::add_roofline(Entry &entry) const {
    const std::optional<double> median = entry.median_seconds();
    if (!median) return;
    const CallWork w = entry.call_work();
    const auto context = probes_.contexts.find(entry.backend());
    const auto overhead = probes_.call_overheads.find(entry.backend());
    entry.result.roofline =
        roofline_for(w.flops, w.bytes, *median, context != probes_.contexts.end() ? context->second : nlohmann::json(),
                     w.threads, machine_.peaks, overhead != probes_.call_overheads.end() ? overhead->second : 0.0,
                     peak_kind(w.dtype), entry.settings().cache == CacheState::warm ? w.bytes : 0);
}

// Both sides' entries into the log, as the entry loop logs `run`'s.
void AbRun::record(std::size_t ci, const PairedTimes &times) {
    const nlohmann::json context = log_.context();
    const RunFacts facts{probes_.contexts, probes_.call_overheads, machine_.peaks};
    Entry &base = *entries_[2 * ci], &next = *entries_[2 * ci + 1];
    log_.add_case(2 * ci, base.name(), std::string(case_status_name(base.result.status)),
                  paired_entry_records(base, context, facts, times, PairSide::base, next.name()));
    log_.add_case(2 * ci + 1, next.name(), std::string(case_status_name(next.result.status)),
                  paired_entry_records(next, context, facts, times, PairSide::next, base.name()));
}

PairedSummary AbRun::run() {
    const auto started = std::chrono::steady_clock::now();
    PairedSummary summary;
    open();
    on_first_interrupt([this] { base_.interrupt(), new_.interrupt(); });
    (void)canary_.read(); // the machine's speed before the first pair
    for (std::size_t ci = 0; ci < cases_.size() && !interrupt_requested(); ++ci) {
        PairedCaseResult r = measure_case(ci);
        if (r.status == "interrupted") break;
        if (o_.progress) std::cout << paired_console_row(r) << std::flush;
        summary.cases.push_back(std::move(r));
    }
    on_first_interrupt(nullptr);
    summary.complete = !interrupt_requested();
    summary.canary_drift = canary_drift(canary_.readings());
    summary.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    if (!o_.out_path.empty()) {
        nlohmann::json ob = log_.context()["opbench"];
        ob["canary"] = canary_json(canary_.readings());
        log_.set_opbench_context(std::move(ob));
        write_set_file(log_, o_.out_path, "json", summary.complete);
        summary.out_path = o_.out_path;
    }
    return summary;
}

// The suite's cases that list the pair's backend or one of its instances.
std::vector<Case> cases_of_backend(const Suite &suite, const PairedRunOptions &o) {
    const std::string backend = variant_backend(o.base);
    std::vector<Case> chosen;
    std::set<std::string> listed;
    for (const Case &c : suite.cases) {
        listed.insert(c.backends.begin(), c.backends.end());
        if (std::any_of(c.backends.begin(), c.backends.end(),
                        [&](const std::string &b) { return b == backend || b == o.base || b == o.next; }))
            chosen.push_back(c);
    }
    if (chosen.empty())
        throw SuiteError(SourceLocation{suite.path, 0, 0},
                         fmt::format("no [[case]] lists the backend '{}' (nor {} or {}):\n  `ab` has nothing to "
                                     "run; the cases list: {}",
                                     backend, o.base, o.next,
                                     listed.empty() ? "none" : fmt::format("{}", fmt::join(listed, ", "))));
    return chosen;
}

} // namespace

std::vector<Case> paired_cases(const Suite &suite, const PairedRunOptions &o) {
    Suite chosen = suite;
    chosen.cases = cases_of_backend(suite, o);
    std::vector<Case> cases = effective_cases(chosen, CommandLineChanges{{}, {o.base, o.next}});
    if (o.benchmark_filter.empty()) return cases;
    const std::optional<NameFilter> filter = NameFilter::from_args({"--benchmark_filter=" + o.benchmark_filter});
    const auto entries = planned_entries(cases, {}, o.reference); // base then new, per case
    std::vector<Case> kept;
    for (std::size_t ci = 0; ci < cases.size(); ++ci)
        if (filter->matches_entry(entries[2 * ci]->name()) || filter->matches_entry(entries[2 * ci + 1]->name()))
            kept.push_back(cases[ci]);
    if (kept.empty())
        throw SuiteError(SourceLocation{suite.path, 0, 0},
                         fmt::format("--benchmark_filter={} matches none of the {} cases on {} and {}\n  (an "
                                     "extended regex searched in each entry's name), e.g. {}",
                                     o.benchmark_filter, cases.size(), o.base, o.next, entries[0]->name()));
    return kept;
}

std::size_t PairedSummary::count(const std::string &verdict) const {
    return std::count_if(cases.begin(), cases.end(), [&](const PairedCaseResult &c) {
        return c.status == "passed" && c.verdict.verdict == verdict;
    });
}

std::size_t PairedSummary::failed() const {
    return std::count_if(cases.begin(), cases.end(), [](const PairedCaseResult &c) { return c.status != "passed"; });
}

PairedSummary run_paired(const Suite &suite, const PluginSet &plugins, const PairedRunOptions &options) {
    AbRun run(suite, plugins, options);
    return run.run();
}

} // namespace opbench
