#include "run/ab_run.hpp"

#include "machine/machine.hpp"
#include "measure/canary.hpp"
#include "plugin/plugin_variant.hpp"
#include "run/abba_schedule.hpp"
#include "run/entry_loop.hpp"
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
#include "writers/text_wrap.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <iostream>
#include <map>
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

// The cases' entries (base then new per case) on the one entry loop: each
// case a group of its two sides, measured in abba_schedule's order in the
// sides' pools (PairedHosts). As the loop goes, this hears of it: a canary
// reading after each block, the pairs and verdict of each finished case
// (its entries' statuses with them), each iteration's pair on its record,
// and the case's console row.
class AbRun final : public GroupObserver {
public:
    AbRun(const Suite &suite, const PluginSet &plugins, const PairedRunOptions &options)
        : suite_(suite), plugins_(plugins), o_(options), cases_(block_cases(paired_cases(suite, options), options)),
          entries_(planned_entries(cases_, {}, options.reference)), hosts_(options.base, options.next) {
        for (std::size_t i = 0; i < entries_.size(); ++i) entries_[i]->set_probe_place(i / 2); // its case's index
        times_.resize(cases_.size());
    }
    ~AbRun() {
        // The watcher thread must not reach this run once it is gone.
        on_first_interrupt(nullptr);
        on_second_interrupt(nullptr);
        set_interrupt_outcome("");
    }

    PairedSummary run();

    void step_measured(std::size_t, std::size_t k) override {
        if (k % 4 == 3) (void)canary_.read(); // after each block
    }
    void group_finished(std::size_t ci) override;
    void add_to_records(std::size_t i, std::vector<nlohmann::json> &records) override {
        const std::size_t other = i % 2 == 0 ? i + 1 : i - 1;
        add_pairs(records, times_[i / 2], i % 2 == 0 ? PairSide::base : PairSide::next, entries_[other]->name());
    }
    void group_logged(std::size_t) override {
        if (o_.progress) std::cout << paired_console_row(results_.back()) << std::flush;
    }

private:
    static std::vector<Case> block_cases(std::vector<Case> cases, const PairedRunOptions &o);
    void open();
    void open_log();
    void keep_journaled_cases();
    [[nodiscard]] PairedCaseResult journaled_result(std::size_t ci) const;
    void handle_interrupts();
    [[nodiscard]] bool every_case_logged(const EntryLoop &loop) const;
    std::vector<EntryGroup> groups() const;

    const Suite &suite_;
    const PluginSet &plugins_;
    const PairedRunOptions &o_;
    std::vector<Case> cases_;
    std::vector<std::unique_ptr<Entry>> entries_; // base then new, per case
    PairedHosts hosts_;
    std::unique_ptr<RunLog> log_; // mirrored into the journal when there is a result set
    std::size_t resumed_ = 0;     // cases taken from the journal (--resume)
    CanarySeries canary_;
    CachedMachinePeaks machine_;
    PairedSide::Probes probes_;
    double timer_overhead_ = measure_timer_overhead();
    std::vector<PairedTimes> times_;         // per case, once it finished
    std::vector<double> sm_clocks_mhz_;      // every repetition's SM clock this run measured (<= 0: none)
    std::vector<PairedCaseResult> results_; // the cases finished, in order
};

// A repetition lasts about half_seconds: the noise target never stops it
// early (1 = 100%), so every half of a block samples the same length of time.
std::vector<Case> AbRun::block_cases(std::vector<Case> cases, const PairedRunOptions &o) {
    for (Case &c : cases) {
        MeasureSettings &s = c.settings;
        s.min_time = o.half_seconds;
        s.max_time = std::max(1e-3, 2 * o.half_seconds);
        s.min_samples = 5; // a slow case (400 us a call) still takes a median of 5 in each repetition
        s.noise = 1;
        s.timeout = o.case_timeout; // 0: case_host.hpp's default from the repetitions and max_time
        // Each pool's share, spread over its worker processes (case_host.hpp).
        s.repetitions = (2 * o.pairs + kPairedPools - 1) / kPairedPools;
    }
    return cases;
}

// Both sides' pools and probes, then the set's context as `run` records it
// (result_set.hpp), with what only a paired run has.
void AbRun::open() {
    open_log();
    machine_ = load_or_measure();
    if (const std::string line = peaks_origin_line(machine_); !line.empty())
        std::cerr << wrap_words(line, 4, 0);
    std::vector<opb_op_desc> descs;
    for (const Case &c : cases_) descs.push_back(c.desc);
    hosts_.open(plugins_, o_.reference, descs, probes_, o_.case_timeout > 0 ? o_.case_timeout : 60.0);
    RunContext ctx{&suite_,     &cases_,         &probes_.contexts, &probes_.unavailable,   o_.reference,
                   {},          timer_overhead_, &machine_,         probes_.call_overheads, o_.cpus,
                   o_.warnings, nullptr,         std::nullopt};
    nlohmann::json ob = run_context_json(ctx);
    ob["measurement"]["isolation"] = "process";
    if (o_.insecure_plugins_allowed) ob["insecure_plugins_allowed"] = *o_.insecure_plugins_allowed;
    ob["paired"] = paired_context(o_, plugins_);
    if (!o_.code_under_test.is_null()) ob["code_under_test"] = o_.code_under_test;
    log_->set_gb_context(benchmark_context());
    log_->set_opbench_context(std::move(ob));
}

