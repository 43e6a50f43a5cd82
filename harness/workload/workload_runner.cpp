#include "workload/workload_runner.hpp"

#include "measure/memory_estimate.hpp"

#include "run/interrupt.hpp"
#include "plugin/memory_figures.hpp"
#include "profile/profile_observer.hpp"
#include "measure/settings.hpp"
#include "measure/statistics.hpp"
#include "workload/component_spans.hpp"

#include "opbench/ops.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <iostream>

namespace opbench::workload {

std::string workload_benchmark_name(const WorkloadCase &w, Phase phase, const std::string &backend) {
    std::string n = fmt::format("{}/{}/phase:{}/dt:{}", w.kind, w.name, phase_name(phase), dtype_name(w.decoder.dtype));
    if (w.settings.threads > 0) n += fmt::format("/thr:{}", w.settings.threads);
    if (w.settings.cache != CacheState::warm) n += "/cache:" + std::string(cache_state_name(w.settings.cache));
    return n + "/be:" + backend;
}

std::vector<WorkloadCase> effective_workloads(const Suite &suite, const RunOptions &options) {
    std::vector<WorkloadCase> out;
    for (const auto &w : suite.workloads) {
        WorkloadCase e = w;
        e.decoder.threads = apply_command_line(e.settings, e.backends, w.where, options);
        out.push_back(std::move(e));
    }
    return out;
}

namespace {

nlohmann::json shape_json(const DecoderConfig &c) {
    return {{"hidden", c.hidden},       {"heads", c.heads},     {"kv_heads", c.kv_head_count()},
            {"head_dim", c.head_dim()}, {"ffn", c.ffn_width()}, {"layers", c.layers},
            {"batch", c.batch},         {"prompt", c.prompt},   {"generate", c.generate}};
}

} // namespace

nlohmann::json workload_fields(const WorkloadResult &r) {
    const WorkloadCase &w = *r.source;
    const DecoderConfig &c = w.decoder;
    nlohmann::json j;
    j["op"] = w.kind;
    j["backend"] = r.core.backend;
    j["dtype"] = dtype_name(c.dtype);
    j["variant"] = variant_name(OPB_OP_ATTENTION, c.attention_variant);
    j["case"] = w.name;
    j["phase"] = phase_name(r.phase);
    j["params"] = shape_json(c);
    j["params"]["tokens_per_call"] = r.tokens_per_call;
    j["workload"] = {{"kind", w.kind},
                     {"name", w.name},
                     {"norm", norm_name(c.norm)},
                     {"mlp", mlp_name(c.mlp)},
                     {"gelu", variant_name(OPB_OP_GELU, c.gelu_variant)},
                     {"bias", c.bias},
                     {"attention", variant_name(OPB_OP_ATTENTION, c.attention_variant)},
                     {"seed", c.seed}};
    j["flops"] = r.flops_per_call;
    j["bytes"] = r.bytes_per_call;
    j["arithmetic_intensity"] = r.bytes_per_call > 0 ? r.flops_per_call / r.bytes_per_call : 0.0;
    const nlohmann::json measurement = measurement_fields(r.core, w.settings, c.threads, w.where);
    for (const auto &[k, v] : measurement.items()) j[k] = v;
    j["nmse_where"] = r.check_where.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.check_where);
    j["decoder"] = r.figures ? figures_json(*r.figures) : nlohmann::json(nullptr);
    return j;
}

