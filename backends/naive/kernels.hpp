// The naive reference kernels: plain C++, one function per op.
//
// These are the correctness reference ("level 0") that every other backend is
// verified against, so they favour being obviously right over being fast.
//
// Precision: every tensor element is read through ops.hpp's load_as_f32 (exact
// for f32, bf16 and f16) and widened to double; every sum, product and
// transcendental (exp, erf, tanh, sqrt) is evaluated in double; each output is
// rounded once, at the store, through store_from_f32. Why double: the
// reference must be more accurate than any backend it judges, so that a
// verification error measures the backend, not the reference; and the result
// then barely depends on summation order, so the composed and fused attention
// variants agree to the last bit or two of the output dtype.
//
// Contract of every kernel: tensors are dense, row-major, in `dtype`, in the
// shapes plugin.h documents; kernels never allocate (scratch memory comes from
// `workspace`, sized by workspace_bytes, so execute does no allocation); they
// are single-threaded; they throw std::invalid_argument on a dtype or variant
// they do not know (the plugin glue validates first and catches at the boundary).
#ifndef OPBENCH_NAIVE_KERNELS_HPP
#define OPBENCH_NAIVE_KERNELS_HPP

#include "opbench/plugin.h"
#include "opbench/scope.hpp"

#include <cstdint>

namespace opbench::naive {

// Fused attention processes the scores in tiles of kFusedTileQ query rows by
// kFusedTileKV keys; its workspace depends on these and head_dim only.
inline constexpr int64_t kFusedTileQ = 32;
inline constexpr int64_t kFusedTileKV = 64;

// Bytes of scratch memory the kernel for `desc` needs (0 when none). Assumes a
// description that passed validate_desc.
//   matmul: one row of C in double (N x 8); int8 weights: in int64 (N x 8)
//   attention composed: the seq_q x seq_kv score matrix of one (batch, head) in double
//   attention fused: a kFusedTileQ x kFusedTileKV score tile, a kFusedTileQ x head_dim
//     accumulator, and the running max and sum per query row, all double
[[nodiscard]] uint64_t workspace_bytes(const opb_op_desc &desc);

// C[b] = op(A[b]) . op(B[b]) (+ bias). `bias` is read only when p.has_bias.
// workspace: at least p.n doubles.
void matmul(const opb_matmul_params &p, int dtype, const void *a, const void *b, const void *bias, void *c,
            double *workspace);

// int8 weights (plugin.h, MATMUL dtype S8): C = act_scale * w_scale[n] *
// sum_k (A - zero point) * B (+ bias), the sums exact in int64, the
// dequantisation in double, rounded once to p.out_dtype. `bias` may be null.
// workspace: at least p.n int64s (the bytes of p.n doubles).
void int8_matmul(const opb_matmul_params &p, const void *a, const void *b, const float *w_scale, const float *bias,
                 void *c, void *workspace);

// FP8 (MATMUL dtype f8e4m3, ops.hpp): C = a_scale * b_scale * sum_k A * B
// (+ bias) from the e4m3 bytes as stored (the host rounded them), every
// product exact and the sum in double, the scaling in double, rounded once to
// p.out_dtype (f32 or bf16). `bias` may be null. workspace: p.n doubles.
void fp8_matmul(const opb_matmul_params &p, const uint8_t *a, const uint8_t *b, float a_scale, float b_scale,
                const float *bias, void *c, double *workspace);

// y = softmax(scale * x) along the last axis, bottom-right causal mask when
// p.causal. scale 0 means 1. A row whose every column is masked (rows > cols)
// is written as zeros.
void softmax(const opb_softmax_params &p, int dtype, const void *x, void *y);

// Per row: (x - mean) / sqrt(var + eps) * gamma + beta, var the biased variance.
void layernorm(const opb_norm_params &p, int dtype, const void *x, const void *gamma, const void *beta, void *y);

// Per row: x / sqrt(mean(x^2) + eps) * gamma.
void rmsnorm(const opb_norm_params &p, int dtype, const void *x, const void *gamma, void *y);

// variant: OPB_GELU_ERF or OPB_GELU_TANH.
void gelu(const opb_eltwise_params &p, int dtype, int variant, const void *x, void *y);

// x * sigmoid(x).
void silu(const opb_eltwise_params &p, int dtype, const void *x, void *y);

// y = a + b.
void add(const opb_eltwise_params &p, int dtype, const void *a, const void *b, void *y);

// FP8 attention's per-tensor scales (plugin.h): q, k, v dequantise, o
// quantises O; all 1 for the other dtypes, where they change no bit.
struct AttentionScales {
    double q = 1.0, k = 1.0, v = 1.0, o = 1.0;
};

// O = softmax(scale Q K^T (+ causal mask)) V per (batch, head); scale 0 means
// 1/sqrt(head_dim). A query row that sees no key (causal, seq_q > seq_kv) is
// written as zeros. Composed, per (batch, head), in four steps that `scopes`
// marks for profiling: qk (scale * Q K^T for the visible pairs into the score
// matrix), mask (causal only: -inf into the masked pairs, so the matrix is
// complete), softmax (each whole row), pv (P.V over the visible columns).
// workspace: seq_q * seq_kv doubles.
// FP8 (dtype f8e4m3): the e4m3 bytes as stored, the scores scaled by
// scale * q * k and O by v * o, all in double, O rounded once to e4m3 (via
// f32); the probabilities are never quantised.
void attention_composed(const opb_attention_params &p, int dtype, const void *q, const void *k, const void *v, void *o,
                        double *workspace, const sdk::ScopeHost &scopes = sdk::ScopeHost(),
                        const AttentionScales &scales = {});

// Same result, tiled: blocks of keys/values with an online softmax (running
// max and sum per query row, rescaling the accumulator when the max grows).
// Never holds more than a tile of scores. workspace: workspace_bytes(desc).
void attention_fused(const opb_attention_params &p, int dtype, const void *q, const void *k, const void *v, void *o,
                     double *workspace, const AttentionScales &scales = {});

// Rotary position embedding of Q and K (plugin.h, ROPE): the angles in
// double, from theta^(-2i / rotary_dim) times the position (the row's index
// in seq). variant: OPB_ROPE_HALF_SPLIT or OPB_ROPE_INTERLEAVED.
void rope(const opb_rope_params &p, int dtype, int variant, const void *q, const void *k, void *qr, void *kr);

// y = saturate(round_half_even(x / scale) + zero_point) to p.out_dtype (u8 or
// s8), the quotient in double; NaN gives the zero point.
void quantize(const opb_quantize_params &p, int dtype, const void *x, void *y);

// Whether there is a kernel for `op` (one per row of the SDK's op table, kOps).
[[nodiscard]] bool has_kernel(int op);

// Run `desc` on tensors[] in op_tensors(desc) order, with a workspace of
// workspace_bytes(desc) bytes (may be null when that is 0).
// `scopes` receives the steps of ops that have them (composed attention).
void run(const opb_op_desc &desc, void *const *tensors, void *workspace,
         const sdk::ScopeHost &scopes = sdk::ScopeHost());

} // namespace opbench::naive

#endif // OPBENCH_NAIVE_KERNELS_HPP
