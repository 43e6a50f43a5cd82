// Unit tests of the CUDA backend's host-side planning (backends/cuda/planning.*):
// no device needed. The cuBLASLt mapping is checked by executing each plan
// with a small column-major interpreter that follows cuBLASLt's documented
// semantics (D = op(A) . op(B) + bias, column-major, leading dimensions,
// strided batches) and comparing with a row-major float64 computation.
#include "planning.hpp"

#include "opbench/ops.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <map>
#include <set>
#include <random>
#include <string>
#include <vector>

using namespace opbench;
using namespace opbench::cuda;

namespace {

// Element (r, c) of column-major matrix `m` of batch `b`.
double at(const std::vector<double> &buf, const MatrixLayout &l, int64_t b, int64_t r, int64_t c) {
    return buf[b * l.batch_stride + c * l.ld + r];
}

// Executes a GemmPlan as cuBLASLt would, on host buffers.
std::vector<double> run_plan(const GemmPlan &g, const std::vector<double> &first, const std::vector<double> &second,
                             const std::vector<double> &bias) {
    // op(first) is rows_d x inner; op(second) is inner x cols_d.
    const int64_t rows = static_cast<int64_t>(g.d.rows), cols = static_cast<int64_t>(g.d.cols);
    const int64_t inner = static_cast<int64_t>(g.trans_first ? g.first.rows : g.first.cols);
    const int64_t inner2 = static_cast<int64_t>(g.trans_second ? g.second.cols : g.second.rows);
    EXPECT_EQ(inner, inner2) << "inner dimensions of the two operands differ";
    EXPECT_EQ(g.trans_first ? g.first.cols : g.first.rows, g.d.rows);
    EXPECT_EQ(g.trans_second ? g.second.rows : g.second.cols, g.d.cols);
    EXPECT_GE(g.first.ld, static_cast<int64_t>(g.first.rows));
    EXPECT_GE(g.second.ld, static_cast<int64_t>(g.second.rows));
    EXPECT_GE(g.d.ld, static_cast<int64_t>(g.d.rows));
    std::vector<double> d(static_cast<size_t>(g.batch) * g.d.batch_stride, 0.0);
    for (int64_t b = 0; b < g.batch; ++b)
        for (int64_t r = 0; r < rows; ++r)
            for (int64_t c = 0; c < cols; ++c) {
                double s = 0;
                for (int64_t k = 0; k < inner; ++k) {
                    const double x = g.trans_first ? at(first, g.first, b, k, r) : at(first, g.first, b, r, k);
                    const double y = g.trans_second ? at(second, g.second, b, c, k) : at(second, g.second, b, k, c);
                    s += x * y;
                }
                if (g.bias) s += bias[r];
                d[b * g.d.batch_stride + c * g.d.ld + r] = s;
            }
    return d;
}

std::vector<double> random_vec(size_t n, unsigned seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    std::vector<double> v(n);
    for (auto &x : v) x = u(rng);
    return v;
}

struct MatmulCase {
    int64_t batch, m, n, k;
    bool ta, tb, bias;
};

void PrintTo(const MatmulCase &c, std::ostream *os) {
    *os << "batch " << c.batch << " M " << c.m << " N " << c.n << " K " << c.k << " trans_a " << c.ta << " trans_b "
        << c.tb << " bias " << c.bias;
}

class GemmMapping : public ::testing::TestWithParam<MatmulCase> {};

TEST_P(GemmMapping, RowMajorMatmulEqualsColumnMajorPlan) {
    const MatmulCase mc = GetParam();
    auto d = make_desc(OPB_OP_MATMUL, OPB_DTYPE_F32);
    d.p.matmul = {mc.batch, mc.m, mc.n, mc.k, mc.ta, mc.tb, mc.bias, 0, 0.0f, 0, 0};
    const GemmPlan g = plan_matmul(d);
    // Row-major opbench buffers, stored as op_tensors documents.
    auto A = random_vec(mc.batch * mc.m * mc.k, 1), B = random_vec(mc.batch * mc.k * mc.n, 2),
         bias = random_vec(mc.n, 3);
    auto a = [&](int64_t b, int64_t i, int64_t kk) {
        return mc.ta ? A[(b * mc.k + kk) * mc.m + i] : A[(b * mc.m + i) * mc.k + kk];
    };
    auto bm = [&](int64_t b, int64_t kk, int64_t j) {
        return mc.tb ? B[(b * mc.n + j) * mc.k + kk] : B[(b * mc.k + kk) * mc.n + j];
    };
    // The plan's first operand is the B buffer and its second the A buffer.
    const auto D = run_plan(g, B, A, bias);
    ASSERT_EQ(D.size(), static_cast<size_t>(mc.batch * mc.m * mc.n));
    for (int64_t b = 0; b < mc.batch; ++b)
        for (int64_t i = 0; i < mc.m; ++i)
            for (int64_t j = 0; j < mc.n; ++j) {
                double ref = mc.bias ? bias[j] : 0.0;
                for (int64_t kk = 0; kk < mc.k; ++kk) ref += a(b, i, kk) * bm(b, kk, j);
                // D is column-major N x M, i.e. row-major [M, N]: the C buffer.
                ASSERT_NEAR(D[(b * mc.m + i) * mc.n + j], ref, 1e-12) << "b=" << b << " i=" << i << " j=" << j;
            }
}

INSTANTIATE_TEST_SUITE_P(
    TransposesBatchesBias, GemmMapping,
    ::testing::Values(MatmulCase{1, 3, 5, 4, false, false, false}, MatmulCase{2, 3, 5, 4, true, false, false},
                      MatmulCase{2, 3, 5, 4, false, true, false}, MatmulCase{3, 4, 2, 7, true, true, false},
                      MatmulCase{2, 5, 3, 1, false, false, true}, MatmulCase{2, 1, 6, 3, true, true, true}));

TEST(GemmPlan, ComputeAndElementTypesFollowDtypeAndVariant) {
    auto d = make_desc(OPB_OP_MATMUL, OPB_DTYPE_F32);
    d.p.matmul = {1, 8, 8, 8, 0, 0, 0, 0, 0.0f, 0, 0};
    EXPECT_EQ(plan_matmul(d).compute, ComputeType::F32);
    EXPECT_EQ(plan_matmul(d).ab_type, ElemType::F32);
    d.variant = OPB_MATMUL_TF32;
    EXPECT_EQ(plan_matmul(d).compute, ComputeType::F32_FAST_TF32);
    d = make_desc(OPB_OP_MATMUL, OPB_DTYPE_BF16);
    d.p.matmul = {1, 8, 8, 8, 0, 0, 1, 0, 0.0f, 0, 0};
    const GemmPlan g = plan_matmul(d);
    EXPECT_EQ(g.compute, ComputeType::F32); // bf16 inputs accumulate in f32
    EXPECT_EQ(g.ab_type, ElemType::BF16);
    EXPECT_EQ(g.d_type, ElemType::BF16);
    EXPECT_TRUE(g.bias);
    d.dtype = OPB_DTYPE_F16;
    EXPECT_EQ(plan_matmul(d).ab_type, ElemType::F16);
}

// The composed attention pipeline, executed with the plans on the host:
// S = QK^T through the scores plan, softmax with the plan's scale and causal
// flag, O = PV through the output plan; compared with direct attention.
TEST(AttentionPlan, ComposedGemmsReproduceAttention) {
    for (int causal = 0; causal < 2; ++causal) {
        auto d = make_desc(OPB_OP_ATTENTION, OPB_DTYPE_F32);
        d.p.attention = {2, 2, 3, 5, 4, 0.0f, causal, 0};
        const AttentionPlan a = plan_attention(d);
        const auto &p = d.p.attention;
        EXPECT_EQ(a.bh, 4);
        EXPECT_FLOAT_EQ(a.scale, 0.5f); // 1/sqrt(4)
        EXPECT_EQ(a.scores.d_type, ElemType::F32);
        auto Q = random_vec(a.bh * p.seq_q * p.head_dim, 7);
        auto K = random_vec(a.bh * p.seq_kv * p.head_dim, 8);
        auto V = random_vec(a.bh * p.seq_kv * p.head_dim, 9);
        auto S = run_plan(a.scores, K, Q, {}); // first = K buffer, second = Q buffer
        for (int64_t row = 0; row < a.bh * a.seq_q; ++row) {
            const int64_t r = row % a.seq_q;
            const int64_t vis = a.causal ? causal_visible(r, a.seq_q, a.seq_kv) : a.seq_kv;
            double mx = -1e300, sum = 0;
            for (int64_t c = 0; c < vis; ++c) mx = std::max(mx, a.scale * S[row * a.seq_kv + c]);
            for (int64_t c = 0; c < vis; ++c) sum += std::exp(a.scale * S[row * a.seq_kv + c] - mx);
            for (int64_t c = 0; c < a.seq_kv; ++c)
                S[row * a.seq_kv + c] = c < vis ? std::exp(a.scale * S[row * a.seq_kv + c] - mx) / sum : 0.0;
        }
        auto O = run_plan(a.output, V, S, {});
        for (int64_t bh = 0; bh < a.bh; ++bh)
            for (int64_t i = 0; i < p.seq_q; ++i) {
                const int64_t vis = causal ? causal_visible(i, p.seq_q, p.seq_kv) : p.seq_kv;
                std::vector<double> w(vis);
                double mx = -1e300, sum = 0;
                for (int64_t j = 0; j < vis; ++j) {
                    double s = 0;
                    for (int64_t e = 0; e < p.head_dim; ++e)
                        s += Q[(bh * p.seq_q + i) * p.head_dim + e] * K[(bh * p.seq_kv + j) * p.head_dim + e];
                    w[j] = s * 0.5;
                    mx = std::max(mx, w[j]);
                }
                for (auto &x : w) sum += (x = std::exp(x - mx));
                for (int64_t e = 0; e < p.head_dim; ++e) {
                    double ref = 0;
                    for (int64_t j = 0; j < vis; ++j) ref += w[j] / sum * V[(bh * p.seq_kv + j) * p.head_dim + e];
                    ASSERT_NEAR(O[(bh * p.seq_q + i) * p.head_dim + e], ref, 1e-12)
                        << "causal=" << causal << " bh=" << bh << " i=" << i << " e=" << e;
                }
            }
    }
}

TEST(AttentionPlan, ScratchBytesAndInPlaceSoftmaxPerDtype) {
    auto d = make_desc(OPB_OP_ATTENTION, OPB_DTYPE_F32);
    d.p.attention = {2, 3, 5, 7, 8, 0.0f, 0, 0};
    AttentionPlan a = plan_attention(d);
    EXPECT_TRUE(a.probs_in_place);
    EXPECT_EQ(a.scores_bytes, 2u * 3 * 5 * 7 * 4);
    EXPECT_EQ(a.probs_bytes, 0u);
    d.dtype = OPB_DTYPE_BF16;
    a = plan_attention(d);
    EXPECT_FALSE(a.probs_in_place);
    EXPECT_EQ(a.scores_bytes, 2u * 3 * 5 * 7 * 4); // scores stay f32
    EXPECT_EQ(a.probs_bytes, 2u * 3 * 5 * 7 * 2);
    EXPECT_EQ(a.output.ab_type, ElemType::BF16);
    EXPECT_EQ(a.scores.ab_type, ElemType::BF16);
    EXPECT_EQ(a.scores.d_type, ElemType::F32);
}

TEST(ChooseImpl, EachOpGoesToItsLibraryAndUnsupportedCasesSayWhy) {
    for (int dt = 0; dt < 3; ++dt) {
        EXPECT_EQ(choose_impl(make_desc(OPB_OP_MATMUL, dt)).impl, Impl::CublasLt);
        for (int op : {OPB_OP_SOFTMAX, OPB_OP_LAYERNORM, OPB_OP_RMSNORM, OPB_OP_GELU, OPB_OP_SILU, OPB_OP_ADD})
            EXPECT_EQ(choose_impl(make_desc(op, dt)).impl, Impl::OwnKernel) << op_name(op);
        EXPECT_EQ(choose_impl(make_desc(OPB_OP_ATTENTION, dt, OPB_ATTENTION_COMPOSED)).impl, Impl::ComposedGemmSoftmax);
        auto fd = make_desc(OPB_OP_ATTENTION, dt, OPB_ATTENTION_FUSED);
        fd.p.attention = {1, 2, 64, 64, 64, 0.0f, 1, 0};
        const ImplChoice fused = choose_impl(fd);
        if (dt == OPB_DTYPE_F32) {
            EXPECT_EQ(fused.impl, Impl::Unsupported);
            EXPECT_NE(fused.reason.find("fused"), std::string::npos) << fused.reason;
            EXPECT_NE(fused.reason.find("f32"), std::string::npos) << fused.reason;
        } else {
            EXPECT_EQ(fused.impl, Impl::CudnnSdpa) << fused.reason;
            EXPECT_TRUE(fused.reason.empty());
        }
    }
    EXPECT_EQ(choose_impl(make_desc(OPB_OP_MATMUL, OPB_DTYPE_F32, OPB_MATMUL_TF32)).impl, Impl::CublasLt);
    const ImplChoice tf32_bf16 = choose_impl(make_desc(OPB_OP_MATMUL, OPB_DTYPE_BF16, OPB_MATMUL_TF32));
    EXPECT_EQ(tf32_bf16.impl, Impl::Unsupported);
    EXPECT_NE(tf32_bf16.reason.find("bf16"), std::string::npos) << tf32_bf16.reason;
    for (const auto &c : {choose_impl(make_desc(OPB_OP_MATMUL, 0)), choose_impl(make_desc(OPB_OP_ADD, 1))})
        EXPECT_TRUE(c.reason.empty());
    // rope and quantize run on the backend's own kernels (rope_quant.cu);
    // grouped-query attention runs composed and, bf16/f16, fused.
    for (int dt = 0; dt < 3; ++dt) {
        for (int variant : {OPB_ROPE_HALF_SPLIT, OPB_ROPE_INTERLEAVED})
            EXPECT_EQ(choose_impl(make_desc(OPB_OP_ROPE, dt, variant)).impl, Impl::OwnKernel);
        EXPECT_EQ(choose_impl(make_desc(OPB_OP_QUANTIZE, dt)).impl, Impl::OwnKernel);
        auto gqa = make_desc(OPB_OP_ATTENTION, dt, OPB_ATTENTION_COMPOSED);
        gqa.p.attention = {1, 8, 64, 64, 64, 0.0f, 1, 2};
        EXPECT_EQ(choose_impl(gqa).impl, Impl::ComposedGemmSoftmax);
        gqa.variant = OPB_ATTENTION_FUSED;
        EXPECT_EQ(choose_impl(gqa).impl, dt == OPB_DTYPE_F32 ? Impl::Unsupported : Impl::CudnnSdpa);
    }
    // int8 weights: cuBLASLt's s8 GEMM between a shift and a dequantising pass.
    EXPECT_EQ(choose_impl(make_desc(OPB_OP_MATMUL, OPB_DTYPE_S8)).impl, Impl::CublasLtInt8);
}

// The int8 linear layer as the backend runs it: u8 activations shifted to s8,
// the s8 GEMM through the Int8Plan's layouts (the interpreter above), the
// weights' column sums, then int8_dequantize; against the zero-point GEMM of
// plugin.h in float64, for u8 with several zero points and s8, both weight layouts.
TEST(Int8Plan, ShiftGemmColumnSumsAndDequantiseEqualFloat64Int8Linear) {
    std::mt19937 rng(17);
    std::uniform_int_distribution<int> u8(0, 255), s8(-128, 127);
    for (int act : {OPB_DTYPE_U8, OPB_DTYPE_S8})
        for (int32_t zp : act == OPB_DTYPE_U8 ? std::vector<int32_t>{0, 3, 128, 255} : std::vector<int32_t>{0})
            for (int tb = 0; tb < 2; ++tb) {
                const int64_t B = 2, M = 3, N = 5, K = 8;
                auto d = make_desc(OPB_OP_MATMUL, OPB_DTYPE_S8);
                d.p.matmul = {B, M, N, K, 0, tb, 1, act, 0.05f, zp, OPB_DTYPE_F32};
                const Int8Plan q = plan_int8_matmul(d);
                EXPECT_EQ(q.shift_activations, act == OPB_DTYPE_U8);
                EXPECT_EQ(q.shift, act == OPB_DTYPE_U8 ? 128 - zp : 0);
                EXPECT_EQ(q.shifted_bytes, act == OPB_DTYPE_U8 ? uint64_t(B * M * K) : 0u);
                EXPECT_EQ(q.column_sums_bytes, q.shift != 0 ? uint64_t(B * N * 4) : 0u);
                EXPECT_EQ(q.acc_bytes, uint64_t(B * M * N * 4));
                std::vector<int> a(B * M * K), w(B * K * N);
                for (auto &x : a) x = act == OPB_DTYPE_U8 ? u8(rng) : s8(rng);
                for (auto &x : w) x = s8(rng);
                std::vector<float> w_scale(N), bias(N);
                for (int64_t j = 0; j < N; ++j) w_scale[j] = 0.01f * float(j + 1), bias[j] = 0.5f - 0.25f * float(j);
                std::vector<double> shifted(a.size()), weights(w.begin(), w.end());
                for (size_t i = 0; i < a.size(); ++i)
                    shifted[i] = act == OPB_DTYPE_U8 ? u8_as_shifted_s8(static_cast<uint8_t>(a[i])) : a[i];
                const auto acc = run_plan(q.gemm, weights, shifted, {}); // first = weights, second = activations
                for (int64_t b = 0; b < B; ++b)
                    for (int64_t j = 0; j < N; ++j) {
                        int32_t colsum = 0; // as launch_weight_column_sums reads the stored weights
                        for (int64_t k = 0; k < K; ++k) colsum += w[b * K * N + (tb ? j * K + k : k * N + j)];
                        for (int64_t i = 0; i < M; ++i) {
                            double ref = 0;
                            for (int64_t k = 0; k < K; ++k)
                                ref +=
                                    double(a[(b * M + i) * K + k] - zp) * w[b * K * N + (tb ? j * K + k : k * N + j)];
                            ref = 0.05 * double(w_scale[j]) * ref + double(bias[j]);
                            const double got = int8_dequantize(static_cast<int32_t>(acc[(b * M + i) * N + j]), colsum,
                                                               q.shift, 0.05f, w_scale[j], bias[j]);
                            ASSERT_NEAR(got, ref, std::abs(ref) * 1e-6 + 1e-6)
                                << dtype_name(act) << " zero point " << zp << " trans_b " << tb << " b " << b << " i "
                                << i << " j " << j;
                        }
                    }
            }
    auto big = make_desc(OPB_OP_MATMUL, OPB_DTYPE_S8);
    big.p.matmul = {1, 1, 1, kMaxInt8K + 1, 0, 1, 0, OPB_DTYPE_U8, 1.0f, 0, OPB_DTYPE_F32};
    EXPECT_NE(check_device_limits(big).find("131072"), std::string::npos) << check_device_limits(big);
    big.p.matmul.k = kMaxInt8K;
    EXPECT_EQ(check_device_limits(big), "");
}

TEST(DeviceLimits, BatchCountsAndGridSizesBeyondInt32AreRefusedWithTheValue) {
    auto d = make_desc(OPB_OP_MATMUL, OPB_DTYPE_F32);
    d.p.matmul = {int64_t{1} << 31, 1, 1, 1, 0, 0, 0, 0, 0.0f, 0, 0};
    const std::string e = check_device_limits(d);
    EXPECT_NE(e.find("2147483648"), std::string::npos) << e;
    d.p.matmul.batch = std::numeric_limits<int32_t>::max();
    EXPECT_EQ(check_device_limits(d), "");
    auto a = make_desc(OPB_OP_ATTENTION, OPB_DTYPE_BF16);
    a.p.attention = {1 << 16, 1 << 16, 1, 1, 64, 0.0f, 0, 0};
    EXPECT_NE(check_device_limits(a).find("batch*heads"), std::string::npos);
    auto s = make_desc(OPB_OP_SOFTMAX, OPB_DTYPE_F32);
    s.p.softmax = {1 << 20, 1 << 12, 8, 1.0f, 0};
    EXPECT_NE(check_device_limits(s).find("softmax"), std::string::npos);
    s.p.softmax = {8, 128, 128, 1.0f, 1};
    EXPECT_EQ(check_device_limits(s), "");
}

TEST(TensorCount, MatchesTheOpsTensorList) {
    auto d = make_desc(OPB_OP_MATMUL, OPB_DTYPE_F32);
    d.p.matmul = {1, 2, 2, 2, 0, 0, 0, 0, 0.0f, 0, 0};
    EXPECT_EQ(expected_tensor_count(d), 3);
    d.p.matmul.has_bias = 1;
    EXPECT_EQ(expected_tensor_count(d), 4);
    EXPECT_EQ(expected_tensor_count(make_desc(OPB_OP_LAYERNORM, 0)), 4);
    EXPECT_EQ(expected_tensor_count(make_desc(OPB_OP_RMSNORM, 0)), 3);
    EXPECT_EQ(expected_tensor_count(make_desc(OPB_OP_ADD, 0)), 3);
    EXPECT_EQ(expected_tensor_count(make_desc(OPB_OP_ATTENTION, 0)), 4);
}

TEST(Workspace, CublasLtLimitFollowsArchitecture) {
    EXPECT_EQ(cublaslt_workspace_limit(8), uint64_t{4} << 20);
    EXPECT_EQ(cublaslt_workspace_limit(7), uint64_t{4} << 20);
    EXPECT_EQ(cublaslt_workspace_limit(9), uint64_t{32} << 20);
    EXPECT_EQ(cublaslt_workspace_limit(10), uint64_t{32} << 20);
}

TEST(LaunchGeometry, RowLaunchIsOneBlockPerRowWarpMultipleAtMost512) {
    for (int64_t cols : {1, 31, 32, 33, 100, 511, 512, 513, 4096, 100000}) {
        const Launch l = row_launch(7, cols);
        EXPECT_EQ(l.grid, 7u);
        EXPECT_EQ(l.block % 32, 0u) << cols;
        EXPECT_GE(l.block, 32u);
        EXPECT_LE(l.block, 512u);
        if (cols <= 512) {
            EXPECT_GE(l.block, static_cast<uint32_t>(cols)) << cols;      // one pass
            EXPECT_LT(l.block, static_cast<uint32_t>(cols) + 32) << cols; // no idle warp
        }
    }
}

TEST(LaunchGeometry, EltwiseLaunchCoversSmallInputsAndCapsTheGrid) {
    EXPECT_EQ(eltwise_launch(1).grid, 1u);
    EXPECT_EQ(eltwise_launch(256).grid, 1u);
    EXPECT_EQ(eltwise_launch(257).grid, 2u);
    EXPECT_EQ(eltwise_launch(257).block, 256u);
    EXPECT_EQ(eltwise_launch(int64_t{1} << 40).grid, kMaxEltwiseBlocks); // grid-stride beyond
}

TEST(UnavailableReason, NamesMissingDriverOldDriverAndMissingDevice) {
    // cudaErrorInsufficientDriver = 35, cudaErrorNoDevice = 100.
    std::string r =
        unavailable_reason(0, 13000, 35, "cudaErrorInsufficientDriver", "CUDA driver version is insufficient", 0);
    EXPECT_EQ(r.rfind("no CUDA driver", 0), 0u) << r;
    EXPECT_NE(r.find("cudaErrorInsufficientDriver"), std::string::npos) << r;
    r = unavailable_reason(12040, 13000, 35, "cudaErrorInsufficientDriver", "insufficient", 0);
    EXPECT_EQ(r.rfind("driver older than runtime", 0), 0u) << r;
    EXPECT_NE(r.find("12.4"), std::string::npos) << r;
    EXPECT_NE(r.find("13.0"), std::string::npos) << r;
    r = unavailable_reason(13000, 13000, 100, "cudaErrorNoDevice", "no CUDA-capable device", 0);
    EXPECT_EQ(r.rfind("no CUDA device", 0), 0u) << r;
    r = unavailable_reason(13010, 13000, 0, "cudaSuccess", "no error", 0);
    EXPECT_EQ(r.rfind("no CUDA device", 0), 0u) << r;
    r = unavailable_reason(13000, 13000, 999, "cudaErrorUnknown", "unknown error", 0);
    EXPECT_NE(r.find("cudaErrorUnknown"), std::string::npos) << r;
    EXPECT_EQ(unavailable_reason(13010, 13000, 0, "cudaSuccess", "no error", 2), "");
    // Minor-version compatibility: an older driver the runtime accepts is usable.
    EXPECT_EQ(unavailable_reason(13000, 13010, 0, "cudaSuccess", "no error", 1), "");
}

TEST(Versions, CudaAndLibraryEncodingsAreDecoded) {
    EXPECT_EQ(cuda_version_string(13000), "13.0");
    EXPECT_EQ(cuda_version_string(12040), "12.4");
    EXPECT_EQ(library_version_string(130100), "13.1.0");
    EXPECT_EQ(library_version_string(91900), "9.19.0");
    EXPECT_EQ(library_version_string(90102), "9.1.2");
}

TEST(Versions, UuidPrintedLikeNvidiaSmi) {
    const unsigned char b[16] = {0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef,
                                 0x10, 0x32, 0x54, 0x76, 0x98, 0xba, 0xdc, 0xfe};
    EXPECT_EQ(uuid_string(b), "GPU-01234567-89ab-cdef-1032-547698badcfe");
}

} // namespace

