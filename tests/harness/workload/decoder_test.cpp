// harness/workload/decoder.cpp: the decoder workload run through real plugins.
//
// The naive plugin's layer outputs, for every step (prefill and each decode
// step) and every layer, are checked against a float64 reimplementation of
// the decoder written here from the textbook definitions (no KV-cache tricks,
// no head layouts: a plain loop over positions). Wiring mistakes - a cache row
// written at the wrong position, a head reading another head's weights, a
// missing bias, the causal alignment - all change the outputs far beyond the
// f32 tolerance. onednn (when built) is checked against naive the way the
// harness verifies any backend.
#include "workload/decoder.hpp"
#include "workload/decoder_work.hpp"

#include "plugin/plugin_loader.hpp"
#include "check/verify.hpp"

#include "opbench/ops.hpp"
#include "onednn_isa.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

namespace opbench::workload {
namespace {

// ---- float64 reference ----------------------------------------------------------

struct Reference {
    const DecoderConfig &c;
    const DecoderWeights &w;
    // cache[layer][b][kv head][pos][j]
    std::vector<std::vector<double>> k, v;

    Reference(const DecoderConfig &config, const DecoderWeights &weights) : c(config), w(weights) {
        const std::size_t n = std::size_t(c.batch * c.kv_head_count() * c.context() * c.head_dim());
        k.assign(std::size_t(c.layers), std::vector<double>(n, 0.0));
        v = k;
    }

    std::vector<double> norm(const std::vector<double> &x, const std::vector<float> &g, const std::vector<float> &beta,
                             int64_t rows) const {
        const int64_t d = c.hidden;
        std::vector<double> y(x.size());
        for (int64_t r = 0; r < rows; ++r) {
            const double *xr = &x[std::size_t(r * d)];
            double mean = 0, sq = 0;
            for (int64_t j = 0; j < d; ++j) mean += xr[j];
            mean /= double(d);
            if (c.norm == NormKind::layernorm) {
                for (int64_t j = 0; j < d; ++j) sq += (xr[j] - mean) * (xr[j] - mean);
                const double inv = 1.0 / std::sqrt(sq / double(d) + double(c.eps));
                for (int64_t j = 0; j < d; ++j)
                    y[std::size_t(r * d + j)] = (xr[j] - mean) * inv * g[std::size_t(j)] + beta[std::size_t(j)];
            } else {
                for (int64_t j = 0; j < d; ++j) sq += xr[j] * xr[j];
                const double inv = 1.0 / std::sqrt(sq / double(d) + double(c.eps));
                for (int64_t j = 0; j < d; ++j) y[std::size_t(r * d + j)] = xr[j] * inv * g[std::size_t(j)];
            }
        }
        return y;
    }

    // y[r][o] = sum_i x[r][i] * W(o, i) + bias[o]; W given as [out, in] or [in, out].
    static std::vector<double> linear(const std::vector<double> &x, int64_t rows, int64_t in, int64_t out,
                                      const std::vector<float> &wt, bool out_in, const std::vector<float> &bias) {
        std::vector<double> y(std::size_t(rows * out));
        for (int64_t r = 0; r < rows; ++r)
            for (int64_t o = 0; o < out; ++o) {
                double s = bias.empty() ? 0.0 : bias[std::size_t(o)];
                for (int64_t i = 0; i < in; ++i)
                    s += x[std::size_t(r * in + i)] * wt[std::size_t(out_in ? o * in + i : i * out + o)];
                y[std::size_t(r * out + o)] = s;
            }
        return y;
    }

    // RoPE of one head's row at position `pos`, as plugin.h defines it:
    // pair i rotated by pos * theta^(-2i / head_dim).
    void rotate(double *x, int64_t pos) const {
        const int64_t Dh = c.head_dim(), half = Dh / 2;
        const bool inter = c.rope_variant == OPB_ROPE_INTERLEAVED;
        for (int64_t i = 0; i < half; ++i) {
            const double a = double(pos) * std::pow(double(c.rope_theta), -2.0 * double(i) / double(Dh));
            double &x0 = x[inter ? 2 * i : i], &x1 = x[inter ? 2 * i + 1 : i + half];
            const double r0 = x0 * std::cos(a) - x1 * std::sin(a), r1 = x1 * std::cos(a) + x0 * std::sin(a);
            x0 = r0;
            x1 = r1;
        }
    }

