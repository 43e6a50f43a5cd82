// FP8 attention (dtype f8e4m3, ABI 1.7, issue 42): the naive reference, both
// variants through the kernel dispatch, against an independent float64
// computation from the same e4m3 bytes and scales (a full softmax per row,
// no tiling, the codes decoded from the OCP definition), O rounded to f32
// and then to the nearest e4m3 by search: every element must be that code.
// Also the op table's side: the form, its tensors, the ABI gap.
#include "e4m3_definition.hpp"
#include "naive/kernels.hpp"

#include "opbench/ops.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

namespace opbench::naive {
namespace {

using test::e4m3_by_definition;

// The e4m3 code nearest to v (ties to the even code; beyond 448 saturated).
int nearest_code(double v) {
    if (std::fabs(v) >= 448.0) return v > 0 ? 0x7e : 0xfe;
    int best = 0;
    double best_err = INFINITY;
    for (int c = 0; c < 256; ++c) {
        if ((c & 0x7f) == 0x7f) continue;
        const double err = std::fabs(e4m3_by_definition(c) - v);
        if (err < best_err || (err == best_err && (c & 1) == 0 && (best & 1) == 1)) best = c, best_err = err;
    }
    if (e4m3_by_definition(best) == 0.0) return std::signbit(v) ? 0x80 : 0x00;
    return best;
}

struct Case {
    int64_t batch, heads, kv_heads, seq_q, seq_kv, head_dim;
    bool causal;
};

opb_op_desc fp8_attention(const Case &c, int variant) {
    opb_op_desc d = make_desc(OPB_OP_ATTENTION, OPB_DTYPE_F8_E4M3, variant);
    auto &p = d.p.attention;
    p.batch = c.batch, p.heads = c.heads, p.kv_heads = c.kv_heads, p.seq_q = c.seq_q, p.seq_kv = c.seq_kv;
    p.head_dim = c.head_dim, p.causal = c.causal;
    return d;
}

struct Inputs {
    std::vector<uint8_t> q, k, v;
    float scales[4]; // q, k, v, o
};

Inputs make_inputs(const Case &c, uint32_t seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> u(-448.0f, 448.0f), s(0.5f / 448, 1.5f / 448);
    Inputs in;
    in.q.resize(size_t(c.batch * c.heads * c.seq_q * c.head_dim));
    in.k.resize(size_t(c.batch * c.kv_heads * c.seq_kv * c.head_dim));
    in.v.resize(in.k.size());
    for (auto *t : {&in.q, &in.k, &in.v})
        for (auto &x : *t) x = f32_to_e4m3(u(rng));
    for (float &x : in.scales) x = s(rng);
    in.scales[3] = 224.0f; // o_scale * O stays inside +-448 (|O| < 1.5)
    return in;
}

// The naive kernel's O through naive::run, tensors in execute's order.
std::vector<uint8_t> run_naive(const opb_op_desc &d, Inputs &in) {
    std::vector<uint8_t> o(
        size_t(d.p.attention.batch * d.p.attention.heads * d.p.attention.seq_q * d.p.attention.head_dim), 0xdb);
    std::vector<double> ws(workspace_bytes(d) / sizeof(double) + 1);
    void *t[8] = {in.q.data(),   in.k.data(),   in.v.data(),   &in.scales[0],
                  &in.scales[1], &in.scales[2], &in.scales[3], o.data()};
    EXPECT_EQ(op_tensor_list(d).count, 8);
    run(d, t, ws.data());
    return o;
}

// Float64 from the definition: per query row, the scores over the visible
// keys, softmax, P.V, then O / o_scale rounded to f32 and to e4m3.
std::vector<int> expected_codes(const Case &c, const Inputs &in, float scale) {
    std::vector<int> out;
    const int64_t D = c.head_dim, group = c.heads / c.kv_heads;
    for (int64_t b = 0; b < c.batch; ++b)
        for (int64_t h = 0; h < c.heads; ++h) {
            const int64_t qb = (b * c.heads + h) * c.seq_q, kb = (b * c.kv_heads + h / group) * c.seq_kv;
            for (int64_t i = 0; i < c.seq_q; ++i) {
                const int64_t n = c.causal ? std::clamp<int64_t>(i + c.seq_kv - c.seq_q + 1, 0, c.seq_kv) : c.seq_kv;
                std::vector<double> s(static_cast<size_t>(n));
                double mx = -INFINITY, sum = 0;
                for (int64_t j = 0; j < n; ++j) {
                    double dot = 0;
                    for (int64_t e = 0; e < D; ++e)
                        dot += e4m3_by_definition(in.q[size_t((qb + i) * D + e)]) * in.scales[0] *
                               (e4m3_by_definition(in.k[size_t((kb + j) * D + e)]) * in.scales[1]);
                    s[size_t(j)] = double(scale) * dot;
                    mx = std::max(mx, s[size_t(j)]);
                }
                for (auto &x : s) sum += (x = std::exp(x - mx));
                for (int64_t e = 0; e < D; ++e) {
                    double o = 0;
                    for (int64_t j = 0; j < n; ++j)
                        o += s[size_t(j)] / sum * e4m3_by_definition(in.v[size_t((kb + j) * D + e)]) * in.scales[2];
                    out.push_back(nearest_code(double(float(n ? o * in.scales[3] : 0.0))));
                }
            }
        }
    return out;
}

TEST(NaiveFp8Attention, BothVariantsGiveTheNearestE4m3OfTheExactResult) {
    const Case cases[] = {
        {1, 2, 2, 5, 5, 16, false},   {2, 4, 2, 7, 70, 8, true},  // grouped-query, bottom-right causal
        {1, 2, 1, 33, 65, 32, false}, {1, 1, 1, 1, 40, 64, true}, // one K/V head; decoding
        {1, 1, 1, 6, 3, 8, true},                                 // rows that see no key: zeros
    };
    uint32_t seed = 1;
    for (const Case &c : cases)
        for (const int variant : {int(OPB_ATTENTION_COMPOSED), int(OPB_ATTENTION_FUSED)}) {
            const opb_op_desc d = fp8_attention(c, variant);
            ASSERT_EQ(validate_desc(d), "");
            Inputs in = make_inputs(c, seed++);
            const std::vector<uint8_t> got = run_naive(d, in);
            const std::vector<int> want = expected_codes(c, in, effective_scale(d));
            ASSERT_EQ(got.size(), want.size());
            int64_t nonzero = 0;
            for (size_t i = 0; i < got.size(); ++i) {
                ASSERT_EQ(int(got[i]), want[i]) << "element " << i << " variant " << variant << " Sq " << c.seq_q;
                nonzero += (got[i] & 0x7f) != 0;
            }
            EXPECT_GE(nonzero, int64_t(got.size()) / 2) << "O spans e4m3's range, not zeros";
        }
}

TEST(NaiveFp8Attention, EveryScaleIsApplied) {
    // Each scale changes O: doubling q_scale or k_scale sharpens the softmax,
    // doubling v_scale or o_scale doubles the stored O.
    const Case c{1, 2, 2, 9, 9, 16, false};
    Inputs base = make_inputs(c, 5);
    const opb_op_desc d = fp8_attention(c, OPB_ATTENTION_FUSED);
    const std::vector<uint8_t> o0 = run_naive(d, base);
    for (int s = 0; s < 4; ++s) {
        Inputs in = base;
        in.scales[s] *= 2.0f;
        const std::vector<uint8_t> o = run_naive(d, in);
        int64_t differ = 0;
        for (size_t i = 0; i < o.size(); ++i) differ += o[i] != o0[i];
        EXPECT_GT(differ, int64_t(o.size()) / 2) << "scale " << s;
        if (s >= 2) // v and o are linear: exactly a factor of two where no subnormal or saturation intervenes
            for (size_t i = 0; i < o.size(); ++i) {
                const double a = e4m3_to_f32(o0[i]), b = e4m3_to_f32(o[i]);
                if (std::fabs(a) > 0x1p-6 && std::fabs(a) < 200) {
                    EXPECT_EQ(b, 2 * a) << i;
                }
            }
    }
}

TEST(NaiveFp8Attention, TheFormNeedsAbi17AndCarriesFourScaleTensors) {
    const opb_op_desc d = fp8_attention({1, 4, 2, 8, 8, 64, true}, OPB_ATTENTION_FUSED);
    EXPECT_EQ(validate_desc(d), "");
    EXPECT_EQ(desc_needs_abi_minor(d), 7u);
    const std::string gap = plugin_abi_gap(d, (1u << 16) | 6u);
    EXPECT_NE(gap.find("FP8 attention"), std::string::npos) << gap;
    EXPECT_EQ(plugin_abi_gap(d, OPB_ABI_VERSION), "");
    const auto t = op_tensors(d);
    ASSERT_EQ(t.size(), 8u);
    const char *names[] = {"Q", "K", "V", "q_scale", "k_scale", "v_scale", "o_scale", "O"};
    for (size_t i = 0; i < t.size(); ++i) {
        EXPECT_EQ(t[i].name, names[i]);
        EXPECT_EQ(t[i].dtype, i >= 3 && i < 7 ? OPB_DTYPE_F32 : OPB_DTYPE_F8_E4M3) << names[i];
        EXPECT_EQ(t[i].is_output, i == 7);
    }
    EXPECT_EQ(t[3].shape, std::vector<int64_t>{1});
    // Bytes: one per e4m3 element plus four f32 scales.
    EXPECT_EQ(op_bytes(d), double(8 * 64 * (4 + 2 + 2 + 4) + 16));
    const Tolerance tol = op_info(OPB_OP_ATTENTION)->tolerance(d);
    EXPECT_NE(std::string(tol.why).find("fp8"), std::string::npos);
    // Other ops still refuse the dtype, naming the ops that take it.
    EXPECT_NE(validate_desc(make_desc(OPB_OP_SOFTMAX, OPB_DTYPE_F8_E4M3))
                  .find("matmul (and linear layers) and "
                        "attention only"),
              std::string::npos);
}

} // namespace
} // namespace opbench::naive
