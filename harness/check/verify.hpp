// Verification: inputs every backend sees, and the comparison of a backend's
// output with the reference backend's (normalised mean squared error).
#pragma once

#include "measure/json_optional.hpp"
#include "plugin/host_tensors.hpp"
#include "opbench/ops.hpp"
#include "opbench/plugin.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace opbench {

// sum((out - ref)^2) / sum(ref^2), computed in double over `count` elements of
// dtype `dtype`. Infinity when out holds a NaN or Inf where ref is finite;
// when ref is all zeros, the plain mean squared error.
[[nodiscard]] double nmse(const void *out, const void *ref, int dtype, int64_t count);

// The largest NMSE and point-wise error (see OutputComparison) accepted for an op
// at its dtype and variant, and why (Tolerance and the values live in the
// SDK's op table, opbench/ops.hpp).
[[nodiscard]] Tolerance tolerance_for(const opb_op_desc &desc);

// ---- comparing an output with its reference --------------------------------------

// Everything one comparison found, over `count` elements.
struct OutputComparison {
    double nmse = 0.0;        // as nmse() above
    double worst_error = 0.0; // largest point-wise error, |out - ref| / (|ref| + rms(ref's row))
    int64_t worst_index = -1; // where (flat index), -1 when count is 0
    double worst_out = 0.0, worst_ref = 0.0;
    int64_t unwritten = 0; // elements still holding the sentinel
    int64_t first_unwritten = -1;
    int64_t nonfinite = 0; // NaN or Inf (sentinels not counted) where ref is finite
    int64_t first_nonfinite = -1;
};
// `row` is the length of the output's last axis: each element's error is
// judged on its row's scale (fast_checks.hpp, pointwise_tolerance).
[[nodiscard]] OutputComparison compare_outputs(const void *out, const void *ref, int dtype, int64_t count, int64_t row);

// The verdict on one output tensor: empty when it passes, else one line that
// says what and where (tensor[index...] by its shape), and the limit broken.
struct Limits {
    double max_nmse;
    std::string nmse_why; // where the limits come from (dtype, op)
    double max_pointwise;
    std::string pointwise_why;
};
[[nodiscard]] std::string judge(const OutputComparison &c, const Limits &limits, const std::string &tensor,
                                const std::vector<int64_t> &shape);

// "name[i, j, k]" for a flat index into a row-major tensor of `shape`.
[[nodiscard]] std::string element_name(const std::string &tensor, const std::vector<int64_t> &shape, int64_t flat);

// ---- what an entry records about its verification --------------------------------

enum class VerifyMode { full, fast, off };
[[nodiscard]] std::string_view verify_mode_name(VerifyMode m);
// std::nullopt for anything but "full", "fast", "off".
[[nodiscard]] std::optional<VerifyMode> verify_mode_from_name(std::string_view s);
// The same names in JSON; a name not listed reads as full (the first pair).
NLOHMANN_JSON_SERIALIZE_ENUM(VerifyMode, {{VerifyMode::full, "full"}, {VerifyMode::fast, "fast"}, {VerifyMode::off, "off"}})

struct Verification {
    VerifyMode mode = VerifyMode::fast;
    bool verified = false; // false: off, or the check failed
    std::string method;    // "reference", "freivalds", "sampled-rows", "none" (off)
    std::string reference; // full/linear: "computed" or "cache"; "" when no reference ran
    std::string unit;      // what checked/total count: "elements", "rows"
    int64_t checked = 0, total = 0;
    int vectors = 0;            // freivalds: random vectors per batch
    uint64_t seed = 0;          // the check's own randomness (fast methods)
    std::optional<double> nmse; // when compared with a reference
    std::optional<double> max_nmse;
    std::optional<double> pointwise_error; // largest point-wise error, when compared point by point
    std::optional<double> pointwise_tolerance;
    double worst_ratio = 0.0; // the worst place's error / its limit: above 1 fails
    int64_t worst_index = -1; // flat index into the output of that place
    std::string failure;      // empty when verified or off
};

// The entry's `verification` object (see results/README.md): only the
// fields that apply, a non-finite figure as null. Written, never read back.
[[nodiscard]] nlohmann::json verification_json(const Verification &v);
// Every member under its own name: how a worker sends its verification to
// the run (isolate/worker.hpp's CBOR keeps infinite figures as they are).
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(Verification, mode, verified, method, reference, unit, checked, total, vectors, seed,
                                   nmse, max_nmse, pointwise_error, pointwise_tolerance, worst_ratio, worst_index,
                                   failure)

// ---- checking one case's outputs ------------------------------------------------

using Outputs = std::vector<std::vector<uint8_t>>; // output tensors in execute's order, raw bytes

// What the check of one case × backend needs. The op enters only through its
// description, its tolerance and its (nullable) fast check: the harness knows
// no op by name.
struct VerifyRequest {
    VerifyMode mode = VerifyMode::fast;
    const opb_op_desc *desc = nullptr;
    const HostTensors *host = nullptr; // the inputs every backend saw
    const Outputs *outputs = nullptr;  // what the backend wrote
    FastCheckFn fast_check = nullptr;  // the op's fast check; null: compared with the reference in fast mode too
    uint64_t seed = 0;                 // the fast check's randomness, recorded
    Tolerance tolerance{};
    // The reference outputs, with where they came from ("computed", "cache").
    // Called only when a reference is needed; may throw (the caller's error).
    std::function<const Outputs &(std::string &source)> reference;
};

// Runs the check the mode and the op call for:
//   off                  nothing: unverified, method "none";
//   fast, op has a hook  every output scanned for the sentinel, then the hook
//                        (NaN/Inf, its own tolerance); the reference never runs;
//   full, or no hook     the reference's outputs (never sentinel-filled) and
//                        compare_outputs + judge per output tensor.
// The result's `failure` is empty when verified.
[[nodiscard]] Verification verify_outputs(const VerifyRequest &request);

} // namespace opbench
