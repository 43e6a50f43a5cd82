// Tests of backends/naive/kernels.cpp: every op against an independent float64
// computation written here from plugin.h's definitions, composed == fused
// attention, the bf16/f16 paths, and the workspace each kernel needs.
#include "naive/kernels.hpp"

#include "opbench/ops.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace opbench::naive {
namespace {

// A dense buffer of `n` elements of dtype `dt`.
struct Tensor {
    int dt;
    int64_t n;
    std::vector<unsigned char> bytes;
    Tensor(int dtype, int64_t count) : dt(dtype), n(count), bytes(size_t(count) * dtype_size(dtype)) {}
    void *data() { return bytes.data(); }
    const void *data() const { return bytes.data(); }
    double at(int64_t i) const { return load_as_f32(bytes.data(), dt, i); }
};

// Uniform values in [lo, hi), rounded to the dtype (the reference then reads
// the very values the kernel reads).
Tensor random_tensor(int dt, int64_t n, std::mt19937 &rng, float lo = -1.0f, float hi = 1.0f) {
    std::uniform_real_distribution<float> dist(lo, hi);
    Tensor t(dt, n);
    for (int64_t i = 0; i < n; ++i) store_from_f32(t.data(), dt, i, dist(rng));
    return t;
}

// Tolerance of a result rounded once to the dtype from an (almost) exact
// value: one unit in the last place relative, plus a floor for results that
// are (near) zero, where double summation order and f16 subnormals dominate.
struct Tolerance {
    double rel, abs;
};
Tolerance rounding_tolerance(int dt) {
    switch (dt) {
    case OPB_DTYPE_BF16: return {std::ldexp(1.0, -8), 1e-12};
    case OPB_DTYPE_F16: return {std::ldexp(1.0, -11), std::ldexp(1.0, -25)};
    default: return {std::ldexp(1.0, -23), 1e-12};
    }
}

// Element-wise |got - ref| <= rel |ref| + abs; reports the first few misses.
void expect_close(const Tensor &got, const std::vector<double> &ref, Tolerance tol, const std::string &what) {
    ASSERT_EQ(got.n, int64_t(ref.size())) << what;
    int misses = 0;
    for (int64_t i = 0; i < got.n; ++i) {
        const double g = got.at(i), r = ref[size_t(i)];
        if (!(std::abs(g - r) <= tol.rel * std::abs(r) + tol.abs)) {
            if (++misses <= 5)
                ADD_FAILURE() << what << ": element " << i << " is " << g << ", reference " << r << " (|diff| "
                              << std::abs(g - r) << ")";
        }
    }
    EXPECT_EQ(misses, 0) << what << ": " << misses << " of " << got.n << " elements differ";
}

std::string dt_label(int dt) { return std::string(dtype_name(dt)); }

// ---- float64 references, straight from plugin.h's definitions -------------------

std::vector<double> ref_matmul(const opb_matmul_params &p, const Tensor &a, const Tensor &b, const Tensor *bias) {
    std::vector<double> c(size_t(p.batch * p.m * p.n));
    for (int64_t bi = 0; bi < p.batch; ++bi)
        for (int64_t i = 0; i < p.m; ++i)
            for (int64_t j = 0; j < p.n; ++j) {
                double s = 0.0;
                for (int64_t k = 0; k < p.k; ++k) {
                    // A stored [batch, K, M] when trans_a; B stored [batch, N, K] when trans_b.
                    double av = p.trans_a ? a.at((bi * p.k + k) * p.m + i) : a.at((bi * p.m + i) * p.k + k);
                    double bv = p.trans_b ? b.at((bi * p.n + j) * p.k + k) : b.at((bi * p.k + k) * p.n + j);
                    s += av * bv;
                }
                if (p.has_bias) s += bias->at(j);
                c[size_t((bi * p.m + i) * p.n + j)] = s;
            }
    return c;
}

// softmax of one row of already scaled scores; masked[c] entries get 0.
std::vector<double> ref_softmax_row(const std::vector<double> &s, const std::vector<bool> &masked) {
    double mx = -std::numeric_limits<double>::infinity();
    for (size_t c = 0; c < s.size(); ++c)
        if (!masked[c]) mx = std::max(mx, s[c]);
    double sum = 0.0;
    for (size_t c = 0; c < s.size(); ++c)
        if (!masked[c]) sum += std::exp(s[c] - mx);
    std::vector<double> y(s.size(), 0.0);
    for (size_t c = 0; c < s.size(); ++c)
        if (!masked[c]) y[c] = std::exp(s[c] - mx) / sum;
    return y;
}

// plugin.h: causal masks column c of row r when c > r + (cols - rows).
bool causal_masked(int64_t r, int64_t c, int64_t rows, int64_t cols) { return c > r + (cols - rows); }

std::vector<double> ref_softmax(const opb_softmax_params &p, const Tensor &x) {
    const double scale = p.scale != 0.0f ? p.scale : 1.0;
    std::vector<double> y;
    for (int64_t bi = 0; bi < p.batch; ++bi)
        for (int64_t r = 0; r < p.rows; ++r) {
            std::vector<double> s(size_t(p.cols));
            std::vector<bool> masked(size_t(p.cols));
            for (int64_t c = 0; c < p.cols; ++c) {
                s[size_t(c)] = scale * x.at((bi * p.rows + r) * p.cols + c);
                masked[size_t(c)] = p.causal && causal_masked(r, c, p.rows, p.cols);
            }
            for (double v : ref_softmax_row(s, masked)) y.push_back(v);
        }
    return y;
}

std::vector<double> ref_layernorm(const opb_norm_params &p, const Tensor &x, const Tensor &g, const Tensor &b) {
    std::vector<double> y(size_t(p.rows * p.cols));
    for (int64_t r = 0; r < p.rows; ++r) {
        double mean = 0.0, var = 0.0;
        for (int64_t c = 0; c < p.cols; ++c) mean += x.at(r * p.cols + c) / double(p.cols);
        for (int64_t c = 0; c < p.cols; ++c) var += std::pow(x.at(r * p.cols + c) - mean, 2) / double(p.cols);
        for (int64_t c = 0; c < p.cols; ++c)
            y[size_t(r * p.cols + c)] =
                (x.at(r * p.cols + c) - mean) / std::sqrt(var + double(p.eps)) * g.at(c) + b.at(c);
    }
    return y;
}

std::vector<double> ref_rmsnorm(const opb_norm_params &p, const Tensor &x, const Tensor &g) {
    std::vector<double> y(size_t(p.rows * p.cols));
    for (int64_t r = 0; r < p.rows; ++r) {
        double ms = 0.0;
        for (int64_t c = 0; c < p.cols; ++c) ms += std::pow(x.at(r * p.cols + c), 2) / double(p.cols);
        for (int64_t c = 0; c < p.cols; ++c)
            y[size_t(r * p.cols + c)] = x.at(r * p.cols + c) / std::sqrt(ms + double(p.eps)) * g.at(c);
    }
    return y;
}

template <class F>
std::vector<double> ref_map(const Tensor &x, F f) {
    std::vector<double> y(size_t(x.n));
    for (int64_t i = 0; i < x.n; ++i) y[size_t(i)] = f(x.at(i));
    return y;
}

std::vector<double> ref_attention(const opb_attention_params &p, const Tensor &q, const Tensor &k, const Tensor &v) {
    // The default scale is defined as a float (ops.hpp effective_scale); every backend applies that value.
    const double scale = p.scale != 0.0f ? p.scale : 1.0f / std::sqrt(float(p.head_dim));
    const int64_t D = p.head_dim;
    std::vector<double> o(size_t(p.batch * p.heads * p.seq_q * D), 0.0);
    for (int64_t bh = 0; bh < p.batch * p.heads; ++bh)
        for (int64_t i = 0; i < p.seq_q; ++i) {
            std::vector<double> s(size_t(p.seq_kv));
            std::vector<bool> masked(size_t(p.seq_kv));
            bool any = false;
            for (int64_t j = 0; j < p.seq_kv; ++j) {
                double dot = 0.0;
                for (int64_t d = 0; d < D; ++d)
                    dot += q.at((bh * p.seq_q + i) * D + d) * k.at((bh * p.seq_kv + j) * D + d);
                s[size_t(j)] = scale * dot;
                masked[size_t(j)] = p.causal && causal_masked(i, j, p.seq_q, p.seq_kv);
                any = any || !masked[size_t(j)];
            }
            if (!any) continue; // a row that sees no key: zeros (kernels.hpp)
            auto w = ref_softmax_row(s, masked);
            for (int64_t d = 0; d < D; ++d) {
                double acc = 0.0;
                for (int64_t j = 0; j < p.seq_kv; ++j) acc += w[size_t(j)] * v.at((bh * p.seq_kv + j) * D + d);
                o[size_t((bh * p.seq_q + i) * D + d)] = acc;
            }
        }
    return o;
}

// A workspace of exactly `bytes`, followed by a guard region that must stay untouched.
struct GuardedWorkspace {
    static constexpr size_t kGuardDoubles = 64;
    static constexpr unsigned char kPattern = 0xA5;
    std::vector<double> mem;
    size_t doubles;
    explicit GuardedWorkspace(uint64_t bytes)
        : mem(size_t(bytes / sizeof(double)) + kGuardDoubles), doubles(size_t(bytes / sizeof(double))) {
        EXPECT_EQ(bytes % sizeof(double), 0u);
        std::memset(mem.data() + doubles, kPattern, kGuardDoubles * sizeof(double));
    }
    double *data() { return mem.data(); }
    bool guard_intact() const {
        auto *g = reinterpret_cast<const unsigned char *>(mem.data() + doubles);
        for (size_t i = 0; i < kGuardDoubles * sizeof(double); ++i)
            if (g[i] != kPattern) return false;
        return true;
    }
};

opb_op_desc attention_desc(const opb_attention_params &p, int variant, int dt = OPB_DTYPE_F32) {
    opb_op_desc d = make_desc(OPB_OP_ATTENTION, dt, variant);
    d.p.attention = p;
    return d;
}

const int kAllDtypes[] = {OPB_DTYPE_F32, OPB_DTYPE_BF16, OPB_DTYPE_F16};

// ---- matmul -----------------------------------------------------------------------

void check_matmul(int dt, opb_matmul_params p, std::mt19937 &rng) {
    const std::string what = "matmul " + dt_label(dt) + " b" + std::to_string(p.batch) + " m" + std::to_string(p.m) +
                             " n" + std::to_string(p.n) + " k" + std::to_string(p.k) + " ta" +
                             std::to_string(p.trans_a) + " tb" + std::to_string(p.trans_b) + " bias" +
                             std::to_string(p.has_bias);
    Tensor a = random_tensor(dt, p.batch * p.m * p.k, rng);
    Tensor b = random_tensor(dt, p.batch * p.k * p.n, rng);
    Tensor bias = random_tensor(dt, p.n, rng);
    Tensor c(dt, p.batch * p.m * p.n);
    opb_op_desc d = make_desc(OPB_OP_MATMUL, dt);
    d.p.matmul = p;
    GuardedWorkspace ws(workspace_bytes(d));
    matmul(p, dt, a.data(), b.data(), p.has_bias ? bias.data() : nullptr, c.data(), ws.data());
    EXPECT_TRUE(ws.guard_intact()) << what << ": wrote past its workspace";
    expect_close(c, ref_matmul(p, a, b, p.has_bias ? &bias : nullptr), rounding_tolerance(dt), what);
}

TEST(NaiveMatmul, EveryTransposeAndBiasCombinationWithBatchMatchesFloat64) {
    std::mt19937 rng(1);
    for (int ta = 0; ta < 2; ++ta)
        for (int tb = 0; tb < 2; ++tb)
            for (int bias = 0; bias < 2; ++bias) check_matmul(OPB_DTYPE_F32, {3, 5, 7, 11, ta, tb, bias, 0, 0.0f, 0, 0}, rng);
}

TEST(NaiveMatmul, SingleElementAndLongReductionMatchFloat64) {
    std::mt19937 rng(2);
    check_matmul(OPB_DTYPE_F32, {1, 1, 1, 1, 0, 0, 1, 0, 0.0f, 0, 0}, rng);
    check_matmul(OPB_DTYPE_F32, {1, 3, 2, 1000, 1, 0, 0, 0, 0.0f, 0, 0}, rng);
}

TEST(NaiveMatmul, Bf16AndF16AreRoundedOnceFromFloat64) {
    std::mt19937 rng(3);
    for (int dt : {OPB_DTYPE_BF16, OPB_DTYPE_F16})
        for (int tb = 0; tb < 2; ++tb) check_matmul(dt, {2, 6, 5, 17, 1 - tb, tb, 1, 0, 0.0f, 0, 0}, rng);
}

// ---- softmax ----------------------------------------------------------------------

void check_softmax(int dt, opb_softmax_params p, std::mt19937 &rng) {
    const std::string what = "softmax " + dt_label(dt) + " " + std::to_string(p.rows) + "x" + std::to_string(p.cols) +
                             " scale " + std::to_string(p.scale) + " causal " + std::to_string(p.causal);
    Tensor x = random_tensor(dt, p.batch * p.rows * p.cols, rng, -4.0f, 4.0f);
    Tensor y(dt, x.n);
    softmax(p, dt, x.data(), y.data());
    expect_close(y, ref_softmax(p, x), rounding_tolerance(dt), what);
}

TEST(NaiveSoftmax, ScaledRowsMatchFloat64) {
    std::mt19937 rng(4);
    check_softmax(OPB_DTYPE_F32, {2, 5, 9, 0.7f, 0}, rng);
    check_softmax(OPB_DTYPE_F32, {1, 3, 40, -1.5f, 0}, rng); // negative scale flips the order
    check_softmax(OPB_DTYPE_F32, {2, 4, 6, 0.0f, 0}, rng);   // 0 means scale 1
}

TEST(NaiveSoftmax, CausalMaskIsBottomRightAlignedIncludingRowsNotEqualCols) {
    std::mt19937 rng(5);
    check_softmax(OPB_DTYPE_F32, {2, 6, 6, 1.0f, 1}, rng); // square: lower triangle
    check_softmax(OPB_DTYPE_F32, {2, 3, 8, 0.5f, 1}, rng); // decoding: last row sees all
    check_softmax(OPB_DTYPE_F32, {1, 7, 4, 2.0f, 1}, rng); // rows > cols: first rows fully masked
}

TEST(NaiveSoftmax, CausalDecodingRowSeesEveryColumnAndMaskedAreZero) {
    // Direct statement of the alignment, independent of the reference above.
    const opb_softmax_params p{1, 2, 5, 1.0f, 1};
    std::vector<float> x(10, 0.0f), y(10, -1.0f);
    softmax(p, OPB_DTYPE_F32, x.data(), y.data());
    for (int c = 0; c < 4; ++c) EXPECT_FLOAT_EQ(y[size_t(c)], 0.25f) << "row 0 col " << c;
    EXPECT_EQ(y[4], 0.0f) << "row 0 col 4 must be masked";
    for (int c = 0; c < 5; ++c) EXPECT_FLOAT_EQ(y[size_t(5 + c)], 0.2f) << "row 1 col " << c;
}

TEST(NaiveSoftmax, Bf16AndF16AreRoundedOnceFromFloat64) {
    std::mt19937 rng(6);
    for (int dt : {OPB_DTYPE_BF16, OPB_DTYPE_F16}) {
        check_softmax(dt, {2, 4, 33, 0.8f, 0}, rng);
        check_softmax(dt, {1, 5, 7, 1.0f, 1}, rng);
    }
}

// ---- norms ------------------------------------------------------------------------

TEST(NaiveLayernorm, MatchesFloat64InEveryDtype) {
    std::mt19937 rng(7);
    for (int dt : kAllDtypes) {
        const opb_norm_params p{5, 37, 1e-5f};
        Tensor x = random_tensor(dt, p.rows * p.cols, rng, -3.0f, 5.0f); // nonzero mean
        Tensor g = random_tensor(dt, p.cols, rng, 0.5f, 1.5f);
        Tensor b = random_tensor(dt, p.cols, rng);
        Tensor y(dt, x.n);
        layernorm(p, dt, x.data(), g.data(), b.data(), y.data());
        expect_close(y, ref_layernorm(p, x, g, b), rounding_tolerance(dt), "layernorm " + dt_label(dt));
    }
}

TEST(NaiveLayernorm, EpsDominatesAConstantRow) {
    // A constant row has variance 0: output is beta exactly, whatever eps.
    const opb_norm_params p{1, 4, 0.5f};
    std::vector<float> x(4, 3.0f), g(4, 2.0f), b{1, 2, 3, 4}, y(4);
    layernorm(p, OPB_DTYPE_F32, x.data(), g.data(), b.data(), y.data());
    for (int c = 0; c < 4; ++c) EXPECT_EQ(y[size_t(c)], b[size_t(c)]);
}

TEST(NaiveRmsnorm, MatchesFloat64InEveryDtype) {
    std::mt19937 rng(8);
    for (int dt : kAllDtypes) {
        const opb_norm_params p{6, 29, 1e-6f};
        Tensor x = random_tensor(dt, p.rows * p.cols, rng, -2.0f, 2.0f);
        Tensor g = random_tensor(dt, p.cols, rng, 0.5f, 1.5f);
        Tensor y(dt, x.n);
        rmsnorm(p, dt, x.data(), g.data(), y.data());
        expect_close(y, ref_rmsnorm(p, x, g), rounding_tolerance(dt), "rmsnorm " + dt_label(dt));
    }
}

// ---- element-wise -----------------------------------------------------------------

TEST(NaiveGelu, ErfAndTanhFormsMatchFloat64InEveryDtype) {
    std::mt19937 rng(9);
    const opb_eltwise_params p{7, 19};
    for (int dt : kAllDtypes) {
        Tensor x = random_tensor(dt, p.rows * p.cols, rng, -6.0f, 6.0f);
        Tensor y(dt, x.n);
        gelu(p, dt, OPB_GELU_ERF, x.data(), y.data());
        expect_close(y, ref_map(x, [](double v) { return 0.5 * v * (1.0 + std::erf(v / std::sqrt(2.0))); }),
                     rounding_tolerance(dt), "gelu erf " + dt_label(dt));
        gelu(p, dt, OPB_GELU_TANH, x.data(), y.data());
        expect_close(y,
                     ref_map(x,
                             [](double v) {
                                 return 0.5 * v * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (v + 0.044715 * v * v * v)));
                             }),
                     rounding_tolerance(dt), "gelu tanh " + dt_label(dt));
    }
}

