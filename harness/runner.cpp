#include "runner.hpp"

#include "alloc_tracker.hpp"
#include "build_config.hpp"
#include "context.hpp"
#include "machine.hpp"
#include "opbench/ops.hpp"
#include "report.hpp"
#include "results.hpp"
#include "statistics.hpp"
#include "verify.hpp"
#include "writers/json_writer.hpp"

#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <regex>
#include <stdexcept>
#include <sched.h>
#include <unistd.h>

namespace opbench {

void SettingOverrides::apply(MeasureSettings &s) const {
    if (warmup) s.warmup = *warmup;
    if (min_samples) s.min_samples = *min_samples;
    if (repetitions) s.repetitions = *repetitions;
    if (threads) s.threads = *threads;
    if (min_time) s.min_time = *min_time;
    if (max_time) s.max_time = *max_time;
    if (noise) s.noise = *noise;
    if (cache) s.cache = *cache;
}

namespace {

using Clock = std::chrono::steady_clock;

double seconds_between(Clock::time_point a, Clock::time_point b) {
    return std::chrono::duration<double>(b - a).count();
}

double process_cpu_seconds() {
    timespec ts{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
}

// A failure inside a case: recorded on the case, never thrown out of the run.
struct CaseFailure {
    std::string status; // "failed" or "skipped"
    std::string reason;
};

// Tensors of one case living in one backend's memory.
class BackendTensors {
public:
    BackendTensors(BackendInstance &be, const HostTensors &host) : be_(be) {
        for (const auto &buf : host.buffers) {
            void *p = nullptr;
            opb_status s = be.api().alloc(be.handle(), buf.size(), &p);
            if (s != OPB_OK)
                throw CaseFailure{"failed", fmt::format("alloc of {} bytes: {}", buf.size(),
                                                        be.error_text(s))};
            ptrs_.push_back(p);
            s = be.api().copy_in(be.handle(), p, buf.data(), buf.size());
            if (s != OPB_OK) throw CaseFailure{"failed", "copy_in: " + be.error_text(s)};
        }
    }
    ~BackendTensors() {
        for (void *p : ptrs_) be_.api().free(be_.handle(), p);
    }
    BackendTensors(const BackendTensors &) = delete;
    BackendTensors &operator=(const BackendTensors &) = delete;

    void *const *data() const { return ptrs_.data(); }
    int32_t count() const { return static_cast<int32_t>(ptrs_.size()); }
    void *at(std::size_t i) const { return ptrs_[i]; }

private:
    BackendInstance &be_;
    std::vector<void *> ptrs_;
};

// A prepared plan, released on destruction.
class PreparedPlan {
public:
    PreparedPlan(BackendInstance &be, const opb_op_desc &desc) : be_(be) {
        opb_status s = be.api().prepare(be.handle(), &desc, &plan_, &workspace_bytes_);
        if (s == OPB_ERR_UNSUPPORTED || s == OPB_ERR_UNAVAILABLE)
            throw CaseFailure{"skipped", be.error_text(s)};
        if (s != OPB_OK) throw CaseFailure{"failed", "prepare: " + be.error_text(s)};
    }
    ~PreparedPlan() {
        if (plan_) be_.api().release(be_.handle(), plan_);
    }
    PreparedPlan(const PreparedPlan &) = delete;
    PreparedPlan &operator=(const PreparedPlan &) = delete;

    opb_plan *get() const { return plan_; }
    uint64_t workspace_bytes() const { return workspace_bytes_; }

private:
    BackendInstance &be_;
    opb_plan *plan_ = nullptr;
    uint64_t workspace_bytes_ = 0;
};

void execute_once(BackendInstance &be, opb_plan *plan, const BackendTensors &t) {
    opb_status s = be.api().execute(be.handle(), plan, t.data(), t.count());
    if (s != OPB_OK) throw CaseFailure{"failed", "execute: " + be.error_text(s)};
}

void synchronize(BackendInstance &be) {
    opb_status s = be.api().synchronize(be.handle());
    if (s != OPB_OK) throw CaseFailure{"failed", "synchronize: " + be.error_text(s)};
}

// Copies every output tensor back to the host.
std::vector<std::vector<uint8_t>> read_outputs(BackendInstance &be, const BackendTensors &t,
                                               const HostTensors &layout) {
    std::vector<std::vector<uint8_t>> out;
    for (std::size_t i = 0; i < layout.buffers.size(); ++i) {
        if (!layout.is_output[i]) continue;
        std::vector<uint8_t> buf(layout.buffers[i].size());
        opb_status s = be.api().copy_out(be.handle(), buf.data(), t.at(i), buf.size());
        if (s != OPB_OK) throw CaseFailure{"failed", "copy_out: " + be.error_text(s)};
        out.push_back(std::move(buf));
    }
    return out;
}

// A buffer larger than the last-level cache, written between samples of a
// cold-cache case so that no operand is left in the CPU caches.
class CacheEvictor {
public:
    CacheEvictor() {
        // Twice the LLC when sysfs tells it; 256 MiB otherwise (larger than
        // any current server LLC).
        std::size_t llc = last_level_cache_bytes();
        buffer_.assign(llc ? 2 * llc : (256u << 20), 1);
    }
    void evict() {
        for (std::size_t i = 0; i < buffer_.size(); i += 64) buffer_[i] += 1;
        benchmark::DoNotOptimize(buffer_.data());
        benchmark::ClobberMemory();
    }
    std::size_t bytes() const { return buffer_.size(); }

private:
    static std::size_t last_level_cache_bytes() {
        std::size_t best = 0;
        for (int idx = 0; idx < 8; ++idx) {
            std::ifstream f(fmt::format("/sys/devices/system/cpu/cpu0/cache/index{}/size", idx));
            std::string s;
            if (!(f >> s) || s.empty()) continue;
            std::size_t mult = 1;
            if (s.back() == 'K') mult = 1024;
            if (s.back() == 'M') mult = 1024 * 1024;
            try {
                best = std::max<std::size_t>(best, std::stoull(s) * mult);
            } catch (...) {
            }
        }
        return best;
    }
    std::vector<uint8_t> buffer_;
};

// Google Benchmark's --benchmark_filter, applied to cases that are never
// registered (skipped before running) so the filter means the same for them:
// an extended regex searched in the name; a leading '-' negates it.
class NameFilter {
public:
    static std::optional<NameFilter> from_args(const std::vector<std::string> &args) {
        std::optional<NameFilter> f;
        const std::string flag = "--benchmark_filter=";
        for (const auto &a : args)
            if (a.rfind(flag, 0) == 0) f = NameFilter(a.substr(flag.size()));
        return f;
    }
    bool matches(const std::string &name) const {
        if (pattern_.empty() || pattern_ == "all") return true;
        return std::regex_search(name, regex_) != negated_;
    }

private:
    explicit NameFilter(std::string pattern) {
        negated_ = !pattern.empty() && pattern[0] == '-';
        pattern_ = negated_ ? pattern.substr(1) : pattern;
        regex_ = std::regex(pattern_, std::regex::extended);
    }
    std::string pattern_;
    bool negated_ = false;
    std::regex regex_;
};

std::string noise_label(const RepetitionRecord &rec) {
    std::string label = std::isfinite(rec.summary.noise)
                            ? fmt::format("noise {:.2f}%", rec.summary.noise * 100.0)
                            : fmt::format("noise n/a ({} samples)", rec.summary.n);
    if (rec.timed_out) label += ", max_time reached";
    return label;
}

} // namespace

// ---- the run ------------------------------------------------------------------

namespace {

// One case on one backend while it is being measured: its tensors and plan
// live here between Google Benchmark's calls for its repetitions.
struct ActiveCase {
    std::size_t result_index = SIZE_MAX;
    BackendInstance *backend = nullptr;
    std::unique_ptr<BackendTensors> tensors;
    std::unique_ptr<PreparedPlan> plan;
    int calls_per_sample = 1;
    AllocCounters heap_before{};
};

class SuiteRun {
public:
    SuiteRun(const Suite &suite, const PluginSet &plugins, const RunOptions &options)
        : suite_(suite), plugins_(plugins), options_(options) {
        for (const auto &c : suite.cases) {
            Case effective = c;
            options.overrides.apply(effective.settings);
            effective.desc.threads = effective.settings.threads;
            if (!options.backends.empty()) effective.backends = options.backends;
            cases_.push_back(std::move(effective));
        }
        check_unique_names(cases_); // after overrides: --backends can change the lists
        for (std::size_t ci = 0; ci < cases_.size(); ++ci)
            for (const auto &be : cases_[ci].backends) {
                CaseResult r;
                r.source = &cases_[ci];
                r.backend = be;
                r.name = benchmark_name(cases_[ci], be);
                r.is_reference = be == options.reference;
                r.nmse_threshold = tolerance_for(cases_[ci].desc).max_nmse;
                result_by_name_[r.name] = results_.size();
                results_.push_back(std::move(r));
                case_of_result_.push_back(ci);
                ran_.push_back(false);
            }
        timer_overhead_ = measure_timer_overhead();
    }

