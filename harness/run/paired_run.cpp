#include "run/paired_run.hpp"

#include "check/reference_cache.hpp"
#include "entry/op_case_entry.hpp"
#include "entry/results.hpp"
#include "files/atomic_file.hpp"
#include "isolate/case_host.hpp"
#include "measure/canary.hpp"
#include "measure/statistics.hpp"
#include "plugin/plugin_variant.hpp"
#include "run/context.hpp"
#include "run/gbench_args.hpp"
#include "run/gb_context.hpp"
#include "run/interrupt.hpp"
#include "run/result_set.hpp"
#include "run/runner.hpp"
#include "writers/text_wrap.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <iostream>
#include <memory>
#include <set>
#include <thread>
#include <unistd.h>

namespace opbench {

namespace {

// As the runner's: the fast checks' randomness is fixed by the case's position.
uint64_t fast_check_seed(std::size_t ci) { return ReferenceCache::input_seed(ci) ^ 0x9e3779b97f4a7c15ull; }

// The benchmark name without its backend part ("/be:naive@base"): the case's label.
std::string label_of(const std::string &benchmark_name, const std::string &backend) {
    std::string label = benchmark_name;
    const std::string part = "/be:" + backend;
    if (auto at = label.find(part); at != std::string::npos) label.erase(at, part.size());
    return label;
}

// The console's case column: a longer name keeps its start (the op) and its
// end (variant, dtype, case name), with '~' where the middle was cut.
constexpr std::size_t kLabelWidth = 52;
std::string fit(const std::string &s, std::size_t width) {
    if (s.size() <= width) return s + std::string(width - s.size(), ' ');
    const std::size_t head = (width - 1) / 3;
    return s.substr(0, head) + "~" + s.substr(s.size() - (width - 1 - head));
}

// Worker hosts per side. A process draws one memory layout, which moved a
// case by up to 5-7% on this project's VM (docs/measurement.md, "Paired
// A/B"): with one host (3 processes) a side's draw biased some A/A cases by
// 2-3%. Block p runs in pool p % kPools, so a case's pairs average over
// kPools x kProcessesPerCase processes per side.
constexpr int kPools = 4;

// One side of the pair: its worker hosts and what it measured of the current case.
struct Side {
    std::string backend; // instance name
    std::vector<std::unique_ptr<CaseHost>> pools;
    std::vector<bool> active; // per pool: the case is activated there
    BackendFacts facts;
    CaseResult result;
};

// A repetition lasts about half_seconds: the noise target never stops it
// early (1 = 100%), so every half of a block samples the same length of time.
MeasureSettings block_settings(MeasureSettings s, const PairedRunOptions &o) {
    s.min_time = o.half_seconds;
    s.max_time = std::max(1e-3, 2 * o.half_seconds);
    s.min_samples = 5; // a slow case (400 us a call) still takes a median of 5 in each repetition
    s.noise = 1;
    // Each pool's share, spread over its worker processes (case_host.hpp).
    s.repetitions = (2 * o.pairs + kPools - 1) / kPools;
    return s;
}

// One side's result-set entries, as `opbench run` writes them
// (entry/entry.hpp: iterations, aggregates, the case's fields), each
// iteration carrying its pair: block p holds repetitions 2p and 2p+1 of
// each side.
// `pair_of_block`: each ABBA block's pair index, -1 for a block left out as
// starved (its repetitions are written, with no pair).
std::vector<nlohmann::json> side_entries(const CaseResult &r, const std::string &other_name,
                                         const std::vector<double> &base_times, const std::vector<double> &new_times,
                                         const std::vector<long> &pair_of_block, bool is_base,
                                         const std::string &reference) {
    OpCaseEntry entry(*r.source, 0, r.backend, reference);
    entry.result = r;
    std::vector<nlohmann::json> out = result_entries(entry);
    for (auto &e : out) {
        if (e.value("run_type", "") != "iteration" || e.contains("error_occurred")) continue;
        const std::size_t block = e["repetition_index"].get<std::size_t>() / 2;
        const long pair = block < pair_of_block.size() ? pair_of_block[block] : -1;
        const auto p = std::size_t(pair);
        if (pair >= 0 && p < base_times.size())
            e["pair"] = {{"index", p},
                         {"role", is_base ? "base" : "new"},
                         {"with", run_name_of(other_name)},
                         {"base_time", base_times[p]},
                         {"new_time", new_times[p]}};
    }
    return out;
}

class PairedRun {
public:
    PairedRun(const Suite &suite, const PluginSet &plugins, const PairedRunOptions &options)
        : suite_(suite), plugins_(plugins), o_(options) {}

