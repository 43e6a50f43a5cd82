// ops.hpp: each op's tensors, FLOP and byte formulas, causal masking counts,
// description validation, names, and the bf16/f16 conversions.
#include "opbench/ops.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <set>
#include <string>

using namespace opbench;

namespace {
opb_op_desc matmul(int64_t b, int64_t m, int64_t n, int64_t k, bool bias = false, bool ta = false, bool tb = false) {
    opb_op_desc d = make_desc(OPB_OP_MATMUL, OPB_DTYPE_F32);
    d.p.matmul = {b, m, n, k, ta, tb, bias, 0, 0.0f, 0, 0};
    return d;
}
opb_op_desc attention(int64_t b, int64_t h, int64_t sq, int64_t skv, int64_t dh, bool causal, int dtype = 0) {
    opb_op_desc d = make_desc(OPB_OP_ATTENTION, dtype, OPB_ATTENTION_FUSED);
    d.p.attention = {b, h, sq, skv, dh, 0.0f, causal, 0};
    return d;
}
} // namespace

TEST(OpFlops, MatmulIsTwoMnkPerBatchPlusBias) {
    EXPECT_EQ(op_flops(matmul(1, 1024, 1024, 1024)), 2.0 * 1024 * 1024 * 1024);
    EXPECT_EQ(op_flops(matmul(3, 4, 5, 6, true)), 3 * (2.0 * 4 * 5 * 6 + 4 * 5));
}

TEST(OpBytes, MatmulMovesEachTensorOnceInItsDtype) {
    opb_op_desc d = matmul(2, 4, 5, 6, true);
    EXPECT_EQ(op_bytes(d), 4.0 * (2 * 4 * 6 + 2 * 6 * 5 + 5 + 2 * 4 * 5));
    d.dtype = OPB_DTYPE_BF16;
    EXPECT_EQ(op_bytes(d), 2.0 * (2 * 4 * 6 + 2 * 6 * 5 + 5 + 2 * 4 * 5));
    EXPECT_DOUBLE_EQ(arithmetic_intensity(d), op_flops(d) / op_bytes(d));
}

TEST(OpTensors, TransposesChangeTheStoredShapesNotTheOutput) {
    auto t = op_tensors(matmul(2, 3, 4, 5, false, true, true));
    ASSERT_EQ(t.size(), 3u);
    EXPECT_EQ(t[0].shape, (std::vector<int64_t>{2, 5, 3}));
    EXPECT_EQ(t[1].shape, (std::vector<int64_t>{2, 4, 5}));
    EXPECT_EQ(t[2].shape, (std::vector<int64_t>{2, 3, 4}));
    EXPECT_TRUE(t[2].is_output);
}

TEST(CausalMask, BottomRightAlignedCounts) {
    // square: row r sees r + 1 columns
    EXPECT_EQ(causal_visible(0, 4, 4), 1);
    EXPECT_EQ(causal_visible(3, 4, 4), 4);
    EXPECT_EQ(visible_pairs(4, 4, true), 10);
    // decoding: one query row sees every key
    EXPECT_EQ(causal_visible(0, 1, 96), 96);
    // more queries than keys: the first rows see nothing
    EXPECT_EQ(causal_visible(0, 4, 2), 0);
    EXPECT_EQ(causal_visible(3, 4, 2), 2);
    EXPECT_EQ(visible_pairs(4, 4, false), 16);
}

TEST(OpFlops, AttentionCountsOnlyUnmaskedScores) {
    const double full = op_flops(attention(2, 3, 8, 8, 16, false));
    EXPECT_EQ(full, 2.0 * 3 * 64 * (4.0 * 16 + 6));
    EXPECT_EQ(op_flops(attention(2, 3, 8, 8, 16, true)), 2.0 * 3 * 36 * (4.0 * 16 + 6));
    // bytes: Q, K, V read and O written, whatever the variant
    EXPECT_EQ(op_bytes(attention(1, 1, 8, 8, 16, false)), 4.0 * 4 * 8 * 16);
}