// The run log: with a result set, a journal beside it as `run` keeps one
// (header "command": "ab", so `ab --resume` is the command that finishes
// it), or the one a resumed run continues, whose finished cases are kept.
void AbRun::open_log() {
    if (o_.out_path.empty()) {
        log_ = std::make_unique<RunLog>(nlohmann::json::object(), std::nullopt);
        return;
    }
    // Resumed, the suite's SHA-256 must be the interrupted run's (JournalError).
    log_ = open_run_log(suite_, LogOptions{o_.out_path, o_.command_args, o_.resume_journal, "ab"});
    if (!o_.resume_journal.empty()) keep_journaled_cases();
}

// Resumed: a case counts as finished when the journal holds both its sides
// (each valid and of this run); one side alone (killed between its two
// lines) is forgotten and the case measured again, so that a case's pairs
// always come from one measurement. The finished ones are judged again
// from the pairs they recorded: the same inputs, the same verdict.
void AbRun::keep_journaled_cases() {
    std::vector<std::string> names, whole;
    for (const auto &e : entries_) names.push_back(e->name());
    for (const auto &why : log_->forget_unplanned(names))
        std::cerr << fmt::format("opbench: {}: journal line dropped ({}); its case is measured again\n",
                                 o_.resume_journal, why);
    for (std::size_t ci = 0; ci < cases_.size(); ++ci) {
        const std::string &base = entries_[2 * ci]->name(), &next = entries_[2 * ci + 1]->name();
        if (log_->has_case(base) == log_->has_case(next)) {
            whole.insert(whole.end(), {base, next});
            continue;
        }
        std::cerr << fmt::format("opbench: {}: only one side of {} is journaled (the run stopped between its "
                                 "two lines); the case is measured again\n",
                                 o_.resume_journal, label_of(base, o_.base));
    }
    (void)log_->forget_unplanned(whole); // the lone sides just named
    for (std::size_t ci = 0; ci < cases_.size(); ++ci)
        if (log_->has_case(entries_[2 * ci]->name())) results_.push_back(journaled_result(ci));
    resumed_ = results_.size();
}

// A journaled case as group_finished judged it: its status (the first side
// that did not pass, with the reason its entry carries), else its pairs as
// the base side's entries recorded them, and the verdict on them.
PairedCaseResult AbRun::journaled_result(std::size_t ci) const {
    PairedCaseResult out;
    out.label = label_of(entries_[2 * ci]->name(), o_.base);
    const auto base = log_->logged_case(entries_[2 * ci]->name());
    for (std::size_t i : {2 * ci, 2 * ci + 1}) {
        const auto side = log_->logged_case(entries_[i]->name());
        if (side->status == "passed") continue;
        std::string why = side->entries.empty() ? std::string() : side->entries.front().value("error_message", "");
        if (why.starts_with(side->status + ": ")) why.erase(0, side->status.size() + 2);
        out.status = side->status;
        out.reason = entries_[i]->backend() + ": " + why;
        return out;
    }
    std::map<long long, std::pair<double, double>> pairs; // by index: base_time, new_time
    std::map<long long, std::string> left_out;            // by block: "starved" or "throttled"
    for (const auto &r : base->entries) {
        if (const auto p = r.find("pair"); p != r.end() && p->is_object())
            pairs[p->value("index", -1LL)] = {p->value("base_time", 0.0), p->value("new_time", 0.0)};
        if (const auto why = r.find("pair_left_out"); why != r.end() && why->is_string())
            left_out[r.value("repetition_index", 0LL) / 2] = why->get<std::string>();
    }
    const auto blocks_of = [&](const char *why) {
        return std::size_t(
            std::count_if(left_out.begin(), left_out.end(), [&](const auto &b) { return b.second == why; }));
    };
    const BlocksStatus blocks = blocks_status(pairs.size(), blocks_of("starved"), blocks_of("throttled"),
                                              cases_[ci].settings.starved_retries);
    if (blocks.status != "passed") {
        out.status = blocks.status, out.reason = blocks.reason;
        return out;
    }
    for (const auto &[index, times] : pairs) {
        out.base_times.push_back(times.first);
        out.new_times.push_back(times.second);
    }
    out.verdict = paired_verdict(out.base_times, out.new_times, o_.verdict);
    out.left_out = left_out_note(pairs.size() + left_out.size(), blocks_of("starved"), blocks_of("throttled"));
    return out;
}

// First signal: abandon the case in progress (its workers are killed).
// Second: write what finished now, from the log, and exit (interrupt.hpp).
// The first's message names the command that finishes the run.
void AbRun::handle_interrupts() {
    on_first_interrupt([this] { hosts_.interrupt(); });
    if (o_.out_path.empty()) {
        set_interrupt_outcome("nothing is kept (--no-out): the cases that finished are only on the console");
        return;
    }
    set_interrupt_outcome(fmt::format("the result set {} will hold the cases that finished, marked incomplete; "
                                      "`opbench ab --resume {}` finishes it",
                                      o_.out_path, o_.out_path));
    on_second_interrupt([this] { write_set_file(*log_, o_.out_path, "json", false); });
}

