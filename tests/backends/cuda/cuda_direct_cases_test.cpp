// The direct cuBLASLt / cuDNN reference's host side (backends/cuda/bench/
// direct_cases.hpp; issue 41 item 5): its shapes are opbench's, its names
// and FLOPs are opbench's, its command line, sampling rule, float64
// references and JSON. No GPU needed.
#include "direct_cases.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <sstream>

using namespace opbench::cuda_direct;

namespace {
std::optional<Options> parse(std::vector<const char *> args, std::string &error) {
    args.insert(args.begin(), "cuda-direct-bench");
    return parse_args(static_cast<int>(args.size()), args.data(), error);
}
bool has(const std::vector<Case> &cases, const std::string &name) {
    for (const Case &c : cases)
        if (case_name(c, Cache::Cold, Timing::Canonical) == name) return true;
    return false;
}
} // namespace

TEST(CudaDirectCases, TheShapesAreTheGemmAndQuickSuitesAndTheAttentionPrefill) {
    const std::vector<Case> cases = default_cases();
    // gemm.toml: square, linear (x W^T + b at 2048 tokens), linear.decode.
    for (const char *dt : {"variant:default/dt:f32", "variant:tf32/dt:f32", "variant:default/dt:bf16"}) {
        for (const char *shape :
             {"B:1/M:512/N:512/K:512", "B:1/M:2048/N:2048/K:2048", "B:1/M:2048/N:11008/K:4096/tB:1/bias:1",
              "B:1/M:1/N:4096/K:4096/tB:1", "B:1/M:32/N:96/K:64/tB:1/bias:1", "B:4/M:16/N:24/K:32/tA:1"})
            EXPECT_TRUE(has(cases, std::string("matmul/") + shape + "/" + dt + "/cache:cold/be:cuda-direct"))
                << shape << " " << dt;
    }
    // fp8 runs TN (B stored [N, K]) and never with a transposed A.
    EXPECT_TRUE(
        has(cases, "matmul/B:1/M:2048/N:2048/K:2048/tB:1/out:bf16/variant:default/dt:f8e4m3/cache:cold/be:cuda-direct"));
    int fp8 = 0, attention = 0;
    std::set<std::string> names;
    for (const Case &c : cases) {
        EXPECT_TRUE(names.insert(case_name(c, Cache::Cold, Timing::Canonical)).second) << "duplicate name";
        if (c.dtype == Dtype::Fp8) {
            ++fp8;
            EXPECT_TRUE(c.mm.trans_b);
            EXPECT_FALSE(c.mm.trans_a);
        }
        if (c.op == Op::Attention) {
            ++attention;
            EXPECT_EQ(c.dtype, Dtype::Bf16);
            EXPECT_EQ(c.at.head_dim, 128);
        }
    }
    EXPECT_EQ(fp8, 12);
    // attention.toml's prefill.bf16 and the FlashAttention-3 setting (batch x seq 16k, heads x dim 2048).
    EXPECT_EQ(attention, 4);
    EXPECT_TRUE(has(cases, "attention/B:1/H:32/S:4096/D:128/causal:1/variant:fused/dt:bf16/cache:cold/be:cuda-direct"));
    EXPECT_TRUE(has(cases, "attention/B:4/H:16/S:4096/D:128/causal:1/variant:fused/dt:bf16/cache:cold/be:cuda-direct"));
}

TEST(CudaDirectCases, NamesFollowOpbenchsWithTheCacheAndTheTimingOrder) {
    Case c;
    c.mm = {1, 2048, 2048, 2048, false, false, false};
    c.dtype = Dtype::Bf16;
    EXPECT_EQ(case_name(c, Cache::Warm, Timing::Canonical),
              "matmul/B:1/M:2048/N:2048/K:2048/variant:default/dt:bf16/be:cuda-direct");
    EXPECT_EQ(case_name(c, Cache::Cold, Timing::OpbenchOrder),
              "matmul/B:1/M:2048/N:2048/K:2048/variant:default/dt:bf16/cache:cold/be:cuda-direct/"
              "timing:opbench-order");
    Case a;
    a.op = Op::Attention;
    a.dtype = Dtype::Bf16;
    a.at = {2, 8, 2, 1, 96, 64, true};
    EXPECT_EQ(case_name(a, Cache::Warm, Timing::Canonical),
              "attention/B:2/H:8/KVH:2/Sq:1/Skv:96/D:64/causal:1/variant:fused/dt:bf16/be:cuda-direct");
}