    RunSummary run() {
        warnings_ = measurement_warnings();
        for (const auto &w : warnings_) std::cerr << "***WARNING*** " << w << "\n";
        machine_ = load_or_measure();
        if (!machine_.from_cache)
            std::cerr << fmt::format("opbench: measured this machine's peaks for the rooflines in {:.1f} s "
                                     "(once; cached in {})\n",
                                     machine_.peaks.measure_seconds, machine_.path.string());
        if (!machine_.warning.empty()) std::cerr << "opbench: " << machine_.warning << "\n";
        open_backends();
        measure_call_overheads();
        register_benchmarks();
        run_benchmarks();
        RunSummary summary;
        for (std::size_t ri = 0; ri < results_.size(); ++ri) {
            if (!ran_[ri]) continue; // excluded by --benchmark_filter
            const CaseResult &r = results_[ri];
            if (r.status == "passed") ++summary.passed;
            else if (r.status == "failed") ++summary.failed;
            else ++summary.skipped;
        }
        summary.out_path = options_.out_path;
        return summary;
    }

    const CaseResult *find_result(const std::string &name) const {
        auto it = result_by_name_.find(name);
        return it == result_by_name_.end() ? nullptr : &results_[it->second];
    }

    void bench(benchmark::State &state, std::size_t ri);

private:
    void open_backends();
    void measure_call_overheads();
    Roofline roofline_of(const Case &c, const std::string &backend, double seconds_per_call) const;
    void register_benchmarks();
    std::optional<CaseFailure> skip_before_running(std::size_t ri);
    void report_not_registered() const;
    void run_benchmarks();
    void activate(std::size_t ri);
    void deactivate();
    RepetitionRecord measure_repetition(const Case &c);
    const std::vector<std::vector<uint8_t>> &reference_outputs(std::size_t ci);
    const HostTensors &inputs(std::size_t ci);
    void show_progress(std::size_t ri);