TEST(OpBytes, GroupedQueryAttentionCountsKvOncePerKvHead) {
    // Llama-3-8B decode: 32 query heads, 8 K/V heads, head_dim 128, 8k cache.
    opb_op_desc mha = attention(1, 32, 1, 8192, 128, true);
    opb_op_desc gqa = mha;
    gqa.p.attention.kv_heads = 8;
    const double q_o = 2.0 * 32 * 1 * 128, kv_mha = 2.0 * 32 * 8192 * 128;
    EXPECT_EQ(op_bytes(mha), 4.0 * (q_o + kv_mha));
    EXPECT_EQ(op_bytes(gqa), 4.0 * (q_o + kv_mha / 4)); // K and V a quarter of multi-head's
    // FLOPs are per query head: the same work, a quarter of the K/V traffic.
    EXPECT_EQ(op_flops(gqa), op_flops(mha));
    auto t = op_tensors(gqa);
    EXPECT_EQ(t[1].shape, (std::vector<int64_t>{1, 8, 8192, 128}));
    EXPECT_EQ(t[2].shape, (std::vector<int64_t>{1, 8, 8192, 128}));
    EXPECT_EQ(t[3].shape, (std::vector<int64_t>{1, 32, 1, 128}));
    // kv_heads 0 (an older writer's description) is heads.
    EXPECT_EQ(attention_kv_heads(mha.p.attention), 32);
    // query head h of batch b reads K/V slice b * kv_heads + h / 4
    EXPECT_EQ(attention_kv_slice(gqa.p.attention, 0), 0);
    EXPECT_EQ(attention_kv_slice(gqa.p.attention, 3), 0);
    EXPECT_EQ(attention_kv_slice(gqa.p.attention, 4), 1);
    EXPECT_EQ(attention_kv_slice(gqa.p.attention, 31), 7);
}

TEST(ValidateDesc, KvHeadsMustDivideHeads) {
    opb_op_desc d = attention(1, 32, 1, 64, 128, true);
    d.p.attention.kv_heads = 12;
    EXPECT_NE(validate_desc(d).find("heads 32 is not a multiple of kv_heads 12"), std::string::npos)
        << validate_desc(d);
    d.p.attention.kv_heads = -1;
    EXPECT_NE(validate_desc(d).find("kv_heads must be >= 0"), std::string::npos) << validate_desc(d);
    d.p.attention.kv_heads = 1; // multi-query attention
    EXPECT_EQ(validate_desc(d), "");
}

TEST(PluginAbiGap, OnlyGroupedKvAndRopeNeedAnAbi12Plugin) {
    const uint32_t abi11 = (1u << 16) | 1u, abi12 = (1u << 16) | 2u;
    opb_op_desc mha = attention(1, 32, 1, 64, 128, true);
    EXPECT_EQ(plugin_abi_gap(mha, abi11), "");
    mha.p.attention.kv_heads = 32; // given, equal to heads: an old plugin reads it right
    EXPECT_EQ(plugin_abi_gap(mha, abi11), "");
    opb_op_desc gqa = mha;
    gqa.p.attention.kv_heads = 8;
    EXPECT_NE(plugin_abi_gap(gqa, abi11).find("ABI 1.1, which predates kv_heads"), std::string::npos);
    EXPECT_EQ(plugin_abi_gap(gqa, abi12), "");
    opb_op_desc rope = make_desc(OPB_OP_ROPE, OPB_DTYPE_F32);
    EXPECT_NE(plugin_abi_gap(rope, abi11).find("the rope op"), std::string::npos);
    EXPECT_EQ(plugin_abi_gap(rope, abi12), "");
}

TEST(Int8Matmul, TensorsHaveTheirOwnDtypesAndBytesCountEachOnce) {
    opb_op_desc d = make_desc(OPB_OP_MATMUL, OPB_DTYPE_S8);
    d.p.matmul.batch = 2;
    d.p.matmul.m = 16;
    d.p.matmul.n = 64;
    d.p.matmul.k = 32;
    d.p.matmul.has_bias = 1;
    ASSERT_EQ(validate_desc(d), "");
    const auto t = op_tensors(d);
    ASSERT_EQ(t.size(), 5u);
    EXPECT_EQ(t[0].name, "A");
    EXPECT_EQ(t[0].dtype, OPB_DTYPE_U8); // the default activations
    EXPECT_EQ(t[1].dtype, OPB_DTYPE_S8);
    EXPECT_EQ(t[2].name, "w_scale");
    EXPECT_EQ(t[2].shape, std::vector<int64_t>{64});
    EXPECT_EQ(t[2].dtype, OPB_DTYPE_F32);
    EXPECT_EQ(t[3].name, "bias");
    EXPECT_EQ(t[3].dtype, OPB_DTYPE_F32);
    EXPECT_EQ(t[4].dtype, OPB_DTYPE_F32);
    // 1-byte A and B, 4-byte scales, bias and C.
    EXPECT_EQ(op_bytes(d), 2.0 * 16 * 32 + 2.0 * 32 * 64 + 4.0 * 64 + 4.0 * 64 + 4.0 * 2 * 16 * 64);
    // One multiply and one add per integer MAC, as f32's; plus the bias add.
    EXPECT_EQ(op_flops(d), 2.0 * 2 * 16 * 64 * 32 + 2.0 * 16 * 64);
    d.p.matmul.out_dtype = OPB_DTYPE_BF16;
    EXPECT_EQ(op_tensors(d).back().dtype, OPB_DTYPE_BF16);
    EXPECT_EQ(op_bytes(d), 2.0 * 16 * 32 + 2.0 * 32 * 64 + 4.0 * 64 + 4.0 * 64 + 2.0 * 2 * 16 * 64);
    // An f32 matmul's tensors are all f32, as before.
    opb_op_desc f = d;
    f.dtype = OPB_DTYPE_F32;
    for (const auto &x : op_tensors(f)) EXPECT_EQ(x.dtype, OPB_DTYPE_F32) << x.name;
    EXPECT_EQ(op_tensors(f).size(), 4u); // no w_scale
}