TEST(NaiveGelu, TanhFormDiffersFromErfForm) {
    // Guards against a variant being ignored: the two forms differ by ~1e-3 near |x| = 2.
    const opb_eltwise_params p{1, 1};
    float x = 2.0f, erf_y = 0, tanh_y = 0;
    gelu(p, OPB_DTYPE_F32, OPB_GELU_ERF, &x, &erf_y);
    gelu(p, OPB_DTYPE_F32, OPB_GELU_TANH, &x, &tanh_y);
    EXPECT_GT(std::abs(erf_y - tanh_y), 1e-5f);
}

TEST(NaiveGelu, UnknownVariantIsRefused) {
    const opb_eltwise_params p{1, 1};
    float x = 1.0f, y = 0.0f;
    EXPECT_THROW(gelu(p, OPB_DTYPE_F32, 2, &x, &y), std::invalid_argument);
}

TEST(NaiveSilu, MatchesFloat64InEveryDtype) {
    std::mt19937 rng(10);
    const opb_eltwise_params p{5, 23};
    for (int dt : kAllDtypes) {
        Tensor x = random_tensor(dt, p.rows * p.cols, rng, -8.0f, 8.0f);
        Tensor y(dt, x.n);
        silu(p, dt, x.data(), y.data());
        expect_close(y, ref_map(x, [](double v) { return v / (1.0 + std::exp(-v)); }), rounding_tolerance(dt),
                     "silu " + dt_label(dt));
    }
}