    const Suite &suite_;
    const PluginSet &plugins_;
    const RunOptions &options_;
    std::vector<Case> cases_;
    std::vector<CaseResult> results_;
    std::vector<std::size_t> case_of_result_;
    std::map<std::string, std::size_t> result_by_name_;
    std::vector<bool> ran_; // reached by Google Benchmark (not filtered out)
    std::vector<std::size_t> not_registered_; // skipped before running, in order

    std::map<std::string, std::unique_ptr<BackendInstance>> backends_;
    std::map<std::string, std::string> backend_missing_; // name -> why not available
    std::unique_ptr<BackendInstance> reference_;          // a separate instance: its memory never counts
    std::string reference_missing_;

    // Inputs and reference outputs of the case being run, shared by its backends.
    std::size_t cached_case_ = SIZE_MAX;
    HostTensors cached_inputs_;
    std::optional<std::vector<std::vector<uint8_t>>> cached_reference_;
    std::string reference_error_;

    ActiveCase active_;
    std::unique_ptr<CacheEvictor> evictor_;
    CachedMachinePeaks machine_;                      // for rooflines
    std::map<std::string, double> call_overhead_;     // backend -> fixed cost of one call, seconds
    std::vector<std::string> warnings_;
    double timer_overhead_ = 0;
    Clock::time_point started_ = Clock::now();
    std::size_t progress_shown_ = SIZE_MAX;
};

void SuiteRun::open_backends() {
    auto wanted = [&] {
        std::vector<std::string> names;
        for (const auto &c : cases_)
            for (const auto &b : c.backends)
                if (std::find(names.begin(), names.end(), b) == names.end()) names.push_back(b);
        return names;
    }();
    for (const auto &name : wanted) {
        const LoadedPlugin *p = plugins_.find(name);
        if (!p) {
            backend_missing_[name] = plugins_.why_unavailable(name); // refused by the loader, or absent
            continue;
        }
        auto inst = std::make_unique<BackendInstance>(*p);
        if (!inst->usable())
            backend_missing_[name] = fmt::format("backend '{}' is not usable here: {}", name,
                                                 inst->unusable_reason());
        backends_[name] = std::move(inst);
    }
    if (const LoadedPlugin *ref = plugins_.find(options_.reference)) {
        reference_ = std::make_unique<BackendInstance>(*ref);
        if (!reference_->usable()) {
            reference_missing_ = reference_->unusable_reason();
            reference_.reset();
        }
    } else {
        reference_missing_ = fmt::format("reference backend '{}' is not loaded", options_.reference);
    }
}

// The fixed cost of one call on each usable backend: the median time of the
// smallest op there is (a 1x1 f32 add) through execute + synchronize. A case
// whose time per call is within a few times this is overhead-bound.
void SuiteRun::measure_call_overheads() {
    opb_op_desc tiny = make_desc(OPB_OP_ADD, OPB_DTYPE_F32);
    tiny.p.eltwise.rows = 1;
    tiny.p.eltwise.cols = 1;
    for (auto &[name, inst] : backends_) {
        if (!inst->usable() || inst->api().supports(inst->handle(), &tiny) != OPB_OK) continue;
        try {
            BackendTensors t(*inst, make_inputs(tiny, 1));
            PreparedPlan plan(*inst, tiny);
            std::vector<double> samples;
            for (int i = 0; i < 220; ++i) {
                const auto t0 = Clock::now();
                execute_once(*inst, plan.get(), t);
                synchronize(*inst);
                if (i >= 20) samples.push_back(seconds_between(t0, Clock::now())); // first 20 warm up
            }
            call_overhead_[name] = summarize(samples).median;
        } catch (const CaseFailure &) {
            // No figure: rooflines for this backend then omit the overhead rule.
        }
    }
}

Roofline SuiteRun::roofline_of(const Case &c, const std::string &backend, double seconds_per_call) const {
    auto it = call_overhead_.find(backend);
    const double fixed = it != call_overhead_.end() ? it->second : 0.0;
    const int threads = c.settings.threads > 0 ? c.settings.threads : machine_.peaks.cores;
    const PeakKind kind = c.desc.dtype == OPB_DTYPE_F32 ? PeakKind::f32 : PeakKind::bf16;
    return classify(op_flops(c.desc), op_bytes(c.desc), seconds_per_call, machine_.peaks, threads, fixed, kind);
}

const HostTensors &SuiteRun::inputs(std::size_t ci) {
    if (cached_case_ != ci) {
        cached_case_ = ci;
        // Seed from the case's position: stable across runs of the same suite.
        cached_inputs_ = make_inputs(cases_[ci].desc, 0x6f7062656e6368ull + ci);
        cached_reference_.reset();
        reference_error_.clear();
    }
    return cached_inputs_;
}

const std::vector<std::vector<uint8_t>> &SuiteRun::reference_outputs(std::size_t ci) {
    const HostTensors &host = inputs(ci);
    if (cached_reference_) return *cached_reference_;
    if (!reference_error_.empty()) throw CaseFailure{"failed", reference_error_};
    try {
        if (!reference_) throw CaseFailure{"failed", reference_missing_};
        BackendInstance &ref = *reference_;
        BackendTensors t(ref, host);
        PreparedPlan plan(ref, cases_[ci].desc);
        execute_once(ref, plan.get(), t);
        synchronize(ref);
        cached_reference_ = read_outputs(ref, t, host);
    } catch (const CaseFailure &f) {
        reference_error_ = "cannot verify: reference backend '" + options_.reference + "': " + f.reason;
        throw CaseFailure{"failed", reference_error_};
    }
    return *cached_reference_;
}

void SuiteRun::deactivate() {
    if (active_.result_index == SIZE_MAX) return;
    CaseResult &r = results_[active_.result_index];
    BackendInstance &be = *active_.backend;
    if (r.status == "passed") {
        // Memory figures cover this case's own prepare and execute calls.
        opb_memory_stats ms{};
        ms.struct_size = sizeof ms;
        ms.abi_version = OPB_ABI_VERSION;
        if (be.api().memory_stats(be.handle(), &ms) == OPB_OK) r.memory.plugin_peak_bytes = ms.peak_bytes;
        r.memory.host_accounted_peak = be.accounting().host_peak;
        r.memory.device_accounted_peak = be.accounting().device_peak;
        r.memory.heap_tracked = alloc_tracking_active();
        if (r.memory.heap_tracked) {
            AllocCounters now = alloc_snapshot();
            r.memory.heap_peak_bytes = now.peak > active_.heap_before.current
                                           ? now.peak - active_.heap_before.current
                                           : 0;
        }
        r.memory.rss_peak_bytes = peak_rss_bytes();
        if (!r.repetitions.empty()) {
            std::vector<double> medians;
            for (const auto &rec : r.repetitions) medians.push_back(rec.summary.median);
            r.roofline = roofline_of(*r.source, r.backend, summarize(medians).median);
        }
    }
    active_.plan.reset();
    active_.tensors.reset();
    active_ = ActiveCase{};
}

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
        auto missing = backend_missing_.find(r.backend);
        if (missing != backend_missing_.end()) throw CaseFailure{"skipped", missing->second};
        BackendInstance &be = *backends_.at(r.backend);
        active_.backend = &be;

