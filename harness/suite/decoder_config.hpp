// What a decoder workload is: the shape of a pre-norm transformer decoder
// (one layer or a small model) and how much of it to run (prompt, tokens
// generated). Plain data, read from a suite's [[workload]] table
// (workload_schema.hpp) and run by the decoder workload (DecoderRun).
#pragma once

#include "opbench/plugin.h"

#include <cstdint>
#include <string>
#include <string_view>

namespace opbench::workload {

enum class NormKind { layernorm, rmsnorm };
// gelu: up -> gelu -> down (GPT-2). silu: up -> silu -> down.
// swiglu: down(silu(gate) * up) (Llama); geglu: down(gelu_tanh(gate) * up)
// (Gemma); the elementwise multiply is composed from a batched 1x1 matmul,
// because the op set has no multiply.
enum class MlpKind { gelu, silu, swiglu, geglu };

inline constexpr std::string_view kNormNames[] = {"layernorm", "rmsnorm"};
// A decoder's levels (DecoderConfig::dtype), as a suite names them.
inline constexpr std::string_view kDecoderDtypeNames[] = {"f32", "bf16", "f16", "s8", "f8e4m3"};
inline constexpr int kDecoderDtypes[] = {OPB_DTYPE_F32, OPB_DTYPE_BF16, OPB_DTYPE_F16, OPB_DTYPE_S8,
                                         OPB_DTYPE_F8_E4M3};
inline constexpr std::string_view kMlpNames[] = {"gelu", "silu", "swiglu", "geglu"};

struct DecoderConfig {
    int64_t hidden = 0;    // d_model
    int64_t heads = 0;     // attention (query) heads
    int64_t kv_heads = 0;  // K/V heads (grouped-query attention); 0 = heads
    int64_t head_size = 0; // elements per head; 0 = hidden / heads (Gemma-2: 256 with hidden 3584, 16 heads)
    int64_t ffn = 0;      // MLP inner width; 0 = 4 * hidden
    int64_t layers = 1;   // decoder layers in sequence
    int64_t batch = 1;    // sequences decoded together
    int64_t prompt = 0;   // tokens in the prompt (prefill processes them at once)
    int64_t generate = 0; // tokens generated after the prompt, one decode step each
    NormKind norm = NormKind::layernorm;
    MlpKind mlp = MlpKind::gelu;
    int gelu_variant = OPB_GELU_TANH; // GPT-2 uses the tanh form
    int attention_variant = OPB_ATTENTION_COMPOSED;
    bool bias = true;      // biases on the projections (GPT-2 yes, Llama no)
    bool qkv_bias = false; // biases on the Q, K, V projections only (Qwen2)
    // Rotary position embedding of Q and K after their projections (the rope
    // op at the tokens' positions); off: no position encoding (GPT-2's learned
    // positions are part of its embeddings).
    bool rope = false;
    float rope_theta = 10000.0f;
    int rope_variant = OPB_ROPE_HALF_SPLIT;
    // f32, bf16 or f16: every tensor. s8: int8 linear layers (s8 weights with
    // per-output-channel f32 scales, each layer's input quantised to u8 by a
    // quantize op first), every other op and the KV cache in f32. f8e4m3: FP8
    // linear layers (e4m3 weights with one f32 scale per weight matrix, each
    // layer's input quantised to e4m3 first, as FP8 inference on Hopper runs
    // them), every other op and the KV cache in bf16, the layers' biases f32.
    int dtype = OPB_DTYPE_F32;
    float eps = 1e-5f;
    int threads = 0; // CPU threads for every op; 0 = backend default
    uint64_t seed = 0x0b5eed;

    [[nodiscard]] int64_t head_dim() const { return head_size > 0 ? head_size : heads > 0 ? hidden / heads : 0; }
    [[nodiscard]] int64_t kv_head_count() const { return kv_heads > 0 ? kv_heads : heads; }
    [[nodiscard]] int64_t q_width() const { return heads * head_dim(); }            // Q and O per token
    [[nodiscard]] int64_t kv_width() const { return kv_head_count() * head_dim(); } // K (or V) per token
    [[nodiscard]] bool gated() const { return mlp == MlpKind::swiglu || mlp == MlpKind::geglu; }
    [[nodiscard]] bool has_qkv_bias() const { return bias || qkv_bias; }
    [[nodiscard]] int64_t ffn_width() const { return ffn > 0 ? ffn : 4 * hidden; }
    [[nodiscard]] int64_t context() const { return prompt + generate; } // KV cache rows
    [[nodiscard]] bool int8_linear() const { return dtype == OPB_DTYPE_S8; }
    [[nodiscard]] bool fp8_linear() const { return dtype == OPB_DTYPE_F8_E4M3; }
    // Linear layers whose input a quantize op converts first (int8, FP8).
    [[nodiscard]] bool quantized_linear() const { return int8_linear() || fp8_linear(); }
    // The dtype of everything but a quantized layer's weights and inputs:
    // activations, norms, the cache.
    [[nodiscard]] int act_dtype() const {
        return int8_linear() ? int(OPB_DTYPE_F32) : fp8_linear() ? int(OPB_DTYPE_BF16) : dtype;
    }
    // The linear layers' biases: f32 beside int8 and FP8 weights (plugin.h, ops.hpp).
    [[nodiscard]] int bias_dtype() const { return quantized_linear() ? int(OPB_DTYPE_F32) : act_dtype(); }
    // Empty when the configuration can be built; otherwise what is wrong.
    [[nodiscard]] std::string validate() const;
};

[[nodiscard]] std::string_view norm_name(NormKind k);
[[nodiscard]] std::string_view mlp_name(MlpKind k);

// A model's published shape (its config.json), for `model = "llama-3-8b"` in
// a [[workload]]: everything but layers, batch and sequence lengths, which
// the workload gives (layers defaults to the model's own).
struct ModelPreset {
    std::string_view name;
    std::string_view source; // where the numbers come from
    int64_t hidden, heads, kv_heads, head_dim, ffn, layers;
    float rope_theta;
    float eps;
    MlpKind mlp;
    bool qkv_bias;
};
[[nodiscard]] const ModelPreset *find_model_preset(std::string_view name);
[[nodiscard]] std::string model_preset_names(); // "llama-3-8b, mistral-7b, ..."
// Writes the preset into `c` (rmsnorm, no projection biases but Qwen's QKV,
// RoPE half-split) without touching batch, prompt, generate or dtype.
void apply_model_preset(const ModelPreset &m, DecoderConfig &c);

} // namespace opbench::workload