    // One step: tokens [batch][S] at positions L..L+S-1. Returns each layer's output.
    std::vector<std::vector<double>> step(int64_t S, int64_t L) {
        const int64_t B = c.batch, d = c.hidden, H = c.heads, Dh = c.head_dim(), C = c.context();
        const int64_t F = c.ffn_width(), T = B * S;
        const int64_t KVH = c.kv_head_count(), G = H / KVH, qd = c.q_width(), kvd = c.kv_width();
        std::vector<double> x(std::size_t(T * d));
        for (int64_t b = 0; b < B; ++b)
            for (int64_t s = 0; s < S; ++s)
                for (int64_t j = 0; j < d; ++j)
                    x[std::size_t((b * S + s) * d + j)] = w.embeddings[std::size_t((b * C + L + s) * d + j)];
        std::vector<std::vector<double>> outs;
        for (int64_t l = 0; l < c.layers; ++l) {
            const LayerWeights &lw = w.layers[std::size_t(l)];
            auto n1 = norm(x, lw.norm1_gamma, lw.norm1_beta, T);
            auto q = linear(n1, T, d, qd, lw.wq, true, lw.bq);
            auto kk = linear(n1, T, d, kvd, lw.wk, true, lw.bk);
            auto vv = linear(n1, T, d, kvd, lw.wv, true, lw.bv);
            if (c.rope)
                for (int64_t b = 0; b < B; ++b)
                    for (int64_t s = 0; s < S; ++s) {
                        for (int64_t h = 0; h < H; ++h) rotate(&q[std::size_t((b * S + s) * qd + h * Dh)], L + s);
                        for (int64_t h = 0; h < KVH; ++h) rotate(&kk[std::size_t((b * S + s) * kvd + h * Dh)], L + s);
                    }
            auto slot = [&](int64_t b, int64_t kh, int64_t pos, int64_t j) {
                return std::size_t(((b * KVH + kh) * C + pos) * Dh + j);
            };
            for (int64_t b = 0; b < B; ++b)
                for (int64_t s = 0; s < S; ++s)
                    for (int64_t kh = 0; kh < KVH; ++kh)
                        for (int64_t j = 0; j < Dh; ++j) {
                            k[std::size_t(l)][slot(b, kh, L + s, j)] = kk[std::size_t((b * S + s) * kvd + kh * Dh + j)];
                            v[std::size_t(l)][slot(b, kh, L + s, j)] = vv[std::size_t((b * S + s) * kvd + kh * Dh + j)];
                        }
            // Causal: position L + s sees positions 0 .. L + s; query head h
            // reads K/V head h / G.
            std::vector<double> o(std::size_t(T * qd));
            for (int64_t b = 0; b < B; ++b)
                for (int64_t s = 0; s < S; ++s)
                    for (int64_t h = 0; h < H; ++h) {
                        const int64_t pos = L + s;
                        std::vector<double> p(std::size_t(pos + 1));
                        double mx = -INFINITY;
                        for (int64_t t = 0; t <= pos; ++t) {
                            double dot = 0;
                            for (int64_t j = 0; j < Dh; ++j)
                                dot += q[std::size_t((b * S + s) * qd + h * Dh + j)] *
                                       k[std::size_t(l)][slot(b, h / G, t, j)];
                            p[std::size_t(t)] = dot / std::sqrt(double(Dh));
                            mx = std::max(mx, p[std::size_t(t)]);
                        }
                        double sum = 0;
                        for (auto &e : p) sum += (e = std::exp(e - mx));
                        for (int64_t j = 0; j < Dh; ++j) {
                            double acc = 0;
                            for (int64_t t = 0; t <= pos; ++t)
                                acc += p[std::size_t(t)] * v[std::size_t(l)][slot(b, h / G, t, j)];
                            o[std::size_t((b * S + s) * qd + h * Dh + j)] = acc / sum;
                        }
                    }
            auto attn = linear(o, T, qd, d, lw.wo, false, lw.bo);
            std::vector<double> hres(x.size());
            for (std::size_t i = 0; i < x.size(); ++i) hres[i] = x[i] + attn[i];
            auto n2 = norm(hres, lw.norm2_gamma, lw.norm2_beta, T);
            auto up = linear(n2, T, d, F, lw.w_up, true, lw.b_up);
            std::vector<double> a(up.size());
            auto silu = [](double z) { return z / (1.0 + std::exp(-z)); };
            if (c.mlp == MlpKind::gelu) {
                for (std::size_t i = 0; i < up.size(); ++i) {
                    const double z = up[i];
                    a[i] = c.gelu_variant == OPB_GELU_TANH
                               ? 0.5 * z * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (z + 0.044715 * z * z * z)))
                               : 0.5 * z * (1.0 + std::erf(z / std::sqrt(2.0)));
                }
            } else if (c.mlp == MlpKind::silu) {
                for (std::size_t i = 0; i < up.size(); ++i) a[i] = silu(up[i]);
            } else {
                auto gate = linear(n2, T, d, F, lw.w_gate, true, lw.b_gate);
                auto gelu_tanh = [](double z) {
                    return 0.5 * z * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (z + 0.044715 * z * z * z)));
                };
                for (std::size_t i = 0; i < up.size(); ++i)
                    a[i] = (c.mlp == MlpKind::geglu ? gelu_tanh(gate[i]) : silu(gate[i])) * up[i];
            }
            auto down = linear(a, T, F, d, lw.w_down, true, lw.b_down);
            for (std::size_t i = 0; i < x.size(); ++i) x[i] = hres[i] + down[i];
            outs.push_back(x);
        }
        return outs;
    }
};

