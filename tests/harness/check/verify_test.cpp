// verify.cpp: deterministic inputs, the sentinel, NMSE and point-wise comparison,
// tolerances, and the verification record.
#include "check/verify.hpp"

#include "opbench/ops.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

using namespace opbench;

namespace {
opb_op_desc layernorm(int dtype) {
    opb_op_desc d = make_desc(OPB_OP_LAYERNORM, dtype);
    d.p.norm = {4, 8, 1e-5f};
    return d;
}
} // namespace

TEST(MakeInputs, SameSeedSameBitsAndOutputsHoldTheSentinel) {
    HostTensors a = make_inputs(layernorm(OPB_DTYPE_F32), 7), b = make_inputs(layernorm(OPB_DTYPE_F32), 7);
    ASSERT_EQ(a.buffers.size(), 4u);
    EXPECT_EQ(a.buffers, b.buffers);
    EXPECT_TRUE(a.is_output[3]);
    for (int64_t i = 0; i < 32; ++i) EXPECT_TRUE(is_sentinel(a.buffers[3].data(), OPB_DTYPE_F32, i)) << i;
    for (int64_t i = 0; i < 32; ++i) EXPECT_FALSE(is_sentinel(a.buffers[0].data(), OPB_DTYPE_F32, i)) << i;
    HostTensors c = make_inputs(layernorm(OPB_DTYPE_F32), 8);
    EXPECT_NE(a.buffers[0], c.buffers[0]);
}

// The inputs' bytes are part of every stored reference (the reference
// store keys them by seed, not by value): a generator that changes them, as
// a faster one could (issue 44), silently pairs old references with new
// inputs. The digests are those of the generator before issue 44's rewrite.
TEST(MakeInputs, BytesAreThoseOfEveryEarlierRun) {
    auto fnv1a = [](const std::vector<uint8_t> &bytes) {
        uint64_t h = 1469598103934665603ull;
        for (uint8_t c : bytes) h = (h ^ c) * 1099511628211ull;
        return h;
    };
    auto digests = [&](const opb_op_desc &d) {
        std::vector<uint64_t> out;
        for (const auto &b : make_inputs(d, 11).buffers) out.push_back(fnv1a(b));
        return out;
    };
    EXPECT_EQ(digests(layernorm(OPB_DTYPE_F32)), (std::vector<uint64_t>{0x05f1398382392fcaull, 0x703277b534ecbc1cull,
                                                                      0xcbeaea79844764caull, 0xf70a0cb6c3453083ull}));
    EXPECT_EQ(digests(layernorm(OPB_DTYPE_F16)), (std::vector<uint64_t>{0x323739f866e688feull, 0x20e9f91ddc39abe0ull,
                                                                      0x4cc644b07c019da8ull, 0xc51f1f77a1c3cbc3ull}));
    // u8 activations with a zero point, s8 weights in 7 bits, their scales, the f32 output
    opb_op_desc int8 = make_desc(OPB_OP_MATMUL, OPB_DTYPE_S8);
    int8.p.matmul = {1, 3, 5, 7, 0, 1, 1, OPB_DTYPE_U8, 0.05f, 128, OPB_DTYPE_F32};
    EXPECT_EQ(digests(int8), (std::vector<uint64_t>{0x645cbb8f9abef2e6ull, 0x880b8ea65aaa7ec4ull, 0x5c130fe496178221ull,
                                                    0xaa44b46d94bca87aull, 0x6de0bcca9425351bull}));
}

// Host copies large enough for 2 MB pages (advised, issue 44) and small
// ones alike: the size asked for, every byte zero.
TEST(MakeInputs, HostBuffersAreZeroedAtEverySize) {
    // 65 MB + 3: its pages populated in two halves on two threads first.
    for (std::size_t bytes : {std::size_t(0), std::size_t(7), std::size_t(4u << 20) - 1, std::size_t(9u << 20) + 3,
                              std::size_t(65u << 20) + 3}) {
        const std::vector<uint8_t> b = zeroed_host_buffer(bytes);
        ASSERT_EQ(b.size(), bytes);
        EXPECT_EQ(std::count(b.begin(), b.end(), uint8_t(0)), std::ptrdiff_t(bytes)) << bytes;
    }
}

