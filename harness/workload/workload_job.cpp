#include "workload/workload_job.hpp"

#include <algorithm>

namespace opbench::workload {

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
    DecoderFigures f = decoder_figures(m);
    // Every repetition throttled (issue 41): the time is the fallen clock's,
    // so no tokens/s (0, no figure); ms per token, a time, stays.
    const bool throttled =
        std::any_of(repetitions.begin(), repetitions.end(), [](const RepetitionRecord &r) { return r.throttled; }) &&
        std::all_of(repetitions.begin(), repetitions.end(),
                    [](const RepetitionRecord &r) { return r.throttled || r.starved; });
    if (throttled) f.tokens_per_second = 0;
    return f;
}

} // namespace opbench::workload