double nmse_vs(const std::vector<float> &out, const std::vector<double> &ref) {
    double err = 0, norm = 0;
    for (std::size_t i = 0; i < ref.size(); ++i) {
        if (!std::isfinite(out[i])) return INFINITY;
        err += (out[i] - ref[i]) * (out[i] - ref[i]);
        norm += ref[i] * ref[i];
    }
    return err / norm;
}

// ---- plugins ---------------------------------------------------------------------

std::unique_ptr<BackendInstance> open_backend(const char *path) {
    LoadResult r = load_plugin(path);
    if (!r.plugin) {
        ADD_FAILURE() << path << ": " << (r.failure ? r.failure->reason : "not loaded");
        return nullptr;
    }
    static std::vector<LoadedPlugin> keep; // the library must outlive its instances
    keep.push_back(*r.plugin);
    auto be = std::make_unique<BackendInstance>(keep.back());
    EXPECT_TRUE(be->usable()) << be->unusable_reason();
    return be;
}

std::unique_ptr<BackendInstance> naive() { return open_backend(NAIVE_PLUGIN); }

// Runs every step in order; returns outputs[step][layer].
std::vector<std::vector<std::vector<float>>> run_all(DecoderRun &run) {
    run.prepare();
    std::vector<std::vector<std::vector<float>>> out;
    for (int s = 0; s < run.steps(); ++s) {
        run.run_step(s);
        run.synchronize();
        out.push_back(run.layer_outputs(s));
    }
    return out;
}

DecoderConfig gpt2_like() {
    DecoderConfig c;
    c.hidden = 8;
    c.heads = 2;
    c.ffn = 16;
    c.layers = 2;
    c.batch = 2;
    c.prompt = 3;
    c.generate = 3;
    c.norm = NormKind::layernorm;
    c.mlp = MlpKind::gelu;
    c.gelu_variant = OPB_GELU_TANH;
    c.bias = true;
    return c;
}

DecoderConfig llama_like() {
    DecoderConfig c;
    c.hidden = 16;
    c.heads = 4;
    c.ffn = 24;
    c.layers = 1;
    c.batch = 1;
    c.prompt = 4;
    c.generate = 2;
    c.norm = NormKind::rmsnorm;
    c.mlp = MlpKind::swiglu;
    c.bias = false;
    c.eps = 1e-6f;
    return c;
}

void expect_matches_reference(const DecoderConfig &c, double max_nmse) {
    auto be = naive();
    ASSERT_TRUE(be);
    DecoderRun run(*be, c);
    ASSERT_FALSE(run.unsupported().has_value());
    auto got = run_all(run);
    const DecoderWeights w = make_decoder_weights(c);
    Reference ref(c, w);
    for (int s = 0; s < run.steps(); ++s) {
        auto want = s == 0 ? ref.step(c.prompt, 0) : ref.step(1, c.prompt + s - 1);
        ASSERT_EQ(got[std::size_t(s)].size(), std::size_t(c.layers));
        for (int64_t l = 0; l < c.layers; ++l) {
            const auto &o = got[std::size_t(s)][std::size_t(l)];
            ASSERT_EQ(o.size(), want[std::size_t(l)].size());
            EXPECT_LT(nmse_vs(o, want[std::size_t(l)]), max_nmse) << "step " << s << ", layer " << l;
        }
    }
}

// ---- tests -------------------------------------------------------------------------

TEST(DecoderConfig, ValidateNamesTheBadKey) {
    DecoderConfig c = gpt2_like();
    EXPECT_EQ(c.validate(), "");
    c.heads = 3;
    EXPECT_NE(c.validate().find("'hidden' 8 is not divisible by 'heads' 3"), std::string::npos) << c.validate();
    c = gpt2_like();
    c.prompt = 0;
    EXPECT_NE(c.validate().find("'prompt' must be > 0"), std::string::npos) << c.validate();
    c = gpt2_like();
    c.generate = -1;
    EXPECT_NE(c.validate().find("'generate'"), std::string::npos);
}