TEST(MakeInputs, SizesFollowTheDtypeAndGammaIsNearOne) {
    HostTensors h = make_inputs(layernorm(OPB_DTYPE_BF16), 1);
    EXPECT_EQ(h.buffers[0].size(), 4u * 8 * 2);
    for (int i = 0; i < 8; ++i) {
        float g = load_as_f32(h.buffers[1].data(), OPB_DTYPE_BF16, i);
        EXPECT_GE(g, 0.5f);
        EXPECT_LE(g, 1.5f);
    }
}

TEST(Nmse, IsZeroForEqualAndScaleInvariant) {
    std::vector<float> ref = {1, -2, 3, 4}, out = ref;
    EXPECT_EQ(nmse(out.data(), ref.data(), OPB_DTYPE_F32, 4), 0.0);
    out[0] = 1.1f;
    const double e = nmse(out.data(), ref.data(), OPB_DTYPE_F32, 4);
    EXPECT_NEAR(e, 0.01 / 30.0, 1e-9);
    std::vector<float> ref10 = {10, -20, 30, 40}, out10 = {11, -20, 30, 40};
    EXPECT_NEAR(nmse(out10.data(), ref10.data(), OPB_DTYPE_F32, 4), e, 1e-9);
}

TEST(Nmse, NonFiniteOutputIsInfinitelyWrong) {
    std::vector<float> ref = {1, 2}, out = {1, NAN};
    EXPECT_TRUE(std::isinf(nmse(out.data(), ref.data(), OPB_DTYPE_F32, 2)));
}

TEST(Tolerance, LooserForNarrowerTypes) {
    const double f32 = tolerance_for(layernorm(OPB_DTYPE_F32)).max_nmse;
    const double f16 = tolerance_for(layernorm(OPB_DTYPE_F16)).max_nmse;
    const double bf16 = tolerance_for(layernorm(OPB_DTYPE_BF16)).max_nmse;
    EXPECT_LT(f32, f16);
    EXPECT_LT(f16, bf16);
    // One bf16 rounding of every output element must pass.
    HostTensors h = make_inputs(layernorm(OPB_DTYPE_F32), 3);
    std::vector<float> ref(32), rounded(32);
    for (int i = 0; i < 32; ++i) {
        ref[i] = load_as_f32(h.buffers[0].data(), OPB_DTYPE_F32, i);
        rounded[i] = bf16_to_f32(f32_to_bf16(ref[i]));
    }
    EXPECT_LT(nmse(rounded.data(), ref.data(), OPB_DTYPE_F32, 32), bf16);
    EXPECT_GT(nmse(rounded.data(), ref.data(), OPB_DTYPE_F32, 32), f32) << "f32's threshold would catch it";
}

TEST(Sentinel, IsANanNoConversionProducesInEveryDtype) {
    for (int dt : {OPB_DTYPE_F32, OPB_DTYPE_BF16, OPB_DTYPE_F16}) {
        std::vector<uint8_t> buf(4 * dtype_size(dt));
        fill_sentinel(buf.data(), dt, 4);
        for (int64_t i = 0; i < 4; ++i) {
            EXPECT_TRUE(is_sentinel(buf.data(), dt, i));
            EXPECT_TRUE(std::isnan(load_as_f32(buf.data(), dt, i)));
        }
        // A NaN computed by a backend (the canonical quiet NaN) is not the sentinel.
        store_from_f32(buf.data(), dt, 1, NAN);
        EXPECT_FALSE(is_sentinel(buf.data(), dt, 1)) << dtype_name(dt);
        store_from_f32(buf.data(), dt, 2, 0.0f);
        EXPECT_FALSE(is_sentinel(buf.data(), dt, 2));
    }
}

TEST(CompareOutputs, EqualOutputsHaveNoError) {
    std::vector<float> ref = {1, -2, 3, 0};
    OutputComparison c = compare_outputs(ref.data(), ref.data(), OPB_DTYPE_F32, 4, 4);
    EXPECT_EQ(c.nmse, 0.0);
    EXPECT_EQ(c.worst_error, 0.0);
    EXPECT_EQ(c.unwritten, 0);
    EXPECT_EQ(c.nonfinite, 0);
}