TEST(CudaDirectCases, FlopsAreOpbenchsAndThePapersBeside) {
    Case c;
    c.mm = {1, 32, 96, 64, false, true, true};
    EXPECT_DOUBLE_EQ(case_flops(c), 2.0 * 32 * 96 * 64 + 32 * 96); // as opbench's quick matmul.linear: 396288
    EXPECT_DOUBLE_EQ(case_flops(c), 396288);
    EXPECT_DOUBLE_EQ(paper_flops(c), case_flops(c));
    Case a;
    a.op = Op::Attention;
    a.dtype = Dtype::Bf16;
    a.at = {1, 2, 2, 64, 64, 32, false};
    EXPECT_DOUBLE_EQ(case_flops(a), 1097728); // opbench's quick attention entry
    a.at.causal = true;
    EXPECT_DOUBLE_EQ(case_flops(a), 557440);
    // FlashAttention-3's setting: 4 x 16 heads x 4096^2 x 128, x4, halved for causal.
    a.at = {4, 16, 16, 4096, 4096, 128, true};
    EXPECT_DOUBLE_EQ(paper_flops(a), 4.0 * 4 * 16 * 4096.0 * 4096 * 128 / 2);
    // opbench counts the diagonal and the softmax: a little more than the paper.
    EXPECT_GT(case_flops(a), paper_flops(a));
    EXPECT_LT(case_flops(a), paper_flops(a) * 1.02);
}

TEST(CudaDirectCases, ArgumentsParseAndBadOnesSayWhy) {
    std::string error;
    auto o = parse({}, error);
    ASSERT_TRUE(o);
    EXPECT_EQ(o->caches.size(), 1u);
    EXPECT_EQ(o->caches[0], Cache::Cold);
    EXPECT_EQ(o->timings.size(), 2u);
    EXPECT_EQ(o->warmup, 2);
    EXPECT_EQ(o->repetitions, 3);

    o = parse({"--cache", "both", "--timing=canonical", "--warmup", "0", "--min-time", "0.25", "--max-time=1",
               "--repetitions", "5", "--calls", "10", "--filter", "bf16", "--out", "x.json", "--no-sdpa-stats"},
              error);
    ASSERT_TRUE(o) << error;
    EXPECT_EQ(o->caches.size(), 2u);
    ASSERT_EQ(o->timings.size(), 1u);
    EXPECT_EQ(o->timings[0], Timing::Canonical);
    EXPECT_EQ(o->warmup, 0);
    EXPECT_DOUBLE_EQ(o->min_time, 0.25);
    EXPECT_DOUBLE_EQ(o->max_time, 1.0);
    EXPECT_EQ(o->repetitions, 5);
    EXPECT_EQ(o->calls, 10);
    EXPECT_EQ(o->filter, "bf16");
    EXPECT_EQ(o->out, "x.json");
    EXPECT_FALSE(o->sdpa_stats);

    for (auto bad : std::vector<std::vector<const char *>>{{"--cache", "hot"},
                                                           {"--warmup", "-1"},
                                                           {"--repetitions", "0"},
                                                           {"--min-time", "abc"},
                                                           {"--min-time", "2", "--max-time", "1"},
                                                           {"--list=yes"},
                                                           {"--out"},
                                                           {"--frobnicate"}}) {
        error.clear();
        EXPECT_FALSE(parse(bad, error)) << bad[0];
        EXPECT_FALSE(error.empty()) << bad[0];
    }
}

TEST(CudaDirectCases, TheFilterSelectsByNameAndAnEmptySelectionIsAnError) {
    Options o;
    std::string error;
    o.filter = "attention/.*causal:0";
    auto picked = select_cases(default_cases(), o, error);
    EXPECT_TRUE(error.empty());
    ASSERT_EQ(picked.size(), 1u);
    EXPECT_EQ(picked[0].at.batch, 4);
    o.filter = "no-such-case";
    EXPECT_TRUE(select_cases(default_cases(), o, error).empty());
    EXPECT_NE(error.find("selects no case"), std::string::npos);
    o.filter = "(";
    error.clear();
    select_cases(default_cases(), o, error);
    EXPECT_NE(error.find("--filter"), std::string::npos);
}

