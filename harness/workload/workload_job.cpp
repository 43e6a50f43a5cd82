#include "workload/workload_job.hpp"

#include <stdexcept>
#include <type_traits>

namespace opbench::workload {

namespace {

std::string bytes_to_hex(const void *data, std::size_t n) {
    static const char *digits = "0123456789abcdef";
    std::string s;
    s.reserve(2 * n);
    for (std::size_t i = 0; i < n; ++i) {
        const auto b = static_cast<const unsigned char *>(data)[i];
        s += digits[b >> 4];
        s += digits[b & 15];
    }
    return s;
}

void hex_to_bytes(const std::string &s, void *data, std::size_t n) {
    if (s.size() != 2 * n) throw std::invalid_argument("decoder description of the wrong size");
    auto nibble = [](char c) { return c <= '9' ? c - '0' : c - 'a' + 10; };
    for (std::size_t i = 0; i < n; ++i)
        static_cast<unsigned char *>(data)[i] =
            static_cast<unsigned char>(nibble(s[2 * i]) << 4 | nibble(s[2 * i + 1]));
}

} // namespace

static_assert(std::is_trivially_copyable_v<DecoderConfig>, "DecoderConfig crosses to the worker as its bytes");

// Both ends are the same program: the decoder's shape (plain data) travels
// as its bytes, as an op case's description does.
void to_json(nlohmann::json &j, const WorkloadJob &w) {
    j = {{"kind", w.kind},
         {"workload", w.workload},
         {"decoder", bytes_to_hex(&w.decoder, sizeof w.decoder)},
         {"phase", w.phase == Phase::decode ? "decode" : "prefill"}};
}

void from_json(const nlohmann::json &j, WorkloadJob &w) {
    w.kind = j.at("kind").get<std::string>();
    w.workload = j.at("workload").get<std::string>();
    hex_to_bytes(j.at("decoder").get<std::string>(), &w.decoder, sizeof w.decoder);
    w.phase = j.at("phase").get<std::string>() == "decode" ? Phase::decode : Phase::prefill;
}

nlohmann::json decoder_shape_json(const DecoderConfig &c) {
    return {{"hidden", c.hidden},       {"heads", c.heads},     {"kv_heads", c.kv_head_count()},
            {"head_dim", c.head_dim()}, {"ffn", c.ffn_width()}, {"layers", c.layers},
            {"batch", c.batch},         {"prompt", c.prompt},   {"generate", c.generate}};
}

DecoderFigures workload_figures(const std::vector<RepetitionRecord> &repetitions, const WorkloadActivation &activation,
                                const WorkloadTail &tail, const DecoderConfig &config, const MemoryFigures &memory) {
    DecoderMeasurements m;
    for (const auto &rec : repetitions) {
        m.call_seconds.insert(m.call_seconds.end(), rec.sample_times.begin(), rec.sample_times.end());
        m.unit_seconds.insert(m.unit_seconds.end(), rec.unit_seconds.begin(), rec.unit_seconds.end());
    }
    m.tokens_per_call = activation.tokens_per_call;
    m.tokens_per_unit = activation.tokens_per_unit;
    m.context_tokens = config.batch * config.context();
    m.peak_bytes = memory.plugin_peak_bytes;
    m.weight_bytes = tail.weight_bytes;
    m.kv_cache_bytes = tail.kv_cache_bytes;
    m.kv_bytes_per_token = tail.kv_bytes_per_token;
    m.heap_allocs_per_call = memory.allocs_per_call;
    m.backend_allocs_per_call = tail.backend_allocs_per_call;
    m.components = tail.components;
    m.components_from = tail.components_from;
    return decoder_figures(m);
}

} // namespace opbench::workload