TEST(Int8Matmul, ValidationRefusesWhatNoInt8MatmulIs) {
    opb_op_desc d = make_desc(OPB_OP_MATMUL, OPB_DTYPE_S8);
    d.p.matmul.batch = d.p.matmul.m = d.p.matmul.n = d.p.matmul.k = 8;
    ASSERT_EQ(validate_desc(d), "");
    auto refused = [](opb_op_desc x, const char *what) {
        EXPECT_NE(validate_desc(x).find(what), std::string::npos) << validate_desc(x);
    };
    opb_op_desc x = d;
    x.p.matmul.act_zero_point = 256;
    refused(x, "act_zero_point must be in 0..255");
    x = d;
    x.p.matmul.act_dtype = OPB_DTYPE_S8; // s8 activations keep zero point 0
    refused(x, "and 0 for s8");
    x = d;
    x.p.matmul.act_scale = 0.0f;
    refused(x, "act_scale must be > 0");
    x = d;
    x.p.matmul.out_dtype = OPB_DTYPE_F16;
    refused(x, "out_dtype must be f32 or bf16");
    x = d;
    x.dtype = OPB_DTYPE_U8;
    refused(x, "u8 is an activation type");
    opb_op_desc sm = make_desc(OPB_OP_SOFTMAX, OPB_DTYPE_S8);
    sm.p.softmax = {1, 4, 4, 0.0f, 0};
    refused(sm, "dtype s8 (int8 weights) is for matmul only");
}

// int8 matmul (ABI 1.3) and quantize (ABI 1.4): a plugin one minor older is
// told which feature it predates; the minor that brought it reads it.
TEST(PluginAbiGap, Int8MatmulNeedsAbi13AndQuantizeAbi14) {
    struct Row {
        opb_op_desc desc;
        uint32_t minor;
        const char *predates;
    };
    for (const Row &r : {Row{make_desc(OPB_OP_MATMUL, OPB_DTYPE_S8), 3, "int8 matmul (dtype s8)"},
                         Row{make_desc(OPB_OP_QUANTIZE, OPB_DTYPE_F32), 4, "the quantize op (ABI 1.4)"}}) {
        const uint32_t older = (1u << 16) | (r.minor - 1), introduced = (1u << 16) | r.minor;
        const std::string gap = plugin_abi_gap(r.desc, older);
        EXPECT_NE(gap.find("ABI 1." + std::to_string(r.minor - 1) + ", which predates " + r.predates),
                  std::string::npos)
            << gap;
        EXPECT_EQ(plugin_abi_gap(r.desc, introduced), "") << r.predates;
    }
    EXPECT_EQ(plugin_abi_gap(make_desc(OPB_OP_MATMUL, OPB_DTYPE_BF16), (1u << 16) | 2u), "");
}

