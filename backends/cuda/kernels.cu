// CUDA backend — own kernels: softmax, layernorm, rmsnorm, gelu, silu, add.
//
// Deliberately plain: one block per row for the row ops (block reductions
// through warp shuffles), grid-stride loops for the elementwise ops, f32
// math for every dtype. Launch geometry comes from planning.cpp, where it is
// unit-tested. Templates are instantiated for three dtypes only, to keep
// compile times short.
#include "kernels.hpp"
#include "device_types.cuh"
#include "planning.hpp"

#include "opbench/plugin.h"

#include <cuda_runtime.h>

namespace opbench::cuda {
namespace {

using detail::load;
using detail::store;
using detail::with_type;

__device__ __forceinline__ float warp_sum(float v) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}
__device__ __forceinline__ float warp_max(float v) {
    for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}

// Block-wide reduction; blockDim.x is a multiple of 32 (row_launch). Every
// thread gets the result. `scratch` holds 32 floats; the trailing barrier
// makes it reusable by the next call.
template <bool IsMax>
__device__ float block_reduce(float v, float *scratch) {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int warps = blockDim.x >> 5;
    v = IsMax ? warp_max(v) : warp_sum(v);
    if (lane == 0) scratch[warp] = v;
    __syncthreads();
    const float identity = IsMax ? -INFINITY : 0.0f;
    float r = lane < warps ? scratch[lane] : identity;
    r = IsMax ? warp_max(r) : warp_sum(r);
    __syncthreads();
    return r;
}

template <class TI, class TO>
__global__ void softmax_kernel(const TI *x, TO *y, int64_t rows, int64_t cols, float scale, bool causal) {
    __shared__ float scratch[32];
    const int64_t row_index = blockIdx.x;
    const int64_t r = row_index % rows;
    const TI *xr = x + row_index * cols;
    TO *yr = y + row_index * cols;
    int64_t visible = cols;
    if (causal) { // bottom-right aligned, as opbench::causal_visible
        const int64_t last = r + (cols - rows);
        visible = last < 0 ? 0 : (last + 1 < cols ? last + 1 : cols);
    }
    if (visible == 0) { // the whole row is masked: no distribution, write zeros
        for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) store(yr, c, 0.0f);
        return;
    }
    float m = -INFINITY;
    for (int64_t c = threadIdx.x; c < visible; c += blockDim.x) m = fmaxf(m, scale * load(xr, c));
    m = block_reduce<true>(m, scratch);
    float s = 0.0f;
    for (int64_t c = threadIdx.x; c < visible; c += blockDim.x) s += expf(scale * load(xr, c) - m);
    s = block_reduce<false>(s, scratch);
    const float inv = 1.0f / s;
    // Reads above all finished at the reductions' barriers, so x may alias y.
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x)
        store(yr, c, c < visible ? expf(scale * load(xr, c) - m) * inv : 0.0f);
}

template <class T>
__global__ void layernorm_kernel(const T *x, const T *gamma, const T *beta, T *y, int64_t cols, float eps) {
    __shared__ float scratch[32];
    const T *xr = x + static_cast<int64_t>(blockIdx.x) * cols;
    T *yr = y + static_cast<int64_t>(blockIdx.x) * cols;
    float s = 0.0f;
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) s += load(xr, c);
    const float mean = block_reduce<false>(s, scratch) / static_cast<float>(cols);
    // Two passes (mean, then squared deviations) rather than E[x^2]-E[x]^2,
    // which cancels badly for rows with a large mean.
    float q = 0.0f;
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) {
        const float d = load(xr, c) - mean;
        q += d * d;
    }
    const float var = block_reduce<false>(q, scratch) / static_cast<float>(cols);
    const float rstd = rsqrtf(var + eps);
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x)
        store(yr, c, (load(xr, c) - mean) * rstd * load(gamma, c) + load(beta, c));
}

template <class T>
__global__ void rmsnorm_kernel(const T *x, const T *gamma, T *y, int64_t cols, float eps) {
    __shared__ float scratch[32];
    const T *xr = x + static_cast<int64_t>(blockIdx.x) * cols;
    T *yr = y + static_cast<int64_t>(blockIdx.x) * cols;
    float q = 0.0f;
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) {
        const float v = load(xr, c);
        q += v * v;
    }
    const float rms = rsqrtf(block_reduce<false>(q, scratch) / static_cast<float>(cols) + eps);
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) store(yr, c, load(xr, c) * rms * load(gamma, c));
}

