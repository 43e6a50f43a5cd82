// A workload entry as the case host sees it (isolate/case_host.hpp): what a
// workload job adds to a case job, and what activating and finishing one
// learn. Plain data, so it crosses the pipe to a worker process like an op
// case's job (the whole-model figures are made from it in the parent:
// workload_figures below).
#pragma once

#include "suite/decoder_config.hpp"
#include "workload/decoder_work.hpp"

#include "measure/plain_bytes.hpp"
#include "measure/records.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace opbench {
// Phases by name; an unknown name reads as prefill (the first pair).
NLOHMANN_JSON_SERIALIZE_ENUM(WorkloadCase::Phase, {{WorkloadCase::Phase::prefill, "prefill"},
                                                   {WorkloadCase::Phase::decode, "decode"}})
} // namespace opbench

// The decoder's shape crosses as its bytes, as an op case's description does.
template <>
inline constexpr std::string_view opbench::kPlainBytesName<opbench::workload::DecoderConfig> = "decoder description";

namespace opbench::workload {

// One workload phase on one backend.
struct WorkloadJob {
    std::string kind = "decoder";
    std::string workload; // its name in the suite
    DecoderConfig decoder;
    Phase phase = Phase::prefill;
};

// What activation learned: where the check was worst and the work one call does.
struct WorkloadActivation {
    std::string check_where; // "decode step 3, layer 1"
    double flops_per_call = 0, bytes_per_call = 0;
    int64_t tokens_per_call = 0, tokens_per_unit = 0;
};

// What finishing learned: the workload's allocations and its components' times.
struct WorkloadTail {
    uint64_t weight_bytes = 0, kv_cache_bytes = 0, kv_bytes_per_token = 0;
    double backend_allocs_per_call = 0;
    ComponentTimes components;
    std::string components_from; // "profile" or "scoped_calls"
    std::string failure;         // the component timing failed: why (the entry fails)
};

NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(WorkloadJob, kind, workload, decoder, phase)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(WorkloadActivation, check_where, flops_per_call, bytes_per_call, tokens_per_call,
                                   tokens_per_unit)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(ComponentTimes::Part, component, spans, total_s, self_s)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(ComponentTimes, steps, step_seconds, unscoped_seconds, parts)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(WorkloadTail, weight_bytes, kv_cache_bytes, kv_bytes_per_token,
                                   backend_allocs_per_call, components, components_from, failure)

// The decoder's shape as a result set's `params` and a profile's args:
// hidden, heads, kv_heads, head_dim, ffn, layers, batch, prompt, generate.
[[nodiscard]] nlohmann::json decoder_shape_json(const DecoderConfig &config);

// The whole-model figures of an entry from every repetition it measured
// (their calls and units), what activation and finishing learned, and its
// memory figures.
[[nodiscard]] DecoderFigures workload_figures(const std::vector<RepetitionRecord> &repetitions,
                                              const WorkloadActivation &activation, const WorkloadTail &tail,
                                              const DecoderConfig &config, const MemoryFigures &memory);

} // namespace opbench::workload