TEST(Quantize, TensorsBytesFlopsAndDefaultsMatchTheInt8MatmulsActivations) {
    opb_op_desc d = make_desc(OPB_OP_QUANTIZE, OPB_DTYPE_BF16);
    d.p.quantize.rows = 8;
    d.p.quantize.cols = 64;
    ASSERT_EQ(validate_desc(d), "");
    // The defaults are what an int8 matmul's activations are by default.
    const opb_op_desc mm = make_desc(OPB_OP_MATMUL, OPB_DTYPE_S8);
    EXPECT_EQ(d.p.quantize.scale, mm.p.matmul.act_scale);
    EXPECT_EQ(d.p.quantize.zero_point, mm.p.matmul.act_zero_point);
    EXPECT_EQ(d.p.quantize.out_dtype, mm.p.matmul.act_dtype);
    const auto t = op_tensors(d);
    ASSERT_EQ(t.size(), 2u);
    EXPECT_EQ(t[0].dtype, OPB_DTYPE_BF16);
    EXPECT_EQ(t[1].dtype, OPB_DTYPE_U8);
    EXPECT_TRUE(t[1].is_output);
    EXPECT_EQ(op_bytes(d), 2.0 * 8 * 64 + 1.0 * 8 * 64); // bf16 in, one byte out
    EXPECT_EQ(op_flops(d), 2.0 * 8 * 64);                // scale and shift per element
}

TEST(Quantize, ValidationRefusesWhatNoQuantisationIs) {
    opb_op_desc d = make_desc(OPB_OP_QUANTIZE, OPB_DTYPE_F32);
    d.p.quantize.rows = d.p.quantize.cols = 4;
    ASSERT_EQ(validate_desc(d), "");
    auto refused = [](opb_op_desc x, const char *what) {
        EXPECT_NE(validate_desc(x).find(what), std::string::npos) << validate_desc(x);
    };
    opb_op_desc x = d;
    x.p.quantize.scale = -1.0f;
    refused(x, "scale must be > 0");
    x = d;
    x.p.quantize.out_dtype = OPB_DTYPE_F32;
    refused(x, "out_dtype must be u8, s8 or f8e4m3");
    x = d;
    x.p.quantize.out_dtype = OPB_DTYPE_S8; // s8 keeps zero point 0
    refused(x, "0 for s8");
    x = d;
    x.p.quantize.zero_point = 300;
    refused(x, "zero_point must be in 0..255");
    x = d;
    x.dtype = OPB_DTYPE_S8;
    refused(x, "a quantize op's dtype is its input's");
    x.dtype = OPB_DTYPE_U8; // quantize's own wording, not the int8 matmul's
    refused(x, "a quantize op's dtype is its input's");
    x.dtype = OPB_DTYPE_F8_E4M3; // FP8 is an output type (ABI 1.7), not an input's
    refused(x, "out_dtype = \"u8\", \"s8\" or \"f8e4m3\"");
}

TEST(Int8Conversions, LoadsIntegersAndStoresRoundedSaturated) {
    int8_t s[3];
    uint8_t u[3];
    store_from_f32(s, OPB_DTYPE_S8, 0, -200.0f);
    store_from_f32(s, OPB_DTYPE_S8, 1, 2.5f); // ties to even
    store_from_f32(s, OPB_DTYPE_S8, 2, 127.4f);
    store_from_f32(u, OPB_DTYPE_U8, 0, -3.0f);
    store_from_f32(u, OPB_DTYPE_U8, 1, 254.6f);
    store_from_f32(u, OPB_DTYPE_U8, 2, 999.0f);
    EXPECT_EQ(load_as_f32(s, OPB_DTYPE_S8, 0), -128.0f);
    EXPECT_EQ(load_as_f32(s, OPB_DTYPE_S8, 1), 2.0f);
    EXPECT_EQ(load_as_f32(s, OPB_DTYPE_S8, 2), 127.0f);
    EXPECT_EQ(load_as_f32(u, OPB_DTYPE_U8, 0), 0.0f);
    EXPECT_EQ(load_as_f32(u, OPB_DTYPE_U8, 1), 255.0f);
    EXPECT_EQ(load_as_f32(u, OPB_DTYPE_U8, 2), 255.0f);
    EXPECT_EQ(dtype_size(OPB_DTYPE_S8), 1u);
    EXPECT_EQ(dtype_size(OPB_DTYPE_U8), 1u);
}