namespace {

MeasureFailure as_measure_failure(const WorkloadFailure &f) {
    return MeasureFailure{f.status == "skipped" ? CaseStatus::skipped : CaseStatus::failed, f.reason};
}

// A decoder phase as the recipe's MeasuredWork; WorkloadFailure becomes MeasureFailure.
class DecoderMeasuredWork final : public MeasuredWork {
public:
    DecoderMeasuredWork(DecoderPhaseWork &work, BackendInstance &be, CacheEvictor *evictor)
        : work_(work), be_(be), evictor_(evictor) {}
    void prepare() override {
        guarded([&] { work_.prepare(); });
    }
    void execute() override {
        guarded([&] { work_.execute(); });
    }
    void synchronize() override {
        guarded([&] { work_.synchronize(); });
    }
    void flush_cache() override {
        if (evictor_) evictor_->evict();
        if (be_.api().flush_cache) be_.api().flush_cache(be_.handle());
        synchronize();
    }

private:
    template <class F>
    static void guarded(F &&f) {
        try {
            f();
        } catch (const WorkloadFailure &e) {
            throw as_measure_failure(e);
        }
    }
    DecoderPhaseWork &work_;
    BackendInstance &be_;
    CacheEvictor *evictor_;
};

// The memory figures of an op case (MemoryObserver), plus the allocations the
// plugin reported through on_alloc during the warm-up calls. The decode
// steps of a sample kept out of the statistics (a profiler's recorded one)
// are dropped from the step times too.
class WorkloadObserver final : public RecipeObserver {
public:
    WorkloadObserver(BackendInstance &be, MemoryFigures &figures, DecoderPhaseWork &phase)
        : memory(be, figures), be_(be), phase_(phase) {}
    void on_sample_begin(std::size_t, int) override { sample_steps_from_ = phase_.step_seconds().size(); }
    void on_sample_excluded(std::size_t) override { phase_.drop_step_seconds_since(sample_steps_from_); }
    void on_phase_begin(std::string_view phase) override {
        memory.on_phase_begin(phase);
        if (phase == phase::warmup) backend_allocs_before = be_.accounting().alloc_calls;
    }
    void on_phase_end(std::string_view phase) override {
        memory.on_phase_end(phase);
        if (phase == phase::warmup) backend_allocs_after = be_.accounting().alloc_calls;
    }
    MemoryObserver memory;
    uint64_t backend_allocs_before = 0, backend_allocs_after = 0;

private:
    BackendInstance &be_;
    DecoderPhaseWork &phase_;
    std::size_t sample_steps_from_ = 0;
};

std::string noise_label(const RepetitionRecord &rec) {
    std::string label = std::isfinite(rec.summary.noise) ? fmt::format("noise {:.2f}%", rec.summary.noise * 100.0)
                                                         : fmt::format("noise n/a ({} samples)", rec.summary.n);
    if (rec.timed_out) label += ", max_time reached";
    return label;
}

} // namespace

struct WorkloadRunner::Active {
    std::size_t index = SIZE_MAX;
    std::unique_ptr<DecoderRun> run;
    std::unique_ptr<DecoderPhaseWork> phase;
    std::unique_ptr<DecoderMeasuredWork> work;
    std::unique_ptr<WorkloadObserver> observer;
    // Profiling runs: the entry as a case of the run's profile, its
    // components as spans in the recorded samples.
    std::unique_ptr<ComponentSpans> spans;
    std::unique_ptr<ProfileInstrumentation> profiling;
    std::unique_ptr<Recipe> recipe;
    PreparationRecord preparation;
};

WorkloadRunner::WorkloadRunner(std::vector<WorkloadCase> workloads, const BackendSessions &sessions,
                               std::string reference, double timer_overhead, RooflineFn roofline,
                               std::optional<uint64_t> mem_limit)
    : workloads_(std::move(workloads)), sessions_(sessions), reference_(std::move(reference)),
      timer_overhead_(timer_overhead), roofline_(std::move(roofline)), mem_limit_(mem_limit) {
    for (std::size_t wi = 0; wi < workloads_.size(); ++wi) {
        const WorkloadCase &w = workloads_[wi];
        for (Phase phase : w.phases)
            for (const auto &be : w.backends) {
                WorkloadResult r;
                r.source = &w;
                r.phase = phase;
                r.core.backend = be;
                r.core.name = workload_benchmark_name(w, phase, be);
                r.core.is_reference = be == reference_;
                r.core.nmse_threshold = decoder_tolerance(w.decoder).max_nmse;
                results_.push_back(std::move(r));
                workload_of_.push_back(wi);
            }
    }
    ran_.assign(results_.size(), false);
    interrupted_.assign(results_.size(), false);
}

WorkloadRunner::~WorkloadRunner() = default;

std::vector<std::string> WorkloadRunner::backends() const {
    std::vector<std::string> out;
    for (const auto &w : workloads_)
        for (const auto &b : w.backends)
            if (std::find(out.begin(), out.end(), b) == out.end()) out.push_back(b);
    return out;
}