// One wrong element of a large bf16 output: NMSE averages it away, the
// point-wise check does not.
TEST(CompareOutputs, OneWrongElementOfA4096SquareBf16OutputFailsPointWise) {
    const int64_t n = 4096 * 4096;
    std::vector<uint16_t> ref(n), out;
    std::mt19937_64 rng(1);
    std::normal_distribution<float> dist(0.0f, 20.0f); // a K=4096 matmul's output scale
    for (auto &v : ref) v = f32_to_bf16(dist(rng));
    out = ref;
    const int64_t wrong = 12345678;
    out[wrong] = f32_to_bf16(bf16_to_f32(ref[wrong]) + 20.0f); // off by one rms
    OutputComparison c = compare_outputs(out.data(), ref.data(), OPB_DTYPE_BF16, n, 4096);
    opb_op_desc d = make_desc(OPB_OP_MATMUL, OPB_DTYPE_BF16);
    d.p.matmul = {1, 4096, 4096, 4096, 0, 0, 0, 0, 0.0f, 0, 0};
    const Tolerance t = tolerance_for(d);
    EXPECT_LT(c.nmse, t.max_nmse) << "NMSE alone lets it pass";
    EXPECT_EQ(c.worst_index, wrong);
    EXPECT_GT(c.worst_error, t.max_pointwise);
    std::string verdict = judge(c, {t.max_nmse, t.why, t.max_pointwise, t.pointwise_why}, "C", {1, 4096, 4096});
    EXPECT_NE(verdict.find("C[0, 3014, 334]"), std::string::npos) << verdict; // 12345678 = 3014 * 4096 + 334
    EXPECT_NE(verdict.find("point-wise error"), std::string::npos) << verdict;
}

TEST(CompareOutputs, RoundingToTheDtypePassesPointWise) {
    for (int dt : {OPB_DTYPE_BF16, OPB_DTYPE_F16}) {
        opb_op_desc d = layernorm(dt);
        std::vector<float> exact(1000);
        std::mt19937_64 rng(2);
        std::uniform_real_distribution<float> dist(-3.0f, 3.0f);
        for (auto &v : exact) v = dist(rng);
        // out: rounded once; ref: every other element one ulp of the dtype
        // away first (another summation order before the rounding).
        std::vector<uint16_t> out(1000), ref(1000);
        for (int i = 0; i < 1000; ++i) {
            store_from_f32(out.data(), dt, i, exact[i]);
            const float one_ulp = std::ldexp(1.0f, dt == OPB_DTYPE_BF16 ? -7 : -10);
            store_from_f32(ref.data(), dt, i, exact[i] * (1.0f + one_ulp * float(i % 2)));
        }
        OutputComparison c = compare_outputs(out.data(), ref.data(), dt, 1000, 100);
        const Tolerance t = tolerance_for(d);
        EXPECT_TRUE(judge(c, {t.max_nmse, t.why, t.max_pointwise, t.pointwise_why}, "y", {1000}).empty())
            << dtype_name(dt) << " worst " << c.worst_error << " limit " << t.max_pointwise;
    }
}

TEST(CompareOutputs, AnUnwrittenElementFailsAndIsNamed) {
    std::vector<uint16_t> ref(6, f32_to_bf16(1.0f)), out = ref;
    fill_sentinel(out.data() + 4, OPB_DTYPE_BF16, 2);
    OutputComparison c = compare_outputs(out.data(), ref.data(), OPB_DTYPE_BF16, 6, 3);
    EXPECT_EQ(c.unwritten, 2);
    EXPECT_EQ(c.first_unwritten, 4);
    EXPECT_TRUE(std::isinf(c.nmse));
    std::string verdict = judge(c, {1.0, "any", 1.0, "any"}, "y", {2, 3});
    EXPECT_NE(verdict.find("y[1, 1]"), std::string::npos) << verdict;
    EXPECT_NE(verdict.find("never wrote"), std::string::npos) << verdict;
}