TEST(CudaDirectCases, SamplingStopsAtMinimumsOrTheWallLimit) {
    Options o;                                // min_time 0.5, max_time 2, min_samples 5
    EXPECT_FALSE(sampling_done(o, 0, 0, 10)); // never without a sample
    EXPECT_TRUE(sampling_done(o, 1, 0.1, 2.0));
    EXPECT_FALSE(sampling_done(o, 4, 0.6, 1.0));
    EXPECT_FALSE(sampling_done(o, 5, 0.4, 1.0));
    EXPECT_TRUE(sampling_done(o, 5, 0.5, 1.0));
    EXPECT_DOUBLE_EQ(median({3, 1, 2}), 2);
    EXPECT_DOUBLE_EQ(median({4, 1, 2, 3}), 2.5);
    EXPECT_TRUE(std::isnan(median({})));
}

TEST(CudaDirectCases, InputsAreExactInTheirTypes) {
    for (uint64_t i = 0; i < 1000; ++i) {
        const double f = input_value(1, i, Dtype::F32), b = input_value(1, i, Dtype::Bf16);
        EXPECT_GE(f, -1.0);
        EXPECT_LT(f, 1.0);
        EXPECT_EQ(double(from_bf16_bits(to_bf16_bits(float(b)))), b);
        EXPECT_LE(std::fabs(b - f), std::fabs(f) * 0x1.0p-8 + 1e-30);
        const double e = input_value(2, i, Dtype::Fp8);
        EXPECT_EQ(from_e4m3_bits(input_e4m3(2, i)), e);
        EXPECT_GE(std::fabs(e), 0.125);
        EXPECT_LE(std::fabs(e), 1.875);
    }
    EXPECT_NE(input_value(1, 0, Dtype::F32), input_value(2, 0, Dtype::F32)); // seeds differ
    // OCP e4m3: 0x7e = 448 (largest), 0x38 = 1, 0x01 = 2^-9 (smallest subnormal), 0x7f NaN.
    EXPECT_EQ(from_e4m3_bits(0x7e), 448.0);
    EXPECT_EQ(from_e4m3_bits(0x38), 1.0);
    EXPECT_EQ(from_e4m3_bits(0xb8), -1.0);
    EXPECT_EQ(from_e4m3_bits(0x01), std::ldexp(1.0, -9));
    EXPECT_TRUE(std::isnan(from_e4m3_bits(0x7f)));
    EXPECT_EQ(to_bf16_bits(1.0f), 0x3f80);
    EXPECT_EQ(to_bf16_bits(1.0f + 0x1.0p-8f), 0x3f80); // tie to even
    EXPECT_EQ(to_bf16_bits(1.0f + 0x1.8p-8f), 0x3f81);
}

TEST(CudaDirectCases, TheMatmulReferenceFollowsTheStoredLayouts) {
    // A = [[1, 2], [3, 4]] (M 2, K 2), B = [[5, 6, 7], [8, 9, 10]] (K 2, N 3), bias [1, 2, 3].
    const double A[] = {1, 2, 3, 4}, At[] = {1, 3, 2, 4};
    const double B[] = {5, 6, 7, 8, 9, 10}, Bt[] = {5, 8, 6, 9, 7, 10};
    const double bias[] = {1, 2, 3};
    auto get = [](const double *p) { return [p](int64_t i) { return p[i]; }; };
    const double expect[2][3] = {{21 + 1, 24 + 2, 27 + 3}, {47 + 1, 54 + 2, 61 + 3}};
    for (bool ta : {false, true})
        for (bool tb : {false, true}) {
            const MatmulShape s{1, 2, 3, 2, ta, tb, true};
            for (int i = 0; i < 2; ++i)
                for (int j = 0; j < 3; ++j) {
                    const RefValue r = matmul_ref(s, 0, i, j, get(ta ? At : A), get(tb ? Bt : B), get(bias));
                    EXPECT_DOUBLE_EQ(r.value, expect[i][j]) << ta << tb << i << j;
                }
        }
    const MatmulShape s{1, 1, 1, 2, false, false, false};
    const double a[] = {1, -2}, b[] = {3, 4};
    const RefValue r = matmul_ref(s, 0, 0, 0, get(a), get(b), get(bias));
    EXPECT_DOUBLE_EQ(r.value, -5);
    EXPECT_DOUBLE_EQ(r.abs_sum, 11);
    EXPECT_LT(matmul_tolerance(Dtype::F32), matmul_tolerance(Dtype::Tf32));
    EXPECT_LT(matmul_tolerance(Dtype::Tf32), matmul_tolerance(Dtype::Bf16));
}