        opb_status s = be.api().supports(be.handle(), &c.desc);
        if (s == OPB_ERR_UNSUPPORTED || s == OPB_ERR_UNAVAILABLE)
            throw CaseFailure{"skipped", be.error_text(s)};
        if (s != OPB_OK) throw CaseFailure{"failed", "supports: " + be.error_text(s)};

        // The reference runs first, in its own instance, before any peak is
        // reset: its memory never shows in this case's figures.
        const auto &reference = reference_outputs(ci);
        const HostTensors &host = inputs(ci);

        // The cold-cache evictor's buffer lives for the whole run: made before
        // the peaks are reset, it is never counted as this case's memory.
        if (c.settings.cache == "cold" && !evictor_) evictor_ = std::make_unique<CacheEvictor>();

        be.api().reset_peak(be.handle());
        be.accounting().reset_peaks();
        r.memory.rss_peak_reset = reset_peak_rss();
        alloc_reset_peak();
        active_.heap_before = alloc_snapshot();

        active_.tensors = std::make_unique<BackendTensors>(be, host);
        active_.plan = std::make_unique<PreparedPlan>(be, c.desc);
        r.memory.workspace_bytes = active_.plan->workspace_bytes();

        // Verify before timing: only a correct result is measured.
        execute_once(be, active_.plan->get(), *active_.tensors);
        synchronize(be);
        auto outputs = read_outputs(be, *active_.tensors, host);
        double worst = 0.0;
        for (std::size_t i = 0; i < outputs.size(); ++i) {
            const auto elems = int64_t(outputs[i].size() / dtype_size(c.desc.dtype));
            worst = std::max(worst, nmse(outputs[i].data(), reference[i].data(), c.desc.dtype, elems));
        }
        r.nmse = worst;
        if (!(worst <= r.nmse_threshold))
            throw CaseFailure{"failed", fmt::format("verification failed: NMSE {:.3g} exceeds {:.3g} ({})",
                                                    worst, r.nmse_threshold,
                                                    tolerance_for(c.desc).why)};

