// Each op of the oneDNN backend, through the plugin's C table, against a
// float64 computation written here on small inputs.
//
// Tolerances, per element: |y - ref| <= atol + rtol * |ref|.
//  - f32: rtol = atol = 1e-5. oneDNN's JIT exp/erf/tanh are polynomial
//    approximations good to a few ulp, and matmul reorders its f32
//    accumulation; both stay far below 1e-5 on these sizes (K <= 96).
//  - bf16: rtol = atol = 8e-3. Inputs are rounded to bf16 before the reference
//    sees them, so the error is the bf16 rounding of the output (2^-8 = 3.9e-3
//    relative, at most 1 ulp) plus f32 accumulation; 8e-3 allows 2 ulp.
//    Attention also rounds the probabilities to bf16 before P.V: 1.5e-2.
//  - f16 (where oneDNN 2.6 has kernels on this CPU): 2^-11 rounding, 2e-3.
#include "onednn_test_util.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace opbench::test {
namespace {

struct Tol {
    double rtol, atol;
};

Tol tolerance(int dtype, bool attention = false) {
    switch (dtype) {
    case OPB_DTYPE_BF16: return attention ? Tol{1.5e-2, 1.5e-2} : Tol{8e-3, 8e-3};
    case OPB_DTYPE_F16: return attention ? Tol{4e-3, 4e-3} : Tol{2e-3, 2e-3};
    default: return {1e-5, 1e-5};
    }
}

void expect_close(const std::vector<float> &got, const std::vector<double> &ref, Tol tol, const std::string &what) {
    ASSERT_EQ(got.size(), ref.size()) << what;
    int bad = 0;
    for (std::size_t i = 0; i < ref.size(); ++i) {
        const double err = std::abs(double(got[i]) - ref[i]);
        if (!(err <= tol.atol + tol.rtol * std::abs(ref[i])) && ++bad <= 5)
            ADD_FAILURE() << what << ": element " << i << " got " << got[i] << ", expected " << ref[i] << " (error "
                          << err << ")";
    }
    EXPECT_EQ(bad, 0) << what << ": " << bad << " of " << ref.size() << " elements out of tolerance";
}

std::string label(const opb_op_desc &d) {
    return std::string(op_name(d.op)) + "/" + std::string(variant_name(d.op, d.variant)) + "/" +
           std::string(dtype_name(d.dtype));
}

// ---- float64 references ---------------------------------------------------

std::vector<double> ref_matmul(const opb_matmul_params &p, const std::vector<float> &a, const std::vector<float> &b,
                               const std::vector<float> *bias) {
    std::vector<double> c(std::size_t(p.batch * p.m * p.n));
    for (int64_t bt = 0; bt < p.batch; ++bt)
        for (int64_t i = 0; i < p.m; ++i)
            for (int64_t j = 0; j < p.n; ++j) {
                double s = bias ? (*bias)[std::size_t(j)] : 0.0;
                for (int64_t k = 0; k < p.k; ++k) {
                    const double av =
                        p.trans_a ? a[std::size_t((bt * p.k + k) * p.m + i)] : a[std::size_t((bt * p.m + i) * p.k + k)];
                    const double bv =
                        p.trans_b ? b[std::size_t((bt * p.n + j) * p.k + k)] : b[std::size_t((bt * p.k + k) * p.n + j)];
                    s += av * bv;
                }
                c[std::size_t((bt * p.m + i) * p.n + j)] = s;
            }
    return c;
}

// Softmax of scale * x over rows of `cols`, bottom-right causal when asked.
std::vector<double> ref_softmax_rows(const std::vector<double> &x, int64_t batch, int64_t rows, int64_t cols,
                                     double scale, bool causal) {
    std::vector<double> y(x.size(), 0.0);
    for (int64_t bt = 0; bt < batch; ++bt)
        for (int64_t r = 0; r < rows; ++r) {
            const int64_t vis = causal ? causal_visible(r, rows, cols) : cols;
            const double *in = &x[std::size_t((bt * rows + r) * cols)];
            double *out = &y[std::size_t((bt * rows + r) * cols)];
            double mx = -std::numeric_limits<double>::infinity();
            for (int64_t c = 0; c < vis; ++c) mx = std::max(mx, scale * in[c]);
            double sum = 0;
            for (int64_t c = 0; c < vis; ++c) sum += (out[c] = std::exp(scale * in[c] - mx));
            for (int64_t c = 0; c < vis; ++c) out[c] /= sum;
        }
    return y;
}

std::vector<double> to_double(const std::vector<float> &v) { return {v.begin(), v.end()}; }

// ---- tests ------------------------------------------------------------------

class OnednnOpsTest : public OnednnPluginTest, public ::testing::WithParamInterface<int> {
protected:
    int dtype() const { return GetParam(); }
};

TEST_P(OnednnOpsTest, MatmulMatchesFloat64AcrossTransposesAndBias) {
    for (int ta = 0; ta < 2; ++ta)
        for (int tb = 0; tb < 2; ++tb)
            for (int bias = 0; bias < 2; ++bias) {
                auto d = make_desc(OPB_OP_MATMUL, dtype());
                d.p.matmul = {2, 5, 7, 9, ta, tb, bias, 0, 0.0f, 0, 0};
                if (!offered(d)) return;
                const auto &p = d.p.matmul;
                auto a = random(p.batch * p.m * p.k, -1, 1, dtype(), 1);
                auto b = random(p.batch * p.k * p.n, -1, 1, dtype(), 2);
                auto bv = random(p.n, -1, 1, dtype(), 3);
                std::vector<std::vector<float>> in{a, b};
                if (bias) in.push_back(bv);
                expect_close(run(d, in), ref_matmul(p, a, b, bias ? &bv : nullptr), tolerance(dtype()),
                             label(d) + " ta=" + std::to_string(ta) + " tb=" + std::to_string(tb) +
                                 " bias=" + std::to_string(bias));
            }
}

TEST_P(OnednnOpsTest, MatmulMatchesFloat64OnBlockedKernelSizes) {
    // Large enough for oneDNN's blocked (brgemm / gemm) kernels with tails.
    auto d = make_desc(OPB_OP_MATMUL, dtype());
    d.p.matmul = {1, 67, 49, 96, 0, 1, 1, 0, 0.0f, 0, 0};
    if (!offered(d)) return;
    const auto &p = d.p.matmul;
    auto a = random(p.m * p.k, -1, 1, dtype(), 4);
    auto b = random(p.k * p.n, -1, 1, dtype(), 5);
    auto bv = random(p.n, -1, 1, dtype(), 6);
    // Sums of 96 products: f32 tolerance scaled by the accumulation length.
    Tol tol = tolerance(dtype());
    if (dtype() == OPB_DTYPE_F32) tol = {1e-5, 1e-4};
    expect_close(run(d, {a, b, bv}), ref_matmul(p, a, b, &bv), tol, label(d));
}

// int8 weights (dtype s8): u8 (zero point 128) or s8 activations, f32 or
// bf16 output, with and without bias and transposed weights, against the
// exact integer sum dequantised in double. oneDNN has int8 matmul on every
// x86-64 ISA (AVX2 included: the onednn-ops-avx2 test runs this under
// ONEDNN_MAX_CPU_ISA=AVX2), so supports() must accept each. Weights span
// -64..63, as the host generates them: at full 8-bit range oneDNN's AVX2
// kernel (vpmaddubsw) saturates (harness/plugin/host_tensors.cpp).
TEST_F(OnednnPluginTest, Int8MatmulMatchesTheExactIntegerSumOnEveryIsa) {
    std::mt19937 rng(11);
    auto ints = [&](int64_t n, int lo, int hi) {
        std::uniform_int_distribution<int> u(lo, hi);
        std::vector<float> v(static_cast<std::size_t>(n));
        for (auto &x : v) x = float(u(rng));
        return v;
    };
    for (int act : {OPB_DTYPE_U8, OPB_DTYPE_S8})
        for (int out : {OPB_DTYPE_F32, OPB_DTYPE_BF16})
            for (int tb = 0; tb < 2; ++tb)
                for (int bias = 0; bias < 2; ++bias) {
                    auto d = make_desc(OPB_OP_MATMUL, OPB_DTYPE_S8);
                    auto &p = d.p.matmul;
                    p.batch = 2, p.m = 19, p.n = 37, p.k = 70, p.trans_b = tb, p.has_bias = bias;
                    p.act_dtype = act;
                    p.act_zero_point = act == OPB_DTYPE_U8 ? 128 : 0;
                    p.out_dtype = out;
                    const std::string what = "int8 act " + std::string(dtype_name(act)) + " out " +
                                             std::string(dtype_name(out)) + " tb=" + std::to_string(tb) +
                                             " bias=" + std::to_string(bias) + " on " + isa();
                    ASSERT_EQ(validate_desc(d), "");
                    ASSERT_EQ(api->supports(be, &d), OPB_OK) << what << ": " << error();
                    auto a =
                        act == OPB_DTYPE_U8 ? ints(p.batch * p.m * p.k, 0, 255) : ints(p.batch * p.m * p.k, -128, 127);
                    auto w = ints(p.batch * p.k * p.n, -64, 63);
                    std::vector<float> w_scale(std::size_t(p.n)), bv(std::size_t(p.n));
                    for (int64_t j = 0; j < p.n; ++j) {
                        w_scale[std::size_t(j)] = float(1 + j % 5) / 64.0f;
                        bv[std::size_t(j)] = float(j % 7) - 3.0f;
                    }
                    // The exact sum of (A - zp) B, then the dequantisation in double.
                    auto a_zp = a;
                    for (auto &x : a_zp) x -= float(p.act_zero_point);
                    opb_matmul_params plain = p;
                    std::vector<double> ref = ref_matmul(plain, a_zp, w, nullptr);
                    for (std::size_t i = 0; i < ref.size(); ++i) {
                        const std::size_t j = i % std::size_t(p.n);
                        ref[i] = double(p.act_scale) * w_scale[j] * ref[i] + (bias ? bv[j] : 0.0);
                    }
                    std::vector<std::vector<float>> in{a, w, w_scale};
                    if (bias) in.push_back(bv);
                    // f32: a few f32 roundings of the dequantisation; bf16: its output rounding.
                    const Tol tol = out == OPB_DTYPE_BF16 ? Tol{8e-3, 8e-3} : Tol{1e-6, 1e-6};
                    expect_close(run(d, in), ref, tol, what);
                }
}

// The reorder that quantizes (plugin.h, QUANTIZE): ties to even, saturation
// and the zero point exactly as the reference, at a power-of-two scale (the
// decoder's), from f32 and bf16, to u8 and s8, on every ISA.
TEST_F(OnednnPluginTest, QuantizeMatchesTheReferenceExactly) {
    std::vector<float> x = {0.0f, 0.03125f, 0.09375f, -0.03125f, 0.15625f, 9.0f, -9.0f, 0.3f};
    for (float v : random(244, -5, 5, OPB_DTYPE_BF16, 31)) x.push_back(v); // bf16-exact, so both inputs agree
    for (int in : {OPB_DTYPE_F32, OPB_DTYPE_BF16})
        for (int out : {OPB_DTYPE_U8, OPB_DTYPE_S8}) {
            auto d = make_desc(OPB_OP_QUANTIZE, in);
            d.p.quantize = {3, 84, 1.0f / 16.0f, out == OPB_DTYPE_U8 ? 128 : 0, out};
            const std::string what =
                "quantize " + std::string(dtype_name(in)) + " -> " + std::string(dtype_name(out)) + " on " + isa();
            ASSERT_EQ(validate_desc(d), "");
            ASSERT_EQ(api->supports(be, &d), OPB_OK) << what << ": " << error();
            std::vector<double> want(x.size());
            const double lo = out == OPB_DTYPE_U8 ? 0 : -128, hi = out == OPB_DTYPE_U8 ? 255 : 127;
            for (std::size_t i = 0; i < x.size(); ++i)
                want[i] = std::clamp(std::nearbyint(double(x[i]) * 16.0) + d.p.quantize.zero_point, lo, hi);
            // 0.5, 1.5, -0.5 and 2.5 steps: ties go to even (0, 2, 0, 2).
            EXPECT_EQ(want[1], want[0]);
            const std::vector<float> got = run(d, {x});
            ASSERT_EQ(got.size(), want.size());
            for (std::size_t i = 0; i < x.size(); ++i) ASSERT_EQ(double(got[i]), want[i]) << what << " x = " << x[i];
        }
}

TEST_P(OnednnOpsTest, SoftmaxMatchesFloat64WithScaleAndCausalMask) {
    struct Case {
        int64_t batch, rows, cols;
        float scale;
        int causal;
    };
    for (const Case c : {Case{2, 3, 10, 0.0f, 0}, Case{2, 3, 10, 0.5f, 0}, Case{2, 4, 4, 1.0f, 1},
                         Case{1, 3, 9, 0.25f, 1}, Case{3, 1, 33, 2.0f, 1}}) {
        auto d = make_desc(OPB_OP_SOFTMAX, dtype());
        d.p.softmax = {c.batch, c.rows, c.cols, c.scale, c.causal};
        if (!offered(d)) return;
        auto x = random(c.batch * c.rows * c.cols, -4, 4, dtype(), 7);
        const auto ref = ref_softmax_rows(to_double(x), c.batch, c.rows, c.cols, effective_scale(d), c.causal);
        expect_close(run(d, {x}), ref, tolerance(dtype()),
                     label(d) + " rows=" + std::to_string(c.rows) + " cols=" + std::to_string(c.cols) +
                         " scale=" + std::to_string(c.scale) + " causal=" + std::to_string(c.causal));
    }
}

TEST_P(OnednnOpsTest, LayernormMatchesFloat64) {
    auto d = make_desc(OPB_OP_LAYERNORM, dtype());
    d.p.norm = {5, 33, 1e-5f};
    if (!offered(d)) return;
    const auto &p = d.p.norm;
    auto x = random(p.rows * p.cols, -3, 5, dtype(), 8);
    auto gamma = random(p.cols, 0.5f, 1.5f, dtype(), 9);
    auto beta = random(p.cols, -0.5f, 0.5f, dtype(), 10);
    std::vector<double> ref(x.size());
    for (int64_t r = 0; r < p.rows; ++r) {
        double mean = 0, var = 0;
        for (int64_t c = 0; c < p.cols; ++c) mean += x[std::size_t(r * p.cols + c)];
        mean /= double(p.cols);
        for (int64_t c = 0; c < p.cols; ++c) {
            const double t = x[std::size_t(r * p.cols + c)] - mean;
            var += t * t;
        }
        var /= double(p.cols);
        for (int64_t c = 0; c < p.cols; ++c)
            ref[std::size_t(r * p.cols + c)] =
                (x[std::size_t(r * p.cols + c)] - mean) / std::sqrt(var + double(p.eps)) * gamma[std::size_t(c)] +
                beta[std::size_t(c)];
    }
    expect_close(run(d, {x, gamma, beta}), ref, tolerance(dtype()), label(d));
}

TEST_P(OnednnOpsTest, RmsnormMatchesFloat64) {
    auto d = make_desc(OPB_OP_RMSNORM, dtype());
    d.p.norm = {6, 40, 1e-6f};
    if (!offered(d)) return;
    const auto &p = d.p.norm;
    auto x = random(p.rows * p.cols, -3, 5, dtype(), 11);
    auto gamma = random(p.cols, 0.5f, 1.5f, dtype(), 12);
    std::vector<double> ref(x.size());
    for (int64_t r = 0; r < p.rows; ++r) {
        double ms = 0;
        for (int64_t c = 0; c < p.cols; ++c)
            ms += double(x[std::size_t(r * p.cols + c)]) * x[std::size_t(r * p.cols + c)];
        ms /= double(p.cols);
        for (int64_t c = 0; c < p.cols; ++c)
            ref[std::size_t(r * p.cols + c)] =
                x[std::size_t(r * p.cols + c)] / std::sqrt(ms + double(p.eps)) * gamma[std::size_t(c)];
    }
    expect_close(run(d, {x, gamma}), ref, tolerance(dtype()), label(d));
}

TEST_P(OnednnOpsTest, GeluErfTanhAndSiluMatchFloat64) {
    for (int op : {OPB_OP_GELU, OPB_OP_SILU})
        for (int variant : {0, 1}) {
            if (op == OPB_OP_SILU && variant == 1) continue;
            auto d = make_desc(op, dtype(), variant);
            d.p.eltwise = {4, 37};
            if (!offered(d)) return;
            auto x = random(4 * 37, -6, 6, dtype(), 13);
            std::vector<double> ref(x.size());
            for (std::size_t i = 0; i < x.size(); ++i) {
                const double v = x[i];
                if (op == OPB_OP_SILU)
                    ref[i] = v / (1.0 + std::exp(-v));
                else if (variant == OPB_GELU_ERF)
                    ref[i] = 0.5 * v * (1.0 + std::erf(v / std::sqrt(2.0)));
                else
                    ref[i] = 0.5 * v * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (v + 0.044715 * v * v * v)));
            }
            expect_close(run(d, {x}), ref, tolerance(dtype()), label(d));
        }
}