TEST(NaiveAdd, MatchesFloat64InEveryDtype) {
    std::mt19937 rng(11);
    const opb_eltwise_params p{4, 31};
    for (int dt : kAllDtypes) {
        Tensor a = random_tensor(dt, p.rows * p.cols, rng, -10.0f, 10.0f);
        Tensor b = random_tensor(dt, p.rows * p.cols, rng);
        Tensor y(dt, a.n);
        add(p, dt, a.data(), b.data(), y.data());
        std::vector<double> ref(size_t(a.n));
        for (int64_t i = 0; i < a.n; ++i) ref[size_t(i)] = a.at(i) + b.at(i);
        expect_close(y, ref, rounding_tolerance(dt), "add " + dt_label(dt));
    }
}

TEST(NaiveKernels, UnknownDtypeIsRefused) {
    const opb_eltwise_params p{1, 1};
    float a = 1.0f, b = 2.0f, y = 0.0f;
    EXPECT_THROW(add(p, 7, &a, &b, &y), std::invalid_argument);
}

// ---- attention --------------------------------------------------------------------

struct AttentionRun {
    Tensor composed, fused;
    std::vector<double> ref;
};

AttentionRun run_attention(int dt, const opb_attention_params &p, std::mt19937 &rng) {
    const int64_t nq = p.batch * p.heads * p.seq_q * p.head_dim;
    const int64_t nkv = p.batch * p.heads * p.seq_kv * p.head_dim;
    Tensor q = random_tensor(dt, nq, rng, -2.0f, 2.0f);
    Tensor k = random_tensor(dt, nkv, rng, -2.0f, 2.0f);
    Tensor v = random_tensor(dt, nkv, rng);
    AttentionRun r{Tensor(dt, nq), Tensor(dt, nq), ref_attention(p, q, k, v)};
    GuardedWorkspace wc(workspace_bytes(attention_desc(p, OPB_ATTENTION_COMPOSED, dt)));
    GuardedWorkspace wf(workspace_bytes(attention_desc(p, OPB_ATTENTION_FUSED, dt)));
    attention_composed(p, dt, q.data(), k.data(), v.data(), r.composed.data(), wc.data());
    attention_fused(p, dt, q.data(), k.data(), v.data(), r.fused.data(), wf.data());
    EXPECT_TRUE(wc.guard_intact()) << "composed attention wrote past its workspace";
    EXPECT_TRUE(wf.guard_intact()) << "fused attention wrote past its workspace";
    return r;
}

