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
#include <limits>
#include <random>
#include <vector>

using namespace opbench;
using namespace opbench::cuda;

namespace {

// Element (r, c) of column-major matrix `m` of batch `b`.
double at(const std::vector<double> &buf, const MatrixLayout &l, int64_t b, int64_t r, int64_t c) {
    return buf[b * l.batch_stride + c * l.ld + r];
}

// Executes a GemmPlan as cuBLASLt would, on host buffers.
std::vector<double> run_plan(const GemmPlan &g, const std::vector<double> &first,
                             const std::vector<double> &second, const std::vector<double> &bias) {
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
                    const double y =
                        g.trans_second ? at(second, g.second, b, c, k) : at(second, g.second, b, k, c);
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
    *os << "batch " << c.batch << " M " << c.m << " N " << c.n << " K " << c.k << " trans_a "
        << c.ta << " trans_b " << c.tb << " bias " << c.bias;
}

class GemmMapping : public ::testing::TestWithParam<MatmulCase> {};

TEST_P(GemmMapping, RowMajorMatmulEqualsColumnMajorPlan) {
    const MatmulCase mc = GetParam();
    auto d = make_desc(OPB_OP_MATMUL, OPB_DTYPE_F32);
    d.p.matmul = {mc.batch, mc.m, mc.n, mc.k, mc.ta, mc.tb, mc.bias};
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
                ASSERT_NEAR(D[(b * mc.m + i) * mc.n + j], ref, 1e-12)
                    << "b=" << b << " i=" << i << " j=" << j;
            }
}

INSTANTIATE_TEST_SUITE_P(
    TransposesBatchesBias, GemmMapping,
    ::testing::Values(MatmulCase{1, 3, 5, 4, false, false, false},
                      MatmulCase{2, 3, 5, 4, true, false, false},
                      MatmulCase{2, 3, 5, 4, false, true, false},
                      MatmulCase{3, 4, 2, 7, true, true, false},
                      MatmulCase{2, 5, 3, 1, false, false, true},
                      MatmulCase{2, 1, 6, 3, true, true, true}));

TEST(GemmPlan, ComputeAndElementTypesFollowDtypeAndVariant) {
    auto d = make_desc(OPB_OP_MATMUL, OPB_DTYPE_F32);
    d.p.matmul = {1, 8, 8, 8, 0, 0, 0};
    EXPECT_EQ(plan_matmul(d).compute, ComputeType::F32);
    EXPECT_EQ(plan_matmul(d).ab_type, ElemType::F32);
    d.variant = OPB_MATMUL_TF32;
    EXPECT_EQ(plan_matmul(d).compute, ComputeType::F32_FAST_TF32);
    d = make_desc(OPB_OP_MATMUL, OPB_DTYPE_BF16);
    d.p.matmul = {1, 8, 8, 8, 0, 0, 1};
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
        d.p.attention = {2, 2, 3, 5, 4, 0.0f, causal};
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
    d.p.attention = {2, 3, 5, 7, 8, 0.0f, 0};
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
        for (int op : {OPB_OP_SOFTMAX, OPB_OP_LAYERNORM, OPB_OP_RMSNORM, OPB_OP_GELU, OPB_OP_SILU,
                       OPB_OP_ADD})
            EXPECT_EQ(choose_impl(make_desc(op, dt)).impl, Impl::OwnKernel) << op_name(op);
        EXPECT_EQ(choose_impl(make_desc(OPB_OP_ATTENTION, dt, OPB_ATTENTION_COMPOSED)).impl,
                  Impl::ComposedGemmSoftmax);
        const ImplChoice fused = choose_impl(make_desc(OPB_OP_ATTENTION, dt, OPB_ATTENTION_FUSED));
        EXPECT_EQ(fused.impl, Impl::Unsupported);
        EXPECT_NE(fused.reason.find("fused"), std::string::npos) << fused.reason;
    }
    EXPECT_NE(choose_impl(make_desc(OPB_OP_ATTENTION, OPB_DTYPE_F32, OPB_ATTENTION_FUSED))
                  .reason.find("f32"),
              std::string::npos);
    EXPECT_EQ(choose_impl(make_desc(OPB_OP_MATMUL, OPB_DTYPE_F32, OPB_MATMUL_TF32)).impl,
              Impl::CublasLt);
    const ImplChoice tf32_bf16 = choose_impl(make_desc(OPB_OP_MATMUL, OPB_DTYPE_BF16, OPB_MATMUL_TF32));
    EXPECT_EQ(tf32_bf16.impl, Impl::Unsupported);
    EXPECT_NE(tf32_bf16.reason.find("bf16"), std::string::npos) << tf32_bf16.reason;
    for (const auto &c : {choose_impl(make_desc(OPB_OP_MATMUL, 0)), choose_impl(make_desc(OPB_OP_ADD, 1))})
        EXPECT_TRUE(c.reason.empty());
}

TEST(DeviceLimits, BatchCountsAndGridSizesBeyondInt32AreRefusedWithTheValue) {
    auto d = make_desc(OPB_OP_MATMUL, OPB_DTYPE_F32);
    d.p.matmul = {int64_t{1} << 31, 1, 1, 1, 0, 0, 0};
    const std::string e = check_device_limits(d);
    EXPECT_NE(e.find("2147483648"), std::string::npos) << e;
    d.p.matmul.batch = std::numeric_limits<int32_t>::max();
    EXPECT_EQ(check_device_limits(d), "");
    auto a = make_desc(OPB_OP_ATTENTION, OPB_DTYPE_BF16);
    a.p.attention = {1 << 16, 1 << 16, 1, 1, 64, 0.0f, 0};
    EXPECT_NE(check_device_limits(a).find("batch*heads"), std::string::npos);
    auto s = make_desc(OPB_OP_SOFTMAX, OPB_DTYPE_F32);
    s.p.softmax = {1 << 20, 1 << 12, 8, 1.0f, 0};
    EXPECT_NE(check_device_limits(s).find("softmax"), std::string::npos);
    s.p.softmax = {8, 128, 128, 1.0f, 1};
    EXPECT_EQ(check_device_limits(s), "");
}

TEST(TensorCount, MatchesTheOpsTensorList) {
    auto d = make_desc(OPB_OP_MATMUL, OPB_DTYPE_F32);
    d.p.matmul = {1, 2, 2, 2, 0, 0, 0};
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
    std::string r = unavailable_reason(0, 13000, 35, "cudaErrorInsufficientDriver",
                                       "CUDA driver version is insufficient", 0);
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