        // Warmup, also counting heap allocations per execute call.
        const int warm_calls = std::max(1, c.settings.warmup);
        AllocCounters before = alloc_snapshot();
        for (int i = 0; i < warm_calls; ++i) {
            execute_once(be, active_.plan->get(), *active_.tensors);
            synchronize(be);
        }
        AllocCounters after = alloc_snapshot();
        r.memory.allocs_per_call = double(after.calls - before.calls) / warm_calls;
        r.memory.alloc_bytes_per_call = double(after.bytes - before.bytes) / warm_calls;

        // Batch tiny ops so the clock's own cost stays under 1% of a sample.
        if (c.settings.cache == "cold") {
            active_.calls_per_sample = 1; // every call must start cold
        } else {
            auto t0 = Clock::now();
            execute_once(be, active_.plan->get(), *active_.tensors);
            synchronize(be);
            active_.calls_per_sample = calls_per_sample(seconds_between(t0, Clock::now()), timer_overhead_);
        }
    } catch (const CaseFailure &f) {
        r.status = f.status;
        r.reason = f.reason;
        active_.plan.reset();
        active_.tensors.reset();
    }
}

RepetitionRecord SuiteRun::measure_repetition(const Case &c) {
    BackendInstance &be = *active_.backend;
    const auto &api = be.api();
    const bool cold = c.settings.cache == "cold";
    const bool device_timer = api.timer_start && api.timer_stop;
    const int calls = active_.calls_per_sample;

    NoiseCriterion criterion(c.settings.noise, c.settings.min_time, c.settings.max_time,
                             static_cast<std::size_t>(std::max(1, c.settings.min_samples)));
    std::vector<double> samples, device_samples;
    double cpu_total = 0.0;
    // max_time bounds the samples' own time. The untimed work around them
    // (cache eviction above all: milliseconds per sample against a
    // microsecond op) is bounded too, by a wall-clock cap of twice max_time,
    // so a cold-cache repetition of a tiny op cannot run for minutes.
    const auto wall_start = Clock::now();
    const double wall_cap = 2.0 * c.settings.max_time;
    bool wall_capped = false;
    while (!criterion.done()) {
        if (seconds_between(wall_start, Clock::now()) > wall_cap) {
            wall_capped = true;
            break;
        }
        if (cold) {
            evictor_->evict();
            if (api.flush_cache) api.flush_cache(be.handle());
            synchronize(be);
        }
        if (device_timer) api.timer_start(be.handle());
        const double cpu0 = process_cpu_seconds();
        const auto t0 = Clock::now();
        for (int k = 0; k < calls; ++k) execute_once(be, active_.plan->get(), *active_.tensors);
        synchronize(be);
        const auto t1 = Clock::now();
        cpu_total += process_cpu_seconds() - cpu0;
        if (device_timer) {
            double dev = 0;
            if (api.timer_stop(be.handle(), &dev) == OPB_OK) device_samples.push_back(dev / calls);
        }
        const double sample = seconds_between(t0, t1);
        criterion.add(sample);
        samples.push_back(sample / calls);
    }
    RepetitionRecord rec;
    rec.summary = summarize(samples);
    rec.sample_times = std::move(samples);
    rec.calls_per_sample = calls;
    rec.target_met = criterion.target_met();
    rec.timed_out = criterion.timed_out() || (wall_capped && !rec.target_met);
    rec.cpu_seconds_per_call = cpu_total / (double(rec.summary.n) * calls);
    if (!device_samples.empty()) rec.device_seconds_per_call = summarize(device_samples).median;
    return rec;
}

void SuiteRun::bench(benchmark::State &state, std::size_t ri) {
    activate(ri);
    CaseResult &r = results_[ri];
    const Case &c = cases_[case_of_result_[ri]];
    if (r.status != "passed") {
        state.SkipWithError((r.status + ": " + r.reason).c_str());
        for (auto _ : state) {
        }
        return;
    }
    RepetitionRecord rec;
    for (auto _ : state) {
        try {
            rec = measure_repetition(c);
        } catch (const CaseFailure &f) {
            r.status = f.status;
            r.reason = f.reason;
            state.SkipWithError((r.status + ": " + r.reason).c_str());
            break;
        }
        state.SetIterationTime(rec.summary.median);
    }
    if (r.status != "passed") return;
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
    const double elapsed = seconds_between(started_, Clock::now());
    std::string eta = "?";
    if (ri > 0) eta = fmt::format("{:.0f}s", elapsed / double(ri) * double(results_.size() - ri));
    std::cerr << fmt::format("\x1b[2m[{}/{}  {:.0f}s elapsed, ~{} left]  {}\x1b[0m\n", ri + 1,
                             results_.size(), elapsed, eta, results_[ri].name);
}

// Skips known before anything runs: the backend is missing, unusable here,
// or does not support the case. Such cases are not registered with Google
// Benchmark; they are reported after the run and written into the result set.
std::optional<CaseFailure> SuiteRun::skip_before_running(std::size_t ri) {
    const CaseResult &r = results_[ri];
    auto missing = backend_missing_.find(r.backend);
    if (missing != backend_missing_.end()) return CaseFailure{"skipped", missing->second};
    BackendInstance &be = *backends_.at(r.backend);
    opb_status s = be.api().supports(be.handle(), &cases_[case_of_result_[ri]].desc);
    if (s == OPB_ERR_UNSUPPORTED || s == OPB_ERR_UNAVAILABLE) return CaseFailure{"skipped", be.error_text(s)};
    if (s != OPB_OK) return CaseFailure{"failed", "supports: " + be.error_text(s)};
    return std::nullopt;
}

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
        auto *b = benchmark::RegisterBenchmark(r.name.c_str(),
                                               [this, ri](benchmark::State &st) { bench(st, ri); });
        b->UseManualTime();
        b->Unit(benchmark::kMicrosecond);
        if (c.settings.repetitions != cases_.front().settings.repetitions)
            b->Repetitions(c.settings.repetitions);
    }
}