std::string attention_label(const opb_attention_params &p) {
    return "attention b" + std::to_string(p.batch) + " h" + std::to_string(p.heads) + " sq" + std::to_string(p.seq_q) +
           " skv" + std::to_string(p.seq_kv) + " d" + std::to_string(p.head_dim) + " causal" + std::to_string(p.causal);
}

// Shapes: square, seq_q < seq_kv (decoding-like), seq_q > seq_kv (some causal
// rows see no key), and several fused tiles in both directions with partial
// last tiles.
const opb_attention_params kAttentionShapes[] = {
    {2, 3, 5, 5, 8, 0.0f, 0, 0},     {1, 2, 7, 13, 16, 0.0f, 0, 0}, {1, 2, 13, 7, 4, 0.3f, 0, 0},
    {1, 1, 70, 150, 16, 0.0f, 0, 0}, {2, 1, 1, 200, 8, 0.0f, 0, 0},
};

TEST(NaiveAttention, BothVariantsMatchFloat64WithAndWithoutCausalMask) {
    std::mt19937 rng(12);
    for (opb_attention_params p : kAttentionShapes)
        for (int causal = 0; causal < 2; ++causal) {
            p.causal = causal;
            AttentionRun r = run_attention(OPB_DTYPE_F32, p, rng);
            expect_close(r.composed, r.ref, rounding_tolerance(OPB_DTYPE_F32), "composed " + attention_label(p));
            expect_close(r.fused, r.ref, rounding_tolerance(OPB_DTYPE_F32), "fused " + attention_label(p));
        }
}