std::optional<MeasureFailure> WorkloadRunner::skip_before_running(std::size_t i) {
    const WorkloadResult &r = results_[i];
    auto missing = sessions_.missing.find(r.core.backend);
    if (missing != sessions_.missing.end()) return MeasureFailure{CaseStatus::skipped, missing->second};
    BackendInstance *be = sessions_.usable(r.core.backend);
    if (!be) return MeasureFailure{CaseStatus::skipped, "backend '" + r.core.backend + "' cannot run here"};
    try {
        DecoderRun probe(*be, r.source->decoder); // describes the steps; allocates nothing
        if (auto u = probe.unsupported()) return as_measure_failure(*u);
    } catch (const WorkloadFailure &f) {
        return as_measure_failure(f);
    }
    // Would it fit? The backend's copy, and the reference's beside it.
    const DecoderMemory m = estimate_decoder_memory(r.source->decoder);
    MemoryEstimate need;
    need.tensors = m.weights + m.kv_cache;
    need.workspace = m.activations;
    need.reference = r.core.backend == reference_ ? 0 : m.total();
    if (auto why = memory_skip_reason(need, available_memory(mem_limit_)))
        return MeasureFailure{CaseStatus::skipped, *why};
    return std::nullopt;
}

const std::vector<std::vector<std::vector<float>>> &WorkloadRunner::reference_outputs(std::size_t wi) {
    if (cached_workload_ != wi) {
        cached_workload_ = wi;
        cached_reference_.clear();
        reference_error_.clear();
        try {
            if (!sessions_.reference) throw WorkloadFailure{"failed", sessions_.reference_missing};
            DecoderRun ref(*sessions_.reference, workloads_[wi].decoder);
            if (auto u = ref.unsupported()) throw *u;
            cached_reference_ = capture_layer_outputs(ref);
        } catch (const WorkloadFailure &f) {
            reference_error_ = "cannot verify: reference backend '" + reference_ + "': " + f.reason;
        }
    }
    if (!reference_error_.empty()) throw MeasureFailure{CaseStatus::failed, reference_error_};
    return cached_reference_;
}

void WorkloadRunner::activate(std::size_t i) {
    if (active_ && active_->index == i) return;
    deactivate();
    active_ = std::make_unique<Active>();
    active_->index = i;
    ran_[i] = true;
    WorkloadResult &r = results_[i];
    const WorkloadCase &w = workloads_[workload_of_[i]];
    try {
        if (auto skip = skip_before_running(i)) throw *skip;
        BackendInstance &be = *sessions_.usable(r.core.backend);
        // The reference runs first, in its own instance: its memory never
        // shows in this entry's figures.
        const auto &reference = reference_outputs(workload_of_[i]);
        if (w.settings.cache == CacheState::cold && !evictor_) evictor_ = std::make_unique<CacheEvictor>();
        Active &a = *active_;
        a.run = std::make_unique<DecoderRun>(be, w.decoder);
        a.phase = std::make_unique<DecoderPhaseWork>(*a.run, r.phase);
        a.work = std::make_unique<DecoderMeasuredWork>(*a.phase, be, evictor_.get());
        a.observer = std::make_unique<WorkloadObserver>(be, r.core.memory, *a.phase);
        MeasuredWork *measured = a.work.get();
        RecipeObserver *observer = a.observer.get();
        if (profile_) {
            // As an op case's: the component spans are installed while the
            // plugin's scopes record (the schedule's samples), so every other
            // call runs without them.
            a.spans = std::make_unique<ComponentSpans>(profile_->profiler(), *a.run);
            a.profiling = std::make_unique<ProfileInstrumentation>(*profile_);
            nlohmann::json args = {{"op", w.kind},
                                   {"workload", w.name},
                                   {"phase", phase_name(r.phase)},
                                   {"backend", r.core.backend},
                                   {"dtype", dtype_name(w.decoder.dtype)},
                                   {"threads", w.decoder.threads},
                                   {"params", shape_json(w.decoder)}};
            a.profiling->begin(r.core.name, r.core.backend, std::move(args), be,
                               [phase = a.phase.get(), spans = a.spans.get()](bool on) {
                                   phase->set_component_observer(on ? spans : nullptr);
                               });
            measured = &a.profiling->wrap_work(*measured);
            observer = &a.profiling->wrap_observer(*observer);
        }
        a.recipe = std::make_unique<Recipe>(*measured, w.settings,
                                            RecipeOptions{&steady_measure_clock(), observer, timer_overhead_});
        const WorkloadTolerance tol = decoder_tolerance(w.decoder);
        a.preparation = a.recipe->prepare([&](MeasuredWork &) {
            LayerComparison cmp;
            try {
                cmp = check_phase(*a.phase, reference);
            } catch (const WorkloadFailure &f) {
                throw as_measure_failure(f);
            }
            r.core.nmse = cmp.worst_nmse;
            r.check_where = cmp.where();
            CheckVerdict v;
            v.error = cmp.worst_nmse;
            v.passed = cmp.worst_nmse <= tol.max_nmse;
            if (!v.passed)
                v.reason = fmt::format("verification failed: NMSE {:.3g} exceeds {:.3g} at {} ({})", cmp.worst_nmse,
                                       tol.max_nmse, cmp.where(), tol.why);
            return v;
        });
        for (int s : a.phase->steps()) {
            r.flops_per_call += a.run->flops_in_step(s);
            r.bytes_per_call += a.run->bytes_in_step(s);
        }
        r.tokens_per_call = a.phase->tokens_per_call();
    } catch (const MeasureFailure &f) {
        r.core.status = f.status;
        r.core.reason = f.reason;
        if (active_->profiling) active_->profiling->case_end();
        active_.reset();
    }
}