// ---- attention fused: the cuDNN SDPA graph -------------------------------------
//
// The graph is executed on the host by an interpreter that follows the cuDNN
// backend semantics of each operation (batched matmul over the first two
// dimensions, pointwise with broadcasting of extent-1 dimensions, GEN_INDEX
// along an axis, BINARY_SELECT y = t ? x : b, reductions over the dimensions
// where the output has extent 1), reading and writing the non-virtual tensors
// through their strides from row-major opbench buffers, and compared with a
// direct float64 attention (bottom-right causal, plugin.h).

namespace {

struct Dense {
    int64_t dims[4] = {1, 1, 1, 1};
    std::vector<double> v;
    double at(const int64_t c[4]) const { // broadcasting read
        int64_t i = 0;
        for (int k = 0; k < 4; ++k) i = i * dims[k] + (dims[k] == 1 ? 0 : c[k]);
        return v[i];
    }
};

template <class F>
void for_each_coord(const int64_t dims[4], F f) {
    int64_t c[4];
    for (c[0] = 0; c[0] < dims[0]; ++c[0])
        for (c[1] = 0; c[1] < dims[1]; ++c[1])
            for (c[2] = 0; c[2] < dims[2]; ++c[2])
                for (c[3] = 0; c[3] < dims[3]; ++c[3]) f(c);
}

int64_t strided(const SdpaTensor &t, const int64_t c[4]) {
    int64_t o = 0;
    for (int k = 0; k < 4; ++k) o += c[k] * t.strides[k];
    return o;
}

// Runs the graph; `buffers` holds the row-major device buffers by uid (Q, K, V
// in; O and stats are created here).
void run_sdpa_graph(const SdpaGraph &g, std::map<int64_t, std::vector<double>> &buffers) {
    std::map<int64_t, Dense> val;
    std::set<int64_t> produced;
    auto input = [&](int64_t uid) -> const Dense & {
        const SdpaTensor *t = g.find(uid);
        EXPECT_NE(t, nullptr) << "uid " << uid << " is not a tensor of the graph";
        if (val.count(uid)) return val[uid];
        Dense d;
        std::copy(t->dims, t->dims + 4, d.dims);
        EXPECT_FALSE(t->is_virtual) << t->name << " is read before any operation produced it";
        if (t->by_value) {
            EXPECT_EQ(d.dims[0] * d.dims[1] * d.dims[2] * d.dims[3], 1) << t->name;
            double x = 0;
            switch (uid) {
            case kSdpaScale: x = g.scale; break;
            case kSdpaMaskFill: x = g.mask_fill; break;
            case kSdpaSeqKv: x = g.seq_kv; break;
            case kSdpaSeqQ: x = g.seq_q; break;
            default: ADD_FAILURE() << "unknown by-value tensor " << t->name;
            }
            d.v = {x};
        } else {
            const auto &buf = buffers.at(uid);
            for_each_coord(d.dims, [&](const int64_t c[4]) {
                const int64_t o = strided(*t, c);
                EXPECT_LT(o, static_cast<int64_t>(buf.size())) << t->name;
                d.v.push_back(buf[o]);
            });
        }
        return val[uid] = d;
    };
    for (const SdpaOp &op : g.ops) {
        const SdpaTensor *yt = g.find(op.y);
        ASSERT_NE(yt, nullptr) << op.name;
        EXPECT_TRUE(produced.insert(op.y).second) << yt->name << " produced twice";
        Dense y;
        std::copy(yt->dims, yt->dims + 4, y.dims);
        y.v.assign(y.dims[0] * y.dims[1] * y.dims[2] * y.dims[3], 0.0);
        const Dense &x = input(op.x);
        auto check_bcast = [&](const Dense &a, const char *what) {
            for (int k = 0; k < 4; ++k)
                EXPECT_TRUE(a.dims[k] == y.dims[k] || a.dims[k] == 1)
                    << op.name << ": " << what << " dim " << k << " = " << a.dims[k] << " vs output " << y.dims[k];
        };
        if (op.kind == SdpaOpKind::Matmul) {
            const Dense &b = input(op.b);
            EXPECT_EQ(x.dims[3], b.dims[2]) << op.name << ": inner dimensions";
            EXPECT_EQ(x.dims[2], y.dims[2]) << op.name;
            EXPECT_EQ(b.dims[3], y.dims[3]) << op.name;
            // Grouped-query: an operand with fewer heads serves y.dims[1] / its
            // heads consecutive output heads (cuDNN SDPA's GQA/MQA reading).
            auto head = [&](const Dense &a, int64_t h) {
                EXPECT_EQ(y.dims[1] % a.dims[1], 0) << op.name << ": heads " << y.dims[1] << " vs " << a.dims[1];
                return h / (y.dims[1] / a.dims[1]);
            };
            int64_t i = 0;
            for_each_coord(y.dims, [&](const int64_t c[4]) {
                double s = 0;
                for (int64_t k = 0; k < x.dims[3]; ++k) {
                    const int64_t ca[4] = {c[0], head(x, c[1]), c[2], k}, cb[4] = {c[0], head(b, c[1]), k, c[3]};
                    s += x.at(ca) * b.at(cb);
                }
                y.v[i++] = s;
            });
        } else if (op.kind == SdpaOpKind::Pointwise) {
            check_bcast(x, "x");
            const Dense *b = op.b ? &input(op.b) : nullptr;
            const Dense *t = op.t ? &input(op.t) : nullptr;
            if (b) check_bcast(*b, "b");
            if (t) check_bcast(*t, "t");
            int64_t i = 0;
            for_each_coord(y.dims, [&](const int64_t c[4]) {
                const double xv = x.at(c), bv = b ? b->at(c) : 0.0;
                double r = 0;
                switch (op.pw) {
                case SdpaPw::Mul: r = xv * bv; break;
                case SdpaPw::Add: r = xv + bv; break;
                case SdpaPw::Sub: r = xv - bv; break;
                case SdpaPw::Div: r = xv / bv; break;
                case SdpaPw::Exp: r = std::exp(xv); break;
                case SdpaPw::Log: r = std::log(xv); break;
                case SdpaPw::GenIndex: r = static_cast<double>(c[op.axis]); break;
                case SdpaPw::CmpGe: r = xv >= bv ? 1.0 : 0.0; break;
                case SdpaPw::BinarySelect: r = t->at(c) != 0.0 ? xv : bv; break;
                }
                y.v[i++] = r;
            });
        } else {
            for (int k = 0; k < 4; ++k)
                EXPECT_TRUE(y.dims[k] == x.dims[k] || y.dims[k] == 1) << op.name << " dim " << k;
            const bool mx = op.reduce == SdpaReduce::Max, amax = op.reduce == SdpaReduce::Amax;
            std::fill(y.v.begin(), y.v.end(), mx ? -INFINITY : 0.0);
            int64_t i = 0;
            for_each_coord(x.dims, [&](const int64_t c[4]) {
                int64_t o = 0;
                for (int k = 0; k < 4; ++k) o = o * y.dims[k] + (y.dims[k] == 1 ? 0 : c[k]);
                y.v[o] = mx ? std::max(y.v[o], x.v[i]) : amax ? std::max(y.v[o], std::fabs(x.v[i])) : y.v[o] + x.v[i];
                ++i;
            });
        }
        if (yt->type == SdpaType::Fp8E4M3) // the cast on write: nearest e4m3 (via f32), saturating
            for (double &v : y.v) v = e4m3_to_f32(f32_to_e4m3(static_cast<float>(v)));
        if (!yt->is_virtual) {
            auto &buf = buffers[op.y];
            int64_t span = 1;
            for (int k = 0; k < 4; ++k) span += (yt->dims[k] - 1) * yt->strides[k];
            buf.assign(span, NAN);
            int64_t i = 0;
            for_each_coord(y.dims, [&](const int64_t c[4]) { buf[strided(*yt, c)] = y.v[i++]; });
        }
        val[op.y] = std::move(y);
    }
}

struct SdpaCase {
    int64_t b, h, sq, skv, d;
    float scale;
    int causal;
    int64_t kvh = 0; // K/V heads (grouped-query); 0 = h
    int64_t kv_heads() const { return kvh > 0 ? kvh : h; }
};

// Direct float64 attention and softmax stats (max + log sum exp of the visible scores).
void reference_attention(const SdpaCase &c, const std::vector<double> &q, const std::vector<double> &k,
                         const std::vector<double> &v, std::vector<double> &o, std::vector<double> &stats,
                         double scale) {
    o.assign(c.b * c.h * c.sq * c.d, 0.0);
    stats.assign(c.b * c.h * c.sq, 0.0);
    for (int64_t bh = 0; bh < c.b * c.h; ++bh)
        for (int64_t i = 0; i < c.sq; ++i) {
            // query head h reads K/V head h / (heads / kv_heads) (plugin.h)
            const int64_t kv = (bh / c.h) * c.kv_heads() + (bh % c.h) / (c.h / c.kv_heads());
            const int64_t vis = c.causal ? causal_visible(i, c.sq, c.skv) : c.skv;
            std::vector<double> w(vis);
            double mx = -INFINITY, z = 0;
            for (int64_t j = 0; j < vis; ++j) {
                double s = 0;
                for (int64_t e = 0; e < c.d; ++e) s += q[(bh * c.sq + i) * c.d + e] * k[(kv * c.skv + j) * c.d + e];
                mx = std::max(mx, w[j] = s * scale);
            }
            for (auto &x : w) z += (x = std::exp(x - mx));
            stats[bh * c.sq + i] = mx + std::log(z);
            for (int64_t e = 0; e < c.d; ++e) {
                double acc = 0;
                for (int64_t j = 0; j < vis; ++j) acc += w[j] / z * v[(kv * c.skv + j) * c.d + e];
                o[(bh * c.sq + i) * c.d + e] = acc;
            }
        }
}

opb_op_desc sdpa_desc(const SdpaCase &c, int dtype = OPB_DTYPE_BF16) {
    auto d = make_desc(OPB_OP_ATTENTION, dtype, OPB_ATTENTION_FUSED);
    d.p.attention = {c.b, c.h, c.sq, c.skv, c.d, c.scale, c.causal, c.kvh};
    return d;
}

// Max abs difference between the graph's O/stats and the reference.
double sdpa_graph_error(const SdpaCase &c, const SdpaGraph &g) {
    const auto d = sdpa_desc(c);
    std::map<int64_t, std::vector<double>> buf;
    buf[kSdpaQ] = random_vec(c.b * c.h * c.sq * c.d, 11);
    buf[kSdpaK] = random_vec(c.b * c.kv_heads() * c.skv * c.d, 12);
    buf[kSdpaV] = random_vec(c.b * c.kv_heads() * c.skv * c.d, 13);
    std::vector<double> o, st;
    reference_attention(c, buf[kSdpaQ], buf[kSdpaK], buf[kSdpaV], o, st, effective_scale(d));
    run_sdpa_graph(g, buf);
    double err = 0;
    EXPECT_EQ(buf[kSdpaO].size(), o.size());
    EXPECT_EQ(buf[kSdpaStats].size(), st.size());
    if (buf[kSdpaO].size() != o.size() || buf[kSdpaStats].size() != st.size()) return INFINITY;
    for (size_t i = 0; i < o.size(); ++i) err = std::max(err, std::abs(buf[kSdpaO][i] - o[i]));
    for (size_t i = 0; i < st.size(); ++i) err = std::max(err, std::abs(buf[kSdpaStats][i] - st[i]));
    return err;
}

} // namespace