TEST(NaiveAttention, ComposedEqualsFusedToWithinOneF32Rounding) {
    std::mt19937 rng(13);
    for (opb_attention_params p : kAttentionShapes)
        for (int causal = 0; causal < 2; ++causal) {
            p.causal = causal;
            AttentionRun r = run_attention(OPB_DTYPE_F32, p, rng);
            std::vector<double> composed(size_t(r.composed.n));
            for (int64_t i = 0; i < r.composed.n; ++i) composed[size_t(i)] = r.composed.at(i);
            // Both are exact to double precision before the one f32 rounding,
            // so they can differ by at most one f32 ulp.
            expect_close(r.fused, composed, {std::ldexp(1.0, -23), 1e-12}, "fused vs composed " + attention_label(p));
        }
}

TEST(NaiveAttention, CausalRowsThatSeeNoKeyAreZero) {
    std::mt19937 rng(14);
    const opb_attention_params p{1, 1, 6, 2, 4, 0.0f, 1, 0}; // rows 0..3 see no key
    AttentionRun r = run_attention(OPB_DTYPE_F32, p, rng);
    for (int64_t i = 0; i < 4 * p.head_dim; ++i) {
        EXPECT_EQ(r.composed.at(i), 0.0) << "composed element " << i;
        EXPECT_EQ(r.fused.at(i), 0.0) << "fused element " << i;
    }
    for (int64_t i = 4 * p.head_dim; i < r.fused.n; ++i) EXPECT_NE(r.fused.at(i), 0.0) << i;
}