TEST(DecoderWeights, DeterministicAndShaped) {
    const DecoderConfig c = llama_like();
    const DecoderWeights a = make_decoder_weights(c), b = make_decoder_weights(c);
    ASSERT_EQ(a.layers.size(), 1u);
    EXPECT_EQ(a.layers[0].wq, b.layers[0].wq);
    EXPECT_NE(a.layers[0].wq, a.layers[0].wk); // each tensor has its own stream
    EXPECT_EQ(a.layers[0].w_gate.size(), std::size_t(24 * 16));
    EXPECT_TRUE(a.layers[0].bq.empty());         // llama: no biases
    EXPECT_TRUE(a.layers[0].norm1_beta.empty()); // rmsnorm: no beta
    EXPECT_EQ(a.embeddings.size(), std::size_t(1 * 6 * 16));
    DecoderConfig other = c;
    other.seed += 1;
    EXPECT_NE(make_decoder_weights(other).layers[0].wq, a.layers[0].wq);
}

TEST(DecoderNaive, Gpt2LikeMatchesFloat64Reference) { expect_matches_reference(gpt2_like(), 1e-10); }

TEST(DecoderNaive, LlamaLikeSwigluMatchesFloat64Reference) { expect_matches_reference(llama_like(), 1e-10); }

// Grouped-query attention (2 K/V heads for 4 query heads) with RoPE at the
// tokens' positions, batch 2 (so prefill's per-sequence Q layout matters).
DecoderConfig gqa_rope_like() {
    DecoderConfig c = llama_like();
    c.kv_heads = 2;
    c.batch = 2;
    c.prompt = 3;
    c.generate = 3;
    c.rope = true;
    c.rope_theta = 500000.0f;
    return c;
}

TEST(DecoderNaive, GroupedQueryAttentionWithRopeMatchesFloat64Reference) {
    expect_matches_reference(gqa_rope_like(), 1e-10);
}

TEST(DecoderNaive, GemmaLikeHeadDimGegluQkvBiasAndInterleavedRope) {
    // head_dim 6 with hidden 8 and 2 heads (Q and O 12 wide), one K/V head
    // (multi-query), GeGLU, biases on Q/K/V only, GPT-J's interleaved RoPE.
    DecoderConfig c = llama_like();
    c.hidden = 8;
    c.heads = 2;
    c.kv_heads = 1;
    c.head_size = 6;
    c.mlp = MlpKind::geglu;
    c.qkv_bias = true;
    c.rope = true;
    c.rope_variant = OPB_ROPE_INTERLEAVED;
    expect_matches_reference(c, 1e-10);
}

TEST(DecoderNaive, KvCacheBytesPerTokenCountKvHeadsOnly) {
    // Llama-3-8B's shape, 2 layers: 2 (K and V) x 2 layers x 8 K/V heads x
    // 128 x 4 bytes = 16,384 bytes per token in f32 (multi-head: 65,536);
    // 8,192 in bf16.
    DecoderConfig c;
    apply_model_preset(*find_model_preset("llama-3-8b"), c);
    c.layers = 2;
    c.prompt = 4;
    c.generate = 2;
    auto be = naive();
    ASSERT_TRUE(be);
    {
        DecoderRun run(*be, c);
        EXPECT_EQ(run.kv_bytes_per_token(), 16384u);
    }
    {
        c.dtype = OPB_DTYPE_S8; // int8 layers keep the cache in f32
        DecoderRun int8(*be, c);
        EXPECT_EQ(int8.kv_bytes_per_token(), 2u * 2 * 8 * 128 * 4);
    }
    c.dtype = OPB_DTYPE_BF16;
    DecoderRun bf16(*be, c);
    EXPECT_EQ(bf16.kv_bytes_per_token(), 8192u);
    EXPECT_EQ(estimate_decoder_memory(c).kv_cache, 8192u * 6); // batch 1 x context 6
}

TEST(DecoderNaive, OddHeadsErfGeluSiluAndFusedAttention) {
    DecoderConfig c = gpt2_like();
    c.hidden = 12;
    c.heads = 3; // the prefill head reduction with an odd count
    c.gelu_variant = OPB_GELU_ERF;
    expect_matches_reference(c, 1e-10);
    c.mlp = MlpKind::silu;
    c.attention_variant = OPB_ATTENTION_FUSED;
    c.batch = 1;
    c.layers = 1;
    expect_matches_reference(c, 1e-10);
}