// Grouped-query composed attention: the plans batch over K/V heads with the
// group's query heads stacked as rows. Run on the host (causal included) and
// compared with attention where query head h reads K/V head h / group.
TEST(AttentionPlan, GroupedQueryGemmsReadEachQueryHeadsKvHead) {
    for (auto [heads, kvh] : {std::pair<int64_t, int64_t>{4, 2}, {6, 1}, {4, 4}})
        for (int causal = 0; causal < 2; ++causal) {
            const SdpaCase c{2, heads, 3, 5, 4, 0.0f, causal, kvh};
            auto d = make_desc(OPB_OP_ATTENTION, OPB_DTYPE_F32);
            d.p.attention = {c.b, c.h, c.sq, c.skv, c.d, 0.0f, causal, kvh};
            const AttentionPlan a = plan_attention(d);
            EXPECT_EQ(a.group, heads / kvh);
            EXPECT_EQ(a.scores.batch, 2 * kvh);
            EXPECT_EQ(a.bh, 2 * heads);
            auto Q = random_vec(c.b * c.h * c.sq * c.d, 31);
            auto K = random_vec(c.b * kvh * c.skv * c.d, 32);
            auto V = random_vec(c.b * kvh * c.skv * c.d, 33);
            auto S = run_plan(a.scores, K, Q, {});
            ASSERT_EQ(S.size(), static_cast<size_t>(a.bh * a.seq_q * a.seq_kv));
            for (int64_t row = 0; row < a.bh * a.seq_q; ++row) { // the softmax kernel's rows
                const int64_t vis = a.causal ? causal_visible(row % a.seq_q, a.seq_q, a.seq_kv) : a.seq_kv;
                double mx = -1e300, sum = 0;
                double *r = &S[row * a.seq_kv];
                for (int64_t j = 0; j < vis; ++j) mx = std::max(mx, a.scale * r[j]);
                for (int64_t j = 0; j < vis; ++j) sum += std::exp(a.scale * r[j] - mx);
                for (int64_t j = 0; j < a.seq_kv; ++j) r[j] = j < vis ? std::exp(a.scale * r[j] - mx) / sum : 0.0;
            }
            const auto O = run_plan(a.output, V, S, {});
            std::vector<double> ref, stats;
            reference_attention(c, Q, K, V, ref, stats, 0.5);
            ASSERT_EQ(O.size(), ref.size());
            for (size_t i = 0; i < O.size(); ++i)
                ASSERT_NEAR(O[i], ref[i], 1e-12)
                    << "heads " << heads << " kv_heads " << kvh << " causal " << causal << " element " << i;
        }
}