void WorkloadRunner::deactivate() {
    if (!active_) return;
    WorkloadResult &r = results_[active_->index];
    Active &a = *active_;
    // What the run's profile recorded of this entry (profiling runs only).
    std::optional<ComponentTimes> profiled;
    if (a.profiling) {
        profiled = component_times(a.profiling->finish_case().tree);
        a.profiling.reset();
    }
    if (r.core.status == CaseStatus::passed && a.run) {
        a.observer->memory.finish(a.preparation, a.run->footprint().workspace);
        const DecoderConfig &c = r.source->decoder;
        DecoderMeasurements m;
        for (const auto &rec : r.core.repetitions)
            m.call_seconds.insert(m.call_seconds.end(), rec.sample_times.begin(), rec.sample_times.end());
        m.unit_seconds = r.unit_seconds;
        m.tokens_per_call = r.tokens_per_call;
        m.tokens_per_unit = a.phase->tokens_per_unit();
        m.context_tokens = c.batch * c.context();
        m.peak_bytes = r.core.memory.plugin_peak_bytes;
        m.weight_bytes = a.run->footprint().weights;
        m.kv_cache_bytes = a.run->footprint().kv_cache;
        m.kv_bytes_per_token = a.run->kv_bytes_per_token();
        m.heap_allocs_per_call = r.core.memory.allocs_per_call;
        m.backend_allocs_per_call = double(a.observer->backend_allocs_after - a.observer->backend_allocs_before) /
                                    double(std::max(1, a.preparation.warmup_calls));
        // Component shares from the component spans: the run's recorded
        // samples when it profiles, else scoped calls after the timed
        // repetitions (not in them): up to 5, within about max_time.
        try {
            if (profiled && profiled->steps > 0) {
                m.components = *profiled;
                m.components_from = "profile";
            } else {
                const double per_call = m.call_seconds.empty() ? 0.0 : summarize(m.call_seconds).median;
                const int calls = per_call > 0 ? std::clamp(int(r.source->settings.max_time / per_call), 1, 5) : 1;
                m.components = scoped_component_times(*a.phase, calls);
                m.components_from = "scoped_calls";
            }
        } catch (const WorkloadFailure &f) {
            r.core.status = CaseStatus::failed;
            r.core.reason = "component timing: " + f.reason;
        }
        r.figures = decoder_figures(m);
        if (!r.core.repetitions.empty()) {
            std::vector<double> medians;
            for (const auto &rec : r.core.repetitions) medians.push_back(rec.summary.median);
            r.core.roofline = roofline_(r.flops_per_call, r.bytes_per_call, c.dtype, c.threads, r.core.backend,
                                        summarize(medians).median);
        }
    }
    active_.reset(); // frees the workload's buffers and plans before the next entry
}