TEST(DecoderNaive, OneTokenPromptAndNoGeneration) {
    DecoderConfig c = gpt2_like();
    c.prompt = 1; // prefill with one token takes the decode layout
    expect_matches_reference(c, 1e-10);
    c.prompt = 5;
    c.generate = 0;
    expect_matches_reference(c, 1e-10);
}

TEST(DecoderNaive, Bf16StaysNearTheReference) {
    DecoderConfig c = llama_like();
    c.dtype = OPB_DTYPE_BF16;
    // Every op output is rounded to bf16 (8-bit mantissa): ~1e-5 per op, a few
    // ops in sequence; a wiring error is O(1).
    expect_matches_reference(c, 1e-3);
}

TEST(DecoderNaive, Int8LayersStayNearTheFloatReference) {
    // dtype s8: the same f32 weights, quantised per output channel, and each
    // linear layer's input quantised to u8 (decoder.cpp's static scales);
    // the reference stays f32. Quantisation costs 1e-3 to 1e-2 of NMSE on
    // these tiny layers; a wiring error (wrong scale, slice or layout) is O(1).
    for (DecoderConfig c : {llama_like(), gqa_rope_like(), gpt2_like()}) {
        c.dtype = OPB_DTYPE_S8;
        expect_matches_reference(c, 2e-2);
    }
}

TEST(DecoderNaive, Int8LayersRunAQuantizeBeforeEachLinearInput) {
    // Llama-like (no biases): per layer, decode: Q, 2BH K/V, o-proj, up, gate, down
    // are int8 matmuls fed by 4 quantize calls (normed twice, attention
    // output, MLP hidden). int8 stores Q as one [in, head_dim] block per head,
    // so its decode Q is B x H matmuls where f32's is one.
    DecoderConfig c = llama_like();
    auto be = naive();
    ASSERT_TRUE(be);
    DecoderRun f32(*be, c);
    f32.prepare();
    c.dtype = OPB_DTYPE_S8;
    DecoderRun s8(*be, c);
    s8.prepare();
    EXPECT_EQ(s8.calls_in_step(0), f32.calls_in_step(0) + 4 * c.layers);
    EXPECT_EQ(s8.calls_in_step(1), f32.calls_in_step(1) + (4 + c.batch * c.heads - 1) * c.layers);
    // Weights: one byte per weight plus an f32 scale per output channel; the
    // norms' gammas stay f32.
    const uint64_t d = 16, F = 24;
    const uint64_t weights = 4 * d * d + 3 * F * d, channels = 4 * d + 2 * F + d;
    EXPECT_EQ(s8.footprint().weights, weights + 4 * channels + 4 * 2 * d);
    EXPECT_EQ(f32.footprint().weights, 4 * (weights + 2 * d));
    // The cache stays f32: 2 x layers x kv_heads x head_dim x 4 bytes.
    EXPECT_EQ(s8.kv_bytes_per_token(), 2u * 1 * 4 * 4 * 4);
    EXPECT_EQ(estimate_decoder_memory(c).weights, s8.footprint().weights + 1 * 6 * d * 4); // + embeddings
}

// dtype f8e4m3 (issue 42): the same weights quantised per matrix to e4m3,
// each linear layer's input quantised to e4m3, bf16 everywhere else; the
// reference stays float64. e4m3's 3 mantissa bits cost about 1e-3 of NMSE
// per layer on these tiny layers; a wiring error (a wrong head block of Wo,
// a swapped scale, a bias read as bf16) is O(1).
TEST(DecoderNaive, Fp8LayersStayNearTheFloatReference) {
    for (DecoderConfig c : {llama_like(), gqa_rope_like(), gpt2_like()}) {
        c.dtype = OPB_DTYPE_F8_E4M3;
        expect_matches_reference(c, 2e-2);
    }
}