class SdpaGraphRun : public ::testing::TestWithParam<SdpaCase> {};

TEST_P(SdpaGraphRun, InterpretedGraphEqualsFloat64AttentionAndStats) {
    const SdpaCase c = GetParam();
    const SdpaGraph g = plan_sdpa(sdpa_desc(c));
    EXPECT_LT(sdpa_graph_error(c, g), 1e-12);
}

INSTANTIATE_TEST_SUITE_P(Shapes, SdpaGraphRun,
                         ::testing::Values(SdpaCase{2, 3, 5, 5, 8, 0.0f, 0}, SdpaCase{2, 3, 5, 5, 8, 0.0f, 1},
                                           SdpaCase{1, 2, 3, 7, 16, 0.0f, 1},     // bottom-right shift
                                           SdpaCase{2, 1, 4, 9, 8, 0.3f, 1},      // shift, explicit scale
                                           SdpaCase{1, 2, 7, 3, 8, 0.0f, 0},      // seq_q > seq_kv, no mask
                                           SdpaCase{1, 1, 1, 6, 8, 0.0f, 1},      // decode: one row sees every key
                                           SdpaCase{2, 4, 5, 5, 8, 0.0f, 1, 2},   // grouped-query, 2 per K/V head
                                           SdpaCase{1, 4, 3, 7, 16, 0.0f, 1, 1},  // multi-query, shifted mask
                                           SdpaCase{1, 6, 1, 9, 8, 0.0f, 1, 3})); // GQA decode step