    PairedSummary run();

private:
    void open_side(Side &side, const std::vector<Case> &cases);
    bool activate(Side &side, const Case &c, std::size_t ci, const std::string &name, double nmse_threshold);
    void finish(Side &side);
    PairedCaseResult measure_case(const Case &c, std::size_t ci, const CaseResult &planned_base,
                                  const CaseResult &planned_new);
    // The case's blocks: starved ones, and each block's pair index (-1: starved).
    struct Blocks {
        std::size_t starved = 0;
        std::vector<long> pair_of_block;
    };
    Blocks measure_blocks(PairedCaseResult &out);
    void write(PairedSummary &summary, const std::vector<Case> &cases);

    const Suite &suite_;
    const PluginSet &plugins_;
    const PairedRunOptions &o_;
    Side base_, new_;
    CanarySeries canary_;
    double timer_overhead_ = measure_timer_overhead();
    std::vector<nlohmann::json> entries_;
    std::map<std::string, nlohmann::json> contexts_;
    std::map<std::string, std::string> unavailable_;
};

void PairedRun::open_side(Side &side, const std::vector<Case> &cases) {
    std::map<std::string, std::string> paths;
    for (const std::string &name : {side.backend, o_.reference})
        if (const LoadedPlugin *p = plugins_.find(name)) paths[name] = p->path;
    for (int k = 0; k < kPools; ++k)
        side.pools.push_back(make_worker_host({"/proc/self/exe", "__worker"}, o_.reference, paths));
    side.active.assign(kPools, false);
    std::vector<opb_op_desc> descs;
    for (const Case &c : cases) descs.push_back(c.desc);
    BackendProbe probe = side.pools[0]->probe_backend(side.backend, descs, 60.0);
    if (!probe.fault.empty()) {
        side.facts = BackendFacts{CaseStatus::failed, fmt::format("{} (backend '{}')", probe.fault, side.backend),
                                  nullptr, {}};
    } else {
        side.facts = std::move(probe.facts);
    }
    if (!side.facts.context.is_null()) contexts_[side.backend] = side.facts.context;
    if (!side.facts.usable()) unavailable_[side.backend] = side.facts.reason;
}

bool PairedRun::activate(Side &side, const Case &c, std::size_t ci, const std::string &name, double nmse_threshold) {
    CaseResult &r = side.result;
    if (!side.facts.usable()) {
        r.status = side.facts.status;
        r.reason = side.facts.reason;
        return false;
    }
    if (ci < side.facts.supports.size() && side.facts.supports[ci].status != CaseStatus::passed) {
        r.status = side.facts.supports[ci].status;
        r.reason = side.facts.supports[ci].reason;
        return false;
    }
    CaseJob job;
    job.case_index = ci;
    job.name = name;
    job.backend = side.backend;
    job.desc = c.desc;
    job.settings = block_settings(c.settings, o_);
    job.nmse_threshold = nmse_threshold;
    job.timer_overhead = timer_overhead_;
    job.verify = o_.verify;
    job.check_seed = fast_check_seed(ci);
    const Activation a = side.pools[0]->activate(job);
    side.active[0] = a.status == CaseStatus::passed;
    // The other pools run the inputs and code pool 0 verified: not checked again.
    job.verify = VerifyMode::off;
    Activation other = a;
    for (int k = 1; k < kPools && other.status == CaseStatus::passed; ++k) {
        other = side.pools[std::size_t(k)]->activate(job);
        side.active[std::size_t(k)] = other.status == CaseStatus::passed;
    }
    r.status = other.status;
    r.reason = other.reason;
    r.nmse = a.nmse;
    r.memory.workspace_bytes = a.workspace_bytes;
    r.checked = a.checked;
    r.verification = a.verification;
    r.prepare_seconds = a.prepare_seconds;
    r.verify_seconds = a.verify_seconds;
    return r.status == CaseStatus::passed;
}

// Releases the case in every pool; the memory figures are pool 0's.
void PairedRun::finish(Side &side) {
    for (std::size_t k = 0; k < side.pools.size(); ++k) {
        if (!side.active[k]) continue;
        side.active[k] = false;
        try {
            const uint64_t workspace = side.result.memory.workspace_bytes;
            MemoryFigures m = side.pools[k]->finish().memory;
            if (k > 0) continue;
            side.result.memory = m;
            if (side.result.memory.workspace_bytes == 0) side.result.memory.workspace_bytes = workspace;
        } catch (const MeasureFailure &f) {
            side.result.status = f.status;
            side.result.reason = f.reason;
        }
    }
}

// ABBA, then BAAB: A = base. Each side's two times in a block average to its
// pair time; a block with a starved repetition gives no pair.
PairedRun::Blocks PairedRun::measure_blocks(PairedCaseResult &out) {
    std::size_t pool = 0;
    bool block_starved = false; // a repetition of this block stayed starved after its re-measures
    Blocks blocks;
    auto measure = [&](Side &side, double &sum) {
        const auto t0 = std::chrono::steady_clock::now();
        RepetitionRecord rec = side.pools[pool]->measure_repetition();
        rec.process += int(pool) * kProcessesPerCase; // stats.process: which of the side's processes
        side.result.measure_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        sum += rec.summary.median;
        block_starved = block_starved || rec.starved;
        side.result.repetitions.push_back(std::move(rec));
    };
    try {
        for (int p = 0; p < o_.pairs && !interrupt_requested(); ++p) {
            double a = 0, b = 0;
            pool = std::size_t(p % kPools);
            block_starved = false;
            if (p % 2 == 0) {
                measure(base_, a), measure(new_, b), measure(new_, b), measure(base_, a);
            } else {
                measure(new_, b), measure(base_, a), measure(base_, a), measure(new_, b);
            }
            (void)canary_.read();
            // A starved repetition timed the machine: its block is no pair
            // (measure/starvation.hpp).
            if (block_starved) {
                ++blocks.starved;
                blocks.pair_of_block.push_back(-1);
                continue;
            }
            blocks.pair_of_block.push_back(long(out.base_times.size()));
            out.base_times.push_back(a / 2);
            out.new_times.push_back(b / 2);
        }
    } catch (const MeasureFailure &f) {
        for (Side *s : {&base_, &new_})
            if (s->active[pool]) {
                s->result.status = f.status;
                s->result.reason = f.reason;
            }
        out.base_times.clear();
        out.new_times.clear();
    }
    return blocks;
}

PairedCaseResult PairedRun::measure_case(const Case &c, std::size_t ci, const CaseResult &planned_base,
                                         const CaseResult &planned_new) {
    PairedCaseResult out;
    out.label = label_of(planned_base.name, base_.backend);
    base_.result = planned_base;
    new_.result = planned_new;
    const bool ok_base = activate(base_, c, ci, planned_base.name, planned_base.nmse_threshold);
    const bool ok_new = ok_base && activate(new_, c, ci, planned_new.name, planned_new.nmse_threshold);
    if (ok_base && !ok_new && new_.result.reason.empty()) new_.result.reason = "not run: the base side failed";
    if (!ok_base) {
        new_.result.status = base_.result.status;
        new_.result.reason = fmt::format("not run: the base side ({}) did not: {}", base_.backend, base_.result.reason);
    }
    const Blocks blocks = ok_base && ok_new ? measure_blocks(out) : Blocks{};
    const std::size_t starved_blocks = blocks.starved;
    const std::vector<long> &pair_of_block = blocks.pair_of_block;
    finish(base_);
    finish(new_);
    for (Side *s : {&base_, &new_})
        if (s->result.status != CaseStatus::passed) {
            out.status = std::string(case_status_name(s->result.status));
            out.reason = s->backend + ": " + s->result.reason;
            out.base_times.clear();
            out.new_times.clear();
            break;
        }
    if (out.status == "passed" && starved_blocks > 0 && out.base_times.empty()) {
        out.status = "starved";
        out.reason = fmt::format("every one of its {} blocks had a starved repetition (threads waited for a CPU "
                                 "after {} more tries): no pair is a time of the builds. Use --threads 1, --cpus "
                                 "with idle CPUs, or a quieter machine",
                                 starved_blocks, c.settings.starved_retries);
        for (Side *s : {&base_, &new_}) {
            s->result.status = CaseStatus::starved;
            s->result.reason = out.reason;
        }
    }
    if (out.status == "passed") {
        if (out.base_times.size() + starved_blocks < std::size_t(o_.pairs)) { // interrupted mid-case: not recorded
            out.status = "interrupted";
            return out;
        }
        out.verdict = paired_verdict(out.base_times, out.new_times, o_.verdict);
    }
    for (Side *s : {&base_, &new_}) {
        const Side &other = s == &base_ ? new_ : base_;
        for (auto &e : side_entries(s->result, other.result.name, out.base_times, out.new_times, pair_of_block, s == &base_,
                                    o_.reference))
            entries_.push_back(std::move(e));
    }
    return out;
}

void PairedRun::write(PairedSummary &summary, const std::vector<Case> &cases) {
    if (o_.out_path.empty()) return;
    nlohmann::json ctx = benchmark_context();
    nlohmann::json ob =
        opbench_context(suite_, cases, contexts_, unavailable_, o_.reference, {}, timer_overhead_);
    ob["complete"] = summary.complete;
    ob["warnings"] = o_.warnings;
    ob["measurement"]["isolation"] = "process";
    ob["measurement"]["cpus"] = o_.cpus;
    ob["paired"] = {{"base", base_.backend},
                    {"new", new_.backend},
                    {"base_plugin", plugins_.find(base_.backend)->path},
                    {"new_plugin", plugins_.find(new_.backend)->path},
                    {"order", "ABBA, BAAB alternately (A = base); a pair is each side's mean over one block"},
                    {"pairs_per_case", o_.pairs},
                    {"seconds_per_repetition", o_.half_seconds},
                    {"threshold", o_.verdict.threshold},
                    {"alpha", o_.verdict.alpha}};
    ob["canary"] = canary_json(canary_.readings());
    ctx["opbench"] = std::move(ob);
    nlohmann::json set = {{"context", std::move(ctx)}, {"benchmarks", entries_}};
    add_run_analysis(set, nullptr);
    write_file_atomically(o_.out_path, set.dump() + "\n"); // compact, as `opbench run` writes sets
    summary.out_path = o_.out_path;
}

PairedSummary PairedRun::run() {
    const auto started = std::chrono::steady_clock::now();
    PairedSummary summary;
    const std::vector<Case> cases = paired_cases(suite_, o_);
    std::vector<CaseResult> planned; // base then new, per case
    for (const auto &entry : planned_entries(cases, {}, o_.reference)) planned.push_back(entry->result);

    base_.backend = o_.base;
    new_.backend = o_.next;
    open_side(base_, cases);
    open_side(new_, cases);
    on_first_interrupt([this] {
        for (Side *s : {&base_, &new_})
            for (auto &h : s->pools) h->interrupt();
    });
    (void)canary_.read(); // the machine's speed before the first pair
    for (std::size_t ci = 0; ci < cases.size(); ++ci) {
        if (interrupt_requested()) break;
        PairedCaseResult r = measure_case(cases[ci], ci, planned[2 * ci], planned[2 * ci + 1]);
        if (r.status == "interrupted") break;
        if (o_.progress) {
            if (r.status == "passed")
                std::cout << paired_console_row(
                    r.label, fmt::format("{:.2f}", summarize(r.base_times).median * 1e6),
                    fmt::format("{:.2f}", summarize(r.new_times).median * 1e6),
                    fmt::format("{:.3f}", r.verdict.ratio),
                    fmt::format("{:.4f}", r.verdict.p_value), r.verdict.verdict);
            else
                // The reason under the row, wrapped: beside it, it ran past 100 columns.
                std::cout << fit(r.label, kLabelWidth) << " " << r.status << ":\n" << wrap_words(r.reason, 4, 4);
            std::cout.flush();
        }
        summary.cases.push_back(std::move(r));
    }
    on_first_interrupt(nullptr);
    summary.complete = !interrupt_requested();
    summary.canary_drift = canary_drift(canary_.readings());
    summary.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    write(summary, cases);
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
                                     backend, o.base, o.next, listed.empty() ? "none" : fmt::format("{}", fmt::join(listed, ", "))));
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
    return std::count_if(cases.begin(), cases.end(),
                         [&](const PairedCaseResult &c) { return c.status == "passed" && c.verdict.verdict == verdict; });
}