void SuiteRun::report_not_registered() const {
    if (not_registered_.empty()) return;
    // Grouped by reason: one backend's reason usually covers many cases.
    std::map<std::string, std::vector<std::string>> by_reason;
    for (std::size_t ri : not_registered_)
        by_reason[results_[ri].status + ": " + results_[ri].reason].push_back(results_[ri].name);
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
    std::vector<std::string> args = {"opbench"};
    // min_time 0: each repetition is one iteration holding opbench's own
    // noise-aware sampling; Google Benchmark must not repeat it to fill time.
    args.push_back("--benchmark_min_time=0");
    if (!cases_.empty())
        args.push_back(fmt::format("--benchmark_repetitions={}", cases_.front().settings.repetitions));
    for (const auto &a : options_.benchmark_args) args.push_back(a);
    if (!gb_json.empty()) {
        args.push_back("--benchmark_out=" + gb_json);
        args.push_back("--benchmark_out_format=json");
    }
    std::vector<char *> argv;
    for (auto &a : args) argv.push_back(a.data());
    int argc = static_cast<int>(argv.size());
    benchmark::Initialize(&argc, argv.data());
    if (benchmark::ReportUnrecognizedArguments(argc, argv.data()))
        throw std::runtime_error("unrecognised Google Benchmark arguments (see above)");

    auto console = std::make_unique<benchmark::ConsoleReporter>(
        isatty(STDOUT_FILENO) ? benchmark::ConsoleReporter::OO_Color : benchmark::ConsoleReporter::OO_None);
    auto lookup = [this](const std::string &name) -> const CaseResult * { return find_result(name); };
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
    nlohmann::json gb;
    {
        std::ifstream in(gb_json);
        if (!in) throw std::runtime_error("Google Benchmark wrote no JSON to " + gb_json);
        in >> gb;
    }
    std::error_code ec;
    fs::remove(gb_json, ec);
    nlohmann::json ctx = opbench_context(suite_, cases_, backends_, backend_missing_, options_, timer_overhead_);
    ctx["machine_peaks"] = machine_.peaks;
    ctx["machine_peaks_cache"] = machine_.path.string();
    ctx["measurement"]["call_overhead_seconds"] = call_overhead_;
    ctx["measurement"]["cpus"] = options_.cpus;
    ctx["warnings"] = warnings_;
    std::vector<const CaseResult *> unmeasured;
    for (std::size_t ri : not_registered_) unmeasured.push_back(&results_[ri]);
    Document doc;
    doc.data = enrich_result_set(std::move(gb), results_, unmeasured, ctx);
    write_file_atomically(options_.out_path, write_json(doc));
}

} // namespace