TEST(SdpaGraph, WithoutTheBottomRightShiftCausalSeqQBelowSeqKvIsWrong) {
    // Rewire the comparison to the unshifted (top-left) row index: the
    // interpreter must then disagree with the reference, so the shift matters.
    const SdpaCase c{1, 2, 3, 7, 8, 0.0f, 1};
    SdpaGraph g = plan_sdpa(sdpa_desc(c));
    int64_t raw_row = 0;
    for (const auto &op : g.ops)
        if (op.kind == SdpaOpKind::Pointwise && op.pw == SdpaPw::GenIndex && op.axis == 2) raw_row = op.y;
    ASSERT_NE(raw_row, 0);
    bool rewired = false;
    for (auto &op : g.ops)
        if (op.kind == SdpaOpKind::Pointwise && op.pw == SdpaPw::CmpGe) op.x = raw_row, rewired = true;
    ASSERT_TRUE(rewired);
    EXPECT_GT(sdpa_graph_error(c, g), 1e-3);
}

TEST(SdpaGraph, TensorsDimsStridesUidsAndBinding) {
    const SdpaCase c{2, 3, 5, 7, 16, 0.0f, 1};
    const SdpaGraph g = plan_sdpa(sdpa_desc(c, OPB_DTYPE_F16));
    std::set<int64_t> uids;
    for (const auto &t : g.tensors) {
        EXPECT_TRUE(uids.insert(t.uid).second) << "duplicate uid " << t.uid << " (" << t.name << ")";
        EXPECT_EQ(t.is_virtual, t.uid >= kSdpaFirstVirtualUid) << t.name;
        EXPECT_FALSE(t.is_virtual && t.by_value) << t.name;
    }
    auto expect = [&](int64_t uid, SdpaType type, std::vector<int64_t> dims, std::vector<int64_t> strides) {
        const SdpaTensor *t = g.find(uid);
        ASSERT_NE(t, nullptr) << uid;
        EXPECT_EQ(t->type, type) << t->name;
        EXPECT_EQ(std::vector<int64_t>(t->dims, t->dims + 4), dims) << t->name;
        EXPECT_EQ(std::vector<int64_t>(t->strides, t->strides + 4), strides) << t->name;
    };
    expect(kSdpaQ, SdpaType::Half, {2, 3, 5, 16}, {3 * 5 * 16, 5 * 16, 16, 1});
    expect(kSdpaK, SdpaType::Half, {2, 3, 16, 7}, {3 * 7 * 16, 7 * 16, 1, 16}); // K^T view of row-major K
    expect(kSdpaV, SdpaType::Half, {2, 3, 7, 16}, {3 * 7 * 16, 7 * 16, 16, 1});
    expect(kSdpaO, SdpaType::Half, {2, 3, 5, 16}, {3 * 5 * 16, 5 * 16, 16, 1});
    expect(kSdpaStats, SdpaType::Float, {2, 3, 5, 1}, {15, 5, 1, 1});
    expect(kSdpaScale, SdpaType::Float, {1, 1, 1, 1}, {1, 1, 1, 1});
    expect(kSdpaSeqKv, SdpaType::Int32, {1, 1, 1, 1}, {1, 1, 1, 1});
    EXPECT_EQ(g.bound_uids(), (std::vector<int64_t>{kSdpaQ, kSdpaK, kSdpaV, kSdpaO, kSdpaStats, kSdpaScale,
                                                    kSdpaMaskFill, kSdpaSeqKv, kSdpaSeqQ}));
    EXPECT_EQ(g.stats_bytes, 2u * 3 * 5 * 4);
    EXPECT_FLOAT_EQ(g.scale, 0.25f); // 1/sqrt(16)
    EXPECT_EQ(g.seq_q, 5);
    EXPECT_EQ(g.seq_kv, 7);
    EXPECT_EQ(g.mask_fill, std::numeric_limits<float>::lowest());
    EXPECT_EQ(plan_sdpa(sdpa_desc(c, OPB_DTYPE_BF16)).find(kSdpaQ)->type, SdpaType::BFloat16);

    // Without the causal mask only Q, K, V, O, stats and the scale are bound.
    const SdpaGraph plain = plan_sdpa(sdpa_desc({2, 3, 5, 7, 16, 0.5f, 0}));
    EXPECT_EQ(plain.bound_uids(), (std::vector<int64_t>{kSdpaQ, kSdpaK, kSdpaV, kSdpaO, kSdpaStats, kSdpaScale}));
    EXPECT_FLOAT_EQ(plain.scale, 0.5f);
    // seq_q == seq_kv: top-left is bottom-right, no shift tensors.
    const SdpaGraph square = plan_sdpa(sdpa_desc({1, 1, 6, 6, 8, 0.0f, 1}));
    EXPECT_FALSE(square.bottom_right_shift);
    EXPECT_EQ(square.find(kSdpaSeqQ), nullptr);
    // Grouped-query: K and V keep their own head count; Q, O and stats have heads.
    const SdpaGraph gqa = plan_sdpa(sdpa_desc({2, 8, 5, 7, 16, 0.0f, 1, 2}));
    EXPECT_EQ(std::vector<int64_t>(gqa.find(kSdpaK)->dims, gqa.find(kSdpaK)->dims + 4),
              (std::vector<int64_t>{2, 2, 16, 7}));
    EXPECT_EQ(std::vector<int64_t>(gqa.find(kSdpaV)->strides, gqa.find(kSdpaV)->strides + 4),
              (std::vector<int64_t>{2 * 7 * 16, 7 * 16, 16, 1}));
    EXPECT_EQ(gqa.find(kSdpaO)->dims[1], 8);
    EXPECT_EQ(gqa.stats_bytes, 2u * 8 * 5 * 4);
}

TEST(SdpaGraph, OperationsInOrderWithTheirOperands) {
    const SdpaGraph g = plan_sdpa(sdpa_desc({1, 2, 3, 7, 8, 0.0f, 1}));
    std::vector<std::string> got;
    for (const auto &op : g.ops) {
        std::string s = op.kind == SdpaOpKind::Matmul ? "matmul"
                        : op.kind == SdpaOpKind::Reduction
                            ? (op.reduce == SdpaReduce::Max ? "reduce MAX" : "reduce ADD")
                            : std::string("pw ") + sdpa_pw_name(op.pw);
        s += std::string("/") + sdpa_type_name(op.compute);
        if (op.axis >= 0) s += "/axis" + std::to_string(op.axis);
        got.push_back(s);
        // Operands exist and are produced before use (or bound).
        std::set<int64_t> ready;
        for (const auto &t : g.tensors)
            if (!t.is_virtual) ready.insert(t.uid);
        for (const auto &prev : g.ops) {
            if (&prev == &op) break;
            ready.insert(prev.y);
        }
        for (int64_t u : {op.x, op.b, op.t})
            if (u) {
                EXPECT_TRUE(ready.count(u)) << op.name << " reads uid " << u << " before it exists";
            }
    }
    const std::vector<std::string> want = {"matmul/float",
                                           "pw MUL/float",
                                           "pw GEN_INDEX/float/axis2",
                                           "pw GEN_INDEX/float/axis3",
                                           "pw ADD/int32",
                                           "pw SUB/int32",
                                           "pw CMP_GE/boolean",
                                           "pw BINARY_SELECT/float",
                                           "reduce MAX/float",
                                           "pw SUB/float",
                                           "pw EXP/float",
                                           "reduce ADD/float",
                                           "pw LOG/float",
                                           "pw ADD/float",
                                           "pw DIV/float",
                                           "matmul/float"};
    EXPECT_EQ(got, want);
    EXPECT_EQ(g.ops.front().x, kSdpaQ);
    EXPECT_EQ(g.ops.front().b, kSdpaK);
    EXPECT_EQ(g.ops[1].b, kSdpaScale);
    EXPECT_EQ(g.ops[4].b, kSdpaSeqKv);
    EXPECT_EQ(g.ops[5].b, kSdpaSeqQ);
    EXPECT_EQ(g.ops[7].b, kSdpaMaskFill);
    EXPECT_EQ(g.ops[7].t, g.ops[6].y); // the boolean mask selects
    EXPECT_EQ(g.ops[13].y, kSdpaStats);
    EXPECT_EQ(g.ops.back().b, kSdpaV);
    EXPECT_EQ(g.ops.back().y, kSdpaO);
    // P enters bmm2 in V's type: cuDNN's flash-attention engines refuse a
    // matmul whose A and B types differ (seen on an H100, cuDNN 9.14).
    EXPECT_EQ(g.find(g.ops.back().x)->type, g.find(kSdpaV)->type);
    EXPECT_NE(g.find(kSdpaV)->type, SdpaType::Float);
    // No mask: matmul, scale, the 7 softmax operations, matmul.
    EXPECT_EQ(plan_sdpa(sdpa_desc({1, 2, 3, 7, 8, 0.0f, 0})).ops.size(), 10u);
    EXPECT_EQ(plan_sdpa(sdpa_desc({1, 2, 7, 7, 8, 0.0f, 1})).ops.size(), 14u);
}

