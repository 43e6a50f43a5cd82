// A decoder workload phase as one measured unit, its check against a
// reference, and the whole-model figures reported for it.
//
//   prefill: one call = the prompt's forward pass (step 0) for every sequence.
//   decode:  one call = every decode step in order (generate tokens per
//            sequence), each step synchronized and timed on its own: a real
//            decoding loop waits for each token before the next, and the
//            per-step times give ms per token p50 / p99.
// prepare() runs the prefill untimed before a decode phase, so the KV cache
// holds the prompt's rows before the first decode call (decoder.hpp: steps
// may be re-run).
#pragma once

#include "workload/decoder.hpp"

#include "suite/suite.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace opbench::workload {

using Phase = WorkloadCase::Phase;
[[nodiscard]] std::string_view phase_name(Phase p);

class DecoderPhaseWork {
public:
    DecoderPhaseWork(DecoderRun &run, Phase phase) : run_(run), phase_(phase) {}

    void prepare(); // DecoderRun::prepare (+ the prefill, for decode)
    void execute(); // one unit (see above); records step times
    void synchronize() { run_.synchronize(); }

    [[nodiscard]] Phase phase() const { return phase_; }
    // Tokens one call produces: batch x prompt (prefill) or batch x generate (decode).
    [[nodiscard]] int64_t tokens_per_call() const;
    // Tokens one timed unit produces: the whole prefill, or one decode step (batch tokens).
    [[nodiscard]] int64_t tokens_per_unit() const;
    // Seconds of each decode step since the last clear (empty for prefill).
    // At most kStepTimesKept are kept between clears (reserved in prepare, so
    // a timed call never allocates); later ones are not kept.
    static constexpr std::size_t kStepTimesKept = std::size_t(1) << 16;
    [[nodiscard]] const std::vector<double> &step_seconds() const { return step_seconds_; }
    void clear_step_seconds() { step_seconds_.clear(); }
    // Steps this phase runs, in order.
    [[nodiscard]] std::vector<int> steps() const;
    // Drops the step times recorded since `mark` (a step_seconds().size()):
    // a profiler's recorded sample is in no statistic, its steps neither.
    void drop_step_seconds_since(std::size_t mark) {
        if (mark < step_seconds_.size()) step_seconds_.resize(mark);
    }
    // Brackets each step and each component x layer of every call (the
    // profiler's spans, component_spans.hpp; null: none, one predictable
    // branch per step).
    void set_component_observer(ComponentObserver *observer) { observer_ = observer; }

    DecoderRun &run() { return run_; }

private:
    // One step, with the observer when one is set; a decode step includes its synchronize.
    void run_one_step(int step);

    DecoderRun &run_;
    Phase phase_;
    std::vector<double> step_seconds_;
    ComponentObserver *observer_ = nullptr;
};

// Every layer's output of every step (outputs[step][layer]), running all
// steps in order: the reference backend's side of the check.
[[nodiscard]] std::vector<std::vector<std::vector<float>>> capture_layer_outputs(DecoderRun &run);

// The worst NMSE over every (step, layer) output and where it was.
struct LayerComparison {
    double worst_nmse = 0;
    int step = 0, layer = 0;
    [[nodiscard]] std::string where() const; // "prefill, layer 0" / "decode step 3, layer 1"
};
[[nodiscard]] LayerComparison compare_layer_outputs(const std::vector<std::vector<std::vector<float>>> &got,
                                                    const std::vector<std::vector<std::vector<float>>> &want);

// The check of one phase, after prepare(): runs the phase's steps in order
// and compares every layer's output of each with the same steps of
// `reference` (capture_layer_outputs on the reference backend).
[[nodiscard]] LayerComparison check_phase(DecoderPhaseWork &work,
                                          const std::vector<std::vector<std::vector<float>>> &reference);

// The largest NMSE a decoder layer output may show against the reference, and why.
struct WorkloadTolerance {
    double max_nmse;
    const char *why;
};
[[nodiscard]] WorkloadTolerance decoder_tolerance(const DecoderConfig &config);

// The components' times over the steps a profile recorded (component_times
// in component_spans.hpp reads them from the spans).
struct ComponentTimes {
    uint64_t steps = 0;          // step spans
    double step_seconds = 0;     // their total
    double unscoped_seconds = 0; // step time outside every component span (the steps' self time)
    struct Part {
        std::string component;
        uint64_t spans = 0;             // steps x layers
        double total_s = 0, self_s = 0; // self: outside the plugin's own scopes inside it
    };
    std::vector<Part> parts; // in the order a step runs them
};

// Measured inputs of the whole-model figures.
struct DecoderMeasurements {
    std::vector<double> call_seconds; // one per timed call (every sample, every repetition)
    std::vector<double> unit_seconds; // prefill: = call_seconds; decode: every step's seconds
    int64_t tokens_per_call = 0, tokens_per_unit = 0;
    int64_t context_tokens = 0; // batch x (prompt + generate): what the cache holds at the end
    uint64_t peak_bytes = 0;    // backend memory high-water mark (memory_stats)
    uint64_t weight_bytes = 0, kv_cache_bytes = 0, kv_bytes_per_token = 0;
    double heap_allocs_per_call = 0;    // process heap allocations per call (the interposer)
    double backend_allocs_per_call = 0; // allocations reported through on_alloc per call
    ComponentTimes components;          // from the component spans (component_spans.hpp)
    std::string components_from;        // which spans: "profile" (the run's recorded samples) or "scoped_calls"
};

// tokens/s (median), ms per token p50 / p99, memory and allocations per token,
// component shares. Pure: tested with made-up numbers.
struct DecoderFigures {
    double tokens_per_second = 0;
    double ms_per_token_p50 = 0, ms_per_token_p99 = 0;
    uint64_t peak_bytes = 0;
    double memory_per_token_bytes = 0; // (peak - weights) / context tokens
    uint64_t kv_cache_bytes_per_token = 0;
    double allocs_per_token = 0, backend_allocs_per_token = 0;
    struct Share {
        std::string component;
        double share = 0; // of the steps' time (component spans' total / step spans' total)
        double seconds_per_token = 0;
        double self_share = 0; // the part of `share` outside the plugin's own scopes
        double self_seconds_per_token = 0;
        uint64_t spans = 0;
    };
    std::vector<Share> components; // those the steps ran, in layer order
    // The steps' time in no component (the step loop, decode's synchronize):
    // the shares and this add up to 1.
    double unscoped_share = 0, unscoped_seconds_per_token = 0;
    uint64_t component_steps = 0; // step spans the shares come from
    std::string components_from;  // DecoderMeasurements::components_from
};
[[nodiscard]] DecoderFigures decoder_figures(const DecoderMeasurements &m);

// The figures as result-set fields (results/README.md, "Workload entries").
[[nodiscard]] nlohmann::json figures_json(const DecoderFigures &f);

} // namespace opbench::workload
