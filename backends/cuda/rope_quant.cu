// CUDA backend — kernels of the ops the decoders of suites/models need beyond
// the first set: rope (half-split and interleaved), quantize, and the int8
// linear layer's passes around cuBLASLt's s8 GEMM. Grid-stride loops with
// eltwise_launch's geometry (planning.cpp); the per-element arithmetic is
// rope_quant_math.hpp's, which cuda_rope_quant_test runs on the host against
// float64.
#include "device_types.cuh"
#include "planning.hpp"
#include "rope_quant.hpp"

#include <cuda_fp8.h>
#include <cuda_runtime.h>

namespace opbench::cuda {
namespace {

using detail::load;
using detail::store;
using detail::with_type;

__device__ __forceinline__ int64_t first_index() { return static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; }
__device__ __forceinline__ int64_t grid_stride() { return static_cast<int64_t>(gridDim.x) * blockDim.x; }

// One thread per output element: it reads its element and its partner and
// writes itself, so no thread waits on another and every store is coalesced.
template <class T>
__global__ void rope_kernel(RopeShape s, const T *q, const T *k, T *qr, T *kr) {
    const int64_t D = s.head_dim, total = (s.rows_q + s.rows_k) * D;
    for (int64_t i = first_index(); i < total; i += grid_stride()) {
        const int64_t row = i / D, e = i % D;
        const bool is_q = row < s.rows_q;
        const int64_t r = is_q ? row : row - s.rows_q;
        const T *x = is_q ? q : k;
        T *y = is_q ? qr : kr;
        const int64_t base = r * D;
        const RopeElement el = rope_element(s.variant, s.rotary_dim, e);
        const float v = load(x, base + e);
        if (!el.rotated) {
            store(y, base + e, v);
            continue;
        }
        double sin_a, cos_a;
        sincos(rope_angle(s, rope_position(s, r), el.pair), &sin_a, &cos_a);
        store(y, base + e, static_cast<float>(rope_rotate(el.first, v, load(x, base + el.partner), cos_a, sin_a)));
    }
}

template <class T, class TO>
__global__ void quantize_kernel(const T *x, TO *y, int64_t n, float scale, int32_t zero_point, QuantRange r) {
    for (int64_t i = first_index(); i < n; i += grid_stride())
        y[i] = static_cast<TO>(quantize_value(load(x, i), scale, zero_point, r));
}

// FP8 (ABI 1.7): e4m3 of the f32 quotient, nearest even, saturating to
// +-448; NaN stays NaN (plugin.h, QUANTIZE).
template <class T>
__global__ void quantize_e4m3_kernel(const T *x, __nv_fp8_storage_t *y, int64_t n, float scale) {
    for (int64_t i = first_index(); i < n; i += grid_stride())
        y[i] = __nv_cvt_float_to_fp8(fp8_quotient(load(x, i), scale), __NV_SATFINITE, __NV_E4M3);
}

__global__ void u8_to_shifted_s8_kernel(const uint8_t *a, int8_t *s, int64_t n) {
    for (int64_t i = first_index(); i < n; i += grid_stride()) s[i] = u8_as_shifted_s8(a[i]);
}

// FP8 matmul's bias: f32 -> bf16, round to nearest even (cuBLASLt's FP8
// kernels take a bf16 bias).
__global__ void f32_to_bf16_kernel(const float *x, __nv_bfloat16 *y, int64_t n) {
    for (int64_t i = first_index(); i < n; i += grid_stride()) y[i] = __float2bfloat16_rn(x[i]);
}

// One thread per (batch, column); consecutive threads read consecutive
// columns of a row when B is [k, n].
__global__ void weight_column_sums_kernel(const int8_t *w, int32_t *sums, int64_t batch, int64_t k, int64_t n,
                                          bool trans_b) {
    for (int64_t i = first_index(); i < batch * n; i += grid_stride()) {
        const int64_t b = i / n, j = i % n;
        const int8_t *wb = w + b * k * n;
        int32_t sum = 0;
        for (int64_t kk = 0; kk < k; ++kk) sum += trans_b ? wb[j * k + kk] : wb[kk * n + j];
        sums[i] = sum;
    }
}

template <class TO>
__global__ void int8_dequantize_kernel(const int32_t *acc, const int32_t *column_sums, const float *w_scale,
                                       const float *bias, TO *c, int64_t batch, int64_t m, int64_t n, int32_t shift,
                                       float act_scale) {
    for (int64_t i = first_index(); i < batch * m * n; i += grid_stride()) {
        const int64_t j = i % n, b = i / (m * n);
        store(c, i,
              int8_dequantize(acc[i], column_sums ? column_sums[b * n + j] : 0, shift, act_scale, w_scale[j],
                              bias ? bias[j] : 0.0f));
    }
}

} // namespace

cudaError_t launch_rope(const RopeShape &s, int dtype, const void *q, const void *k, void *qr, void *kr,
                        cudaStream_t stream) {
    const Launch l = eltwise_launch((s.rows_q + s.rows_k) * s.head_dim);
    const bool ok = with_type(dtype, [&](auto t) {
        using T = decltype(t);
        rope_kernel<T><<<l.grid, l.block, 0, stream>>>(s, static_cast<const T *>(q), static_cast<const T *>(k),
                                                       static_cast<T *>(qr), static_cast<T *>(kr));
    });
    return ok ? cudaGetLastError() : cudaErrorInvalidValue;
}

cudaError_t launch_quantize(const void *x, int dtype, void *y, int out_dtype, int64_t n, float scale,
                            int32_t zero_point, cudaStream_t stream) {
    if (out_dtype != OPB_DTYPE_U8 && out_dtype != OPB_DTYPE_S8 && out_dtype != OPB_DTYPE_F8_E4M3)
        return cudaErrorInvalidValue;
    const Launch l = eltwise_launch(n);
    const QuantRange r = quant_range(out_dtype);
    const bool ok = with_type(dtype, [&](auto t) {
        using T = decltype(t);
        if (out_dtype == OPB_DTYPE_F8_E4M3)
            quantize_e4m3_kernel<T><<<l.grid, l.block, 0, stream>>>(static_cast<const T *>(x),
                                                                    static_cast<__nv_fp8_storage_t *>(y), n, scale);
        else if (out_dtype == OPB_DTYPE_U8)
            quantize_kernel<T, uint8_t><<<l.grid, l.block, 0, stream>>>(
                static_cast<const T *>(x), static_cast<uint8_t *>(y), n, scale, zero_point, r);
        else
            quantize_kernel<T, int8_t><<<l.grid, l.block, 0, stream>>>(
                static_cast<const T *>(x), static_cast<int8_t *>(y), n, scale, zero_point, r);
    });
    return ok ? cudaGetLastError() : cudaErrorInvalidValue;
}

cudaError_t launch_u8_to_shifted_s8(const uint8_t *a, int8_t *s, int64_t n, cudaStream_t stream) {
    const Launch l = eltwise_launch(n);
    u8_to_shifted_s8_kernel<<<l.grid, l.block, 0, stream>>>(a, s, n);
    return cudaGetLastError();
}

cudaError_t launch_f32_to_bf16(const float *x, void *y, int64_t n, cudaStream_t stream) {
    const Launch l = eltwise_launch(n);
    f32_to_bf16_kernel<<<l.grid, l.block, 0, stream>>>(x, static_cast<__nv_bfloat16 *>(y), n);
    return cudaGetLastError();
}

cudaError_t launch_weight_column_sums(const int8_t *w, int32_t *sums, int64_t batch, int64_t k, int64_t n, bool trans_b,
                                      cudaStream_t stream) {
    const Launch l = eltwise_launch(batch * n);
    weight_column_sums_kernel<<<l.grid, l.block, 0, stream>>>(w, sums, batch, k, n, trans_b);
    return cudaGetLastError();
}

cudaError_t launch_int8_dequantize(const int32_t *acc, const int32_t *column_sums, const float *w_scale,
                                   const float *bias, void *c, int out_dtype, int64_t batch, int64_t m, int64_t n,
                                   int32_t shift, float act_scale, cudaStream_t stream) {
    const Launch l = eltwise_launch(batch * m * n);
    if (out_dtype == OPB_DTYPE_F32)
        int8_dequantize_kernel<float><<<l.grid, l.block, 0, stream>>>(
            acc, column_sums, w_scale, bias, static_cast<float *>(c), batch, m, n, shift, act_scale);
    else if (out_dtype == OPB_DTYPE_BF16)
        int8_dequantize_kernel<__nv_bfloat16><<<l.grid, l.block, 0, stream>>>(
            acc, column_sums, w_scale, bias, static_cast<__nv_bfloat16 *>(c), batch, m, n, shift, act_scale);
    else
        return cudaErrorInvalidValue;
    return cudaGetLastError();
}

} // namespace opbench::cuda