void WorkloadRunner::bench(benchmark::State &state, std::size_t i) {
    if (interrupt_requested()) {
        // As an op case after Ctrl-C: passed through, kept out of the result
        // set, run again by --resume.
        interrupted_[i] = true;
        deactivate();
        state.SkipWithError("interrupted");
        for (auto _ : state) {}
        return;
    }
    if (release_others_ && !(active_ && active_->index == i)) release_others_();
    activate(i);
    WorkloadResult &r = results_[i];
    auto fail = [&] {
        state.SkipWithError((std::string(case_status_name(r.core.status)) + ": " + r.core.reason).c_str());
    };
    if (r.core.status != CaseStatus::passed) {
        fail();
        for (auto _ : state) {}
        return;
    }
    Active &a = *active_;
    RepetitionRecord rec;
    for (auto _ : state) {
        try {
            a.phase->clear_step_seconds();
            const auto t0 = std::chrono::steady_clock::now();
            rec = a.recipe->measure_repetition();
            r.core.measure_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        } catch (const MeasureFailure &f) {
            r.core.status = f.status;
            r.core.reason = f.reason;
            fail();
            break;
        }
        state.SetIterationTime(rec.summary.median);
    }
    if (r.core.status != CaseStatus::passed) return;
    r.core.repetitions.push_back(rec);
    // Units: a decode step each (timed inside the call), or the whole prefill.
    const std::vector<double> &units = r.phase == Phase::decode ? a.phase->step_seconds() : rec.sample_times;
    r.unit_seconds.insert(r.unit_seconds.end(), units.begin(), units.end());

    state.counters["tokens/s"] = benchmark::Counter(double(r.tokens_per_call), benchmark::Counter::kIsRate);
    state.counters["FLOP/s"] = benchmark::Counter(r.flops_per_call, benchmark::Counter::kIsRate);
    state.counters["bytes/s"] = benchmark::Counter(r.bytes_per_call, benchmark::Counter::kIsRate);
    state.counters["samples"] = double(rec.summary.n);
    std::vector<double> ms;
    for (double u : units) ms.push_back(u * 1e3 / double(a.phase->tokens_per_unit()));
    std::sort(ms.begin(), ms.end());
    const double p50 = ms.empty() ? 0.0 : percentile_sorted(ms, 0.5);
    state.SetLabel(noise_label(rec) + fmt::format(", {:.3g} ms/token p50", p50));
}

void WorkloadRunner::register_benchmarks(const std::optional<NameFilter> &filter, int global_repetitions,
                                         std::function<void()> release_others,
                                         const std::function<bool(const std::string &)> &finished_before) {
    release_others_ = std::move(release_others);
    for (std::size_t i = 0; i < results_.size(); ++i) {
        WorkloadResult &r = results_[i];
        if (filter && !filter->matches(r.core.name + "/manual_time")) continue;
        if (finished_before && finished_before(r.core.name)) continue; // --resume: already in the journal
        if (auto skip = skip_before_running(i)) {
            r.core.status = skip->status;
            r.core.reason = skip->reason;
            ran_[i] = true;
            not_registered_.push_back(i);
            continue;
        }
        const WorkloadCase &w = workloads_[workload_of_[i]];
        auto *b = benchmark::RegisterBenchmark(r.core.name.c_str(), [this, i](benchmark::State &st) { bench(st, i); });
        b->UseManualTime();
        b->Unit(benchmark::kMillisecond);
        if (w.settings.repetitions != global_repetitions) b->Repetitions(w.settings.repetitions);
    }
}

void WorkloadRunner::finish() { deactivate(); }

const CaseResult *WorkloadRunner::find(const std::string &name) const {
    for (const auto &r : results_)
        if (r.core.name == name) return &r.core;
    return nullptr;
}

void WorkloadRunner::count(RunSummary &summary) const {
    for (std::size_t i = 0; i < results_.size(); ++i) {
        if (!ran_[i]) continue;
        switch (results_[i].core.status) {
        case CaseStatus::passed: ++summary.passed; break;
        case CaseStatus::failed: ++summary.failed; break;
        case CaseStatus::skipped: ++summary.skipped; break;
        }
    }
}

void WorkloadRunner::add_measure_seconds(RunSummary &summary) const {
    for (std::size_t i = 0; i < results_.size(); ++i)
        if (ran_[i]) summary.measure_seconds += results_[i].core.measure_seconds;
}

std::optional<std::size_t> WorkloadRunner::index_of(const std::string &name) const {
    for (std::size_t i = 0; i < results_.size(); ++i)
        if (results_[i].core.name == name) return i;
    return std::nullopt;
}