TEST(CompareOutputs, NanOrInfFailsEvenWhenEverythingElseIsExact) {
    std::vector<float> ref(1000, 1.0f), out = ref;
    out[999] = INFINITY;
    OutputComparison c = compare_outputs(out.data(), ref.data(), OPB_DTYPE_F32, 1000, 1000);
    EXPECT_EQ(c.nonfinite, 1);
    EXPECT_EQ(c.first_nonfinite, 999);
    std::string verdict = judge(c, {1e300, "loose", 1e300, "loose"}, "y", {1000});
    EXPECT_NE(verdict.find("y[999] is inf"), std::string::npos) << verdict;
    out[999] = NAN;
    EXPECT_FALSE(
        judge(compare_outputs(out.data(), ref.data(), OPB_DTYPE_F32, 1000, 1000), {1e300, "x", 1e300, "x"}, "y", {1000})
            .empty());
}

TEST(CompareOutputs, NearZeroElementsAreJudgedOnTheOutputsScale) {
    // ref 1e-6 next to values of order 1: an absolute error of 1e-6 there is
    // summation noise, not a relative error of 100%.
    std::vector<float> ref = {1.0f, -1.0f, 1e-6f, 1.0f}, out = ref;
    out[2] = 2e-6f;
    OutputComparison c = compare_outputs(out.data(), ref.data(), OPB_DTYPE_F32, 4, 4);
    EXPECT_LT(c.worst_error, 2e-6);
}

TEST(VerifyMode, NamesRoundTripAndUnknownIsRefused) {
    for (VerifyMode m : {VerifyMode::full, VerifyMode::fast, VerifyMode::off})
        EXPECT_EQ(verify_mode_from_name(verify_mode_name(m)), m);
    EXPECT_FALSE(verify_mode_from_name("quick").has_value());
}

TEST(VerificationJson, OffIsUnverifiedAndCarriesNoFigures) {
    Verification v;
    v.mode = VerifyMode::off;
    v.method = "none";
    nlohmann::json j = verification_json(v);
    EXPECT_EQ(j["mode"], "off");
    EXPECT_EQ(j["verified"], false);
    EXPECT_FALSE(j.contains("nmse"));
    EXPECT_FALSE(j.contains("checked"));
}

TEST(VerificationJson, FastRecordsMethodSeedAndCoverage) {
    Verification v;
    v.mode = VerifyMode::fast;
    v.verified = true;
    v.method = "freivalds";
    v.unit = "elements";
    v.checked = v.total = 64;
    v.vectors = 4;
    v.seed = 42;
    v.worst_ratio = 0.25;
    v.worst_index = 8;
    nlohmann::json j = verification_json(v);
    EXPECT_EQ(j["method"], "freivalds");
    EXPECT_EQ(j["seed"], 42);
    EXPECT_EQ(j["checked"], 64);
    EXPECT_EQ(j["vectors"], 4);
    EXPECT_FALSE(j.contains("nmse"));
    v.nmse = INFINITY;
    EXPECT_TRUE(verification_json(v)["nmse"].is_null()) << "JSON has no infinity";
}

// Under a causal mask the first rows of attention are large and the last
// small: a 20% error in a small row must not hide behind the large ones.
TEST(CompareOutputs, EachRowIsJudgedOnItsOwnScale) {
    std::vector<float> ref = {1.0f, -1.0f, 1.0f, -1.0f, 0.01f, -0.02f, 0.01f, 0.02f}, out = ref;
    out[5] = 0.8f * ref[5];
    const double per_row = compare_outputs(out.data(), ref.data(), OPB_DTYPE_F32, 8, 4).worst_error;
    const double whole = compare_outputs(out.data(), ref.data(), OPB_DTYPE_F32, 8, 8).worst_error;
    EXPECT_GT(per_row, 0.05);
    EXPECT_LT(whole, 0.01) << "one scale for the whole output dilutes it";
}

// ---- verify_outputs: which check runs in which mode -------------------------------