TEST(DecoderNaive, Fp8LayersRunAQuantizeBeforeEachLinearInputAndHoldWoTwiceForDecode) {
    // Llama-like (no biases, 1 layer): 4 quantize calls per step (normed
    // twice, attention output, MLP hidden) and otherwise f32's calls: FP8
    // stores every weight [out, in], so its decode Q is one matmul as f32's.
    DecoderConfig c = llama_like();
    auto be = naive();
    ASSERT_TRUE(be);
    DecoderRun f32(*be, c);
    f32.prepare();
    c.dtype = OPB_DTYPE_F8_E4M3;
    DecoderRun fp8(*be, c);
    ASSERT_FALSE(fp8.unsupported().has_value());
    fp8.prepare();
    EXPECT_EQ(fp8.calls_in_step(0), f32.calls_in_step(0) + 4 * c.layers);
    EXPECT_EQ(fp8.calls_in_step(1), f32.calls_in_step(1) + 4 * c.layers);
    // One byte per weight, Wo twice (per head for prefill, whole for decode),
    // an f32 scale per matrix (7 with the gate); the norms' gammas in bf16.
    const uint64_t d = 16, F = 24;
    const uint64_t weights = 4 * d * d + 3 * F * d;
    EXPECT_EQ(fp8.footprint().weights, weights + d * d + 4 * 7 + 2 * 2 * d);
    // The cache is bf16: 2 x layers x kv_heads x head_dim x 2 bytes.
    EXPECT_EQ(fp8.kv_bytes_per_token(), 2u * 1 * 4 * 4 * 2);
    EXPECT_EQ(estimate_decoder_memory(c).weights, fp8.footprint().weights + 1 * 6 * d * 2); // + embeddings
    EXPECT_EQ(estimate_decoder_memory(c).activations, fp8.footprint().activations);
    // Without decode steps Wo is held once.
    c.generate = 0;
    DecoderRun prefill_only(*be, c);
    prefill_only.prepare();
    EXPECT_EQ(prefill_only.footprint().weights, weights + 4 * 7 + 2 * 2 * d);
    EXPECT_EQ(estimate_decoder_memory(c).weights, prefill_only.footprint().weights + 1 * 4 * d * 2);
}

TEST(DecoderNaive, RerunningAStepReproducesItExactly) {
    auto be = naive();
    ASSERT_TRUE(be);
    DecoderRun run(*be, gpt2_like());
    auto first = run_all(run);
    // Step 2 again after every step ran: it rewrites its own cache rows with
    // the same values and reads only the rows before them.
    run.run_step(2);
    run.synchronize();
    EXPECT_EQ(run.layer_outputs(2), first[2]);
    run.run_step(0);
    run.synchronize();
    EXPECT_EQ(run.layer_outputs(0), first[0]);
}

TEST(DecoderNaive, ObserverSeesEveryComponentOfEveryLayerInOrder) {
    struct Recorder : ComponentObserver {
        std::vector<std::string> seen;
        int open = 0;
        void begin(Component c, int layer) override {
            EXPECT_EQ(open++, 0); // never nested
            seen.push_back(std::string(component_name(c)) + "@" + std::to_string(layer));
        }
        void end(Component, int) override { --open; }
    } rec;
    auto be = naive();
    ASSERT_TRUE(be);
    DecoderConfig c = llama_like();
    c.layers = 2;
    DecoderRun run(*be, c);
    auto plain = run_all(run);
    run.run_step(1, rec);
    run.synchronize();
    EXPECT_EQ(run.layer_outputs(1), plain[1]);
    std::vector<std::string> want = {"embed@-1"};
    for (int l = 0; l < 2; ++l)
        for (const char *n : {"attn_norm", "qkv", "attention", "attn_out", "attn_residual", "mlp_norm", "mlp_in",
                              "mlp_act", "mlp_mul", "mlp_down", "mlp_residual"})
            want.push_back(std::string(n) + "@" + std::to_string(l));
    EXPECT_EQ(rec.seen, want);
    EXPECT_EQ(rec.open, 0);
}