TEST(NaiveAttention, Bf16AndF16AreRoundedOnceFromFloat64) {
    std::mt19937 rng(15);
    for (int dt : {OPB_DTYPE_BF16, OPB_DTYPE_F16})
        for (int causal = 0; causal < 2; ++causal) {
            const opb_attention_params p{1, 2, 40, 90, 16, 0.0f, causal, 0};
            AttentionRun r = run_attention(dt, p, rng);
            expect_close(r.composed, r.ref, rounding_tolerance(dt),
                         "composed " + dt_label(dt) + " " + attention_label(p));
            expect_close(r.fused, r.ref, rounding_tolerance(dt), "fused " + dt_label(dt) + " " + attention_label(p));
        }
}

// ---- workspace --------------------------------------------------------------------

TEST(NaiveWorkspace, FusedAttentionWorkspaceDoesNotGrowWithSequenceLength) {
    const opb_attention_params short_seq{1, 8, 512, 512, 64, 0.0f, 1, 0};
    const opb_attention_params long_seq{1, 8, 4096, 4096, 64, 0.0f, 1, 0};
    const uint64_t fused_short = workspace_bytes(attention_desc(short_seq, OPB_ATTENTION_FUSED));
    const uint64_t fused_long = workspace_bytes(attention_desc(long_seq, OPB_ATTENTION_FUSED));
    EXPECT_GT(fused_short, 0u);
    EXPECT_EQ(fused_long, fused_short);
    // O(tile x head_dim): far below one row of scores per query of a tile at seq 4096.
    EXPECT_LT(fused_long, uint64_t(kFusedTileQ) * 4096 * sizeof(double));

    const uint64_t composed_short = workspace_bytes(attention_desc(short_seq, OPB_ATTENTION_COMPOSED));
    const uint64_t composed_long = workspace_bytes(attention_desc(long_seq, OPB_ATTENTION_COMPOSED));
    EXPECT_EQ(composed_short, 512u * 512u * sizeof(double));
    EXPECT_EQ(composed_long, 64 * composed_short);
}

TEST(NaiveWorkspace, FusedAttentionWorkspaceGrowsWithHeadDimOnly) {
    const opb_attention_params d64{1, 1, 100, 100, 64, 0.0f, 0, 0};
    opb_attention_params d128 = d64;
    d128.head_dim = 128;
    opb_attention_params more_heads = d64;
    more_heads.heads = 16;
    more_heads.batch = 4;
    const uint64_t w64 = workspace_bytes(attention_desc(d64, OPB_ATTENTION_FUSED));
    EXPECT_EQ(workspace_bytes(attention_desc(d128, OPB_ATTENTION_FUSED)) - w64,
              uint64_t(kFusedTileQ) * 64 * sizeof(double)); // the accumulator tile
    EXPECT_EQ(workspace_bytes(attention_desc(more_heads, OPB_ATTENTION_FUSED)), w64);
}

