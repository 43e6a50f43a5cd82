// CUDA backend — device-side loads and stores of opbench's float dtypes (math
// in f32, one round-to-nearest-even on store) and the dtype -> device type
// dispatch, shared by the kernel files (kernels.cu, rope_quant.cu).
#ifndef OPBENCH_CUDA_DEVICE_TYPES_CUH
#define OPBENCH_CUDA_DEVICE_TYPES_CUH

#include "opbench/plugin.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

namespace opbench::cuda::detail {

__device__ __forceinline__ float load(const float *p, int64_t i) { return p[i]; }
__device__ __forceinline__ float load(const __nv_bfloat16 *p, int64_t i) { return __bfloat162float(p[i]); }
__device__ __forceinline__ float load(const __half *p, int64_t i) { return __half2float(p[i]); }

__device__ __forceinline__ void store(float *p, int64_t i, float v) { p[i] = v; }
__device__ __forceinline__ void store(__nv_bfloat16 *p, int64_t i, float v) { p[i] = __float2bfloat16_rn(v); }
__device__ __forceinline__ void store(__half *p, int64_t i, float v) { p[i] = __float2half_rn(v); }

// Calls f(T{}) with T the device type of dtype; false for an unknown dtype.
template <class F>
bool with_type(int dtype, F &&f) {
    switch (dtype) {
    case OPB_DTYPE_F32: f(float{}); return true;
    case OPB_DTYPE_BF16: f(__nv_bfloat16{}); return true;
    case OPB_DTYPE_F16: f(__half{}); return true;
    default: return false;
    }
}

} // namespace opbench::cuda::detail

#endif // OPBENCH_CUDA_DEVICE_TYPES_CUH