namespace {

struct MatmulCase {
    opb_op_desc desc;
    HostTensors host;
    Outputs right; // the exact product, rounded to the dtype
};

MatmulCase small_matmul() {
    MatmulCase c;
    c.desc = make_desc(OPB_OP_MATMUL, OPB_DTYPE_F32);
    c.desc.p.matmul = {1, 8, 6, 5, 0, 0, 0, 0, 0.0f, 0, 0};
    c.host = make_inputs(c.desc, 3);
    std::vector<uint8_t> out(8 * 6 * 4);
    for (int i = 0; i < 8; ++i)
        for (int j = 0; j < 6; ++j) {
            double s = 0.0;
            for (int k = 0; k < 5; ++k)
                s += double(load_as_f32(c.host.buffers[0].data(), OPB_DTYPE_F32, i * 5 + k)) *
                     load_as_f32(c.host.buffers[1].data(), OPB_DTYPE_F32, k * 6 + j);
            store_from_f32(out.data(), OPB_DTYPE_F32, i * 6 + j, float(s));
        }
    c.right = {out};
    return c;
}

VerifyRequest request(const MatmulCase &c, const Outputs &outputs, VerifyMode mode, int *reference_calls) {
    VerifyRequest rq;
    rq.mode = mode;
    rq.desc = &c.desc;
    rq.host = &c.host;
    rq.outputs = &outputs;
    rq.fast_check = freivalds_matmul;
    rq.seed = 77;
    rq.tolerance = tolerance_for(c.desc);
    rq.reference = [&c, reference_calls](std::string &source) -> const Outputs & {
        ++*reference_calls;
        source = "computed";
        return c.right;
    };
    return rq;
}

} // namespace

TEST(VerifyOutputs, OffChecksNothingAndIsNotVerified) {
    MatmulCase c = small_matmul();
    int calls = 0;
    Verification v = verify_outputs(request(c, c.right, VerifyMode::off, &calls));
    EXPECT_FALSE(v.verified);
    EXPECT_EQ(v.method, "none");
    EXPECT_EQ(calls, 0);
}

TEST(VerifyOutputs, FastUsesTheOpsCheckAndNeverTheReference) {
    MatmulCase c = small_matmul();
    int calls = 0;
    Verification v = verify_outputs(request(c, c.right, VerifyMode::fast, &calls));
    EXPECT_TRUE(v.verified) << v.failure;
    EXPECT_EQ(v.method, "freivalds");
    EXPECT_EQ(v.seed, 77u);
    EXPECT_EQ(v.checked, 48);
    EXPECT_EQ(calls, 0);
    EXPECT_FALSE(v.nmse.has_value());

    Outputs wrong = c.right;
    store_from_f32(wrong[0].data(), OPB_DTYPE_F32, 13, 5.0f);
    v = verify_outputs(request(c, wrong, VerifyMode::fast, &calls));
    EXPECT_FALSE(v.verified);
    EXPECT_NE(v.failure.find("freivalds"), std::string::npos) << v.failure;
    EXPECT_EQ(calls, 0);
}

TEST(VerifyOutputs, FastFindsAnUnwrittenElementBeforeTheOpsCheck) {
    MatmulCase c = small_matmul();
    Outputs unwritten = c.right;
    fill_sentinel(unwritten[0].data() + 4 * 20, OPB_DTYPE_F32, 1);
    int calls = 0;
    Verification v = verify_outputs(request(c, unwritten, VerifyMode::fast, &calls));
    EXPECT_FALSE(v.verified);
    EXPECT_EQ(v.method, "sentinel");
    EXPECT_NE(v.failure.find("C[0, 3, 2] (1 such elements)"), std::string::npos) << v.failure;

    // The first of several, and how many (the scan is one typed pass).
    fill_sentinel(unwritten[0].data() + 4 * 47, OPB_DTYPE_F32, 1);
    fill_sentinel(unwritten[0].data() + 4 * 30, OPB_DTYPE_F32, 1);
    v = verify_outputs(request(c, unwritten, VerifyMode::fast, &calls));
    EXPECT_NE(v.failure.find("C[0, 3, 2] (3 such elements)"), std::string::npos) << v.failure;
}

TEST(VerifyOutputs, FastWithoutAHookAndFullCompareWithTheReference) {
    MatmulCase c = small_matmul();
    int calls = 0;
    VerifyRequest rq = request(c, c.right, VerifyMode::fast, &calls);
    rq.fast_check = nullptr;
    Verification v = verify_outputs(rq);
    EXPECT_TRUE(v.verified) << v.failure;
    EXPECT_EQ(v.method, "reference");
    EXPECT_EQ(v.reference, "computed");
    EXPECT_EQ(calls, 1);
    ASSERT_TRUE(v.nmse.has_value());
    EXPECT_EQ(*v.nmse, 0.0);

    v = verify_outputs(request(c, c.right, VerifyMode::full, &calls));
    EXPECT_EQ(v.method, "reference");
    EXPECT_EQ(calls, 2);
    EXPECT_TRUE(v.verified);
}

