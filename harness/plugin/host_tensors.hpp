// Host copies of an op's tensors: plain data that the checks (check/) fill
// and compare and that plugin/ copies to and from a backend, so neither
// needs the other.
#pragma once

#include "opbench/plugin.h"

#include <cstdint>
#include <vector>

namespace opbench {

// Host copies of an op's tensors in execute's order (see ops.hpp op_tensors):
// inputs filled with deterministic pseudo-random values, outputs filled with
// the sentinel (fill_sentinel), so an element a backend never writes shows.
struct HostTensors {
    std::vector<std::vector<uint8_t>> buffers; // raw bytes in the op's dtype
    std::vector<bool> is_output;
};

// Same seed, same description -> bit-identical inputs on every run and machine.
[[nodiscard]] HostTensors make_inputs(const opb_op_desc &desc, uint64_t seed);

// ---- sentinel: outputs a backend never wrote ----------------------------------
//
// Outputs start as a quiet NaN with a payload no arithmetic produces from
// finite inputs (f32 0x7fdbdbdb, bf16 0x7fdb, f16 0x7edb). An element that
// still holds it after execute was never written (or was read and passed
// through, as in C += A·B on an output the backend assumed zero). Integer
// outputs (u8/s8: quantize) have no value that is not one: they are filled
// with 0xdb, is_sentinel is false for them, and an unwritten element shows as
// a difference from the reference instead.
[[nodiscard]] uint32_t sentinel_bits(int dtype);
void fill_sentinel(void *buf, int dtype, int64_t count);
[[nodiscard]] bool is_sentinel(const void *buf, int dtype, int64_t i);

} // namespace opbench