void pin_process_to_cpus(const std::vector<int> &cpus) {
    if (cpus.empty()) return;
    cpu_set_t set;
    CPU_ZERO(&set);
    for (int c : cpus) {
        if (c < 0 || c >= CPU_SETSIZE) throw std::runtime_error(fmt::format("CPU {} is out of range", c));
        CPU_SET(c, &set);
    }
    if (sched_setaffinity(0, sizeof set, &set) != 0)
        throw std::runtime_error(fmt::format("cannot pin to CPUs {}: {} (allowed: see `taskset -p {}`)",
                                             fmt::join(cpus, ","), std::strerror(errno), ::getpid()));
}

std::vector<std::string> measurement_warnings() {
    std::vector<std::string> w;
    const std::string build_type = OPBENCH_BUILD_TYPE;
    if (build_type != "release" && build_type != "plain")
        w.push_back("opbench was built as '" + build_type + "': harness overhead may be higher "
                    "(meson setup --buildtype=release)");
    const nlohmann::json cpu = cpu_context();
    if (cpu.value("cpu_scaling_enabled", nlohmann::json(nullptr)) == nlohmann::json(true))
        w.push_back("CPU frequency scaling is enabled (governor '" +
                    cpu.value("frequency_governor", std::string("unknown")) + "'): timings may vary");
    if (cpu.contains("load_average") && cpu["load_average"].is_array() && !cpu["load_average"].empty() &&
        cpu["load_average"][0].is_number()) {
        const double load = cpu["load_average"][0].get<double>();
        const int cores = allowed_cpu_count();
        if (load > 0.5 * cores)
            w.push_back(fmt::format("the machine is loaded (1-minute load average {:.2f} on {} cores): "
                                    "timings will be noisy",
                                    load, cores));
    }
    return w;
}

RunSummary run_suite(const Suite &suite, const PluginSet &plugins, const RunOptions &options) {
    SuiteRun run(suite, plugins, options);
    return run.run();
}

} // namespace opbench