TEST(OpFlops, RopeIsSixPerRotatedPairOfQAndK) {
    opb_op_desc d = make_desc(OPB_OP_ROPE, OPB_DTYPE_BF16, OPB_ROPE_HALF_SPLIT);
    d.p.rope = {2, 32, 8, 128, 128, 0, 500000.0f, 0}; // Llama-3: rotary_dim = head_dim
    EXPECT_EQ(validate_desc(d), "");
    EXPECT_EQ(op_flops(d), 2.0 * (32 + 8) * 128 * 64 * 6);
    // bytes: Q and K read, Qr and Kr written, once each
    EXPECT_EQ(op_bytes(d), 2.0 * 2 * (2.0 * 32 * 128 * 128 + 2.0 * 8 * 128 * 128));
    d.p.rope.rotary_dim = 32; // partial rotation: fewer FLOPs, the same bytes
    EXPECT_EQ(op_flops(d), 2.0 * (32 + 8) * 128 * 16 * 6);
    d.p.rope.rotary_dim = 33;
    EXPECT_NE(validate_desc(d).find("rotary_dim must be even"), std::string::npos) << validate_desc(d);
    d.p.rope.rotary_dim = 256;
    EXPECT_NE(validate_desc(d).find("rotary_dim must be even and in 2..128"), std::string::npos);
    d.p.rope.rotary_dim = 0;
    d.p.rope.theta = 0.0f;
    EXPECT_NE(validate_desc(d).find("theta must be > 0"), std::string::npos);
}

TEST(OpFlops, ElementwiseAndNormsPerElementCounts) {
    opb_op_desc g = make_desc(OPB_OP_GELU, OPB_DTYPE_F32, OPB_GELU_TANH);
    g.p.eltwise = {10, 20};
    EXPECT_EQ(op_flops(g), 9.0 * 200);
    g.variant = OPB_GELU_ERF;
    EXPECT_EQ(op_flops(g), 5.0 * 200);
    opb_op_desc ln = make_desc(OPB_OP_LAYERNORM, OPB_DTYPE_F32);
    ln.p.norm = {10, 20, 1e-5f};
    EXPECT_EQ(op_flops(ln), 7.0 * 200);
    EXPECT_EQ(op_bytes(ln), 4.0 * (2 * 200 + 2 * 20));
}

TEST(ValidateDesc, RefusesNonsenseWithTheFieldName) {
    EXPECT_EQ(validate_desc(matmul(1, 8, 8, 8)), "");
    EXPECT_NE(validate_desc(matmul(1, 0, 8, 8)).find("M must be > 0"), std::string::npos);
    opb_op_desc a = attention(1, 1, 4, 4, 0, false);
    EXPECT_NE(validate_desc(a).find("head_dim"), std::string::npos);
    opb_op_desc v = matmul(1, 8, 8, 8);
    v.variant = 7;
    EXPECT_NE(validate_desc(v).find("unknown variant"), std::string::npos);
    opb_op_desc n = make_desc(OPB_OP_RMSNORM, OPB_DTYPE_F32);
    n.p.norm = {4, 4, 0.0f};
    EXPECT_NE(validate_desc(n).find("eps"), std::string::npos);
}

TEST(Names, RoundTripForEveryOpDtypeAndVariant) {
    for (int op = 0; op < OPB_OP_COUNT; ++op) {
        EXPECT_EQ(op_from_name(op_name(op)), op);
        for (std::size_t v = 0; v < variant_names(op).size(); ++v)
            EXPECT_EQ(variant_from_name(op, variant_name(op, int(v))), int(v));
    }
    for (int dt = 0; dt < 3; ++dt) EXPECT_EQ(dtype_from_name(dtype_name(dt)), dt);
    EXPECT_FALSE(op_from_name("conv2d").has_value());
}

TEST(Conversions, Bf16RoundsToNearestEven) {
    EXPECT_EQ(f32_to_bf16(1.0f), 0x3f80);
    EXPECT_EQ(bf16_to_f32(0x3f80), 1.0f);
    // 1 + 2^-8 is halfway between two bf16 values: ties to even (down)
    EXPECT_EQ(f32_to_bf16(1.0f + std::ldexp(1.0f, -8)), 0x3f80);
    // 1 + 3 * 2^-8 is halfway too: ties to even (up)
    EXPECT_EQ(f32_to_bf16(1.0f + 3 * std::ldexp(1.0f, -8)), 0x3f82);
    EXPECT_TRUE(std::isnan(bf16_to_f32(f32_to_bf16(std::numeric_limits<float>::quiet_NaN()))));
}

TEST(Conversions, F16RoundTripsExactValuesAndHandlesRangeEdges) {
    for (float v : {0.0f, 1.0f, -2.5f, 65504.0f, 0.000061035156f /* min normal */, 5.9604645e-08f /* min subnormal */})
        EXPECT_EQ(f16_to_f32(f32_to_f16(v)), v) << v;
    EXPECT_TRUE(std::isinf(f16_to_f32(f32_to_f16(70000.0f))));
    EXPECT_EQ(f16_to_f32(f32_to_f16(1e-9f)), 0.0f);
    EXPECT_EQ(f32_to_f16(1.0f + std::ldexp(1.0f, -11)), 0x3c00); // tie to even
}

