// What a decoder workload is: the shape of a pre-norm transformer decoder
// (one layer or a small model) and how much of it to run (prompt, tokens
// generated). Plain data, read from a suite's [[workload]] table
// (workload_suite.hpp) and run by decoder.hpp.
#pragma once

#include "opbench/plugin.h"

#include <cstdint>
#include <string>
#include <string_view>

namespace opbench::workload {

enum class NormKind { layernorm, rmsnorm };
// gelu: up -> gelu -> down (GPT-2). silu: up -> silu -> down.
// swiglu: down(silu(gate) * up) (Llama); the elementwise multiply is composed
// from a batched 1x1 matmul, because the op set has no multiply.
enum class MlpKind { gelu, silu, swiglu };

inline constexpr std::string_view kNormNames[] = {"layernorm", "rmsnorm"};
inline constexpr std::string_view kMlpNames[] = {"gelu", "silu", "swiglu"};

struct DecoderConfig {
    int64_t hidden = 0;   // d_model
    int64_t heads = 0;    // attention heads; head_dim = hidden / heads
    int64_t ffn = 0;      // MLP inner width; 0 = 4 * hidden
    int64_t layers = 1;   // decoder layers in sequence
    int64_t batch = 1;    // sequences decoded together
    int64_t prompt = 0;   // tokens in the prompt (prefill processes them at once)
    int64_t generate = 0; // tokens generated after the prompt, one decode step each
    NormKind norm = NormKind::layernorm;
    MlpKind mlp = MlpKind::gelu;
    int gelu_variant = OPB_GELU_TANH; // GPT-2 uses the tanh form
    int attention_variant = OPB_ATTENTION_COMPOSED;
    bool bias = true; // biases on the projections (GPT-2 yes, Llama no)
    int dtype = OPB_DTYPE_F32;
    float eps = 1e-5f;
    int threads = 0; // CPU threads for every op; 0 = backend default
    uint64_t seed = 0x0b5eed;

    [[nodiscard]] int64_t head_dim() const { return heads > 0 ? hidden / heads : 0; }
    [[nodiscard]] int64_t ffn_width() const { return ffn > 0 ? ffn : 4 * hidden; }
    [[nodiscard]] int64_t context() const { return prompt + generate; } // KV cache rows
    // Empty when the configuration can be built; otherwise what is wrong.
    [[nodiscard]] std::string validate() const;
};

[[nodiscard]] std::string_view norm_name(NormKind k);
[[nodiscard]] std::string_view mlp_name(MlpKind k);

} // namespace opbench::workload