TEST(VerifyOutputs, FullNamesTheWrongElementPointWise) {
    MatmulCase c = small_matmul();
    Outputs wrong = c.right;
    const float v13 = load_as_f32(wrong[0].data(), OPB_DTYPE_F32, 13);
    store_from_f32(wrong[0].data(), OPB_DTYPE_F32, 13, v13 * 1.001f);
    int calls = 0;
    Verification v = verify_outputs(request(c, wrong, VerifyMode::full, &calls));
    EXPECT_FALSE(v.verified);
    EXPECT_EQ(v.worst_index, 13);
    EXPECT_NE(v.failure.find("C[0, 2, 1]"), std::string::npos) << v.failure;
}

TEST(VerifyOutputs, AReferenceThatNeverWroteCannotVerify) {
    MatmulCase c = small_matmul();
    c.right[0] = c.host.buffers[2]; // still the sentinel fill
    int calls = 0;
    Outputs out = small_matmul().right;
    Verification v = verify_outputs(request(c, out, VerifyMode::full, &calls));
    EXPECT_FALSE(v.verified);
    EXPECT_NE(v.failure.find("reference backend never wrote"), std::string::npos) << v.failure;
}

TEST(MakeInputs, UniformOverMinusOneToOne) {
    opb_op_desc d = make_desc(OPB_OP_ADD, OPB_DTYPE_F32);
    d.p.eltwise = {100, 1000};
    HostTensors h = make_inputs(d, 5);
    double lo = 1, hi = -1, sum = 0;
    int below_half = 0;
    for (int64_t i = 0; i < 100000; ++i) {
        const double v = load_as_f32(h.buffers[0].data(), OPB_DTYPE_F32, i);
        ASSERT_GE(v, -1.0);
        ASSERT_LT(v, 1.0);
        lo = std::min(lo, v);
        hi = std::max(hi, v);
        sum += v;
        below_half += v < -0.5;
    }
    EXPECT_LT(lo, -0.999);
    EXPECT_GT(hi, 0.999);
    EXPECT_NEAR(sum / 100000, 0.0, 0.01);
    EXPECT_NEAR(below_half / 100000.0, 0.25, 0.01);
    EXPECT_NE(h.buffers[0], h.buffers[1]) << "a and b differ";
}

// ---- int8 weights (dtype s8) ---------------------------------------------------------

namespace {

// An int8 matmul with bias, its host inputs, and its exact output: the integer
// sums in int64, dequantised in double, rounded once to `out_dtype`.
MatmulCase int8_matmul(int out_dtype) {
    MatmulCase c;
    c.desc = make_desc(OPB_OP_MATMUL, OPB_DTYPE_S8);
    auto &p = c.desc.p.matmul;
    p.batch = 1, p.m = 9, p.n = 12, p.k = 300, p.has_bias = 1, p.out_dtype = out_dtype;
    c.host = make_inputs(c.desc, 5);
    const auto &b = c.host.buffers;
    const auto *w_scale = reinterpret_cast<const float *>(b[2].data());
    const auto *bias = reinterpret_cast<const float *>(b[3].data());
    std::vector<uint8_t> out(std::size_t(p.m * p.n) * dtype_size(out_dtype));
    for (int64_t i = 0; i < p.m; ++i)
        for (int64_t j = 0; j < p.n; ++j) {
            int64_t s = 0;
            for (int64_t k = 0; k < p.k; ++k)
                s += (int64_t(load_as_f32(b[0].data(), OPB_DTYPE_U8, i * p.k + k)) - p.act_zero_point) *
                     int64_t(load_as_f32(b[1].data(), OPB_DTYPE_S8, k * p.n + j));
            store_from_f32(out.data(), out_dtype, i * p.n + j,
                           float(double(p.act_scale) * w_scale[j] * double(s) + bias[j]));
        }
    c.right = {out};
    return c;
}

} // namespace

