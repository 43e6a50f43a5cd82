// Verification: inputs every backend sees, and the comparison of a backend's
// output with the reference backend's (normalised mean squared error).
#pragma once

#include "opbench/ops.hpp"
#include "opbench/plugin.h"

#include <cstdint>
#include <string>
#include <vector>

namespace opbench {

// Host copies of an op's tensors in execute's order (see ops.hpp op_tensors):
// inputs filled with deterministic pseudo-random values, outputs zeroed.
struct HostTensors {
    std::vector<std::vector<uint8_t>> buffers; // raw bytes in the op's dtype
    std::vector<bool> is_output;
};

// Same seed, same description -> bit-identical inputs on every run and machine.
[[nodiscard]] HostTensors make_inputs(const opb_op_desc &desc, uint64_t seed);

// sum((out - ref)^2) / sum(ref^2), computed in double over `count` elements of
// dtype `dtype`. Infinity when out holds a NaN or Inf where ref is finite;
// when ref is all zeros, the plain mean squared error.
[[nodiscard]] double nmse(const void *out, const void *ref, int dtype, int64_t count);

// The largest NMSE accepted for an op at its dtype and variant, and why
// (Tolerance and the values live in the SDK's op table, opbench/ops.hpp).
[[nodiscard]] Tolerance tolerance_for(const opb_op_desc &desc);

} // namespace opbench
