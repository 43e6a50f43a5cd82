// FP8 (dtype f8e4m3, issue 42): the SDK's e4m3 conversions (ops.hpp) over all
// 256 codes, ties to even, saturation and NaN; and the naive FP8 matmul
// against an independent float64 computation from the same rounded inputs,
// within the tolerance ops.hpp states for it.
#include "e4m3_definition.hpp"
#include "naive/kernels.hpp"

#include "opbench/ops.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

namespace opbench::naive {
namespace {

using test::e4m3_by_definition;

TEST(E4m3, EveryCodeDecodesAsDefinedAndRoundTrips) {
    for (int c = 0; c < 256; ++c) {
        const float f = e4m3_to_f32(uint8_t(c));
        if ((c & 0x7f) == 0x7f) { // S.1111.111: NaN, the only one per sign
            EXPECT_TRUE(std::isnan(f)) << c;
            EXPECT_EQ(f32_to_e4m3(f), c) << "NaN keeps its sign";
            continue;
        }
        EXPECT_EQ(double(f), e4m3_by_definition(c)) << c;
        EXPECT_EQ(f32_to_e4m3(f), c) << "code " << c << " value " << f;
    }
    EXPECT_EQ(e4m3_to_f32(0x7e), 448.0f);
    EXPECT_EQ(e4m3_to_f32(0x08), 0x1p-6f);
    EXPECT_EQ(e4m3_to_f32(0x01), 0x1p-9f);
    EXPECT_TRUE(std::signbit(e4m3_to_f32(0x80)));
}

TEST(E4m3, RoundsToNearestWithTiesToEven) {
    // 1.0 = 0x38, 1.125 = 0x39, 1.25 = 0x3a: midpoints go to the even mantissa.
    EXPECT_EQ(f32_to_e4m3(1.0625f), 0x38);
    EXPECT_EQ(f32_to_e4m3(1.1875f), 0x3a);
    EXPECT_EQ(f32_to_e4m3(std::nextafter(1.0625f, 2.0f)), 0x39);
    EXPECT_EQ(f32_to_e4m3(std::nextafter(1.0625f, 0.0f)), 0x38);
    EXPECT_EQ(f32_to_e4m3(-1.1875f), 0x80 | 0x3a);
    // A mantissa carry into the next exponent: 1.9375 is between 1.875 and 2.
    EXPECT_EQ(f32_to_e4m3(1.9375f), 0x40);
    // Subnormals (units of 2^-9): half a unit goes to 0, 1.5 units to 2, 2.5 to 2.
    EXPECT_EQ(f32_to_e4m3(0x1p-10f), 0x00);
    EXPECT_EQ(f32_to_e4m3(3 * 0x1p-10f), 0x02);
    EXPECT_EQ(f32_to_e4m3(5 * 0x1p-10f), 0x02);
    EXPECT_EQ(f32_to_e4m3(7.5f * 0x1p-9f), 0x08); // rounds up into the smallest normal
    EXPECT_EQ(f32_to_e4m3(1e-30f), 0x00);
    // Every f32 between two neighbouring codes goes to the nearer one.
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> u(-448.0f, 448.0f);
    for (int i = 0; i < 20000; ++i) {
        const float x = u(rng);
        const double got = e4m3_to_f32(f32_to_e4m3(x));
        for (int c = 0; c < 256; ++c) {
            if ((c & 0x7f) == 0x7f) continue; // NaN
            ASSERT_LE(std::fabs(got - x), std::fabs(e4m3_by_definition(c) - x)) << x;
        }
    }
}

TEST(E4m3, SaturatesToPlusMinus448AndKeepsNaN) {
    EXPECT_EQ(f32_to_e4m3(448.0f), 0x7e);
    EXPECT_EQ(f32_to_e4m3(464.0f), 0x7e); // the midpoint to the 480 e4m3 does not have
    EXPECT_EQ(f32_to_e4m3(500.0f), 0x7e);
    EXPECT_EQ(f32_to_e4m3(1e30f), 0x7e);
    EXPECT_EQ(f32_to_e4m3(std::numeric_limits<float>::infinity()), 0x7e);
    EXPECT_EQ(f32_to_e4m3(-std::numeric_limits<float>::infinity()), 0xfe);
    EXPECT_EQ(f32_to_e4m3(-1000.0f), 0xfe);
    EXPECT_EQ(f32_to_e4m3(std::numeric_limits<float>::quiet_NaN()), 0x7f);
    EXPECT_EQ(f32_to_e4m3(-std::numeric_limits<float>::quiet_NaN()), 0xff);
    // The SDK's generic store/load go through the same conversions.
    uint8_t b[2];
    store_from_f32(b, OPB_DTYPE_F8_E4M3, 0, 0.3f);
    store_from_f32(b, OPB_DTYPE_F8_E4M3, 1, 1e6f);
    EXPECT_EQ(b[0], f32_to_e4m3(0.3f));
    EXPECT_EQ(load_as_f32(b, OPB_DTYPE_F8_E4M3, 1), 448.0f);
    EXPECT_EQ(dtype_size(OPB_DTYPE_F8_E4M3), 1u);
    EXPECT_EQ(dtype_name(OPB_DTYPE_F8_E4M3), "f8e4m3");
    EXPECT_EQ(dtype_from_name("f8e4m3"), OPB_DTYPE_F8_E4M3);
}

// ---- the FP8 matmul ---------------------------------------------------------------

struct Fp8Case {
    int64_t batch, m, n, k;
    bool trans_a, trans_b, bias;
    int out_dtype;
};

opb_op_desc fp8_desc(const Fp8Case &c) {
    opb_op_desc d = make_desc(OPB_OP_MATMUL, OPB_DTYPE_F8_E4M3);
    auto &p = d.p.matmul;
    p.batch = c.batch, p.m = c.m, p.n = c.n, p.k = c.k;
    p.trans_a = c.trans_a, p.trans_b = c.trans_b, p.has_bias = c.bias;
    p.out_dtype = c.out_dtype;
    return d;
}

// NMSE and the largest point-wise error (ops.hpp's rule: |out - ref| / (|ref|
// + the row's rms, floored)) of `out` against the float64 `ref`.
struct Errors {
    double nmse = 0, pointwise = 0;
};
Errors errors(const std::vector<double> &out, const std::vector<double> &ref, int64_t cols) {
    double num = 0, den = 0;
    for (std::size_t i = 0; i < ref.size(); ++i) num += (out[i] - ref[i]) * (out[i] - ref[i]), den += ref[i] * ref[i];
    const double whole = std::sqrt(den / double(ref.size()));
    Errors e{den > 0 ? num / den : num, 0.0};
    for (std::size_t r = 0; r * std::size_t(cols) < ref.size(); ++r) {
        double sq = 0;
        for (int64_t j = 0; j < cols; ++j) sq += ref[r * cols + j] * ref[r * cols + j];
        const double s = std::max(std::sqrt(sq / double(cols)), kRowScaleFloor * whole);
        for (int64_t j = 0; j < cols; ++j) {
            const std::size_t i = r * std::size_t(cols) + std::size_t(j);
            e.pointwise = std::max(e.pointwise, std::fabs(out[i] - ref[i]) / (std::fabs(ref[i]) + s));
        }
    }
    return e;
}

// Runs the naive kernel on inputs rounded to e4m3 from values spanning its
// range, and returns its errors against float64 from the same bytes.
Errors run_case(const Fp8Case &c, uint32_t seed) {
    const opb_op_desc d = fp8_desc(c);
    EXPECT_EQ(validate_desc(d), "");
    const auto &p = d.p.matmul;
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> u(-448.0f, 448.0f), s(0.5f / 448, 1.5f / 448);
    std::vector<uint8_t> A(size_t(c.batch * c.m * c.k)), B(size_t(c.batch * c.k * c.n));
    for (auto &x : A) x = f32_to_e4m3(u(rng));
    for (auto &x : B) x = f32_to_e4m3(u(rng));
    const float sa = s(rng), sb = s(rng);
    std::vector<float> bias(size_t(c.n));
    for (auto &x : bias) x = u(rng) / 448.0f;
    std::vector<uint8_t> C(size_t(c.batch * c.m * c.n) * dtype_size(c.out_dtype));
    std::vector<double> ws(size_t(c.n));
    fp8_matmul(p, A.data(), B.data(), sa, sb, c.bias ? bias.data() : nullptr, C.data(), ws.data());

    std::vector<double> ref(size_t(c.batch * c.m * c.n)), out(ref.size());
    for (int64_t bi = 0; bi < c.batch; ++bi)
        for (int64_t i = 0; i < c.m; ++i)
            for (int64_t j = 0; j < c.n; ++j) {
                double sum = 0;
                for (int64_t kk = 0; kk < c.k; ++kk) {
                    const uint8_t a = A[size_t(bi * c.m * c.k + (c.trans_a ? kk * c.m + i : i * c.k + kk))];
                    const uint8_t b = B[size_t(bi * c.k * c.n + (c.trans_b ? j * c.k + kk : kk * c.n + j))];
                    sum += e4m3_by_definition(a) * e4m3_by_definition(b);
                }
                const size_t at = size_t((bi * c.m + i) * c.n + j);
                ref[at] = double(sa) * double(sb) * sum + (c.bias ? double(bias[size_t(j)]) : 0.0);
                out[at] = load_as_f32(C.data(), c.out_dtype, int64_t(at));
            }
    return errors(out, ref, c.n);
}

TEST(NaiveFp8Matmul, EveryTransposeAndBiasMatchesFloat64WithinTheStatedTolerance) {
    for (int ta = 0; ta < 2; ++ta)
        for (int tb = 0; tb < 2; ++tb)
            for (int bias = 0; bias < 2; ++bias) {
                const Fp8Case c{2, 7, 9, 33, bool(ta), bool(tb), bool(bias), OPB_DTYPE_F32};
                const Errors e = run_case(c, uint32_t(ta * 4 + tb * 2 + bias));
                const Tolerance t = op_info(OPB_OP_MATMUL)->tolerance(fp8_desc(c));
                // The reference itself: one f32 rounding of a float64 result.
                EXPECT_LT(e.nmse, 1e-13) << ta << tb << bias;
                EXPECT_LT(e.pointwise, 1e-6) << ta << tb << bias;
                EXPECT_LT(e.nmse, t.max_nmse);
                EXPECT_LT(e.pointwise, t.max_pointwise);
            }
}

TEST(NaiveFp8Matmul, Bf16OutputIsRoundedOnceAndLongReductionsStayExactInDouble) {
    const Fp8Case bf{1, 5, 16, 64, false, true, true, OPB_DTYPE_BF16};
    const Errors e = run_case(bf, 11);
    const Tolerance t = op_info(OPB_OP_MATMUL)->tolerance(fp8_desc(bf));
    EXPECT_LT(e.pointwise, 0x1p-8); // half a bf16 ulp relative at most, on the row's scale
    EXPECT_LT(e.nmse, t.max_nmse);
    EXPECT_LT(e.pointwise, t.max_pointwise);
    const Errors longk = run_case({1, 2, 3, 4096, false, false, false, OPB_DTYPE_F32}, 12);
    EXPECT_LT(longk.pointwise, 1e-6);
}

TEST(NaiveFp8Matmul, TheStatedToleranceAdmitsFourteenBitAccumulationAndCatchesAnE4m3Output) {
    // An implementation that accumulates with 14 significant bits (FP8 tensor
    // cores) passes; one that rounds C to e4m3 (3 mantissa bits) fails.
    const Fp8Case c{1, 8, 32, 1024, false, true, false, OPB_DTYPE_F32};
    const opb_op_desc d = fp8_desc(c);
    const Tolerance t = op_info(OPB_OP_MATMUL)->tolerance(d);
    EXPECT_NE(std::string(t.why).find("fp8"), std::string::npos);
    std::mt19937 rng(3);
    std::uniform_real_distribution<float> u(-448.0f, 448.0f);
    std::vector<double> ref, acc14, as_e4m3;
    for (int64_t r = 0; r < c.m * c.n; ++r) {
        double exact = 0, low = 0;
        for (int64_t kk = 0; kk < c.k; ++kk) {
            const double prod = double(e4m3_to_f32(f32_to_e4m3(u(rng)))) * e4m3_to_f32(f32_to_e4m3(u(rng)));
            exact += prod;
            int ex = 0;
            std::frexp(low + prod, &ex);
            low = std::ldexp(std::nearbyint(std::ldexp(low + prod, 14 - ex)), ex - 14); // 14-bit sums
        }
        const double scale = 1.0 / (448.0 * 448.0);
        ref.push_back(exact * scale);
        acc14.push_back(low * scale);
        as_e4m3.push_back(double(e4m3_to_f32(f32_to_e4m3(float(exact * scale)))));
    }
    const Errors ok = errors(acc14, ref, c.n), bad = errors(as_e4m3, ref, c.n);
    EXPECT_LT(ok.nmse, t.max_nmse);
    EXPECT_LT(ok.pointwise, t.max_pointwise);
    EXPECT_GT(bad.nmse, t.max_nmse);
    EXPECT_GT(bad.pointwise, t.max_pointwise);
}

// ---- the quantize op to FP8 (ABI 1.7) ------------------------------------------------

// The e4m3 value nearest to v (ties to the even code, beyond 448 saturated,
// NaN to NaN), found by searching all codes in float64: independent of
// f32_to_e4m3's bit arithmetic.
double nearest_e4m3_by_search(double v) {
    if (std::isnan(v)) return v;
    if (std::fabs(v) >= 448.0) return v > 0 ? 448.0 : -448.0;
    double best = 0.0, best_err = INFINITY;
    int best_code = 0;
    for (int c = 0; c < 256; ++c) {
        if ((c & 0x7f) == 0x7f) continue;
        const double err = std::fabs(e4m3_by_definition(c) - v);
        if (err < best_err || (err == best_err && (c & 1) == 0 && (best_code & 1) == 1)) {
            best = e4m3_by_definition(c), best_err = err, best_code = c;
        }
    }
    return best == 0.0 && std::signbit(v) ? -0.0 : best;
}

// Inputs in f32 and bf16 across e4m3's whole range, its subnormals and past
// 448, at a power-of-two scale (the decoder's) and at one whose quotients
// are rounded to f32 first (plugin.h: the f32 quotient is what is rounded).
TEST(NaiveFp8Quantize, EveryElementIsTheNearestE4m3OfTheF32QuotientSaturatingAndKeepingNaN) {
    std::mt19937 rng(11);
    std::uniform_real_distribution<float> u(-5.0f, 5.0f), e(-14.0f, 2.0f);
    for (const int dtype : {int(OPB_DTYPE_F32), int(OPB_DTYPE_BF16)})
        for (const float scale : {0.0078125f, 0.01f}) {
            opb_op_desc d = make_desc(OPB_OP_QUANTIZE, dtype);
            d.p.quantize = {40, 50, scale, 0, OPB_DTYPE_F8_E4M3};
            ASSERT_EQ(validate_desc(d), "");
            const int64_t n = 40 * 50;
            std::vector<uint8_t> x(size_t(n) * dtype_size(dtype)), y(static_cast<size_t>(n));
            for (int64_t i = 0; i < n; ++i) // magnitudes 2^-14 .. 2^2 times a sign and a mantissa
                store_from_f32(x.data(), dtype, i, u(rng) * std::exp2(e(rng)));
            store_from_f32(x.data(), dtype, 0, std::numeric_limits<float>::quiet_NaN());
            store_from_f32(x.data(), dtype, 1, -1e6f);
            quantize(d.p.quantize, dtype, x.data(), y.data());
            for (int64_t i = 0; i < n; ++i) {
                const float xi = load_as_f32(x.data(), dtype, i);
                const double want = nearest_e4m3_by_search(double(xi / scale));
                const double got = e4m3_to_f32(y[size_t(i)]);
                if (std::isnan(want)) {
                    EXPECT_TRUE(std::isnan(got)) << i;
                    continue;
                }
                ASSERT_EQ(got, want) << "x " << xi << " scale " << scale << " dtype " << dtype_name(dtype);
            }
            EXPECT_EQ(y[1], 0xfe) << "-1e6 / scale saturates to -448";
        }
}

// The op table's side: the form is named, validated, and given only to plugins of ABI 1.7 and later.
TEST(NaiveFp8Quantize, TheFormNeedsAbi17AndAZeroPoint0) {
    opb_op_desc d = make_desc(OPB_OP_QUANTIZE, OPB_DTYPE_F32);
    d.p.quantize = {4, 16, 0.0078125f, 0, OPB_DTYPE_F8_E4M3};
    EXPECT_EQ(validate_desc(d), "");
    EXPECT_EQ(desc_needs_abi_minor(d), 7u);
    const std::string gap = plugin_abi_gap(d, (1u << 16) | 6u);
    EXPECT_NE(gap.find("quantize op to FP8"), std::string::npos) << gap;
    EXPECT_EQ(plugin_abi_gap(d, OPB_ABI_VERSION), "");
    d.p.quantize.zero_point = 3;
    EXPECT_NE(validate_desc(d).find("zero_point"), std::string::npos);
    d.p.quantize.zero_point = 0;
    d.p.quantize.out_dtype = OPB_DTYPE_BF16;
    EXPECT_NE(validate_desc(d).find("u8, s8 or f8e4m3"), std::string::npos) << validate_desc(d);
}

} // namespace
} // namespace opbench::naive