std::size_t PairedSummary::failed() const {
    return std::count_if(cases.begin(), cases.end(), [](const PairedCaseResult &c) { return c.status != "passed"; });
}

PairedSummary run_paired(const Suite &suite, const PluginSet &plugins, const PairedRunOptions &options) {
    PairedRun run(suite, plugins, options);
    return run.run();
}

std::string paired_console_row(const std::string &label, const std::string &base, const std::string &next,
                               const std::string &ratio, const std::string &p, const std::string &verdict) {
    return fmt::format("{} {:>9} {:>9} {:>9} {:>6}  {}\n", fit(label, kLabelWidth), base, next, ratio, p, verdict);
}

std::string paired_summary_line(const PairedSummary &s, const PairedRunOptions &o) {
    // Two lines, each within 100 columns: the verdicts, then how the run went.
    return fmt::format("opbench ab: {} cases, {} -> {} (threshold {:g}%): {} same, {} slower, {} faster, {} noisy{}\n"
                       "  the machine's speed moved {:.0f}% during the run (drift canary); {:.1f} s",
                       s.cases.size(), o.base, o.next, o.verdict.threshold * 100, s.count("same"), s.count("slower"),
                       s.count("faster"), s.count("noisy"),
                       s.failed() > 0 ? fmt::format(", {} not compared", s.failed()) : std::string(),
                       s.canary_drift * 100, s.wall_seconds);
}

} // namespace opbench
