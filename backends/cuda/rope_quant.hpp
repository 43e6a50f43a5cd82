// CUDA backend — launchers of the rope, quantize and int8-linear kernels
// (rope_quant.cu), callable from host C++. Each enqueues on `stream` and
// returns the launch's cudaError_t; cudaErrorInvalidValue for a dtype the
// kernel has no instance for. The per-element rules are rope_quant_math.hpp's.
#ifndef OPBENCH_CUDA_ROPE_QUANT_HPP
#define OPBENCH_CUDA_ROPE_QUANT_HPP

#include "rope_quant_math.hpp"

#include <cuda_runtime_api.h>

#include <cstdint>

namespace opbench::cuda {

// Qr, Kr = rope(Q, K) in one launch over Q's rows then K's (dtype f32, bf16, f16).
cudaError_t launch_rope(const RopeShape &s, int dtype, const void *q, const void *k, void *qr, void *kr,
                        cudaStream_t stream);

// y[i] = quantize_value(x[i]) for n elements: x in dtype (f32, bf16, f16), y in out_dtype (u8, s8);
// out_dtype f8e4m3: y[i] = e4m3(fp8_quotient(x[i])), zero_point unused.
cudaError_t launch_quantize(const void *x, int dtype, void *y, int out_dtype, int64_t n, float scale,
                            int32_t zero_point, cudaStream_t stream);

// int8 linear, before the GEMM: the u8 activations as shifted s8 (n bytes).
cudaError_t launch_u8_to_shifted_s8(const uint8_t *a, int8_t *s, int64_t n, cudaStream_t stream);

// int8 linear, before the GEMM: s32 column sums of the s8 weights of each
// batch, sums[b * n + j] = sum_k B[b](k, j), B stored [k, n] or (trans_b) [n, k].
// y (bf16) = x (f32) rounded to nearest even: the FP8 matmul's bias (Fp8Plan).
cudaError_t launch_f32_to_bf16(const float *x, void *y, int64_t n, cudaStream_t stream);

cudaError_t launch_weight_column_sums(const int8_t *w, int32_t *sums, int64_t batch, int64_t k, int64_t n, bool trans_b,
                                      cudaStream_t stream);

// int8 linear, after the GEMM: C = int8_dequantize(acc, column sum, shift, ...)
// for acc [batch, m, n] s32, into C in out_dtype (f32 or bf16); bias may be
// NULL, and column_sums NULL when shift is 0 (no correction).
cudaError_t launch_int8_dequantize(const int32_t *acc, const int32_t *column_sums, const float *w_scale,
                                   const float *bias, void *c, int out_dtype, int64_t batch, int64_t m, int64_t n,
                                   int32_t shift, float act_scale, cudaStream_t stream);

} // namespace opbench::cuda

#endif // OPBENCH_CUDA_ROPE_QUANT_HPP
