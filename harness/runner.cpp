#include "runner.hpp"

#include "backend_sessions.hpp"
#include "backend_work.hpp"
#include "call_overhead.hpp"
#include "gbench_args.hpp"
#include "memory_figures.hpp"
#include "recipe.hpp"
#include "reference_cache.hpp"
#include "report.hpp"
#include "result_set.hpp"
#include "run_environment.hpp"
#include "statistics.hpp"
#include "verify.hpp"

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

std::vector<Case> effective_cases(const Suite &suite, const RunOptions &options) {
    std::vector<Case> cases;
    for (const auto &c : suite.cases) {
        Case effective = c;
        options.overrides.apply(effective.settings);
        if (auto why = check_settings(effective.settings))
            throw SuiteError(c.where, *why + " (after the command-line overrides)");
        effective.desc.threads = resolve_threads(effective.settings.threads);
        if (!options.backends.empty()) effective.backends = options.backends;
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

std::string noise_label(const RepetitionRecord &rec) {
    std::string label = std::isfinite(rec.summary.noise)
                            ? fmt::format("noise {:.2f}%", rec.summary.noise * 100.0)
                            : fmt::format("noise n/a ({} samples)", rec.summary.n);
    if (rec.timed_out) label += ", max_time reached";
    return label;
}

// One case on one backend while Google Benchmark runs its repetitions.
struct ActiveCase {
    std::size_t result_index = SIZE_MAX;
    std::unique_ptr<BackendWork> work;
    std::unique_ptr<MemoryObserver> memory;
    std::unique_ptr<Recipe> recipe;
    PreparationRecord preparation;
};

// Walks cases x backends: each case x backend is one Google Benchmark
// benchmark whose iterations are the recipe's repetitions.
class SuiteRun {
public:
    SuiteRun(const Suite &suite, const PluginSet &plugins, const RunOptions &options)
        : suite_(suite), plugins_(plugins), options_(options), cases_(effective_cases(suite, options)),
          results_(planned_results(cases_, options.reference)) {
        for (std::size_t ci = 0, ri = 0; ci < cases_.size(); ++ci)
            for (std::size_t b = 0; b < cases_[ci].backends.size(); ++b, ++ri) {
                case_of_result_.push_back(ci);
                result_by_name_[results_[ri].name] = ri;
            }
        ran_.assign(results_.size(), false);
        timer_overhead_ = measure_timer_overhead();
    }

    RunSummary run();

private:
    void open_backends();
    Roofline roofline_of(const Case &c, const std::string &backend, double seconds_per_call) const;
    std::optional<MeasureFailure> skip_before_running(std::size_t ri);
    void register_benchmarks();
    void run_benchmarks();
    void bench(benchmark::State &state, std::size_t ri);
    void activate(std::size_t ri);
    void deactivate();
    void report_not_registered() const;
    void show_progress(std::size_t ri);

    const Suite &suite_;
    const PluginSet &plugins_;
    const RunOptions &options_;
    std::vector<Case> cases_;
    std::vector<CaseResult> results_;
    std::vector<std::size_t> case_of_result_;
    std::map<std::string, std::size_t> result_by_name_;
    std::vector<bool> ran_;                   // reached by Google Benchmark (not filtered out)
    std::vector<std::size_t> not_registered_; // skipped before running, in order

    BackendSessions sessions_;
    std::unique_ptr<ReferenceCache> reference_;
    std::unique_ptr<CacheEvictor> evictor_;
    ActiveCase active_;
    CachedMachinePeaks machine_;
    std::map<std::string, double> call_overhead_;
    std::vector<std::string> warnings_;
    double timer_overhead_ = 0;
    std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();
    std::size_t progress_shown_ = SIZE_MAX;
};

RunSummary SuiteRun::run() {
    warnings_ = measurement_warnings();
    for (const auto &w : warnings_) std::cerr << "***WARNING*** " << w << "\n";
    machine_ = load_or_measure();
    if (!machine_.from_cache)
        std::cerr << fmt::format("opbench: measured this machine's peaks for the rooflines in {:.1f} s "
                                 "(once; cached in {})\n",
                                 machine_.peaks.measure_seconds, machine_.path.string());
    if (!machine_.warning.empty()) std::cerr << "opbench: " << machine_.warning << "\n";
    open_backends();
    call_overhead_ = measure_call_overheads(sessions_);
    register_benchmarks();
    run_benchmarks();
    RunSummary summary;
    for (std::size_t ri = 0; ri < results_.size(); ++ri) {
        if (!ran_[ri]) continue; // excluded by --benchmark_filter
        switch (results_[ri].status) {
        case CaseStatus::passed: ++summary.passed; break;
        case CaseStatus::failed: ++summary.failed; break;
        case CaseStatus::skipped: ++summary.skipped; break;
        }
    }
    summary.out_path = options_.out_path;
    return summary;
}

void SuiteRun::open_backends() {
    std::vector<std::string> wanted;
    for (const auto &c : cases_)
        for (const auto &b : c.backends)
            if (std::find(wanted.begin(), wanted.end(), b) == wanted.end()) wanted.push_back(b);
    sessions_ = open_backend_sessions(plugins_, wanted, options_.reference);
    reference_ = std::make_unique<ReferenceCache>(sessions_.reference.get(), options_.reference,
                                                  sessions_.reference_missing);
}

Roofline SuiteRun::roofline_of(const Case &c, const std::string &backend, double seconds_per_call) const {
    auto it = call_overhead_.find(backend);
    const double fixed = it != call_overhead_.end() ? it->second : 0.0;
    const PeakKind kind = c.desc.dtype == OPB_DTYPE_F32 ? PeakKind::f32 : PeakKind::bf16;
    return classify(op_flops(c.desc), op_bytes(c.desc), seconds_per_call, machine_.peaks, c.desc.threads, fixed,
                    kind);
}

// Skips known before anything runs: the backend is missing, unusable here,
// or does not support the case.
std::optional<MeasureFailure> SuiteRun::skip_before_running(std::size_t ri) {
    const CaseResult &r = results_[ri];
    auto missing = sessions_.missing.find(r.backend);
    if (missing != sessions_.missing.end()) return MeasureFailure{CaseStatus::skipped, missing->second};
    BackendInstance &be = *sessions_.backends.at(r.backend);
    opb_status s = be.api().supports(be.handle(), &cases_[case_of_result_[ri]].desc);
    if (s == OPB_ERR_UNSUPPORTED || s == OPB_ERR_UNAVAILABLE)
        return MeasureFailure{CaseStatus::skipped, be.error_text(s)};
    if (s != OPB_OK) return MeasureFailure{CaseStatus::failed, "supports: " + be.error_text(s)};
    return std::nullopt;
}

// The recipe's untimed steps, once per case x backend, before its first repetition.
void SuiteRun::activate(std::size_t ri) {
    if (active_.result_index == ri) return;
    deactivate();
    active_.result_index = ri;
    ran_[ri] = true;
    CaseResult &r = results_[ri];
    const std::size_t ci = case_of_result_[ri];
    const Case &c = cases_[ci];
    show_progress(ri);
    try {
        if (auto skip = skip_before_running(ri)) throw *skip;
        BackendInstance &be = *sessions_.backends.at(r.backend);
        // The reference runs first, in its own instance, and the evictor's
        // buffer is made once: neither shows in this case's memory figures.
        const HostBuffers &reference = reference_->outputs(ci, c.desc);
        if (c.settings.cache == CacheState::cold && !evictor_) evictor_ = std::make_unique<CacheEvictor>();
        active_.work = std::make_unique<BackendWork>(be, c.desc, reference_->inputs(ci, c.desc), evictor_.get());
        active_.memory = std::make_unique<MemoryObserver>(be, r.memory);
        active_.recipe = std::make_unique<Recipe>(
            *active_.work, c.settings, RecipeOptions{&steady_measure_clock(), active_.memory.get(), timer_overhead_});
        const BackendWork &work = *active_.work;
        active_.preparation = active_.recipe->prepare([&](MeasuredWork &) {
            CheckVerdict verdict = check_against_reference(work, reference, c.desc, r.nmse_threshold);
            r.nmse = verdict.error; // recorded for a failed check too
            return verdict;
        });
    } catch (const MeasureFailure &f) {
        r.status = f.status;
        r.reason = f.reason;
        if (active_.work) r.memory.workspace_bytes = active_.work->workspace_bytes();
        active_ = ActiveCase{ri};
    }
}

void SuiteRun::deactivate() {
    if (active_.result_index == SIZE_MAX) return;
    CaseResult &r = results_[active_.result_index];
    if (r.status == CaseStatus::passed && active_.work) {
        active_.memory->finish(active_.preparation, active_.work->workspace_bytes());
        if (!r.repetitions.empty()) {
            std::vector<double> medians;
            for (const auto &rec : r.repetitions) medians.push_back(rec.summary.median);
            r.roofline = roofline_of(*r.source, r.backend, summarize(medians).median);
        }
    }
    active_ = ActiveCase{};
}

void SuiteRun::bench(benchmark::State &state, std::size_t ri) {
    activate(ri);
    CaseResult &r = results_[ri];
    const Case &c = cases_[case_of_result_[ri]];
    auto fail = [&] { state.SkipWithError((std::string(case_status_name(r.status)) + ": " + r.reason).c_str()); };
    if (r.status != CaseStatus::passed) {
        fail();
        for (auto _ : state) {
        }
        return;
    }
    RepetitionRecord rec;
    for (auto _ : state) {
        try {
            rec = active_.recipe->measure_repetition();
        } catch (const MeasureFailure &f) {
            r.status = f.status;
            r.reason = f.reason;
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
    state.SetLabel(noise_label(rec) + ", " + roofline_of(c, r.backend, rec.summary.median).bound);
}

void SuiteRun::show_progress(std::size_t ri) {
    if (!options_.progress || !isatty(STDERR_FILENO) || progress_shown_ == ri) return;
    progress_shown_ = ri;
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
    std::string eta = "?";
    if (ri > 0) eta = fmt::format("{:.0f}s", elapsed / double(ri) * double(results_.size() - ri));
    std::cerr << fmt::format("\x1b[2m[{}/{}  {:.0f}s elapsed, ~{} left]  {}\x1b[0m\n", ri + 1, results_.size(),
                             elapsed, eta, results_[ri].name);
}

// Cases skipped before running are not registered with Google Benchmark;
// they are reported after the run and written into the result set.
void SuiteRun::register_benchmarks() {
    const std::optional<NameFilter> filter = NameFilter::from_args(options_.benchmark_args);
    for (std::size_t ri = 0; ri < results_.size(); ++ri) {
        CaseResult &r = results_[ri];
        if (filter && !filter->matches(r.name + "/manual_time")) continue;
        if (auto skip = skip_before_running(ri)) {
            r.status = skip->status;
            r.reason = skip->reason;
            ran_[ri] = true;
            not_registered_.push_back(ri);
            continue;
        }
        // Repetitions: one global flag when every case agrees; a case that
        // differs sets its own (Google Benchmark then adds "/repeats:N").
        const Case &c = cases_[case_of_result_[ri]];
        auto *b = benchmark::RegisterBenchmark(r.name.c_str(), [this, ri](benchmark::State &st) { bench(st, ri); });
        b->UseManualTime();
        b->Unit(benchmark::kMicrosecond);
        if (c.settings.repetitions != cases_.front().settings.repetitions) b->Repetitions(c.settings.repetitions);
    }
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
    namespace fs = std::filesystem;
    // Google Benchmark's own JSON goes to a scratch file (never beside the
    // result set); it is read back, enriched, and written atomically.
    const std::string gb_json =
        options_.out_path.empty()
            ? std::string()
            : (fs::temp_directory_path() / fmt::format("opbench-gb-{}.json", ::getpid())).string();
    std::vector<std::string> args =
        gbench_argv(cases_.empty() ? 0 : cases_.front().settings.repetitions, options_.benchmark_args, gb_json);
    std::vector<char *> argv;
    for (auto &a : args) argv.push_back(a.data());
    int argc = static_cast<int>(argv.size());
    benchmark::Initialize(&argc, argv.data());
    if (benchmark::ReportUnrecognizedArguments(argc, argv.data()))
        throw std::runtime_error("unrecognised Google Benchmark arguments (see above)");

    auto console = std::make_unique<benchmark::ConsoleReporter>(
        isatty(STDOUT_FILENO) ? benchmark::ConsoleReporter::OO_Color : benchmark::ConsoleReporter::OO_None);
    auto lookup = [this](const std::string &name) -> const CaseResult * {
        auto it = result_by_name_.find(name);
        return it == result_by_name_.end() ? nullptr : &results_[it->second];
    };
    PerCallReporter display(std::move(console), lookup);
    std::unique_ptr<PerCallReporter> file;
    if (!gb_json.empty())
        file = std::make_unique<PerCallReporter>(std::make_unique<benchmark::JSONReporter>(), lookup);
    benchmark::RunSpecifiedBenchmarks(&display, file.get());
    deactivate();
    report_not_registered();
    benchmark::ClearRegisteredBenchmarks();
    benchmark::Shutdown();

    // Cases a --benchmark_filter excluded never ran: they are not in the set.
    if (gb_json.empty()) return;
    RunContext ctx{&suite_,   &cases_,        &sessions_,     options_.reference, options_.benchmark_args,
                   timer_overhead_, &machine_, call_overhead_, options_.cpus,      warnings_};
    std::vector<const CaseResult *> unmeasured;
    for (std::size_t ri : not_registered_) unmeasured.push_back(&results_[ri]);
    write_result_set(gb_json, options_.out_path, options_.out_format, results_, unmeasured, ctx);
}

} // namespace

RunSummary run_suite(const Suite &suite, const PluginSet &plugins, const RunOptions &options) {
    SuiteRun run(suite, plugins, options);
    return run.run();
}

} // namespace opbench
