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

// `bytes` zeroed bytes for a host copy (an input made, an output read back).
// Its memory is advised for 2 MB pages where the kernel offers them
// (madvise(MADV_HUGEPAGE); transparent huge pages set to `madvise` or
// `always`): the first touch of 4 KiB pages cost 0.6 s per 212 MB on a
// KVM guest whose page faults are slow, and gemm's largest layer makes
// and reads back 390 MB before its first sample (issue 44). Host copies
// only: a backend's own tensors stay as its plugin allocates them, so what
// is timed is unchanged.
[[nodiscard]] std::vector<uint8_t> zeroed_host_buffer(std::size_t bytes);

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
