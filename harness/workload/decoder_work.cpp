#include "workload/decoder_work.hpp"

#include "measure/statistics.hpp"
#include "check/verify.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>

namespace opbench::workload {

std::string_view phase_name(Phase p) { return p == Phase::prefill ? "prefill" : "decode"; }

std::vector<int> DecoderPhaseWork::steps() const {
    if (phase_ == Phase::prefill) return {0};
    std::vector<int> s;
    for (int i = 1; i < run_.steps(); ++i) s.push_back(i);
    return s;
}

int64_t DecoderPhaseWork::tokens_per_call() const {
    const auto &c = run_.config();
    return c.batch * (phase_ == Phase::prefill ? c.prompt : c.generate);
}

int64_t DecoderPhaseWork::tokens_per_unit() const {
    const auto &c = run_.config();
    return phase_ == Phase::prefill ? c.batch * c.prompt : c.batch;
}

void DecoderPhaseWork::prepare() {
    run_.prepare();
    // Decode reads the prompt's cache rows: the prefill writes them. (Prefill
    // writes its own rows; decode steps write theirs in order in execute.)
    if (phase_ == Phase::decode) {
        run_.run_step(0);
        run_.synchronize();
    }
    // Room for many calls' step times, so recording them allocates nothing
    // inside a timed call (the harness counts allocations per call).
    step_seconds_.reserve(kStepTimesKept);
}

namespace {

// One step as the observer sees it, closed also when the step throws.
class StepBracket {
public:
    StepBracket(ComponentObserver &observer, int step) : observer_(observer), step_(step) {
        observer_.step_begin(step_);
    }
    ~StepBracket() { observer_.step_end(step_); }
    StepBracket(const StepBracket &) = delete;
    StepBracket &operator=(const StepBracket &) = delete;

private:
    ComponentObserver &observer_;
    int step_;
};

} // namespace

void DecoderPhaseWork::run_one_step(int step) {
    const bool decode = phase_ == Phase::decode; // a decode step waits for its token
    if (!observer_) {                            // every timed call: this test is all the spans cost it
        run_.run_step(step);
        if (decode) run_.synchronize();
        return;
    }
    StepBracket bracket(*observer_, step);
    run_.run_step(step, *observer_);
    if (decode) run_.synchronize();
}

void DecoderPhaseWork::execute() {
    if (phase_ == Phase::prefill) {
        run_one_step(0);
        return;
    }
    using Clock = std::chrono::steady_clock;
    for (int s = 1; s < run_.steps(); ++s) {
        const auto t0 = Clock::now();
        run_one_step(s);
        if (step_seconds_.size() < kStepTimesKept)
            step_seconds_.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
    }
}

std::vector<std::vector<std::vector<float>>> capture_layer_outputs(DecoderRun &run) {
    run.prepare();
    std::vector<std::vector<std::vector<float>>> out;
    for (int s = 0; s < run.steps(); ++s) {
        run.run_step(s);
        run.synchronize();
        out.push_back(run.layer_outputs(s));
    }
    return out;
}

std::string LayerComparison::where() const {
    return step == 0 ? fmt::format("prefill, layer {}", layer) : fmt::format("decode step {}, layer {}", step, layer);
}

LayerComparison compare_layer_outputs(const std::vector<std::vector<std::vector<float>>> &got,
                                      const std::vector<std::vector<std::vector<float>>> &want) {
    LayerComparison worst;
    worst.worst_nmse = -1;
    for (std::size_t s = 0; s < want.size(); ++s)
        for (std::size_t l = 0; l < want[s].size(); ++l) {
            const bool shaped = s < got.size() && l < got[s].size() && got[s][l].size() == want[s][l].size();
            const double e = shaped
                                 ? nmse(got[s][l].data(), want[s][l].data(), OPB_DTYPE_F32, int64_t(want[s][l].size()))
                                 : INFINITY;
            if (!(e <= worst.worst_nmse)) worst = {e, int(s), int(l)};
        }
    if (worst.worst_nmse < 0) worst.worst_nmse = 0;
    return worst;
}

LayerComparison check_phase(DecoderPhaseWork &work, const std::vector<std::vector<std::vector<float>>> &reference) {
    DecoderRun &run = work.run();
    // Outputs indexed by step as in `reference`; steps outside the phase stay empty on both sides.
    std::vector<std::vector<std::vector<float>>> got(reference.size()), want(reference.size());
    for (int s : work.steps()) {
        run.run_step(s);
        run.synchronize();
        got[std::size_t(s)] = run.layer_outputs(s);
        if (std::size_t(s) < reference.size()) want[std::size_t(s)] = reference[std::size_t(s)];
    }
    return compare_layer_outputs(got, want);
}

WorkloadTolerance decoder_tolerance(const DecoderConfig &c) {
    // A layer is a chain of ~10 ops whose rounding differences (summation
    // order, exp/erf approximations) are each within the per-op tolerance and
    // are carried on by the residual stream and the KV cache; measured
    // naive vs onednn at hidden 128, 2 layers: f32 ~1e-12, bf16 ~1e-4
    // (tests/harness/workload/decoder_work_test.cpp prints them).
    switch (c.dtype) {
    case OPB_DTYPE_BF16: return {5e-3, "bf16: every op output rounded to 8 mantissa bits, through the layer chain"};
    case OPB_DTYPE_F16: return {5e-4, "f16: every op output rounded to 11 mantissa bits, through the layer chain"};
    // The integer products are exact on both sides; an activation whose f32
    // value differs in its last bits (summation order upstream) may round to
    // the next quantisation step, which the layer chain carries on.
    case OPB_DTYPE_S8: return {1e-4, "int8 layers: an activation at a step boundary may quantise one step apart"};
    // bf16 activations as above, and an FP8 layer's input at an e4m3
    // rounding boundary may land one step (2^-3 of it) apart; FP8 tensor
    // cores also accumulate with fewer bits than the reference's double.
    case OPB_DTYPE_F8_E4M3:
        return {1e-2, "fp8 layers: bf16 activations, and an input at an e4m3 step boundary may quantise one step "
                      "(2^-3) apart, through the layer chain"};
    default: return {1e-8, "f32: summation order and transcendental approximations, through the layer chain"};
    }
}

DecoderFigures decoder_figures(const DecoderMeasurements &m) {
    DecoderFigures f;
    if (!m.call_seconds.empty() && m.tokens_per_call > 0) {
        const double median = summarize(m.call_seconds).median;
        f.tokens_per_second = median > 0 ? double(m.tokens_per_call) / median : 0;
    }
    if (!m.unit_seconds.empty() && m.tokens_per_unit > 0) {
        std::vector<double> ms;
        for (double s : m.unit_seconds) ms.push_back(s * 1e3 / double(m.tokens_per_unit));
        std::sort(ms.begin(), ms.end());
        f.ms_per_token_p50 = percentile_sorted(ms, 0.50);
        f.ms_per_token_p99 = percentile_sorted(ms, 0.99);
    }
    f.peak_bytes = m.peak_bytes;
    if (m.context_tokens > 0) {
        const uint64_t beyond_weights = m.peak_bytes > m.weight_bytes ? m.peak_bytes - m.weight_bytes : 0;
        f.memory_per_token_bytes = double(beyond_weights) / double(m.context_tokens);
    }
    f.kv_cache_bytes_per_token = m.kv_bytes_per_token;
    if (m.tokens_per_call > 0) {
        f.allocs_per_token = m.heap_allocs_per_call / double(m.tokens_per_call);
        f.backend_allocs_per_token = m.backend_allocs_per_call / double(m.tokens_per_call);
    }
    // Shares of the steps' time, so that with the unscoped rest they add up to 1.
    const ComponentTimes &t = m.components;
    const double tokens = double(t.steps) * double(m.tokens_per_unit);
    auto share = [&](double s) { return t.step_seconds > 0 ? s / t.step_seconds : 0.0; };
    auto per_token = [&](double s) { return tokens > 0 ? s / tokens : 0.0; };
    for (const auto &p : t.parts)
        f.components.push_back(
            {p.component, share(p.total_s), per_token(p.total_s), share(p.self_s), per_token(p.self_s), p.spans});
    f.unscoped_share = share(t.unscoped_seconds);
    f.unscoped_seconds_per_token = per_token(t.unscoped_seconds);
    f.component_steps = t.steps;
    f.components_from = m.components_from;
    return f;
}

nlohmann::json figures_json(const DecoderFigures &f) {
    nlohmann::json j;
    j["tokens_per_second"] = f.tokens_per_second;
    j["ms_per_token_p50"] = f.ms_per_token_p50;
    j["ms_per_token_p99"] = f.ms_per_token_p99;
    j["peak_memory_bytes"] = f.peak_bytes;
    j["memory_per_token_bytes"] = f.memory_per_token_bytes;
    j["kv_cache_bytes_per_token"] = f.kv_cache_bytes_per_token;
    j["allocs_per_token"] = f.allocs_per_token;
    j["backend_allocs_per_token"] = f.backend_allocs_per_token;
    nlohmann::json comps = nlohmann::json::array();
    for (const auto &s : f.components)
        comps.push_back({{"component", s.component},
                         {"share", s.share},
                         {"seconds_per_token", s.seconds_per_token},
                         {"self_share", s.self_share},
                         {"self_seconds_per_token", s.self_seconds_per_token},
                         {"spans", s.spans}});
    j["components"] = comps;
    j["components_unscoped_share"] = f.unscoped_share;
    j["components_unscoped_seconds_per_token"] = f.unscoped_seconds_per_token;
    j["components_steps"] = f.component_steps;
    j["components_from"] = f.components_from;
    return j;
}

} // namespace opbench::workload
