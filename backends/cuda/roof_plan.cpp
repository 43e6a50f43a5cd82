#include "roof_plan.hpp"

#include <algorithm>
#include <cstring>
#include <string>

namespace opbench::cuda {

namespace {
constexpr double T = 1e12;
// NVIDIA's data sheets, dense (no sparsity) figures at the boost clock.
// H100 SXM5: 67 TF f32, 494.7 tf32, 989.4 bf16/f16, 1978.9 fp8/int8, 3.35 TB/s.
// H100 PCIe: 51 / 378 / 756 / 1513, 2.0 TB/s. H200 SXM: H100 SXM's compute, 4.8 TB/s.
// A100 SXM4 80GB: 19.5 / 156 / 312 / 312 (no fp8) / 624, 2.039 TB/s.
// L40S: 91.6 / 183 / 362 / 362 / 733 / 733, 0.864 TB/s.
const Datasheet kSheets[] = {
    {"H100 PCIe", 51 * T, 378 * T, 756 * T, 756 * T, 1513 * T, 1513 * T, 2.0e12},
    {"H100", 67 * T, 494.7 * T, 989.4 * T, 989.4 * T, 1978.9 * T, 1978.9 * T, 3.35e12},
    {"H200", 67 * T, 494.7 * T, 989.4 * T, 989.4 * T, 1978.9 * T, 1978.9 * T, 4.8e12},
    {"A100", 19.5 * T, 156 * T, 312 * T, 312 * T, 0, 624 * T, 2.039e12},
    {"L40S", 91.6 * T, 183 * T, 362 * T, 362 * T, 733 * T, 733 * T, 0.864e12},
};
} // namespace

const Datasheet *find_datasheet(std::string_view device_name) {
    const Datasheet *best = nullptr;
    for (const Datasheet &s : kSheets)
        if (device_name.find(s.name_contains) != std::string_view::npos &&
            (!best || std::strlen(s.name_contains) > std::strlen(best->name_contains)))
            best = &s;
    return best;
}

double datasheet_figure(const Datasheet *s, int32_t unit, int32_t dtype) {
    if (!s) return 0;
    switch (unit) {
    case OPB_ROOF_SIMT: return dtype == OPB_DTYPE_F32 ? s->simt_f32 : 0;
    case OPB_ROOF_TENSOR:
        switch (dtype) {
        case OPB_DTYPE_F32: return s->tensor_tf32;
        case OPB_DTYPE_BF16: return s->tensor_bf16;
        case OPB_DTYPE_F16: return s->tensor_f16;
        case OPB_DTYPE_F8_E4M3: return s->tensor_fp8;
        case OPB_DTYPE_S8: return s->tensor_int8;
        default: return 0;
        }
    case OPB_ROOF_DRAM: return s->dram_bytes;
    default: return 0; // no vendor publishes an L2 bandwidth
    }
}

std::vector<RoofGemm> roof_gemm_sweep() {
    return {
        {OPB_ROOF_SIMT, OPB_DTYPE_F32, 4096},   {OPB_ROOF_SIMT, OPB_DTYPE_F32, 8192},
        {OPB_ROOF_TENSOR, OPB_DTYPE_F32, 4096}, {OPB_ROOF_TENSOR, OPB_DTYPE_F32, 8192},
        {OPB_ROOF_TENSOR, OPB_DTYPE_BF16, 4096}, {OPB_ROOF_TENSOR, OPB_DTYPE_BF16, 8192},
        {OPB_ROOF_TENSOR, OPB_DTYPE_BF16, 16384}, {OPB_ROOF_TENSOR, OPB_DTYPE_F16, 4096},
        {OPB_ROOF_TENSOR, OPB_DTYPE_F16, 8192}, {OPB_ROOF_TENSOR, OPB_DTYPE_F16, 16384},
        {OPB_ROOF_TENSOR, OPB_DTYPE_F8_E4M3, 4096}, {OPB_ROOF_TENSOR, OPB_DTYPE_F8_E4M3, 8192},
        {OPB_ROOF_TENSOR, OPB_DTYPE_F8_E4M3, 16384},
        {OPB_ROOF_TENSOR, OPB_DTYPE_S8, 8192},   {OPB_ROOF_TENSOR, OPB_DTYPE_S8, 16384},
    };
}

int roof_operand_bytes(int32_t dtype) {
    switch (dtype) {
    case OPB_DTYPE_F32: return 4;
    case OPB_DTYPE_BF16:
    case OPB_DTYPE_F16: return 2;
    default: return 1; // e4m3, s8
    }
}

int roof_output_bytes(int32_t dtype) {
    return dtype == OPB_DTYPE_F32 || dtype == OPB_DTYPE_S8 ? 4 : 2; // fp8: bf16 out
}

int gemm_repetitions(double flop, double rate_guess, double seconds) {
    if (!(flop > 0) || !(rate_guess > 0)) return 3;
    const double n = seconds * rate_guess / flop;
    return static_cast<int>(std::clamp(n, 3.0, 10000.0));
}

double clock_mhz_from_probe(uint64_t cycles, uint64_t nanoseconds) {
    if (nanoseconds == 0) return 0;
    return static_cast<double>(cycles) * 1e3 / static_cast<double>(nanoseconds);
}

uint64_t triad_bytes_for_dram(uint64_t l2_bytes) { return std::max<uint64_t>(4 * l2_bytes, 256ull << 20); }

uint64_t triad_bytes_for_l2(uint64_t l2_bytes) { return std::max<uint64_t>(l2_bytes / 2, 1ull << 20); }

} // namespace opbench::cuda
