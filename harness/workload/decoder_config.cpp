// The decoder's configuration checks, apart from the decoder itself: the suite
// parser (and its fuzz target) use them without linking the plugin machinery.
#include "workload/decoder_config.hpp"

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
    if (hidden % heads != 0)
        return fmt::format("'hidden' {} is not divisible by 'heads' {} (head_dim = hidden / heads)", hidden, heads);
    if (ffn < 0) return fmt::format("'ffn' must be > 0 (or left out for 4 x hidden), got {}", ffn);
    if (generate < 0) return fmt::format("'generate' must be >= 0, got {}", generate);
    if (!(eps > 0.0f) || !std::isfinite(eps)) return "'eps' must be a finite number > 0";
    if (threads < 0) return "'threads' must be >= 0 (0 = backend default)";
    return {};
}

} // namespace opbench::workload
