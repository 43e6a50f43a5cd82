// The decoder's steps and components as profiler spans (issue 12), and the
// per-component times a workload entry's shares are computed from:
//
//   step                         one step of a phase call (decode: with its synchronize)
//     embed | attn_norm | qkv | attention | attn_out | ... | mlp_residual
//                                one span per component x layer; the
//                                plugin's own scopes (qk, softmax...) nest inside
//
// A component span ends after a synchronize, so on an asynchronous (GPU)
// backend it holds the component's work, not only its launches.
//
// The spans are installed only for the calls that record them
// (DecoderPhaseWork::set_component_observer): a profiling run's recorded
// samples, or the scoped passes below. Every timed call runs without an
// observer: one predictable branch per step (DecoderPhaseWork::run_one_step).
#pragma once

#include "workload/decoder.hpp"
#include "workload/decoder_work.hpp"

#include "profile/profiler.hpp"

#include <string_view>

namespace opbench::workload {

inline constexpr std::string_view kStepSpan = "step";

class ComponentSpans final : public ComponentObserver {
public:
    ComponentSpans(Profiler &profiler, DecoderRun &run) : profiler_(profiler), run_(run) {}

    void step_begin(int) override { profiler_.begin(kStepSpan); }
    void step_end(int) override { profiler_.end(); }
    void begin(Component c, int) override { profiler_.begin(component_name(c)); }
    void end(Component c, int layer) override;

private:
    Profiler &profiler_;
    DecoderRun &run_;
};

// The components' times over every `step` span of `tree`: each step's
// children are its components, its self time the unscoped rest.
[[nodiscard]] ComponentTimes component_times(const ScopeTree &tree);

// Component times when the run does not profile the entry: `calls` phase
// calls with the spans on, into a profiler of their own; the times of the
// call of median length (the lower middle of an even count). Run after the
// timed repetitions, never inside them.
[[nodiscard]] ComponentTimes scoped_component_times(DecoderPhaseWork &phase, int calls);

} // namespace opbench::workload
