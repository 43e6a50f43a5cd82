// verify.cpp: deterministic inputs, the NMSE measure, and tolerances.
#include "verify.hpp"

#include "opbench/ops.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

using namespace opbench;

namespace {
opb_op_desc layernorm(int dtype) {
    opb_op_desc d = make_desc(OPB_OP_LAYERNORM, dtype);
    d.p.norm = {4, 8, 1e-5f};
    return d;
}
} // namespace

TEST(MakeInputs, SameSeedSameBitsAndOutputsZeroed) {
    HostTensors a = make_inputs(layernorm(OPB_DTYPE_F32), 7), b = make_inputs(layernorm(OPB_DTYPE_F32), 7);
    ASSERT_EQ(a.buffers.size(), 4u);
    EXPECT_EQ(a.buffers, b.buffers);
    EXPECT_TRUE(a.is_output[3]);
    for (auto byte : a.buffers[3]) EXPECT_EQ(byte, 0);
    HostTensors c = make_inputs(layernorm(OPB_DTYPE_F32), 8);
    EXPECT_NE(a.buffers[0], c.buffers[0]);
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