// ---- attention fused FP8: the cuDNN FP8 SDPA graph ------------------------------------
//
// The FP8 graph interpreted as above, every e4m3-typed tensor rounded on
// write (P * scale_s and O), against the exact reference of plugin.h (scores
// and softmax in float64 from the same e4m3 values, P never quantised, O / ...
// rounded once to e4m3). Its errors are what the ops.hpp tolerance for FP8
// attention must admit; the test prints them.

namespace {

struct Fp8Errors {
    double nmse = 0, pointwise = 0;
};

// ops.hpp's point-wise rule (|out - ref| / (|ref| + the row's rms, floored)) and NMSE.
Fp8Errors fp8_errors(const std::vector<double> &out, const std::vector<double> &ref, int64_t cols) {
    double num = 0, den = 0;
    for (size_t i = 0; i < ref.size(); ++i) num += (out[i] - ref[i]) * (out[i] - ref[i]), den += ref[i] * ref[i];
    const double whole = std::sqrt(den / double(ref.size()));
    Fp8Errors e{den > 0 ? num / den : num, 0.0};
    for (size_t r = 0; r * size_t(cols) < ref.size(); ++r) {
        double sq = 0;
        for (int64_t j = 0; j < cols; ++j) sq += ref[r * cols + j] * ref[r * cols + j];
        const double s = std::max(std::sqrt(sq / double(cols)), kRowScaleFloor * whole);
        for (int64_t j = 0; j < cols; ++j) {
            const size_t i = r * size_t(cols) + size_t(j);
            e.pointwise = std::max(e.pointwise, std::fabs(out[i] - ref[i]) / (std::fabs(ref[i]) + s));
        }
    }
    return e;
}

struct Fp8Run {
    std::vector<double> graph_o, ref_o;       // O as stored (e4m3 values), graph's and the reference's
    double amax_s = 0, amax_o = 0, max_o = 0; // max_o: the reference's largest |O| before o_scale
};

// A stand-in scale of 1 that a test may wire into a graph (a device tensor).
constexpr int64_t kTestOne = 50;

// Q, K, V in e4m3 spanning its range, scales about 1/448 (as the harness
// makes them), O's quantisation scale o_scale about 224; the graph run with
// plan buffers holding scale_s and descale_s as the backend's prepare writes them.
Fp8Run run_fp8_graph(const SdpaCase &c, const SdpaGraph &g, unsigned seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    auto e4 = [&](size_t n) {
        std::vector<double> v(n);
        for (auto &x : v) x = e4m3_to_f32(f32_to_e4m3(float(448.0 * u(rng))));
        return v;
    };
    std::map<int64_t, std::vector<double>> buf;
    buf[kSdpaQ] = e4(size_t(c.b * c.h * c.sq * c.d));
    buf[kSdpaK] = e4(size_t(c.b * c.kv_heads() * c.skv * c.d));
    buf[kSdpaV] = e4(size_t(c.b * c.kv_heads() * c.skv * c.d));
    const double qs = float((1 + 0.5 * u(rng)) / 448), ks = float((1 + 0.5 * u(rng)) / 448);
    const double vs = float((1 + 0.5 * u(rng)) / 448), os = float(224 * (1 + 0.25 * u(rng)));
    buf[kSdpaDescaleQ] = {qs}, buf[kSdpaDescaleK] = {ks}, buf[kSdpaDescaleV] = {vs}, buf[kSdpaScaleO] = {os};
    buf[kSdpaScaleS] = {kSdpaFp8ScaleS}, buf[kSdpaDescaleS] = {kSdpaFp8DescaleS};
    if (g.find(kTestOne)) buf[kTestOne] = {1.0};
    Fp8Run r;
    std::vector<double> o, st;
    const auto d = sdpa_desc(c, OPB_DTYPE_F8_E4M3);
    reference_attention(c, buf[kSdpaQ], buf[kSdpaK], buf[kSdpaV], o, st, double(effective_scale(d)) * qs * ks);
    for (double x : o) {
        r.max_o = std::max(r.max_o, std::fabs(x * vs));
        r.ref_o.push_back(e4m3_to_f32(f32_to_e4m3(float(x * vs * os))));
    }
    run_sdpa_graph(g, buf);
    r.graph_o = buf[kSdpaO];
    r.amax_s = buf[kSdpaAmaxS].at(0);
    r.amax_o = buf[kSdpaAmaxO].at(0);
    return r;
}

} // namespace

TEST(SdpaFp8Graph, InterpretedGraphMatchesTheExactReferenceWithinTheStatedTolerance) {
    const opb_op_desc any = sdpa_desc({1, 1, 8, 8, 64, 0.0f, 0}, OPB_DTYPE_F8_E4M3);
    const Tolerance tol = op_info(OPB_OP_ATTENTION)->tolerance(any);
    double worst_nmse = 0, worst_pw = 0;
    unsigned seed = 100;
    // S up to 512 at D 64 and 256 at D 128: the interpreter's cost grows as
    // S^2 D (these take about 6 CPU-s unoptimised).
    for (int64_t d : {64, 128})
        for (int causal = 0; causal < 2; ++causal)
            for (int64_t s : {1, 2, 7, 64, 200, d == 64 ? 512 : 256}) {
                const SdpaCase c{1, s > 64 ? 1 : 2, s, s, d, 0.0f, causal};
                const SdpaGraph g = plan_sdpa(sdpa_desc(c, OPB_DTYPE_F8_E4M3));
                const Fp8Run r = run_fp8_graph(c, g, seed++);
                ASSERT_EQ(r.graph_o.size(), r.ref_o.size());
                const Fp8Errors e = fp8_errors(r.graph_o, r.ref_o, d);
                std::printf("FP8 SDPA graph vs exact: D %3lld causal %d S %3lld  NMSE %.3g  point-wise %.3g\n",
                            (long long)d, causal, (long long)s, e.nmse, e.pointwise);
                EXPECT_LT(e.nmse, tol.max_nmse) << "D " << d << " causal " << causal << " S " << s;
                EXPECT_LT(e.pointwise, tol.max_pointwise) << "D " << d << " causal " << causal << " S " << s;
                worst_nmse = std::max(worst_nmse, e.nmse), worst_pw = std::max(worst_pw, e.pointwise);
                // amax_s is the largest probability (<= 1; 1 exactly when a row sees one key),
                // amax_o the largest |O| before scale_o.
                EXPECT_GT(r.amax_s, 0.0);
                EXPECT_LE(r.amax_s, 1.0 + 1e-12);
                if (s == 1 || causal) {
                    EXPECT_DOUBLE_EQ(r.amax_s, 1.0);
                }
                EXPECT_GT(r.amax_o, 0.5 * r.max_o);
                EXPECT_LT(r.amax_o, 1.5 * r.max_o + 1e-12);
            }
    std::printf("FP8 SDPA graph: worst NMSE %.3g (bound %.3g), worst point-wise %.3g (bound %.3g)\n", worst_nmse,
                tol.max_nmse, worst_pw, tol.max_pointwise);
    // The quantisation of P and O is real: the graph is not the reference.
    EXPECT_GT(worst_nmse, 1e-4);
}

TEST(SdpaFp8Graph, GroupedQueryHeadsReadTheirKvHead) {
    const SdpaCase c{2, 4, 9, 9, 16, 0.0f, 1, 2};
    const Fp8Run r = run_fp8_graph(c, plan_sdpa(sdpa_desc(c, OPB_DTYPE_F8_E4M3)), 7);
    const Tolerance tol = op_info(OPB_OP_ATTENTION)->tolerance(sdpa_desc(c, OPB_DTYPE_F8_E4M3));
    const Fp8Errors e = fp8_errors(r.graph_o, r.ref_o, c.d);
    EXPECT_LT(e.nmse, tol.max_nmse);
    EXPECT_LT(e.pointwise, tol.max_pointwise);
}

TEST(SdpaFp8Graph, EachScaleMattersAndTheToleranceCatchesAMissingOne) {
    // One scaling operation at a time multiplies by a stand-in 1 instead of
    // its scale, as a backend that dropped it would: the tolerance must fail it.
    const SdpaCase c{1, 2, 16, 16, 32, 0.0f, 0};
    const Tolerance tol = op_info(OPB_OP_ATTENTION)->tolerance(sdpa_desc(c, OPB_DTYPE_F8_E4M3));
    for (const char *skip : {"scale", "descale_q", "descale_k", "descale_v", "descale_s", "scale_o"}) {
        SdpaGraph g = plan_sdpa(sdpa_desc(c, OPB_DTYPE_F8_E4M3));
        SdpaTensor one = *g.find(kSdpaDescaleQ);
        one.uid = kTestOne, one.name = "one";
        g.tensors.push_back(one);
        bool found = false;
        for (auto &op : g.ops)
            if (std::string(op.name) == skip) op.b = kTestOne, found = true;
        ASSERT_TRUE(found) << skip;
        const Fp8Run r = run_fp8_graph(c, g, 3);
        const Fp8Errors e = fp8_errors(r.graph_o, r.ref_o, c.d);
        EXPECT_TRUE(e.nmse > tol.max_nmse || e.pointwise > tol.max_pointwise)
            << skip << " skipped: NMSE " << e.nmse << " point-wise " << e.pointwise;
    }
}

