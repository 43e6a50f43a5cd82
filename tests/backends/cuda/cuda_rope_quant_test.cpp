// Host interpreters of the cuda backend's rope, quantize and int8-linear
// kernels (backends/cuda/rope_quant_math.hpp, the very functions the kernels
// in rope_quant.cu call per element), run over whole tensors and checked
// against float64 references written here from plugin.h's definitions. No
// device needed: what the GPU adds is loads, stores and the f32/bf16/f16
// rounding of the stored value, which cuda_gpu_test checks on a GPU.
#include "planning.hpp"
#include "rope_quant_math.hpp"

#include "opbench/ops.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

using namespace opbench;
using namespace opbench::cuda;

namespace {

std::vector<double> random_vec(size_t n, unsigned seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    std::vector<double> v(n);
    for (auto &x : v) x = u(rng);
    return v;
}

// ---- rope ---------------------------------------------------------------------------

struct RopeCase {
    int64_t batch, heads, kv_heads, seq, head_dim, rotary_dim, position;
    float theta;
    int variant;
};

void PrintTo(const RopeCase &c, std::ostream *os) {
    *os << (c.variant == OPB_ROPE_INTERLEAVED ? "interleaved" : "half_split") << " B" << c.batch << " H" << c.heads
        << " KVH" << c.kv_heads << " S" << c.seq << " D" << c.head_dim << " R" << c.rotary_dim << " pos" << c.position
        << " theta" << c.theta;
}

opb_op_desc rope_desc(const RopeCase &c) {
    auto d = make_desc(OPB_OP_ROPE, OPB_DTYPE_F32, c.variant);
    d.p.rope = {c.batch, c.heads, c.kv_heads, c.seq, c.head_dim, c.rotary_dim, c.theta, c.position};
    return d;
}

// The kernel's loop (one "thread" per output element over Q's rows then K's), on the host.
void interpret_rope(const RopeShape &s, const std::vector<double> &q, const std::vector<double> &k,
                    std::vector<double> &qr, std::vector<double> &kr) {
    qr.assign(q.size(), NAN);
    kr.assign(k.size(), NAN);
    const int64_t D = s.head_dim;
    for (int64_t i = 0; i < (s.rows_q + s.rows_k) * D; ++i) {
        const int64_t row = i / D, e = i % D;
        const bool is_q = row < s.rows_q;
        const int64_t r = is_q ? row : row - s.rows_q;
        const std::vector<double> &x = is_q ? q : k;
        std::vector<double> &y = is_q ? qr : kr;
        const RopeElement el = rope_element(s.variant, s.rotary_dim, e);
        ASSERT_GE(el.partner, 0);
        ASSERT_LT(el.partner, D);
        if (!el.rotated) {
            y[r * D + e] = x[r * D + e];
            continue;
        }
        const double a = rope_angle(s, rope_position(s, r), el.pair);
        y[r * D + e] = rope_rotate(el.first, x[r * D + e], x[r * D + el.partner], std::cos(a), std::sin(a));
    }
}

// plugin.h's definition, pair by pair: pair i of a row at position t is
// (i, i + R/2) half-split or (2i, 2i + 1) interleaved, angle t * theta^(-2i/R).
void reference_rope(const RopeCase &c, const std::vector<double> &x, int64_t heads, std::vector<double> &y) {
    const int64_t R = c.rotary_dim > 0 ? c.rotary_dim : c.head_dim, D = c.head_dim;
    y = x;
    for (int64_t row = 0; row < c.batch * heads * c.seq; ++row) {
        const double t = double(c.position + row % c.seq);
        for (int64_t i = 0; i < R / 2; ++i) {
            const int64_t i0 = c.variant == OPB_ROPE_INTERLEAVED ? 2 * i : i;
            const int64_t i1 = c.variant == OPB_ROPE_INTERLEAVED ? 2 * i + 1 : i + R / 2;
            const double a = t * std::pow(double(c.theta), -2.0 * double(i) / double(R));
            const double x0 = x[row * D + i0], x1 = x[row * D + i1];
            y[row * D + i0] = x0 * std::cos(a) - x1 * std::sin(a);
            y[row * D + i1] = x1 * std::cos(a) + x0 * std::sin(a);
        }
    }
}

class RopeInterpreter : public ::testing::TestWithParam<RopeCase> {};

TEST_P(RopeInterpreter, KernelElementRulesEqualFloat64RopeOfQAndK) {
    const RopeCase c = GetParam();
    const RopeShape s = rope_shape(rope_desc(c));
    const int64_t kvh = c.kv_heads > 0 ? c.kv_heads : c.heads;
    EXPECT_EQ(s.rows_q, c.batch * c.heads * c.seq);
    EXPECT_EQ(s.rows_k, c.batch * kvh * c.seq);
    const auto q = random_vec(s.rows_q * c.head_dim, 21), k = random_vec(s.rows_k * c.head_dim, 22);
    std::vector<double> qr, kr, qref, kref;
    interpret_rope(s, q, k, qr, kr);
    reference_rope(c, q, c.heads, qref);
    reference_rope(c, k, kvh, kref);
    for (size_t i = 0; i < q.size(); ++i) ASSERT_NEAR(qr[i], qref[i], 1e-12) << "Q element " << i;
    for (size_t i = 0; i < k.size(); ++i) ASSERT_NEAR(kr[i], kref[i], 1e-12) << "K element " << i;
}

INSTANTIATE_TEST_SUITE_P(
    HalfSplitInterleavedPartialRotaryGqaDecodePositions, RopeInterpreter,
    ::testing::Values(RopeCase{2, 4, 2, 3, 8, 0, 0, 10000.0f, OPB_ROPE_HALF_SPLIT},
                      RopeCase{2, 4, 2, 3, 8, 0, 0, 10000.0f, OPB_ROPE_INTERLEAVED},
                      RopeCase{1, 2, 0, 5, 12, 8, 0, 500000.0f, OPB_ROPE_HALF_SPLIT}, // rotary_dim < head_dim
                      RopeCase{1, 2, 0, 5, 12, 8, 0, 500000.0f, OPB_ROPE_INTERLEAVED},
                      RopeCase{1, 8, 1, 1, 16, 0, 4095, 10000.0f, OPB_ROPE_HALF_SPLIT}, // a decode step, MQA
                      RopeCase{1, 8, 1, 1, 16, 0, 4095, 10000.0f, OPB_ROPE_INTERLEAVED}));

// Swapping the variants must give a different result: the test above could
// not tell them apart otherwise.
TEST(RopeElement, VariantsPairDifferentElementsAndEachPairIsMutual) {
    for (int variant : {OPB_ROPE_HALF_SPLIT, OPB_ROPE_INTERLEAVED})
        for (int64_t e = 0; e < 8; ++e) {
            const RopeElement a = rope_element(variant, 8, e);
            const RopeElement b = rope_element(variant, 8, a.partner);
            EXPECT_TRUE(a.rotated);
            EXPECT_EQ(b.partner, e) << "partner of the partner";
            EXPECT_EQ(a.pair, b.pair);
            EXPECT_NE(a.first, b.first);
        }
    EXPECT_EQ(rope_element(OPB_ROPE_HALF_SPLIT, 8, 1).partner, 5);
    EXPECT_EQ(rope_element(OPB_ROPE_INTERLEAVED, 8, 1).partner, 0);
    EXPECT_FALSE(rope_element(OPB_ROPE_HALF_SPLIT, 8, 9).rotated); // past rotary_dim: copied
    RopeCase c{1, 1, 0, 2, 8, 0, 1, 10000.0f, OPB_ROPE_HALF_SPLIT};
    RopeShape s = rope_shape(rope_desc(c));
    s.variant = OPB_ROPE_INTERLEAVED; // the kernel given the wrong variant
    const auto q = random_vec(2 * 8, 5), k = random_vec(2 * 8, 6);
    std::vector<double> qr, kr, qref;
    interpret_rope(s, q, k, qr, kr);
    reference_rope(c, q, 1, qref);
    double diff = 0;
    for (size_t i = 0; i < q.size(); ++i) diff = std::max(diff, std::abs(qr[i] - qref[i]));
    EXPECT_GT(diff, 1e-3);
}

// ---- quantize -------------------------------------------------------------------------

// plugin.h: saturate(round_half_even(x / scale) + zero_point), NaN -> zero_point;
// the tie rule written out with floor rather than rint.
int32_t reference_quantize(double x, double scale, int32_t zp, int out_dtype) {
    const double lo = out_dtype == OPB_DTYPE_U8 ? 0 : -128, hi = out_dtype == OPB_DTYPE_U8 ? 255 : 127;
    const double v = x / scale;
    if (std::isnan(v)) return zp;
    double f = std::floor(v);
    const double frac = v - f;
    if (frac > 0.5 || (frac == 0.5 && std::fmod(f, 2.0) != 0.0)) f += 1.0;
    return static_cast<int32_t>(std::clamp(f + zp, lo, hi));
}

TEST(Quantize, KernelValueRuleEqualsFloat64OnTiesSaturationNanAndRandomValues) {
    const float inf = std::numeric_limits<float>::infinity();
    std::vector<float> xs = {0.0f,
                             0.5f,
                             1.5f,
                             2.5f,
                             -0.5f,
                             -1.5f,
                             -2.5f,
                             0.49999997f,
                             1000.0f,
                             -1000.0f,
                             inf,
                             -inf,
                             std::numeric_limits<float>::quiet_NaN(),
                             1e-30f,
                             -127.5f,
                             127.5f};
    std::mt19937 rng(3);
    std::uniform_real_distribution<float> u(-300.0f, 300.0f);
    for (int i = 0; i < 2000; ++i) xs.push_back(u(rng));
    for (int out : {OPB_DTYPE_U8, OPB_DTYPE_S8})
        for (float scale : {1.0f, 0.25f, 0.1f, 3.0f})
            for (int32_t zp : out == OPB_DTYPE_U8 ? std::vector<int32_t>{0, 128, 255} : std::vector<int32_t>{0})
                for (float x : xs)
                    ASSERT_EQ(quantize_value(x, scale, zp, quant_range(out)), reference_quantize(x, scale, zp, out))
                        << "x " << x << " scale " << scale << " zero point " << zp << " out " << dtype_name(out);
    // Ties go to the even neighbour, not away from zero.
    EXPECT_EQ(quantize_value(2.5f, 1.0f, 0, quant_range(OPB_DTYPE_S8)), 2);
    EXPECT_EQ(quantize_value(-0.5f, 1.0f, 128, quant_range(OPB_DTYPE_U8)), 128);
    EXPECT_EQ(quantize_value(std::numeric_limits<float>::quiet_NaN(), 1.0f, 7, quant_range(OPB_DTYPE_U8)), 7);
    EXPECT_EQ(quant_range(OPB_DTYPE_S8).lo, -128);
    EXPECT_EQ(quant_range(OPB_DTYPE_U8).hi, 255);
}

// ---- int8 linear: the zero point as a column-sum correction ---------------------------

// The backend's plan for C = act_scale * w_scale[n] * sum_k (A - z) B + bias:
// shift u8 A to s8 (what cuBLASLt's s8 GEMM reads), sum in s32 as the GEMM
// does, column sums of B, then int8_dequantize. Checked against the direct
// formula in float64 over the whole u8 range and every zero point class.
TEST(Int8Correction, ShiftedS8GemmPlusColumnSumCorrectionEqualsFloat64ZeroPointGemm) {
    const int64_t M = 5, N = 7, K = 33;
    std::mt19937 rng(9);
    std::uniform_int_distribution<int> u8(0, 255), s8(-128, 127);
    std::uniform_real_distribution<float> scale(0.001f, 0.1f);
    for (int act : {OPB_DTYPE_U8, OPB_DTYPE_S8})
        for (int32_t zp :
             act == OPB_DTYPE_U8 ? std::vector<int32_t>{0, 1, 127, 128, 200, 255} : std::vector<int32_t>{0}) {
            std::vector<int> a(M * K), w(K * N);
            for (auto &x : a) x = act == OPB_DTYPE_U8 ? u8(rng) : s8(rng);
            for (auto &x : w) x = s8(rng);
            a[0] = act == OPB_DTYPE_U8 ? 255 : 127; // the range's ends
            a[1] = act == OPB_DTYPE_U8 ? 0 : -128;
            std::vector<float> w_scale(N), bias(N);
            for (auto &x : w_scale) x = scale(rng);
            for (auto &x : bias) x = scale(rng) - 0.05f;
            const float act_scale = 0.02f;
            const int32_t shift = int8_zero_point_shift(act, zp);
            for (int64_t n = 0; n < N; ++n) {
                int32_t colsum = 0;
                for (int64_t k = 0; k < K; ++k) colsum += w[k * N + n];
                for (int64_t m = 0; m < M; ++m) {
                    int32_t gemm = 0; // what cuBLASLt's s8 x s8 -> s32 GEMM sums
                    double ref = 0;
                    for (int64_t k = 0; k < K; ++k) {
                        const int x = a[m * K + k];
                        const int8_t s =
                            act == OPB_DTYPE_U8 ? u8_as_shifted_s8(static_cast<uint8_t>(x)) : static_cast<int8_t>(x);
                        gemm += int32_t(s) * w[k * N + n];
                        ref += double(x - zp) * double(w[k * N + n]);
                    }
                    ref = double(act_scale) * double(w_scale[n]) * ref + double(bias[n]);
                    const float got = int8_dequantize(gemm, colsum, shift, act_scale, w_scale[n], bias[n]);
                    ASSERT_NEAR(got, ref, std::abs(ref) * 1e-6 + 1e-9)
                        << dtype_name(act) << " zero point " << zp << " m " << m << " n " << n;
                }
            }
        }
    EXPECT_EQ(u8_as_shifted_s8(0), -128);
    EXPECT_EQ(u8_as_shifted_s8(128), 0);
    EXPECT_EQ(u8_as_shifted_s8(255), 127);
    EXPECT_EQ(int8_zero_point_shift(OPB_DTYPE_S8, 0), 0);
    EXPECT_EQ(int8_zero_point_shift(OPB_DTYPE_U8, 128), 0);
    EXPECT_EQ(int8_zero_point_shift(OPB_DTYPE_U8, 0), 128);
}

} // namespace
