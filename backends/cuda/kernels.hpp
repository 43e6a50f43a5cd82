// CUDA backend — our own kernels (kernels.cu), callable from host C++.
//
// Each launcher enqueues one kernel on `stream` and returns the launch's
// cudaError_t (cudaGetLastError right after the launch). Tensors are dense
// row-major device buffers of the given opb_dtype; math is done in f32.
#ifndef OPBENCH_CUDA_KERNELS_HPP
#define OPBENCH_CUDA_KERNELS_HPP

#include <cuda_runtime_api.h>

#include <cstdint>

namespace opbench::cuda {

// y = softmax(scale * x) along the last axis of [batch, rows, cols]. x and y
// may have different dtypes (attention: f32 scores -> bf16/f16 probabilities)
// and may be the same buffer when the dtypes match. causal keeps columns
// c <= r + (cols - rows) (bottom-right aligned); a row that keeps no column
// is written as zeros.
cudaError_t launch_softmax(const void *x, int x_dtype, void *y, int y_dtype, int64_t batch, int64_t rows, int64_t cols,
                           float scale, bool causal, cudaStream_t stream);

// Per row of x [rows, cols]: (x - mean) / sqrt(var + eps) * gamma + beta,
// var the biased (population) variance.
cudaError_t launch_layernorm(const void *x, const void *gamma, const void *beta, void *y, int dtype, int64_t rows,
                             int64_t cols, float eps, cudaStream_t stream);

// Per row: x / sqrt(mean(x^2) + eps) * gamma.
cudaError_t launch_rmsnorm(const void *x, const void *gamma, void *y, int dtype, int64_t rows, int64_t cols, float eps,
                           cudaStream_t stream);

// Elementwise over n elements.
cudaError_t launch_gelu(const void *x, void *y, int dtype, int64_t n, bool tanh_form, cudaStream_t stream);
cudaError_t launch_silu(const void *x, void *y, int dtype, int64_t n, cudaStream_t stream);
cudaError_t launch_add(const void *a, const void *b, void *y, int dtype, int64_t n, cudaStream_t stream);

} // namespace opbench::cuda

#endif // OPBENCH_CUDA_KERNELS_HPP
