// The decoder's configuration checks, apart from the decoder itself: the suite
// parser (and its fuzz target) use them without linking the plugin machinery.
#include "suite/decoder_config.hpp"

#include <fmt/format.h>

#include <cmath>
#include <utility>

namespace opbench::workload {

// ---- configuration ------------------------------------------------------------

std::string_view norm_name(NormKind k) { return kNormNames[static_cast<int>(k)]; }
std::string_view mlp_name(MlpKind k) { return kMlpNames[static_cast<int>(k)]; }

std::string DecoderConfig::validate() const {
    auto positive = [](const char *name, int64_t v) {
        return v > 0 ? std::string() : fmt::format("'{}' must be > 0, got {}", name, v);
    };
    for (auto [name, v] :
         {std::pair{"hidden", hidden}, {"heads", heads}, {"layers", layers}, {"batch", batch}, {"prompt", prompt}})
        if (auto e = positive(name, v); !e.empty()) return e;
    if (head_size < 0) return fmt::format("'head_dim' must be > 0 (or left out for hidden / heads), got {}", head_size);
    if (head_size == 0 && hidden % heads != 0)
        return fmt::format("'hidden' {} is not divisible by 'heads' {} (head_dim = hidden / heads; or give 'head_dim')",
                           hidden, heads);
    if (kv_heads < 0) return fmt::format("'kv_heads' must be > 0 (or left out for heads), got {}", kv_heads);
    if (heads % kv_head_count() != 0)
        return fmt::format("'heads' {} is not a multiple of 'kv_heads' {} (each K/V head serves heads / kv_heads "
                           "query heads)",
                           heads, kv_head_count());
    if (rope && head_dim() % 2 != 0)
        return fmt::format("RoPE rotates pairs of elements: head_dim {} must be even", head_dim());
    if (!(rope_theta > 0.0f) || !std::isfinite(rope_theta)) return "'rope_theta' must be a finite number > 0";
    if (ffn < 0) return fmt::format("'ffn' must be > 0 (or left out for 4 x hidden), got {}", ffn);
    if (generate < 0) return fmt::format("'generate' must be >= 0, got {}", generate);
    if (!(eps > 0.0f) || !std::isfinite(eps)) return "'eps' must be a finite number > 0";
    if (threads < 0) return "'threads' must be >= 0 (0 = backend default)";
    return {};
}

// ---- model presets ----------------------------------------------------------------
//
// The numbers of each model's config.json on the Hugging Face Hub (the same
// as scripts/model_suites.py writes into suites/models/).
namespace {
constexpr ModelPreset kPresets[] = {
    {"llama-3-8b", "meta-llama/Meta-Llama-3-8B", 4096, 32, 8, 128, 14336, 32, 500000.0f, 1e-5f, MlpKind::swiglu, false},
    {"mistral-7b", "mistralai/Mistral-7B-v0.1", 4096, 32, 8, 128, 14336, 32, 10000.0f, 1e-5f, MlpKind::swiglu, false},
    {"qwen2.5-7b", "Qwen/Qwen2.5-7B", 3584, 28, 4, 128, 18944, 28, 1000000.0f, 1e-6f, MlpKind::swiglu, true},
    {"phi-3-mini", "microsoft/Phi-3-mini-4k-instruct", 3072, 32, 32, 96, 8192, 32, 10000.0f, 1e-5f, MlpKind::swiglu,
     false},
    // Gemma-2's logit soft-capping, sliding-window layers and extra
    // post-norms are not modelled: the op set has no tanh cap or window.
    {"gemma-2-9b", "google/gemma-2-9b", 3584, 16, 8, 256, 14336, 42, 10000.0f, 1e-6f, MlpKind::geglu, false},
};
} // namespace

const ModelPreset *find_model_preset(std::string_view name) {
    for (const auto &m : kPresets)
        if (m.name == name) return &m;
    return nullptr;
}

std::string model_preset_names() {
    std::string out;
    for (const auto &m : kPresets) out += (out.empty() ? "" : ", ") + std::string(m.name);
    return out;
}

void apply_model_preset(const ModelPreset &m, DecoderConfig &c) {
    c.hidden = m.hidden;
    c.heads = m.heads;
    c.kv_heads = m.kv_heads;
    c.head_size = m.head_dim;
    c.ffn = m.ffn;
    c.layers = m.layers;
    c.norm = NormKind::rmsnorm;
    c.mlp = m.mlp;
    c.gelu_variant = OPB_GELU_TANH;
    c.bias = false;
    c.qkv_bias = m.qkv_bias;
    c.rope = true;
    c.rope_theta = m.rope_theta;
    c.rope_variant = OPB_ROPE_HALF_SPLIT;
    c.eps = m.eps;
}

} // namespace opbench::workload
