// harness/workload/decoder_work.cpp: a decoder phase as a measured unit, the
// layer-by-layer check, and the whole-model figures.
#include "workload/decoder_work.hpp"

#include "workload/component_spans.hpp"

#include "plugin/plugin_loader.hpp"

#include "opbench/ops.hpp"
#include "onednn_isa.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <iostream>
#include <memory>

namespace opbench::workload {
namespace {

std::unique_ptr<BackendInstance> open_backend(const char *path) {
    LoadResult r = load_plugin(path);
    if (!r.plugin) {
        ADD_FAILURE() << path << ": " << (r.failure ? r.failure->reason : "not loaded");
        return nullptr;
    }
    static std::vector<LoadedPlugin> keep;
    keep.push_back(*r.plugin);
    return std::make_unique<BackendInstance>(keep.back());
}

DecoderConfig small() {
    DecoderConfig c;
    c.hidden = 16;
    c.heads = 2;
    c.layers = 2;
    c.batch = 1;
    c.prompt = 5;
    c.generate = 4;
    return c;
}

TEST(DecoderFigures, FromMeasurements) {
    DecoderMeasurements m;
    m.call_seconds = {0.3, 0.1, 0.2}; // median 0.2 s
    m.tokens_per_call = 10;           // -> 50 tokens/s
    m.unit_seconds = {0.01, 0.02, 0.03, 0.04};
    m.tokens_per_unit = 1; // ms per token = unit seconds x 1000
    m.context_tokens = 100;
    m.peak_bytes = 5000;
    m.weight_bytes = 3000;
    m.kv_bytes_per_token = 16;
    m.heap_allocs_per_call = 20;
    m.backend_allocs_per_call = 0;
    // 4 steps of 8 s: qkv 3 s (1 s of it outside the plugin's scopes), attention 1 s, 4 s in no component
    m.components.steps = 4;
    m.components.step_seconds = 8.0;
    m.components.unscoped_seconds = 4.0;
    m.components.parts = {{"qkv", 8, 3.0, 1.0}, {"attention", 8, 1.0, 1.0}};
    m.components_from = "profile";
    const DecoderFigures f = decoder_figures(m);
    EXPECT_DOUBLE_EQ(f.tokens_per_second, 50.0);
    EXPECT_NEAR(f.ms_per_token_p50, 25.0, 1e-9); // linear interpolation between 20 and 30
    EXPECT_NEAR(f.ms_per_token_p99, 39.7, 1e-9);
    EXPECT_EQ(f.peak_bytes, 5000u);
    EXPECT_DOUBLE_EQ(f.memory_per_token_bytes, 20.0); // (5000 - 3000) / 100
    EXPECT_EQ(f.kv_cache_bytes_per_token, 16u);
    EXPECT_DOUBLE_EQ(f.allocs_per_token, 2.0);
    ASSERT_EQ(f.components.size(), 2u);
    EXPECT_EQ(f.components[0].component, "qkv");
    EXPECT_DOUBLE_EQ(f.components[0].share, 3.0 / 8.0); // of the steps' time
    EXPECT_DOUBLE_EQ(f.components[0].self_share, 1.0 / 8.0);
    EXPECT_DOUBLE_EQ(f.components[0].seconds_per_token, 3.0 / 4.0); // 4 steps of one token
    EXPECT_EQ(f.components[0].spans, 8u);
    EXPECT_EQ(f.components[1].component, "attention");
    EXPECT_DOUBLE_EQ(f.unscoped_share, 0.5);
    EXPECT_DOUBLE_EQ(f.components[0].share + f.components[1].share + f.unscoped_share, 1.0);
    const auto j = figures_json(f);
    EXPECT_DOUBLE_EQ(j.at("tokens_per_second").get<double>(), 50.0);
    EXPECT_EQ(j.at("components").size(), 2u);
    EXPECT_EQ(j.at("components")[1].at("component"), "attention");
    EXPECT_DOUBLE_EQ(j.at("components")[0].at("self_share").get<double>(), 1.0 / 8.0);
    EXPECT_DOUBLE_EQ(j.at("components_unscoped_share").get<double>(), 0.5);
    EXPECT_EQ(j.at("components_steps"), 4);
    EXPECT_EQ(j.at("components_from"), "profile");
}

TEST(DecoderFigures, NothingMeasuredGivesZeros) {
    const DecoderFigures f = decoder_figures(DecoderMeasurements{});
    EXPECT_EQ(f.tokens_per_second, 0.0);
    EXPECT_EQ(f.ms_per_token_p99, 0.0);
    EXPECT_TRUE(f.components.empty());
}

TEST(CompareLayerOutputs, WorstAndWhere) {
    std::vector<std::vector<std::vector<float>>> want = {{{1, 2}, {3, 4}}, {{1, 1}, {2, 2}}};
    auto got = want;
    EXPECT_EQ(compare_layer_outputs(got, want).worst_nmse, 0.0);
    got[1][1][0] = 2.5f; // decode step 1, layer 1
    got[0][0][0] = 1.01f;
    auto c = compare_layer_outputs(got, want);
    EXPECT_EQ(c.step, 1);
    EXPECT_EQ(c.layer, 1);
    EXPECT_NEAR(c.worst_nmse, 0.25 / 8.0, 1e-12);
    EXPECT_EQ(c.where(), "decode step 1, layer 1");
    got[0].pop_back(); // a missing output is as bad as it gets
    c = compare_layer_outputs(got, want);
    EXPECT_TRUE(std::isinf(c.worst_nmse));
    EXPECT_EQ(c.where(), "prefill, layer 1");
}

TEST(DecoderPhaseWork, DecodeCallRunsEveryStepAndTimesEach) {
    auto be = open_backend(NAIVE_PLUGIN);
    ASSERT_TRUE(be);
    DecoderRun run(*be, small());
    DecoderPhaseWork decode(run, Phase::decode);
    decode.prepare();
    EXPECT_EQ(decode.tokens_per_call(), 4);
    EXPECT_EQ(decode.tokens_per_unit(), 1);
    EXPECT_EQ(decode.steps(), (std::vector<int>{1, 2, 3, 4}));
    decode.execute();
    decode.execute();
    decode.synchronize();
    ASSERT_EQ(decode.step_seconds().size(), 8u);
    for (double s : decode.step_seconds()) EXPECT_GT(s, 0.0);
    decode.clear_step_seconds();
    EXPECT_TRUE(decode.step_seconds().empty());

    DecoderPhaseWork prefill(run, Phase::prefill);
    prefill.prepare(); // already prepared: only re-runs the steps
    EXPECT_EQ(prefill.tokens_per_call(), 5);
    EXPECT_EQ(prefill.tokens_per_unit(), 5);
    prefill.execute();
    EXPECT_TRUE(prefill.step_seconds().empty());
}

// The shares' spans: a step span per step, in it one span per component x
// layer named after the component, in the order the layer runs them.
TEST(ComponentSpans, StepsHoldEveryComponentOfEveryLayer) {
    auto be = open_backend(NAIVE_PLUGIN);
    ASSERT_TRUE(be);
    DecoderRun run(*be, small()); // 2 layers, gelu MLP, 4 decode steps
    DecoderPhaseWork decode(run, Phase::decode);
    decode.prepare();
    const std::size_t steps_before = decode.step_seconds().size();
    const ComponentTimes t = scoped_component_times(decode, 3);
    EXPECT_EQ(decode.step_seconds().size(), steps_before) << "scoped calls are not timed calls";
    EXPECT_EQ(t.steps, 4u) << "one call's steps: the call of median length";
    std::vector<std::string> names;
    double parts = 0;
    for (const auto &p : t.parts) {
        names.push_back(p.component);
        EXPECT_EQ(p.spans, p.component == "embed" ? t.steps : t.steps * 2) << p.component;
        EXPECT_GE(p.total_s, p.self_s);
        EXPECT_GT(p.total_s, 0.0) << p.component;
        parts += p.total_s;
    }
    const std::vector<std::string> want = {"embed",    "attn_norm",     "qkv",         "attention",
                                           "attn_out", "attn_residual", "mlp_norm",    "mlp_in",
                                           "mlp_act",  "mlp_down",      "mlp_residual"}; // no mlp_mul: gelu
    EXPECT_EQ(names, want);
    EXPECT_LE(parts, t.step_seconds);
    EXPECT_NEAR(parts + t.unscoped_seconds, t.step_seconds, 1e-9 * t.step_seconds);
    // And the figures' shares: each component's part of the steps' time.
    DecoderMeasurements m;
    m.components = t;
    m.tokens_per_unit = 1;
    const DecoderFigures f = decoder_figures(m);
    double shares = f.unscoped_share;
    for (const auto &s : f.components) shares += s.share;
    EXPECT_NEAR(shares, 1.0, 1e-9);
    // The spans are gone afterwards: a plain call sees no observer.
    decode.execute();
}

TEST(DecoderPhaseWork, ComponentObserverSeesEveryStepOfACall) {
    struct Counter : ComponentObserver {
        int attention = 0, embeds = 0;
        void begin(Component c, int) override {
            attention += c == Component::attention;
            embeds += c == Component::embed;
        }
        void end(Component, int) override {}
        int steps = 0;
        void step_begin(int) override { ++steps; }
    } counter;
    auto be = open_backend(NAIVE_PLUGIN);
    ASSERT_TRUE(be);
    DecoderRun run(*be, small()); // 2 layers, 4 decode steps
    DecoderPhaseWork decode(run, Phase::decode);
    decode.prepare();
    decode.set_component_observer(&counter);
    decode.execute();
    EXPECT_EQ(counter.embeds, 4);        // one per step
    EXPECT_EQ(counter.attention, 4 * 2); // one per step and layer
    EXPECT_EQ(counter.steps, 4);
    decode.set_component_observer(nullptr);
    decode.execute();
    EXPECT_EQ(counter.embeds, 4);
}

TEST(DecoderPhaseWork, RepeatedCallsLeaveTheOutputsUnchanged) {
    auto be = open_backend(NAIVE_PLUGIN);
    ASSERT_TRUE(be);
    DecoderRun run(*be, small());
    const auto first = capture_layer_outputs(run);
    DecoderPhaseWork decode(run, Phase::decode);
    decode.prepare();
    for (int i = 0; i < 3; ++i) decode.execute();
    decode.synchronize();
    EXPECT_EQ(run.layer_outputs(4), first[4]);
}

TEST(DecoderPhaseWork, CheckComparesThePhasesStepsOnly) {
    auto ref_be = open_backend(NAIVE_PLUGIN), be = open_backend(NAIVE_PLUGIN);
    ASSERT_TRUE(ref_be && be);
    DecoderRun ref(*ref_be, small()), run(*be, small());
    auto reference = capture_layer_outputs(ref);
    DecoderPhaseWork decode(run, Phase::decode);
    decode.prepare();
    EXPECT_EQ(check_phase(decode, reference).worst_nmse, 0.0); // same backend: bit-identical
    reference[0][0][0] += 100.0f;                              // a prefill output: not the decode phase's business
    EXPECT_EQ(check_phase(decode, reference).worst_nmse, 0.0);
    reference[3][1][2] += 100.0f; // decode step 3, layer 1
    const LayerComparison c = check_phase(decode, reference);
    EXPECT_GT(c.worst_nmse, 1.0);
    EXPECT_EQ(c.where(), "decode step 3, layer 1");
    DecoderPhaseWork prefill(run, Phase::prefill);
    prefill.prepare();
    EXPECT_EQ(check_phase(prefill, reference).where(), "prefill, layer 0");
}

#ifdef ONEDNN_PLUGIN
// The check's tolerance against what onednn actually shows at a GPT-2-like
// and a Llama-like shape (printed, so the tolerance's comment can cite it).
TEST(DecoderTolerance, OnednnIsWellInsideIt) {
    for (int dtype : {OPB_DTYPE_F32, OPB_DTYPE_BF16})
        for (bool llama : {false, true}) {
            DecoderConfig c;
            c.hidden = 128;
            c.heads = 4;
            c.layers = 2;
            c.prompt = 16;
            c.generate = 4;
            c.dtype = dtype;
            if (llama) {
                c.norm = NormKind::rmsnorm;
                c.mlp = MlpKind::swiglu;
                c.bias = false;
                c.ffn = 352;
            }
            auto ref_be = open_backend(NAIVE_PLUGIN), be = open_backend(ONEDNN_PLUGIN);
            ASSERT_TRUE(ref_be && be);
            DecoderRun ref(*ref_be, c), run(*be, c);
            if (dtype == OPB_DTYPE_BF16 &&
                !opbench::test::onednn_isa_runs_bf16(opbench::test::onednn_isa_of(be->api(), be->handle()))) {
                // No bf16 kernels on this ISA: the workload refuses (decoder_test checks the reason).
                ASSERT_TRUE(run.unsupported().has_value());
                std::cout << "bf16: not run, " << run.unsupported()->reason << "\n";
                continue;
            }
            const auto want = capture_layer_outputs(ref), got = capture_layer_outputs(run);
            const LayerComparison cmp = compare_layer_outputs(got, want);
            std::cout << dtype_name(dtype) << (llama ? " llama-like" : " gpt2-like") << ": worst NMSE "
                      << cmp.worst_nmse << " at " << cmp.where() << "\n";
            EXPECT_LT(cmp.worst_nmse, decoder_tolerance(c).max_nmse / 10);
        }
}
#endif

} // namespace
} // namespace opbench::workload