// A set is complete only when every case asked for has entries, as `run`'s
// (runner.cpp); else it is written as an interrupted run's, journal kept.
bool AbRun::every_case_logged(const EntryLoop &loop) const {
    const std::vector<std::string> missing = log_->without_entries(loop.wanted());
    if (missing.empty()) return true;
    std::cerr << fmt::format("opbench ab: {} case x side(s) have no entries (first: {}): the set is marked "
                             "incomplete, and `opbench ab --resume` measures them\n",
                             missing.size(), missing.front());
    return false;
}

// Each case's two entries, its repetitions in ABBA blocks, block p in pool p % kPairedPools.
std::vector<EntryGroup> AbRun::groups() const {
    std::vector<EntryGroup> groups;
    for (std::size_t ci = 0; ci < cases_.size(); ++ci) {
        EntryGroup g{{2 * ci, 2 * ci + 1}, {}, label_of(entries_[2 * ci]->name(), o_.base)};
        for (const AbbaStep &step : abba_schedule(o_.pairs, kPairedPools))
            g.order.push_back({step.side == PairSide::base ? 0u : 1u, step.pool});
        groups.push_back(std::move(g));
    }
    return groups;
}

// The case's pairs from its repetition records, its status from its sides'
// (the first that did not pass) and its blocks', and its verdict.
void AbRun::group_finished(std::size_t ci) {
    Entry &base = *entries_[2 * ci], &next = *entries_[2 * ci + 1];
    for (const Entry *e : {&base, &next})
        for (const RepetitionRecord &r : e->result.repetitions) sm_clocks_mhz_.push_back(r.sm_clock_mhz);
    PairedCaseResult out;
    out.label = label_of(base.name(), o_.base);
    for (const Entry *e : {&base, &next})
        if (e->result.status != CaseStatus::passed) {
            out.status = std::string(case_status_name(e->result.status));
            out.reason = e->backend() + ": " + e->result.reason;
            break;
        }
    const PairedTimes times = out.status == "passed" ? paired_times(base.result.repetitions, next.result.repetitions)
                                                     : PairedTimes{};
    // Every block left out (starved or throttled, abba_schedule.hpp): no pair, no verdict.
    if (out.status == "passed") {
        const BlocksStatus blocks = blocks_status(times.base_times.size(), times.starved_blocks,
                                                  times.throttled_blocks, cases_[ci].settings.starved_retries);
        out.status = blocks.status, out.reason = blocks.reason;
        if (out.status == "starved")
            for (Entry *e : {&base, &next}) e->result.status = CaseStatus::starved, e->result.reason = out.reason;
        else // a throttled case's entries keep status passed: each block's `pair_left_out` says why
            times_[ci] = times;
    }
    if (out.status == "passed") {
        out.base_times = times.base_times;
        out.new_times = times.new_times;
        out.verdict = paired_verdict(out.base_times, out.new_times, o_.verdict);
        out.left_out = left_out_note(times.blocks(), times.starved_blocks, times.throttled_blocks);
    }
    results_.push_back(std::move(out));
}

PairedSummary AbRun::run() {
    const auto started = std::chrono::steady_clock::now();
    open();
    handle_interrupts();
    if (o_.progress)
        for (const PairedCaseResult &r : results_) std::cout << paired_console_row(r); // finished before --resume
    (void)canary_.read(); // the machine's speed before the first pair
    const LoopOptions loop_options{{}, o_.progress, false, std::nullopt, /*own_console=*/false};
    EntryLoop loop(entries_, EntryLoop::Setup{hosts_, *log_, loop_options, machine_.peaks,
                                              JobDefaults{timer_overhead_, o_.verify, {}, {}}, o_.reference, nullptr,
                                              groups(), this});
    loop.run();
    on_first_interrupt(nullptr);
    PairedSummary summary;
    summary.complete = !interrupt_requested() && every_case_logged(loop);
    summary.resumed = resumed_;
    summary.cases = std::move(results_); // a case interrupted mid-way is neither judged nor logged
    summary.canary_drift = canary_drift(canary_.readings());
    summary.device_clock = clock_range(sm_clocks_mhz_);
    summary.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    if (!o_.out_path.empty()) {
        nlohmann::json ob = log_->context()["opbench"];
        ob["canary"] = canary_json(canary_.readings());
        log_->set_opbench_context(std::move(ob));
        write_set_file(*log_, o_.out_path, "json", summary.complete);
        if (summary.complete) log_->finish(); // the journal is no longer needed
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

std::size_t PairedSummary::count_status(const std::string &status) const {
    return std::count_if(cases.begin(), cases.end(), [&](const PairedCaseResult &c) { return c.status == status; });
}

PairedSummary run_paired(const Suite &suite, const PluginSet &plugins, const PairedRunOptions &options) {
    AbRun run(suite, plugins, options);
    return run.run();
}

} // namespace opbench
