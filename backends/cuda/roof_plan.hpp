// Host-side helpers of the device's roofs (ABI 1.5, issue 41), kept apart
// from the CUDA calls so they have host tests (tests/backends/cuda/
// cuda_roof_plan_test.cpp): the datasheet figures of the devices this
// backend knows, the GEMM sweep, and the arithmetic of the clock probe and
// the bandwidth kernels.
#ifndef OPBENCH_CUDA_ROOF_PLAN_HPP
#define OPBENCH_CUDA_ROOF_PLAN_HPP

#include "opbench/plugin.h"

#include <cstdint>
#include <string_view>
#include <vector>

namespace opbench::cuda {

// The vendor's dense figures of one device, per second (0: not offered).
struct Datasheet {
    const char *name_contains; // matched against cudaDeviceProp::name
    double simt_f32, tensor_tf32, tensor_bf16, tensor_f16, tensor_fp8, tensor_int8; // FLOP/s (int8: ops/s)
    double dram_bytes;                                                                 // bytes/s
};
// The entry whose name_contains is in `device_name` (the longest match, so
// "H100 PCIe" wins over "H100"); nullptr for a device the table lacks.
[[nodiscard]] const Datasheet *find_datasheet(std::string_view device_name);
// One roof's datasheet figure; 0 when the device or the unit/dtype is unknown.
[[nodiscard]] double datasheet_figure(const Datasheet *sheet, int32_t unit, int32_t dtype);

// One GEMM of the roofs' sweep: square n x n x n, the dtypes of its
// operands and the unit that runs them.
struct RoofGemm {
    int32_t unit;  // OPB_ROOF_SIMT or OPB_ROOF_TENSOR
    int32_t dtype; // OPB_DTYPE_F32 (TENSOR: TF32), BF16, F16, F8_E4M3, S8
    int64_t n;
};
// The sweep, largest shapes last: a few shapes per roof, each large enough
// to fill an H100's SMs, small enough (<= 8192^3 f32: 768 MiB) for any
// data-centre GPU. FP8 (e4m3, bf16 out) and INT8 (s32 out) run cuBLASLt's
// TN layout, the one both take on Hopper.
[[nodiscard]] std::vector<RoofGemm> roof_gemm_sweep();
// Bytes of one operand element (A and B) and of one output element (D) of
// the sweep's GEMM in `dtype`: f32 4/4, bf16 2/2, f16 2/2, fp8 1/2 (bf16
// out), s8 1/4 (s32 out).
[[nodiscard]] int roof_operand_bytes(int32_t dtype);
[[nodiscard]] int roof_output_bytes(int32_t dtype);
// Repetitions of a GEMM of `flop` work to fill `seconds` at `rate_guess`
// FLOP/s: at least 3, at most 10,000.
[[nodiscard]] int gemm_repetitions(double flop, double rate_guess, double seconds);

// SM clock in MHz from a probe's SM cycles (clock64) over nanoseconds
// (%globaltimer); 0 when the interval is empty.
[[nodiscard]] double clock_mhz_from_probe(uint64_t cycles, uint64_t nanoseconds);

// The triad's working set (three arrays of f32) for DRAM: at least 4x the
// L2, at least 256 MiB; for L2: half the L2 (it stays there between passes).
[[nodiscard]] uint64_t triad_bytes_for_dram(uint64_t l2_bytes);
[[nodiscard]] uint64_t triad_bytes_for_l2(uint64_t l2_bytes);
// Bytes a triad a[i] = b[i] + s * c[i] over `bytes` of three arrays moves:
// two reads and one write of each element.
[[nodiscard]] inline double triad_traffic(uint64_t bytes) { return static_cast<double>(bytes); }

} // namespace opbench::cuda

#endif // OPBENCH_CUDA_ROOF_PLAN_HPP