TEST(CudaDirectCases, TheAttentionReferenceMasksBottomRightAndMapsGroupedHeads) {
    // One head, Sq = Skv = 2, D = 1: q = k = 0 makes the softmax uniform over what is visible.
    const AttentionShape s{1, 1, 1, 2, 2, 1, true};
    auto zero = [](int64_t) { return 0.0; };
    auto v = [](int64_t i) { return i == 0 ? 1.0 : 3.0; };
    EXPECT_DOUBLE_EQ(attention_row_ref(s, 0, 0, 0, zero, zero, v)[0], 1.0); // sees key 0 only
    EXPECT_DOUBLE_EQ(attention_row_ref(s, 0, 0, 1, zero, zero, v)[0], 2.0); // keys 0 and 1
    AttentionShape nc = s;
    nc.causal = false;
    EXPECT_DOUBLE_EQ(attention_row_ref(nc, 0, 0, 0, zero, zero, v)[0], 2.0);
    // Decode (Sq 1, Skv 2, causal bottom-right): the one query sees both keys.
    const AttentionShape dec{1, 1, 1, 1, 2, 1, true};
    EXPECT_DOUBLE_EQ(attention_row_ref(dec, 0, 0, 0, zero, zero, v)[0], 2.0);
    // GQA: 2 query heads share 1 K/V head; head 1 reads K/V head 0.
    const AttentionShape gqa{1, 2, 1, 1, 1, 1, false};
    auto v1 = [](int64_t i) { return i == 0 ? 5.0 : -1.0; };
    EXPECT_DOUBLE_EQ(attention_row_ref(gqa, 0, 1, 0, zero, zero, v1)[0], 5.0);
    // A large score dominates: softmax weights follow scale q.k.
    const AttentionShape two{1, 1, 1, 1, 2, 1, false};
    auto q = [](int64_t) { return 10.0; };
    auto k = [](int64_t i) { return i == 0 ? 10.0 : -10.0; };
    EXPECT_NEAR(attention_row_ref(two, 0, 0, 0, q, k, v)[0], 1.0, 1e-12);
}

TEST(CudaDirectCases, TheJsonHoldsOpbenchsParamsAndTheFigures) {
    Options o;
    Device d;
    d.name = "NVIDIA \"Test\" GPU";
    d.l2_bytes = 50 << 20;
    Entry e;
    e.c.mm = {1, 2048, 2048, 2048, false, false, false};
    e.c.dtype = Dtype::Bf16;
    e.name = case_name(e.c, Cache::Cold, Timing::Canonical);
    e.repetition_medians = {30e-6, 31e-6, 29e-6};
    e.samples = {100, 100, 100};
    e.kernel = "cuBLASLt algo 66";
    Entry skipped;
    skipped.c.dtype = Dtype::Fp8;
    skipped.c.mm = {1, 64, 64, 64, false, true, false};
    skipped.status = "skipped";
    skipped.reason = "fp8 e4m3 GEMMs need sm_89 or newer; this GPU is sm_80";
    std::ostringstream os;
    write_json(os, d, o, {e, skipped}, "2026-11-28T10:00:00Z");
    const std::string j = os.str();
    EXPECT_NE(j.find("\"name\": \"NVIDIA \\\"Test\\\" GPU\""), std::string::npos) << j;
    EXPECT_NE(j.find("\"params\": {\"B\": 1, \"K\": 2048, \"M\": 2048, \"N\": 2048, \"bias\": false, "
                     "\"trans_a\": false, \"trans_b\": false}"),
              std::string::npos)
        << j;
    EXPECT_NE(j.find("\"seconds_per_call\": 3e-05"), std::string::npos) << j;
    EXPECT_NE(j.find("\"flush_bytes\": 104857600"), std::string::npos) << j;
    EXPECT_NE(j.find("\"dtype\": \"f8e4m3\""), std::string::npos) << j;
    EXPECT_NE(j.find("\"trans_b\": true, \"out_dtype\": \"bf16\"}"), std::string::npos) << j;
    EXPECT_NE(j.find("\"seconds_per_call\": null"), std::string::npos) << j;
    EXPECT_NE(j.find("\"cache\": \"cold\", \"timing\": \"canonical\""), std::string::npos) << j;
    EXPECT_DOUBLE_EQ(e.spread(), (31e-6 - 29e-6) / 2 / 30e-6);
    EXPECT_NE(console_line(e).find("TFLOP/s"), std::string::npos);
    EXPECT_NE(console_line(skipped).find("sm_89"), std::string::npos);
    EXPECT_EQ(json_escape(std::string("a\nb\x01")), "a\\nb\\u0001");
}