TEST(SdpaFp8Graph, TensorsOperationsAndBindings) {
    const SdpaCase c{2, 4, 8, 8, 64, 0.0f, 1, 2};
    const SdpaGraph g = plan_sdpa(sdpa_desc(c, OPB_DTYPE_F8_E4M3));
    EXPECT_TRUE(g.fp8);
    EXPECT_FALSE(g.bottom_right_shift);
    for (int64_t uid : {kSdpaQ, kSdpaK, kSdpaV, kSdpaO}) EXPECT_EQ(g.find(uid)->type, SdpaType::Fp8E4M3) << uid;
    for (int64_t uid : {kSdpaDescaleQ, kSdpaDescaleK, kSdpaDescaleV, kSdpaScaleO, kSdpaScaleS, kSdpaDescaleS,
                        kSdpaAmaxS, kSdpaAmaxO}) {
        const SdpaTensor *t = g.find(uid);
        ASSERT_NE(t, nullptr) << uid;
        EXPECT_EQ(t->type, SdpaType::Float) << t->name;
        EXPECT_FALSE(t->is_virtual || t->by_value) << t->name; // device tensors, as the frontend passes them
        EXPECT_EQ(std::vector<int64_t>(t->dims, t->dims + 4), (std::vector<int64_t>{1, 1, 1, 1})) << t->name;
    }
    // Execute's order: Q, K, V, q_scale, k_scale, v_scale, o_scale, O; the plan buffer: scale_s, descale_s, amaxes.
    const std::pair<int64_t, SdpaBinding> want[] = {
        {kSdpaQ, {SdpaBinding::ExecuteTensor, 0}},
        {kSdpaK, {SdpaBinding::ExecuteTensor, 1}},
        {kSdpaV, {SdpaBinding::ExecuteTensor, 2}},
        {kSdpaDescaleQ, {SdpaBinding::ExecuteTensor, 3}},
        {kSdpaDescaleK, {SdpaBinding::ExecuteTensor, 4}},
        {kSdpaDescaleV, {SdpaBinding::ExecuteTensor, 5}},
        {kSdpaScaleO, {SdpaBinding::ExecuteTensor, 6}},
        {kSdpaO, {SdpaBinding::ExecuteTensor, 7}},
        {kSdpaStats, {SdpaBinding::Stats, 0}},
        {kSdpaScaleS, {SdpaBinding::Fp8Scalar, 0}},
        {kSdpaDescaleS, {SdpaBinding::Fp8Scalar, 1}},
        {kSdpaAmaxS, {SdpaBinding::Fp8Scalar, 2}},
        {kSdpaAmaxO, {SdpaBinding::Fp8Scalar, 3}},
        {kSdpaScale, {SdpaBinding::ByValue, 0}},
    };
    for (const auto &[uid, b] : want) {
        EXPECT_EQ(g.binding(uid).source, b.source) << uid;
        EXPECT_EQ(g.binding(uid).index, b.index) << uid;
    }
    EXPECT_EQ(g.binding(kSdpaSeqQ).source, SdpaBinding::None); // no shift in FP8
    const auto tensor_names = op_tensors(sdpa_desc(c, OPB_DTYPE_F8_E4M3));
    EXPECT_EQ(tensor_names[3].name, "q_scale");
    EXPECT_EQ(tensor_names[6].name, "o_scale");
    EXPECT_EQ(tensor_names[7].name, "O");
    // bf16 keeps O at execute's index 3.
    EXPECT_EQ(plan_sdpa(sdpa_desc(c, OPB_DTYPE_BF16)).binding(kSdpaO).index, 3);
    EXPECT_EQ(g.fp8_scalar_bytes, 16u);
    EXPECT_EQ(kSdpaFp8ScaleS * kSdpaFp8DescaleS, 1.0f);

    std::vector<std::string> got;
    for (const auto &op : g.ops) got.push_back(op.name);
    const std::vector<std::string> names = {
        "bmm1 Q.K^T",    "scale",         "descale_q",   "descale_k",   "gen row index", "gen column index",
        "row >= column", "causal select", "softmax max", "softmax sub", "softmax exp",   "softmax sum",
        "softmax log",   "softmax stats", "softmax div", "amax_s",      "scale_s",       "bmm2 P8.V",
        "descale_s",     "descale_v",     "amax_o",      "scale_o"};
    EXPECT_EQ(got, names);
    const SdpaOp &bmm2 = g.ops[17];
    EXPECT_EQ(g.find(bmm2.x)->type, SdpaType::Fp8E4M3); // P enters P.V in e4m3, as V
    EXPECT_EQ(g.ops[15].reduce, SdpaReduce::Amax);
    EXPECT_EQ(g.ops[15].y, kSdpaAmaxS);
    EXPECT_EQ(g.ops[16].b, kSdpaScaleS);
    EXPECT_EQ(g.ops[18].b, kSdpaDescaleS);
    EXPECT_EQ(g.ops.back().b, kSdpaScaleO);
    EXPECT_EQ(g.ops.back().y, kSdpaO);
    EXPECT_EQ(std::string(sdpa_type_name(SdpaType::Fp8E4M3)), "fp8_e4m3");
}

TEST(SdpaFp8Support, ConfigurationsCuDnnFp8CannotRunSayWhy) {
    auto reason = [](SdpaCase c, SdpaEnv env = {}) {
        return sdpa_unsupported_reason(sdpa_desc(c, OPB_DTYPE_F8_E4M3), env);
    };
    const SdpaEnv h100{91900, 9, 0};
    EXPECT_EQ(reason({2, 8, 128, 128, 128, 0.0f, 1}, h100), "");
    EXPECT_EQ(reason({2, 8, 1, 512, 64, 0.0f, 0, 2}, h100), ""); // decoding, grouped-query, no mask
    EXPECT_NE(reason({1, 1, 8, 8, 72, 0.0f, 0}).find("multiple of 16"), std::string::npos);
    EXPECT_NE(reason({1, 1, 8, 8, 272, 0.0f, 0}).find("multiple of 16 up to 256"), std::string::npos);
    const std::string shifted = reason({1, 1, 8, 24, 64, 0.0f, 1}, h100);
    EXPECT_NE(shifted.find("bottom-right causal mask on Blackwell"), std::string::npos) << shifted;
    EXPECT_NE(reason({1, 1, 8, 8, 64, 0.0f, 0}, {91900, 8, 9}).find("sm_90 (Hopper) or newer; this GPU is sm_89"),
              std::string::npos);
    EXPECT_NE(reason({1, 1, 8, 8, 64, 0.0f, 0}, {90000, 9, 0}).find("needs cuDNN 9.1"), std::string::npos);
    EXPECT_NE(reason({1, 1, 8, 8, 64, 0.0f, 0}, {91000, 9, 0}).find("9.10.0"), std::string::npos);
    EXPECT_EQ(reason({1, 1, 8, 8, 64, 0.0f, 0}, {91001, 9, 0}), "");
    EXPECT_NE(reason({1, 1, 8, 8, 192, 0.0f, 0}, {91900, 10, 0}).find("at most 128"), std::string::npos);
    // Composed FP8 attention is a one-line skip; fused goes to cuDNN.
    auto composed = sdpa_desc({1, 1, 8, 8, 64, 0.0f, 0}, OPB_DTYPE_F8_E4M3);
    composed.variant = OPB_ATTENTION_COMPOSED;
    const ImplChoice ch = choose_impl(composed);
    EXPECT_EQ(ch.impl, Impl::Unsupported);
    EXPECT_NE(ch.reason.find("runs fused only"), std::string::npos) << ch.reason;
    EXPECT_EQ(choose_impl(sdpa_desc({1, 1, 8, 8, 64, 0.0f, 0}, OPB_DTYPE_F8_E4M3)).impl, Impl::CudnnSdpa);
    const ImplChoice odd = choose_impl(sdpa_desc({1, 1, 8, 8, 40, 0.0f, 0}, OPB_DTYPE_F8_E4M3));
    EXPECT_NE(odd.reason.find("attention fused (f8e4m3)"), std::string::npos) << odd.reason;
}

TEST(SdpaSupport, ConfigurationsCuDnnCannotRunSayWhy) {
    auto reason = [](SdpaCase c, int dtype, SdpaEnv env = {}) {
        return sdpa_unsupported_reason(sdpa_desc(c, dtype), env);
    };
    const SdpaEnv h100{91900, 9, 0}, a100_old{90500, 8, 0}, a100{91900, 8, 0};
    EXPECT_EQ(reason({2, 8, 128, 128, 64, 0.0f, 1}, OPB_DTYPE_BF16, h100), "");
    EXPECT_EQ(reason({2, 8, 64, 256, 128, 0.0f, 1}, OPB_DTYPE_F16, h100), "");
    EXPECT_NE(reason({1, 1, 8, 8, 64, 0.0f, 0}, OPB_DTYPE_F32).find("fuses bf16, f16 and f8e4m3 only"),
              std::string::npos);
    EXPECT_NE(reason({1, 1, 8, 8, 60, 0.0f, 0}, OPB_DTYPE_BF16).find("multiple of 8"), std::string::npos);
    EXPECT_NE(reason({1, 1, 8, 8, 264, 0.0f, 0}, OPB_DTYPE_BF16).find("exceeds 256"), std::string::npos);
    const std::string tall = reason({1, 1, 9, 4, 64, 0.0f, 1}, OPB_DTYPE_BF16);
    EXPECT_NE(tall.find("seq_q 9 > seq_kv 4"), std::string::npos) << tall;
    EXPECT_EQ(reason({1, 1, 9, 4, 64, 0.0f, 0}, OPB_DTYPE_BF16), ""); // fine without the mask
    EXPECT_NE(reason({1, 1, 8, 8, 64, 0.0f, 0}, OPB_DTYPE_BF16, {91900, 7, 5}).find("sm_75"), std::string::npos);
    EXPECT_NE(reason({1, 1, 8, 8, 192, 0.0f, 0}, OPB_DTYPE_BF16, a100_old).find("> 128 on sm_80"), std::string::npos);
    EXPECT_EQ(reason({1, 1, 8, 8, 192, 0.0f, 0}, OPB_DTYPE_BF16, a100), "");
    EXPECT_NE(reason({1, 1, 8, 8, 64, 0.0f, 0}, OPB_DTYPE_BF16, {91000, 9, 0}).find("9.10.0"), std::string::npos);
    EXPECT_NE(reason({1, 1, 8, 24, 64, 0.0f, 1}, OPB_DTYPE_BF16, {90500, 9, 0}).find("multiples of 64"),
              std::string::npos);
    EXPECT_EQ(reason({1, 1, 64, 128, 64, 0.0f, 1}, OPB_DTYPE_BF16, {90500, 9, 0}), "");
    EXPECT_EQ(reason({1, 1, 8, 24, 64, 0.0f, 1}, OPB_DTYPE_BF16, h100), "");
    auto big = sdpa_desc({1, 1, int64_t{1} << 31, 8, 64, 0.0f, 0});
    EXPECT_NE(sdpa_unsupported_reason(big, {}).find("int32"), std::string::npos);
    // choose_impl carries the reason with the variant and dtype.
    const ImplChoice ch = choose_impl(sdpa_desc({1, 1, 8, 8, 60, 0.0f, 0}, OPB_DTYPE_F16));
    EXPECT_EQ(ch.impl, Impl::Unsupported);
    EXPECT_NE(ch.reason.find("attention fused (f16)"), std::string::npos) << ch.reason;
}