// ---- the op table: invariants every row keeps ---------------------------------

TEST(OpTable, RowsAreInEnumOrderWithUniqueNamesAndKeys) {
    std::set<std::string> names;
    for (int i = 0; i < OPB_OP_COUNT; ++i) {
        const OpInfo &row = opbench::kOps[i];
        EXPECT_EQ(row.op, i);
        EXPECT_EQ(opbench::op_info(i), &row);
        EXPECT_TRUE(names.insert(row.name).second) << row.name;
        EXPECT_EQ(opbench::op_from_name(row.name), i);
        ASSERT_FALSE(row.variants.empty()) << row.name;
        ASSERT_NE(row.tensors, nullptr);
        ASSERT_NE(row.flops, nullptr);
        ASSERT_NE(row.validate, nullptr);
        ASSERT_NE(row.tolerance, nullptr);
        // Ops whose reference costs far more than reading the output have a
        // fast check (fast_checks.hpp); the linear ones compare in full.
        if (row.op == OPB_OP_MATMUL)
            EXPECT_EQ(row.fast_check, &opbench::freivalds_matmul);
        else if (row.op == OPB_OP_ATTENTION)
            EXPECT_EQ(row.fast_check, &opbench::sampled_attention);
        else
            EXPECT_EQ(row.fast_check, nullptr) << row.name;
        const opbench::Tolerance t = row.tolerance(opbench::make_desc(row.op, OPB_DTYPE_BF16));
        EXPECT_GT(t.max_pointwise, 0.0) << row.name;
        EXPECT_STRNE(t.pointwise_why, "") << row.name;
        std::set<std::string> keys, labels, fields;
        for (const auto &p : row.params) {
            EXPECT_TRUE(keys.insert(p.key).second) << row.name << " key " << p.key;
            if (p.label) {
                EXPECT_TRUE(labels.insert(p.label).second) << row.name << " label " << p.label;
            }
            if (p.field) {
                EXPECT_TRUE(fields.insert(p.field).second) << row.name << " field " << p.field;
            }
            EXPECT_FALSE(p.required && p.has_default) << row.name << " " << p.key;
            ASSERT_NE(p.write, nullptr);
            ASSERT_NE(p.value, nullptr);
            // Today's keys all have a place in the documented sweep order.
            bool in_order = false;
            for (auto k : opbench::kParamSweepOrder) in_order |= k == p.key;
            EXPECT_TRUE(in_order) << row.name << " key " << p.key << " is not in kParamSweepOrder";
        }
    }
    EXPECT_EQ(opbench::op_info(-1), nullptr);
    EXPECT_EQ(opbench::op_info(OPB_OP_COUNT), nullptr);
    EXPECT_EQ(opbench::op_name(OPB_OP_COUNT), "?");
}

TEST(OpTable, WritesReadBackAndTensorListsMatchOpTensors) {
    for (const OpInfo &row : opbench::kOps) {
        opb_op_desc d = opbench::make_desc(row.op, OPB_DTYPE_F32);
        int64_t next = 3;
        for (const auto &p : row.params) {
            if (p.kind != opbench::ParamKind::Dim || !p.field) continue; // aliases set other fields
            opbench::ParamValue v;
            v.i = next++;
            // A key bound by an earlier one (kv_heads must divide heads)
            // refuses most values with the reason; 1 satisfies every such rule.
            if (std::string why = p.write(d, v); !why.empty()) {
                EXPECT_NE(why.find(p.key), std::string::npos) << row.name << " " << p.key << ": " << why;
                v.i = 1;
            }
            EXPECT_EQ(p.write(d, v), "") << row.name << " " << p.key;
            EXPECT_EQ(p.value(d), double(v.i)) << row.name << " " << p.key;
        }
        const auto list = opbench::op_tensor_list(d);
        const auto specs = opbench::op_tensors(d);
        ASSERT_EQ(std::size_t(list.count), specs.size()) << row.name;
        ASSERT_LE(list.count, opbench::kMaxOpTensors);
        bool has_output = false;
        for (int i = 0; i < list.count; ++i) {
            EXPECT_EQ(specs[i].name, list.items[i].name);
            EXPECT_EQ(specs[i].elements(), list.items[i].elements());
            has_output |= specs[i].is_output;
        }
        EXPECT_TRUE(has_output) << row.name;
    }
}