template <class T>
__global__ void gelu_kernel(const T *x, T *y, int64_t n, bool tanh_form) {
    const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
    for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
        const float v = load(x, i);
        float r;
        if (tanh_form)
            r = 0.5f * v * (1.0f + tanhf(0.7978845608028654f * (v + 0.044715f * v * v * v)));
        else
            r = 0.5f * v * (1.0f + erff(v * 0.7071067811865476f));
        store(y, i, r);
    }
}

template <class T>
__global__ void silu_kernel(const T *x, T *y, int64_t n) {
    const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
    for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
        const float v = load(x, i);
        store(y, i, v / (1.0f + expf(-v)));
    }
}

template <class T>
__global__ void add_kernel(const T *a, const T *b, T *y, int64_t n) {
    const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
    for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
        store(y, i, load(a, i) + load(b, i));
}

} // namespace

cudaError_t launch_softmax(const void *x, int x_dtype, void *y, int y_dtype, int64_t batch, int64_t rows, int64_t cols,
                           float scale, bool causal, cudaStream_t stream) {
    const Launch l = row_launch(batch * rows, cols);
    // Same dtype in and out, or f32 scores in (attention) and any dtype out.
    if (x_dtype != y_dtype && x_dtype != OPB_DTYPE_F32) return cudaErrorInvalidValue;
    bool ok;
    if (x_dtype == OPB_DTYPE_F32)
        ok = with_type(y_dtype, [&](auto to) {
            using TO = decltype(to);
            softmax_kernel<float, TO><<<l.grid, l.block, 0, stream>>>(static_cast<const float *>(x),
                                                                      static_cast<TO *>(y), rows, cols, scale, causal);
        });
    else
        ok = with_type(x_dtype, [&](auto t) {
            using T = decltype(t);
            softmax_kernel<T, T><<<l.grid, l.block, 0, stream>>>(static_cast<const T *>(x), static_cast<T *>(y), rows,
                                                                 cols, scale, causal);
        });
    return ok ? cudaGetLastError() : cudaErrorInvalidValue;
}

cudaError_t launch_layernorm(const void *x, const void *gamma, const void *beta, void *y, int dtype, int64_t rows,
                             int64_t cols, float eps, cudaStream_t stream) {
    const Launch l = row_launch(rows, cols);
    const bool ok = with_type(dtype, [&](auto t) {
        using T = decltype(t);
        layernorm_kernel<T><<<l.grid, l.block, 0, stream>>>(static_cast<const T *>(x), static_cast<const T *>(gamma),
                                                            static_cast<const T *>(beta), static_cast<T *>(y), cols,
                                                            eps);
    });
    return ok ? cudaGetLastError() : cudaErrorInvalidValue;
}

cudaError_t launch_rmsnorm(const void *x, const void *gamma, void *y, int dtype, int64_t rows, int64_t cols, float eps,
                           cudaStream_t stream) {
    const Launch l = row_launch(rows, cols);
    const bool ok = with_type(dtype, [&](auto t) {
        using T = decltype(t);
        rmsnorm_kernel<T><<<l.grid, l.block, 0, stream>>>(static_cast<const T *>(x), static_cast<const T *>(gamma),
                                                          static_cast<T *>(y), cols, eps);
    });
    return ok ? cudaGetLastError() : cudaErrorInvalidValue;
}

cudaError_t launch_gelu(const void *x, void *y, int dtype, int64_t n, bool tanh_form, cudaStream_t stream) {
    const Launch l = eltwise_launch(n);
    const bool ok = with_type(dtype, [&](auto t) {
        using T = decltype(t);
        gelu_kernel<T><<<l.grid, l.block, 0, stream>>>(static_cast<const T *>(x), static_cast<T *>(y), n, tanh_form);
    });
    return ok ? cudaGetLastError() : cudaErrorInvalidValue;
}

cudaError_t launch_silu(const void *x, void *y, int dtype, int64_t n, cudaStream_t stream) {
    const Launch l = eltwise_launch(n);
    const bool ok = with_type(dtype, [&](auto t) {
        using T = decltype(t);
        silu_kernel<T><<<l.grid, l.block, 0, stream>>>(static_cast<const T *>(x), static_cast<T *>(y), n);
    });
    return ok ? cudaGetLastError() : cudaErrorInvalidValue;
}

cudaError_t launch_add(const void *a, const void *b, void *y, int dtype, int64_t n, cudaStream_t stream) {
    const Launch l = eltwise_launch(n);
    const bool ok = with_type(dtype, [&](auto t) {
        using T = decltype(t);
        add_kernel<T><<<l.grid, l.block, 0, stream>>>(static_cast<const T *>(a), static_cast<const T *>(b),
                                                      static_cast<T *>(y), n);
    });
    return ok ? cudaGetLastError() : cudaErrorInvalidValue;
}

} // namespace opbench::cuda