// An op the backend has no code for is UnknownOp, which the plugin answers
// with sdk::unsupported_op (a skip); every row of the SDK's table has an impl.
TEST(ChooseImpl, EveryOpOfTheTableHasAnImplAndOthersAreUnknown) {
    for (const OpInfo &row : kOps) {
        auto d = make_desc(row.op, OPB_DTYPE_F16);
        EXPECT_NE(choose_impl(d).impl, Impl::UnknownOp) << row.name;
    }
    EXPECT_EQ(choose_impl(make_desc(OPB_OP_COUNT, OPB_DTYPE_F32)).impl, Impl::UnknownOp);
}

namespace opbench::cuda {
namespace {

TEST(DevicePeaks, TheoreticalPeaksOfKnownGpus) {
    // H100 SXM: 132 SMs x 128 lanes x 2 x 1.98 GHz; HBM3 2619 MHz x 5120 bits.
    const DevicePeaks h100 = theoretical_peaks(9, 0, 132, 1980000, 2619000, 5120);
    EXPECT_NEAR(h100.f32_gflops, 66908.16, 0.01);
    EXPECT_NEAR(h100.bandwidth_gbps, 3352.32, 0.01);
    // A100: 64 lanes per SM.
    const DevicePeaks a100 = theoretical_peaks(8, 0, 108, 1410000, 1215000, 5120);
    EXPECT_NEAR(a100.f32_gflops, 19491.84, 0.01);
    EXPECT_NEAR(a100.bandwidth_gbps, 1555.2, 0.01);
    EXPECT_EQ(fp32_lanes_per_sm(8, 6), 128);
    // Unknown architecture or missing clocks: 0, so the host reports no device roofline.
    EXPECT_EQ(theoretical_peaks(99, 0, 10, 1000000, 1000000, 64).f32_gflops, 0.0);
    EXPECT_EQ(theoretical_peaks(9, 0, 132, 1980000, 0, 5120).bandwidth_gbps, 0.0);
}

} // namespace
} // namespace opbench::cuda

// ---- FP8 (dtype f8e4m3, issue 42): cuBLASLt's E4M3 GEMM ------------------------

namespace {

opb_op_desc fp8_linear(int64_t batch, int64_t m, int64_t n, int64_t k, bool bias, int out_dtype) {
    auto d = make_desc(OPB_OP_MATMUL, OPB_DTYPE_F8_E4M3);
    auto &p = d.p.matmul;
    p.batch = batch, p.m = m, p.n = n, p.k = k;
    p.trans_b = 1, p.has_bias = bias;
    p.out_dtype = out_dtype;
    return d;
}

// Index of the tensor named `name` in execute's order (ops.hpp), -1 if none.
int tensor_index(const opb_op_desc &d, const std::string &name) {
    const auto specs = op_tensors(d);
    for (size_t i = 0; i < specs.size(); ++i)
        if (specs[i].name == name) return int(i);
    return -1;
}

} // namespace

TEST(Fp8Plan, TheE4m3GemmWithScalePointersAndBf16BiasEqualsFloat64Fp8Linear) {
    for (int out : {int(OPB_DTYPE_F32), int(OPB_DTYPE_BF16)})
        for (bool bias : {false, true}) {
            const auto d = fp8_linear(2, 5, 16, 32, bias, out);
            ASSERT_EQ(validate_desc(d), "");
            ASSERT_EQ(choose_impl(d).impl, Impl::CublasLtFp8) << choose_impl(d).reason;
            const Fp8Plan f = plan_fp8_matmul(d);
            EXPECT_EQ(f.gemm.ab_type, ElemType::E4M3);
            EXPECT_EQ(f.gemm.d_type, out == OPB_DTYPE_BF16 ? ElemType::BF16 : ElemType::F32);
            EXPECT_EQ(f.gemm.compute, ComputeType::F32);
            EXPECT_EQ(f.gemm.bias_type, ElemType::BF16);
            EXPECT_EQ(f.gemm.bias, bias);
            // cuBLASLt's first operand is opbench's B: its scale is b_scale.
            EXPECT_EQ(f.first_scale_tensor, tensor_index(d, "b_scale"));
            EXPECT_EQ(f.second_scale_tensor, tensor_index(d, "a_scale"));
            EXPECT_EQ(f.bias_tensor, tensor_index(d, "bias"));
            EXPECT_EQ(f.bias_bf16_bytes, bias ? 16u * 2u : 0u);
            EXPECT_EQ(expected_tensor_count(d), bias ? 6 : 5);
            // TN: the first operand (weights [N, K]) transposed, the second not.
            EXPECT_TRUE(f.gemm.trans_first);
            EXPECT_FALSE(f.gemm.trans_second);

            // Execute as the backend does: e4m3 bytes (the host's rounding),
            // D = scale_first * scale_second * op(first).op(second) + bf16(bias).
            const auto &p = d.p.matmul;
            const auto av = random_vec(size_t(p.batch * p.m * p.k), 21),
                       bv = random_vec(size_t(p.batch * p.k * p.n), 22);
            const auto bias_v = random_vec(size_t(p.n), 23);
            std::vector<double> A, B, bias_bf16;
            for (double x : av) A.push_back(e4m3_to_f32(f32_to_e4m3(float(x * 448))));
            for (double x : bv) B.push_back(e4m3_to_f32(f32_to_e4m3(float(x * 448))));
            for (double x : bias_v) bias_bf16.push_back(bf16_to_f32(f32_to_bf16(float(x))));
            const double a_scale = 1.0 / 300, b_scale = 1.0 / 500;
            const double scales[6] = {0, 0, a_scale, b_scale, 0, 0};
            auto D = run_plan(f.gemm, B, A, std::vector<double>(size_t(p.n), 0.0));
            const Tolerance tol = op_info(OPB_OP_MATMUL)->tolerance(d);
            double worst = 0;
            for (int64_t b = 0; b < p.batch; ++b)
                for (int64_t i = 0; i < p.m; ++i)
                    for (int64_t j = 0; j < p.n; ++j) {
                        double ref = 0;
                        for (int64_t k = 0; k < p.k; ++k)
                            ref += A[size_t((b * p.m + i) * p.k + k)] * B[size_t((b * p.n + j) * p.k + k)];
                        ref = a_scale * b_scale * ref + (bias ? bias_v[size_t(j)] : 0.0);
                        double got = scales[f.first_scale_tensor] * scales[f.second_scale_tensor] *
                                         D[size_t(b * f.gemm.d.batch_stride + i * f.gemm.d.ld + j)] +
                                     (bias ? bias_bf16[size_t(j)] : 0.0);
                        if (out == OPB_DTYPE_BF16) got = bf16_to_f32(f32_to_bf16(float(got)));
                        worst = std::max(worst, std::fabs(got - ref) / (std::fabs(ref) + 1.0));
                    }
            // The bias's bf16 rounding (2^-9 of |bias| <= 1) and a bf16 output stay within the stated bound.
            EXPECT_LT(worst, tol.max_pointwise) << "out " << out << " bias " << bias;
        }
}

TEST(Fp8Plan, DevicesBeforeSm89OtherLayoutsAndUnalignedShapesAreSkippedWithTheReason) {
    const auto d = fp8_linear(1, 64, 64, 64, true, OPB_DTYPE_F32);
    EXPECT_EQ(fp8_unsupported_reason(d, 0, 0), "");
    EXPECT_EQ(fp8_unsupported_reason(d, 8, 9), "");
    EXPECT_EQ(fp8_unsupported_reason(d, 9, 0), "");
    EXPECT_EQ(fp8_unsupported_reason(d, 10, 0), "");
    const std::string ampere = fp8_unsupported_reason(d, 8, 0);
    EXPECT_NE(ampere.find("sm_89"), std::string::npos) << ampere;
    EXPECT_NE(ampere.find("sm_80"), std::string::npos) << ampere;
    auto nn = d;
    nn.p.matmul.trans_b = 0;
    const ImplChoice c = choose_impl(nn);
    EXPECT_EQ(c.impl, Impl::Unsupported);
    EXPECT_NE(c.reason.find("TN"), std::string::npos) << c.reason;
    EXPECT_NE(c.reason.find("f8e4m3"), std::string::npos) << c.reason;
    auto odd = d;
    odd.p.matmul.k = 40;
    EXPECT_NE(fp8_unsupported_reason(odd, 9, 0).find("multiples of 16"), std::string::npos);
    // Every other matmul keeps its implementation.
    EXPECT_EQ(choose_impl(make_desc(OPB_OP_MATMUL, OPB_DTYPE_BF16)).impl, Impl::CublasLt);
    EXPECT_EQ(elem_type(OPB_DTYPE_F8_E4M3), ElemType::E4M3);
    EXPECT_EQ(plan_matmul(make_desc(OPB_OP_MATMUL, OPB_DTYPE_BF16)).bias_type, ElemType::BF16);
}