TEST(DecoderNaive, FootprintAndCallCounts) {
    auto be = naive();
    ASSERT_TRUE(be);
    DecoderConfig c = gpt2_like(); // d 8, H 2, F 16, layers 2, B 2, prompt 3, generate 3
    DecoderRun run(*be, c);
    run.prepare();
    const uint64_t d = 8, F = 16;
    // per layer: 2 gamma + 2 beta + 4 [d,d] + 4 d biases + up/down [F,d] + F + d biases
    const uint64_t params = 4 * d + 4 * d * d + 4 * d + 2 * F * d + F + d;
    EXPECT_EQ(run.footprint().weights, 2 * params * 4);
    EXPECT_EQ(run.kv_bytes_per_token(), 2u * 2 * d * 4);
    EXPECT_EQ(run.footprint().kv_cache, 2u * 6 * run.kv_bytes_per_token()); // batch x context
    // Calls: embed, then per layer: norm, Q (1 decode | H prefill), 2BH K/V,
    // BH attention, out-proj (1 decode | 2 + (H-1) adds prefill), residual,
    // norm, up, act, down, residual.
    const std::size_t B = 2, H = 2;
    EXPECT_EQ(run.calls_in_step(1), 1 + 2 * (1 + 1 + 2 * B * H + B * H + 1 + 1 + 1 + 1 + 1 + 1 + 1));
    EXPECT_EQ(run.calls_in_step(0), 1 + 2 * (1 + H + 2 * B * H + B * H + 2 + (H - 1) + 1 + 1 + 1 + 1 + 1 + 1));
    EXPECT_EQ(run.tokens_in_step(0), 6);
    // Work of a decode step: the matmuls' 2MNK dominate; check the total
    // against op_flops of the same descriptions written out here.
    auto mm = [](double m, double n, double k, bool bias) { return 2 * m * n * k + (bias ? m * n : 0); };
    const double S = 1, L = 3, T = 2; // decode step 1: one token per sequence, 3 cache rows before it
    const double Dh = 4;
    double per_layer = 7 * T * d                                   // layernorm
                       + mm(T, d, d, true)                         // Q
                       + 2 * B * H * mm(S, Dh, d, true)            // K, V
                       + B * H * (L + S) * (4 * Dh + 6)            // attention, all visible
                       + mm(T, d, d, true) + T * d                 // out proj, residual
                       + 7 * T * d + mm(T, F, d, true) + 9 * T * F // norm, up, gelu tanh
                       + mm(T, d, F, true) + T * d;                // down, residual
    EXPECT_DOUBLE_EQ(run.flops_in_step(1), 2 * per_layer);
    EXPECT_EQ(run.tokens_in_step(3), 2);
}

// The memory estimate a workload is skipped by (--mem-limit), by hand for a
// GPT-2-like layer: d = 8, f = 32, 2 layers, batch 2, prompt 4 + 2 generated,
// 2 heads, layernorm, gelu, biases, f32.
TEST(DecoderMemoryEstimate, CountsWeightsKvCacheAndTheLargestStep) {
    DecoderConfig c;
    c.hidden = 8;
    c.heads = 2;
    c.ffn = 32;
    c.layers = 2;
    c.batch = 2;
    c.prompt = 4;
    c.generate = 2;
    const DecoderMemory m = estimate_decoder_memory(c);
    const uint64_t layer =
        2 * 8 * 2 /*norms: gamma, beta*/ + 4 * 64 /*q k v o*/ + 2 * 8 * 32 /*up, down*/ + 4 * 8 + 32 + 8 /*biases*/;
    EXPECT_EQ(m.weights, (2 * layer + 2 * 6 * 8 /*embeddings*/) * 4);
    EXPECT_EQ(m.kv_cache, 2u * 2 * 2 * 6 * 8 * 4); // K and V, layers, batch, context, hidden
    const uint64_t T = 2 * 4;                      // prefill tokens
    EXPECT_EQ(m.activations, ((2 + 1 + 1 + 2 + 2 + 1 + 1 + 2) * T * 8 + 4 * T * 32) * 4);
    EXPECT_EQ(m.total(), m.weights + m.kv_cache + m.activations);
}

// The device memory a GPU backend is checked against (issue 42), by hand for
// a GQA + RoPE + SwiGLU layer: d = 16, 4 heads of 4, 2 K/V heads (G = 2),
// f = 24, 1 layer, batch 2, prompt 3 + 2 generated, rmsnorm, no biases, f32.
TEST(DecoderMemoryEstimate, DeviceNeedCountsWeightsKvCacheActivationsAndAttentionWorkspace) {
    DecoderConfig c = gqa_rope_like();
    c.generate = 2;
    const DeviceMemoryNeed need = estimate_decoder_device_memory(c);
    // q, k, v, o: 16x16, 8x16, 8x16, 16x16; gate, up, down: 24x16 each; 2 gammas.
    const uint64_t layer = 256 + 128 + 128 + 256 + 3 * 384 + 2 * 16;
    EXPECT_EQ(need.weights, (layer + 2 * 5 * 16 /*embeddings*/) * 4);
    EXPECT_EQ(need.weights, 8448u);
    EXPECT_EQ(need.kv_cache, 2u * 1 * 2 * 5 * 8 * 4); // K and V, layer, batch, context, kv width
    // T = 6 prefill tokens: hidden[2], normed, acc[2], attn_res, mlp_out and
    // 4 heads' partials of [T, 16]; q, o, q_rot of [T, 16]; 4 of [T, 24]; k_new [3, 4].
    EXPECT_EQ(need.activations, (11u * 6 * 16 + 3 * 6 * 16 + 4 * 6 * 24 + 3 * 4) * 4);
    // Composed attention, 2 x 4 B x heads x seq_q x seq_kv a plan: prefill
    // one head 3 x 3; decode steps G = 2 heads, 1 x 4 and 1 x 5.
    EXPECT_EQ(need.workspace, 8u * 9 + 8 * 2 * 4 + 8 * 2 * 5);
    EXPECT_EQ(need.total(), 8448u + 640 + 7728 + 216);
    c.prompt = 1; // a one-token prefill takes the decode layout: G heads, 1 x 1
    EXPECT_EQ(estimate_decoder_device_memory(c).workspace, 8u * 2 * 1 + 8 * 2 * 2 + 8 * 2 * 3);
    c.attention_variant = OPB_ATTENTION_FUSED;
    EXPECT_EQ(estimate_decoder_device_memory(c).workspace, 0u) << "fused attention keeps no scores";
    // The weights and cache a backend really allocates for it (naive's footprint; the
    // embeddings are not weights there).
    c = gqa_rope_like();
    c.generate = 2;
    auto be = naive();
    ASSERT_TRUE(be);
    DecoderRun run(*be, c);
    run.prepare();
    EXPECT_EQ(run.footprint().weights + 2 * 5 * 16 * 4, need.weights);
    EXPECT_EQ(run.footprint().kv_cache, need.kv_cache);
}