// Grouped-query attention is multi-head attention with each K/V head repeated
// for its group of query heads: both variants give bit-identical outputs.
TEST(NaiveAttention, GroupedKvEqualsMultiHeadWithRepeatedKvHeads) {
    std::mt19937 rng(16);
    for (int causal = 0; causal < 2; ++causal) {
        const opb_attention_params gqa{2, 6, 3, 9, 8, 0.0f, causal, 2}; // group of 3
        opb_attention_params mha = gqa;
        mha.kv_heads = 0; // = heads
        const int64_t nq = gqa.batch * gqa.heads * gqa.seq_q * gqa.head_dim;
        const int64_t per_head = gqa.seq_kv * gqa.head_dim;
        Tensor q = random_tensor(OPB_DTYPE_F32, nq, rng, -2.0f, 2.0f);
        Tensor k = random_tensor(OPB_DTYPE_F32, gqa.batch * gqa.kv_heads * per_head, rng, -2.0f, 2.0f);
        Tensor v = random_tensor(OPB_DTYPE_F32, gqa.batch * gqa.kv_heads * per_head, rng);
        Tensor k_rep(OPB_DTYPE_F32, gqa.batch * gqa.heads * per_head), v_rep = k_rep;
        for (int64_t b = 0; b < gqa.batch; ++b)
            for (int64_t h = 0; h < gqa.heads; ++h) {
                const int64_t src = (b * gqa.kv_heads + h / 3) * per_head, dst = (b * gqa.heads + h) * per_head;
                std::memcpy(static_cast<float *>(k_rep.data()) + dst, static_cast<float *>(k.data()) + src,
                            size_t(per_head) * 4);
                std::memcpy(static_cast<float *>(v_rep.data()) + dst, static_cast<float *>(v.data()) + src,
                            size_t(per_head) * 4);
            }
        for (int variant : {OPB_ATTENTION_COMPOSED, OPB_ATTENTION_FUSED}) {
            GuardedWorkspace w(workspace_bytes(attention_desc(gqa, variant)));
            Tensor o_gqa(OPB_DTYPE_F32, nq), o_mha(OPB_DTYPE_F32, nq);
            auto run1 = [&](const opb_attention_params &p, const Tensor &kk, const Tensor &vv, Tensor &o) {
                if (variant == OPB_ATTENTION_FUSED)
                    attention_fused(p, OPB_DTYPE_F32, q.data(), kk.data(), vv.data(), o.data(), w.data());
                else
                    attention_composed(p, OPB_DTYPE_F32, q.data(), kk.data(), vv.data(), o.data(), w.data());
            };
            run1(gqa, k, v, o_gqa);
            run1(mha, k_rep, v_rep, o_mha);
            EXPECT_TRUE(w.guard_intact());
            EXPECT_EQ(o_gqa.bytes, o_mha.bytes) << "variant " << variant << " causal " << causal;
        }
    }
}

// ---- rope -----------------------------------------------------------------------

// One head of head_dim 4, positions 0 and 1, theta 10000: the pair
// frequencies are 1 and 10000^(-2/4) = 0.01, so position 1 rotates the first
// pair by 1 rad and the second by 0.01 rad. Values worked out by hand.
constexpr double kCos1 = 0.5403023058681398, kSin1 = 0.8414709848078965;
constexpr double kCos01 = 0.9999500004166653, kSin01 = 0.009999833334166664;

std::vector<double> run_rope_f32(int variant, const opb_rope_params &p, const std::vector<float> &q,
                                 std::vector<float> k, std::vector<float> *k_out) {
    std::vector<float> qr(q.size()), kr(k.size());
    rope(p, OPB_DTYPE_F32, variant, q.data(), k.data(), qr.data(), kr.data());
    if (k_out) *k_out = kr;
    return {qr.begin(), qr.end()};
}

void expect_near_all(const std::vector<double> &got, const std::vector<double> &want, const std::string &what) {
    ASSERT_EQ(got.size(), want.size()) << what;
    for (size_t i = 0; i < want.size(); ++i)
        EXPECT_NEAR(got[i], want[i], 1e-6 * (1.0 + std::abs(want[i]))) << what << " element " << i;
}