TEST(MakeInputs, Int8MatmulHasIntegerActivationsSevenBitWeightsAndPositiveScales) {
    opb_op_desc d = make_desc(OPB_OP_MATMUL, OPB_DTYPE_S8);
    d.p.matmul.batch = 1, d.p.matmul.m = 64, d.p.matmul.n = 256, d.p.matmul.k = 128;
    const HostTensors h = make_inputs(d, 9);
    ASSERT_EQ(h.buffers.size(), 4u); // A, B, w_scale, C
    EXPECT_EQ(h.buffers[0].size(), 64u * 128);  // u8: one byte each
    EXPECT_EQ(h.buffers[1].size(), 128u * 256); // s8
    EXPECT_EQ(h.buffers[3].size(), 64u * 256 * 4);
    int a_lo = 255, a_hi = 0, b_lo = 127, b_hi = -128;
    for (uint8_t a : h.buffers[0]) a_lo = std::min<int>(a_lo, a), a_hi = std::max<int>(a_hi, a);
    for (uint8_t raw : h.buffers[1]) {
        const int b = int8_t(raw);
        b_lo = std::min(b_lo, b), b_hi = std::max(b_hi, b);
    }
    EXPECT_EQ(a_lo, 0); // the whole u8 range
    EXPECT_EQ(a_hi, 255);
    EXPECT_EQ(b_lo, -64); // 7-bit weights: no AVX2 vpmaddubsw saturation
    EXPECT_EQ(b_hi, 63);
    for (int64_t j = 0; j < 256; ++j) {
        const float s = load_as_f32(h.buffers[2].data(), OPB_DTYPE_F32, j);
        EXPECT_GT(s, 0.0f);
        EXPECT_LT(s, 2.0f / 64);
    }
}

TEST(VerifyOutputs, Int8FastCheckIsExactForTheIntegerSumAndBoundedForTheDequantisation) {
    MatmulCase c = int8_matmul(OPB_DTYPE_F32);
    int calls = 0;
    Verification v = verify_outputs(request(c, c.right, VerifyMode::fast, &calls));
    EXPECT_TRUE(v.verified) << v.failure;
    EXPECT_EQ(v.method, "int8-exact");
    EXPECT_EQ(v.checked, 9 * 12);
    EXPECT_EQ(calls, 0);
    // An output rounded a few f32 ulps differently (another dequantisation order) passes.
    Outputs rounded = c.right;
    for (int64_t i = 0; i < 9 * 12; ++i) {
        const float x = load_as_f32(rounded[0].data(), OPB_DTYPE_F32, i);
        store_from_f32(rounded[0].data(), OPB_DTYPE_F32, i, std::nextafter(x, 2 * x));
    }
    EXPECT_TRUE(verify_outputs(request(c, rounded, VerifyMode::fast, &calls)).verified);
    // One element whose integer sum is off by one (C moves by one step) fails,
    // in the first row and in a middle one.
    const auto *w_scale = reinterpret_cast<const float *>(c.host.buffers[2].data());
    for (int64_t at : {int64_t(5), int64_t(4 * 12 + 7)}) {
        Outputs off = c.right;
        const int64_t j = at % 12;
        const double step = double(c.desc.p.matmul.act_scale) * w_scale[j];
        store_from_f32(off[0].data(), OPB_DTYPE_F32, at, float(load_as_f32(off[0].data(), OPB_DTYPE_F32, at) + step));
        v = verify_outputs(request(c, off, VerifyMode::fast, &calls));
        EXPECT_FALSE(v.verified) << "element " << at;
        EXPECT_NE(v.failure.find("int8-exact"), std::string::npos) << v.failure;
    }
}

TEST(VerifyOutputs, Int8FullModeComparesTheOutputInItsOwnDtype) {
    MatmulCase c = int8_matmul(OPB_DTYPE_BF16);
    int calls = 0;
    Verification v = verify_outputs(request(c, c.right, VerifyMode::full, &calls));
    EXPECT_TRUE(v.verified) << v.failure;
    EXPECT_EQ(v.total, 9 * 12); // bf16 elements, not bytes / 4
    EXPECT_EQ(calls, 1);
    Outputs wrong = c.right;
    store_from_f32(wrong[0].data(), OPB_DTYPE_BF16, 3, 1e3f);
    EXPECT_FALSE(verify_outputs(request(c, wrong, VerifyMode::full, &calls)).verified);
}