TEST_P(OnednnOpsTest, AddMatchesFloat64) {
    auto d = make_desc(OPB_OP_ADD, dtype());
    d.p.eltwise = {3, 41};
    if (!offered(d)) return;
    auto a = random(3 * 41, -2, 2, dtype(), 14);
    auto b = random(3 * 41, -2, 2, dtype(), 15);
    std::vector<double> ref(a.size());
    for (std::size_t i = 0; i < a.size(); ++i) ref[i] = double(a[i]) + b[i];
    expect_close(run(d, {a, b}), ref, tolerance(dtype()), label(d));
}

// Multi-head and grouped-query (kv_heads < heads: query head h reads K/V head
// h / (heads / kv_heads), which the composed plan folds into one matmul per
// K/V head) against a float64 reference that maps the heads itself.
TEST_P(OnednnOpsTest, ComposedAttentionMatchesFloat64WithAndWithoutCausalAndGroupedKv) {
    struct Case {
        int64_t batch, heads, sq, skv, dim;
        float scale;
        int causal;
        int64_t kv_heads;
    };
    for (const Case c :
         {Case{1, 2, 5, 7, 8, 0.0f, 0, 2}, Case{2, 1, 6, 6, 16, 0.0f, 1, 1}, Case{1, 2, 3, 9, 8, 0.3f, 1, 2},
          Case{2, 8, 3, 11, 8, 0.0f, 1, 2}, Case{1, 4, 1, 33, 16, 0.0f, 1, 1}}) {
        auto d = make_desc(OPB_OP_ATTENTION, dtype(), OPB_ATTENTION_COMPOSED);
        d.p.attention = {c.batch, c.heads, c.sq, c.skv, c.dim, c.scale, c.causal, c.kv_heads};
        if (!offered(d)) return;
        const int64_t bh = c.batch * c.heads, bkv = c.batch * c.kv_heads, group = c.heads / c.kv_heads;
        auto kv_of = [&](int64_t h) { return (h / c.heads) * c.kv_heads + (h % c.heads) / group; };
        auto q = random(bh * c.sq * c.dim, -1, 1, dtype(), 16);
        auto k = random(bkv * c.skv * c.dim, -1, 1, dtype(), 17);
        auto v = random(bkv * c.skv * c.dim, -1, 1, dtype(), 18);
        std::vector<double> s(std::size_t(bh * c.sq * c.skv));
        for (int64_t h = 0; h < bh; ++h)
            for (int64_t i = 0; i < c.sq; ++i)
                for (int64_t j = 0; j < c.skv; ++j) {
                    double acc = 0;
                    for (int64_t e = 0; e < c.dim; ++e)
                        acc += double(q[std::size_t((h * c.sq + i) * c.dim + e)]) *
                               k[std::size_t((kv_of(h) * c.skv + j) * c.dim + e)];
                    s[std::size_t((h * c.sq + i) * c.skv + j)] = acc;
                }
        auto pr = ref_softmax_rows(s, bh, c.sq, c.skv, effective_scale(d), c.causal);
        std::vector<double> o(std::size_t(bh * c.sq * c.dim), 0.0);
        for (int64_t h = 0; h < bh; ++h)
            for (int64_t i = 0; i < c.sq; ++i)
                for (int64_t e = 0; e < c.dim; ++e) {
                    double acc = 0;
                    for (int64_t j = 0; j < c.skv; ++j)
                        acc += pr[std::size_t((h * c.sq + i) * c.skv + j)] *
                               v[std::size_t((kv_of(h) * c.skv + j) * c.dim + e)];
                    o[std::size_t((h * c.sq + i) * c.dim + e)] = acc;
                }
        expect_close(run(d, {q, k, v}), o, tolerance(dtype(), true),
                     label(d) + " h=" + std::to_string(c.heads) + " kvh=" + std::to_string(c.kv_heads) +
                         " sq=" + std::to_string(c.sq) + " skv=" + std::to_string(c.skv) +
                         " causal=" + std::to_string(c.causal));
    }
}