#ifdef ONEDNN_PLUGIN
TEST(DecoderOnednn, MatchesNaiveLayerByLayer) {
    for (int dtype : {OPB_DTYPE_F32, OPB_DTYPE_BF16, OPB_DTYPE_S8}) {
        for (DecoderConfig c : {gpt2_like(), llama_like(), gqa_rope_like()}) {
            c.dtype = dtype;
            auto ref_be = naive();
            auto one = open_backend(ONEDNN_PLUGIN);
            ASSERT_TRUE(ref_be && one);
            DecoderRun ref(*ref_be, c), run(*one, c);
            // f32 runs everywhere; bf16 where oneDNN has kernels on this ISA,
            // and elsewhere the workload is refused with the dtype and ISA.
            const std::string isa = opbench::test::onednn_isa_of(one->api(), one->handle());
            // int8 (u8 x s8 matmul, the quantize reorder) runs on every ISA oneDNN has.
            const bool runs = dtype != OPB_DTYPE_BF16 || opbench::test::onednn_isa_runs_bf16(isa);
            const auto why = run.unsupported();
            ASSERT_EQ(why.has_value(), !runs)
                << dtype_name(dtype) << " on " << isa << ": " << (why ? why->reason : "supported");
            if (why) {
                EXPECT_EQ(why->status, "skipped");
                EXPECT_NE(why->reason.find("bf16"), std::string::npos) << why->reason;
                EXPECT_NE(why->reason.find(isa), std::string::npos) << why->reason;
                continue;
            }
            auto want = run_all(ref), got = run_all(run);
            // The harness's own per-op tolerance, at the dtype: a layer is a
            // chain of ops, each within it.
            // int8 layers: the workload's own tolerance (an activation at a
            // step boundary may quantise one step apart).
            opb_op_desc any = make_desc(OPB_OP_ADD, dtype == OPB_DTYPE_S8 ? OPB_DTYPE_F32 : dtype);
            const double tol = dtype == OPB_DTYPE_S8 ? decoder_tolerance(c).max_nmse : tolerance_for(any).max_nmse * 10;
            for (std::size_t s = 0; s < want.size(); ++s)
                for (std::size_t l = 0; l < want[s].size(); ++l) {
                    std::vector<double> w(want[s][l].begin(), want[s][l].end());
                    EXPECT_LT(nmse_vs(got[s][l], w), tol)
                        << dtype_name(dtype) << " " << mlp_name(c.mlp) << " step " << s << " layer " << l;
                }
        }
    }
}

TEST(DecoderOnednn, FusedAttentionIsSkippedWithTheReason) {
    auto one = open_backend(ONEDNN_PLUGIN);
    ASSERT_TRUE(one);
    DecoderConfig c = gpt2_like();
    c.attention_variant = OPB_ATTENTION_FUSED;
    DecoderRun run(*one, c);
    auto why = run.unsupported();
    ASSERT_TRUE(why.has_value());
    EXPECT_EQ(why->status, "skipped");
    EXPECT_NE(why->reason.find("attention"), std::string::npos) << why->reason;
    EXPECT_NE(why->reason.find("variant=fused"), std::string::npos) << why->reason;
}
#endif

} // namespace
} // namespace opbench::workload