std::vector<nlohmann::json> WorkloadRunner::entries_of(std::size_t i, std::vector<nlohmann::json> gb_entries) const {
    const WorkloadResult &r = results_[i];
    const nlohmann::json fields = workload_fields(r);
    if (gb_entries.empty()) {
        // Skipped before running: one entry saying why (as an op case's).
        const std::string name = r.core.name + "/manual_time";
        gb_entries.push_back({{"name", name},
                              {"run_name", name},
                              {"run_type", "iteration"},
                              {"repetitions", 1},
                              {"repetition_index", 0},
                              {"threads", 1},
                              {"iterations", 0},
                              {"real_time", 0},
                              {"cpu_time", 0},
                              {"time_unit", "ms"},
                              {"error_occurred", true},
                              {"error_message", std::string(case_status_name(r.core.status)) + ": " + r.core.reason}});
        for (const auto &[k, v] : fields.items()) gb_entries.back()[k] = v;
        return gb_entries;
    }
    for (auto &entry : gb_entries) {
        for (const auto &[k, v] : fields.items()) entry[k] = v;
        if (entry.value("run_type", "") != "aggregate" && entry.contains("repetition_index")) {
            const auto idx = entry["repetition_index"].get<std::size_t>();
            if (idx < r.core.repetitions.size()) entry["stats"] = summary_json(r.core.repetitions[idx]);
        }
    }
    return gb_entries;
}

void WorkloadRunner::add_entries(nlohmann::json &gb) const {
    if (workloads_.empty()) return;
    gb["context"]["opbench"]["suite"]["workloads"] = workloads_.size();
    for (auto &entry : gb["benchmarks"]) {
        const std::string name = strip_manual_time(entry.value("run_name", entry.value("name", "")));
        auto i = index_of(name);
        if (!i) continue;
        entry = entries_of(*i, {entry}).front();
    }
    for (std::size_t i : not_registered_) gb["benchmarks"].push_back(entries_of(i, {}).front());
}

void WorkloadRunner::report_figures(std::ostream &out) const {
    bool any = false;
    for (std::size_t i = 0; i < results_.size(); ++i)
        any = any || (ran_[i] && results_[i].figures && results_[i].core.status == CaseStatus::passed);
    if (!any) return;
    out << "\nWorkloads (tokens/s at the median call; ms per token over every unit timed; "
           "memory/token = (peak - weights) / context tokens;\n"
           "  components: shares of the steps' time from their spans, the run's recorded samples when it "
           "profiles (not in tokens/s), else scoped calls after the timed ones; unscoped: step time in no "
           "component):\n";
    out << fmt::format("  {:<44} {:>11} {:>9} {:>9} {:>10} {:>11} {:>10} {:>10} {:>9}  {}\n",
                       "workload / phase / backend", "tokens/s", "ms p50", "ms p99", "peak MiB", "mem/token",
                       "KV/token", "allocs/tok", "unscoped", "largest component");
    for (std::size_t i = 0; i < results_.size(); ++i) {
        const WorkloadResult &r = results_[i];
        if (!ran_[i] || !r.figures || r.core.status != CaseStatus::passed) continue;
        const DecoderFigures &f = *r.figures;
        std::string top = "-";
        double best = -1;
        for (const auto &c : f.components)
            if (c.share > best) best = c.share, top = fmt::format("{} {:.0f}%", c.component, 100 * c.share);
        out << fmt::format("  {:<44} {:>11.4g} {:>9.4g} {:>9.4g} {:>10.1f} {:>9.1f}Ki {:>9}B {:>10.4g} {:>8.1f}%  {}\n",
                           fmt::format("{} / {} / {}", r.source->name, phase_name(r.phase), r.core.backend),
                           f.tokens_per_second, f.ms_per_token_p50, f.ms_per_token_p99,
                           double(f.peak_bytes) / (1024.0 * 1024.0), f.memory_per_token_bytes / 1024.0,
                           f.kv_cache_bytes_per_token, f.allocs_per_token, 100 * f.unscoped_share, top);
    }
}

void WorkloadRunner::report_not_registered() const {
    if (not_registered_.empty()) return;
    std::cout << fmt::format("\nWorkloads not measured ({} workload x phase x backend):\n", not_registered_.size());
    for (std::size_t i : not_registered_)
        std::cout << fmt::format("  {}: {}\n      {}\n", case_status_name(results_[i].core.status),
                                 results_[i].core.reason, results_[i].core.name);
}

} // namespace opbench::workload