// RoPE is this plugin's own kernel (onednn_rope.cpp): K's rotation (the
// last output) in both layouts, with a partial rotary_dim and a position
// offset, against float64 rotations written here from plugin.h.
TEST_P(OnednnOpsTest, RopeOwnKernelMatchesFloat64InBothLayouts) {
    for (int variant : {OPB_ROPE_HALF_SPLIT, OPB_ROPE_INTERLEAVED}) {
        auto d = make_desc(OPB_OP_ROPE, dtype(), variant);
        // batch 2, 4 query heads, 2 K/V heads, seq 5, head_dim 12, rotary 8, positions 100..104
        d.p.rope = {2, 4, 2, 5, 12, 8, 10000.0f, 100};
        ASSERT_EQ(api->supports(be, &d), OPB_OK) << error();
        const auto &p = d.p.rope;
        auto q = random(p.batch * p.heads * p.seq * p.head_dim, -1, 1, dtype(), 21);
        auto k = random(p.batch * p.kv_heads * p.seq * p.head_dim, -1, 1, dtype(), 22);
        std::vector<double> want(k.size());
        const int64_t half = p.rotary_dim / 2;
        for (int64_t row = 0; row < p.batch * p.kv_heads * p.seq; ++row) {
            const double t = double(p.position + row % p.seq);
            const float *x = &k[std::size_t(row * p.head_dim)];
            double *y = &want[std::size_t(row * p.head_dim)];
            for (int64_t e = 0; e < p.head_dim; ++e) y[e] = x[e];
            for (int64_t i = 0; i < half; ++i) {
                const double a = t * std::pow(10000.0, -2.0 * double(i) / double(p.rotary_dim));
                const int64_t i0 = variant == OPB_ROPE_INTERLEAVED ? 2 * i : i;
                const int64_t i1 = variant == OPB_ROPE_INTERLEAVED ? 2 * i + 1 : i + half;
                y[i0] = x[i0] * std::cos(a) - x[i1] * std::sin(a);
                y[i1] = x[i1] * std::cos(a) + x[i0] * std::sin(a);
            }
        }
        // f32: the table is rounded to f32 (angles up to 104 rad) -> a few 1e-7.
        const Tol tol = dtype() == OPB_DTYPE_F32 ? Tol{1e-6, 1e-6} : tolerance(dtype());
        expect_close(run(d, {q, k}), want, tol, label(d));
    }
}

INSTANTIATE_TEST_SUITE_P(Dtypes, OnednnOpsTest, ::testing::Values(OPB_DTYPE_F32, OPB_DTYPE_BF16, OPB_DTYPE_F16),
                         [](const auto &info) { return std::string(dtype_name(info.param)); });

} // namespace
} // namespace opbench::test