TEST(NaiveRope, HalfSplitPairsElementIWithIPlusHalfByHand) {
    const opb_rope_params p{1, 1, 0, 2, 4, 0, 10000.0f, 0};
    const std::vector<float> q{1, 2, 3, 4, 1, 2, 3, 4}; // the same row at positions 0 and 1
    const auto got = run_rope_f32(OPB_ROPE_HALF_SPLIT, p, q, q, nullptr);
    expect_near_all(got,
                    {1, 2, 3, 4, // position 0: no rotation
                     1 * kCos1 - 3 * kSin1, 2 * kCos01 - 4 * kSin01, 3 * kCos1 + 1 * kSin1, 4 * kCos01 + 2 * kSin01},
                    "half_split");
}

TEST(NaiveRope, InterleavedPairsAdjacentElementsByHand) {
    const opb_rope_params p{1, 1, 0, 2, 4, 0, 10000.0f, 0};
    const std::vector<float> q{1, 2, 3, 4, 1, 2, 3, 4};
    const auto got = run_rope_f32(OPB_ROPE_INTERLEAVED, p, q, q, nullptr);
    expect_near_all(got,
                    {1, 2, 3, 4, //
                     1 * kCos1 - 2 * kSin1, 2 * kCos1 + 1 * kSin1, 3 * kCos01 - 4 * kSin01, 4 * kCos01 + 3 * kSin01},
                    "interleaved");
}

TEST(NaiveRope, PositionOffsetsTheRows) {
    // One row at position 1 (a decode step after one cached token) is the
    // second row of the hand-worked example above.
    const opb_rope_params p{1, 1, 0, 1, 4, 0, 10000.0f, 1};
    const auto got = run_rope_f32(OPB_ROPE_HALF_SPLIT, p, {1, 2, 3, 4}, {1, 2, 3, 4}, nullptr);
    expect_near_all(got,
                    {1 * kCos1 - 3 * kSin1, 2 * kCos01 - 4 * kSin01, 3 * kCos1 + 1 * kSin1, 4 * kCos01 + 2 * kSin01},
                    "position 1");
}

TEST(NaiveRope, PartialRotaryDimCopiesTheRestAndKUsesItsOwnHeads) {
    // head_dim 6, rotary_dim 4 (frequencies as above), theta 10000; Q has 2
    // heads, K one (kv_heads 1); seq 2. Elements 4 and 5 are copied.
    const opb_rope_params p{1, 2, 1, 2, 6, 4, 10000.0f, 0};
    std::vector<float> q(2 * 2 * 6), k{1, 2, 3, 4, 5, 6, 1, 2, 3, 4, 5, 6};
    for (size_t i = 0; i < q.size(); ++i) q[i] = float(i % 6 + 1);
    std::vector<float> kr;
    const auto qr = run_rope_f32(OPB_ROPE_HALF_SPLIT, p, q, k, &kr);
    const std::vector<double> pos1{
        1 * kCos1 - 3 * kSin1, 2 * kCos01 - 4 * kSin01, 3 * kCos1 + 1 * kSin1, 4 * kCos01 + 2 * kSin01, 5, 6};
    std::vector<double> want_k{1, 2, 3, 4, 5, 6};
    want_k.insert(want_k.end(), pos1.begin(), pos1.end());
    expect_near_all({kr.begin(), kr.end()}, want_k, "K");
    std::vector<double> want_q = want_k;
    want_q.insert(want_q.end(), want_k.begin(), want_k.end()); // head 1: the same rows
    expect_near_all(qr, want_q, "Q");
}

TEST(NaiveRope, Bf16IsRoundedOnceAndUnknownVariantIsRefused) {
    const opb_rope_params p{1, 1, 0, 2, 4, 0, 10000.0f, 0};
    std::vector<uint16_t> q(8), qr(8), kr(8);
    const float vals[] = {1, 2, 3, 4, 1, 2, 3, 4};
    for (int i = 0; i < 8; ++i) q[size_t(i)] = f32_to_bf16(vals[i]);
    rope(p, OPB_DTYPE_BF16, OPB_ROPE_HALF_SPLIT, q.data(), q.data(), qr.data(), kr.data());
    EXPECT_EQ(qr[4], f32_to_bf16(float(1 * kCos1 - 3 * kSin1)));
    EXPECT_EQ(qr[7], f32_to_bf16(float(4 * kCos01 + 2 * kSin01)));
    EXPECT_THROW(rope(p, OPB_DTYPE_F32, 2, q.data(), q.data(), qr.data(), kr.data()), std::invalid_argument);
}

TEST(NaiveWorkspace, ElementwiseNormAndSoftmaxNeedNone) {
    for (int op : {OPB_OP_SOFTMAX, OPB_OP_LAYERNORM, OPB_OP_RMSNORM, OPB_OP_GELU, OPB_OP_SILU, OPB_OP_ADD}) {
        opb_op_desc d = make_desc(op, OPB_DTYPE_F32);
        d.p.eltwise = {64, 64};
        EXPECT_EQ(workspace_bytes(d), 0u) << op_name(op);
    }
}

} // namespace
} // namespace opbench::naive
