// CUDA backend — the index and value rules of the rope, quantize and int8
// linear kernels, as inline functions that compile both for the device
// (rope_quant.cu, with nvcc) and for the host (cuda_rope_quant_test, which
// runs them over whole tensors against a float64 reference). A kernel is then
// the same arithmetic the host test checked, plus the loads and stores.
#ifndef OPBENCH_CUDA_ROPE_QUANT_MATH_HPP
#define OPBENCH_CUDA_ROPE_QUANT_MATH_HPP

#include "opbench/plugin.h"

#include <cmath>
#include <cstdint>

#if defined(__CUDACC__)
#define OPB_CUDA_HD __host__ __device__
#else
#define OPB_CUDA_HD
#endif

namespace opbench::cuda {

// ---- rope --------------------------------------------------------------------------

// What the rope kernel needs from an OPB_OP_ROPE description (rope_shape in
// planning.cpp). Q's rows come first, then K's, as one range of rows.
struct RopeShape {
    int64_t rows_q = 0, rows_k = 0; // batch * heads * seq, batch * kv_heads * seq
    int64_t seq = 1, head_dim = 0, rotary_dim = 0, position = 0;
    double theta = 10000.0;
    int variant = OPB_ROPE_HALF_SPLIT;
};

// Element e of a row: whether it is rotated, the pair index i (angle), the
// partner element it is rotated with, and whether it is the pair's first.
struct RopeElement {
    bool rotated = false;
    bool first = true;
    int64_t pair = 0;
    int64_t partner = 0;
};

OPB_CUDA_HD inline RopeElement rope_element(int variant, int64_t rotary_dim, int64_t e) {
    RopeElement r;
    r.partner = e;
    if (e >= rotary_dim) return r; // past rotary_dim: copied
    r.rotated = true;
    if (variant == OPB_ROPE_INTERLEAVED) { // pairs (2i, 2i + 1)
        r.pair = e / 2;
        r.first = e % 2 == 0;
        r.partner = r.first ? e + 1 : e - 1;
    } else { // half-split: pairs (i, i + rotary_dim / 2)
        const int64_t half = rotary_dim / 2;
        r.first = e < half;
        r.pair = r.first ? e : e - half;
        r.partner = r.first ? e + half : e - half;
    }
    return r;
}

// Position of a row of Q or K: row r of seq sits at position + r % seq.
OPB_CUDA_HD inline int64_t rope_position(const RopeShape &s, int64_t row_in_tensor) {
    return s.position + row_in_tensor % s.seq;
}

// angle = t * theta^(-2i / rotary_dim), in double: at positions in the
// thousands an f32 angle is off by ~1e-4 rad, more than f32 outputs allow.
OPB_CUDA_HD inline double rope_angle(const RopeShape &s, int64_t position, int64_t pair) {
    return static_cast<double>(position) *
           pow(s.theta, -2.0 * static_cast<double>(pair) / static_cast<double>(s.rotary_dim));
}

// (x0, x1) -> (x0 cos - x1 sin, x1 cos + x0 sin), for the element x and its partner.
OPB_CUDA_HD inline double rope_rotate(bool first, double x, double partner, double cos_a, double sin_a) {
    return first ? x * cos_a - partner * sin_a : x * cos_a + partner * sin_a;
}

// ---- quantize ------------------------------------------------------------------------

// The saturation range of a quantize output or int8 activation dtype.
struct QuantRange {
    int32_t lo = 0, hi = 255;
};
OPB_CUDA_HD inline QuantRange quant_range(int out_dtype) {
    return out_dtype == OPB_DTYPE_S8 ? QuantRange{-128, 127} : QuantRange{0, 255};
}

// y = saturate(round_half_even(x / scale) + zero_point); NaN gives zero_point
// (plugin.h). The quotient of two floats in double is exact enough that a tie
// (k + 0.5) is one only when the exact quotient is: rint then rounds as the
// reference does, which an f32 quotient (rounded once already) would not.
OPB_CUDA_HD inline int32_t quantize_value(float x, float scale, int32_t zero_point, QuantRange r) {
    const double v = static_cast<double>(x) / static_cast<double>(scale);
    if (v != v) return zero_point;
    const double q = rint(v) + zero_point; // ties to even in the default rounding mode, as on the device
    return q < r.lo ? r.lo : q > r.hi ? r.hi : static_cast<int32_t>(q);
}

// FP8 (ABI 1.7): what is rounded to e4m3 is x / scale rounded to f32
// (plugin.h); the device's cvt instruction then rounds it to nearest even
// and saturates (__NV_SATFINITE), as ops.hpp's f32_to_e4m3 does on the host.
OPB_CUDA_HD inline float fp8_quotient(float x, float scale) { return x / scale; }

// ---- int8 linear: u8 activations through cuBLASLt's s8 GEMM --------------------------
//
// cuBLASLt's integer GEMM takes s8 x s8 -> s32 and no zero point. With
// a = s + 128 (s = a XOR 0x80, the u8 byte read as s8 after a sign flip):
//   sum_k (a - z) w = sum_k s w + (128 - z) * sum_k w
// so the GEMM runs on s and the zero point becomes a per-column correction by
// the weights' column sums. S8 activations (z = 0) need no shift and no
// correction (shift 0).

// The s8 value cuBLASLt reads for a u8 activation byte: a - 128.
OPB_CUDA_HD inline int8_t u8_as_shifted_s8(uint8_t a) { return static_cast<int8_t>(a ^ 0x80u); }

// The correction's multiplier: 128 - z for u8 activations, 0 for s8 (no shift).
OPB_CUDA_HD inline int32_t int8_zero_point_shift(int act_dtype, int32_t act_zero_point) {
    return act_dtype == OPB_DTYPE_U8 ? 128 - act_zero_point : 0;
}

// C[m, n] from the s32 GEMM sum of shifted activations, the weight column
// sum and the scales: exact in 64 bits, then scaled in double and rounded
// once (as the naive reference does).
OPB_CUDA_HD inline float int8_dequantize(int32_t shifted_sum, int32_t weight_column_sum, int32_t shift, float act_scale,
                                         float w_scale, float bias) {
    const int64_t exact = static_cast<int64_t>(shifted_sum) + static_cast<int64_t>(shift) * weight_column_sum;
    return static_cast<float>(static_cast<double>(act_scale) * static_cast<double>(w_scale) *
                                  static_cast<double>(exact) +
                              static_cast<double>(bias));
}

} // namespace opbench::cuda

#endif // OPBENCH_CUDA_ROPE_QUANT_MATH_HPP
