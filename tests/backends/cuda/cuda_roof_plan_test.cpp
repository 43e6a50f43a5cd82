// The cuda backend's roof helpers on the host (issue 41): the datasheet
// table, the GEMM sweep, the clock probe's and the triad's arithmetic.
#include "roof_plan.hpp"

#include <gtest/gtest.h>

#include <set>

using namespace opbench::cuda;

TEST(RoofPlan, TheDatasheetOfAKnownDeviceIsFoundByItsName) {
    const Datasheet *h100 = find_datasheet("NVIDIA H100 80GB HBM3");
    ASSERT_NE(h100, nullptr);
    EXPECT_DOUBLE_EQ(datasheet_figure(h100, OPB_ROOF_TENSOR, OPB_DTYPE_BF16), 989.4e12);
    EXPECT_DOUBLE_EQ(datasheet_figure(h100, OPB_ROOF_TENSOR, OPB_DTYPE_F32), 494.7e12); // TF32
    EXPECT_DOUBLE_EQ(datasheet_figure(h100, OPB_ROOF_TENSOR, OPB_DTYPE_F8_E4M3), 1978.9e12);
    EXPECT_DOUBLE_EQ(datasheet_figure(h100, OPB_ROOF_SIMT, OPB_DTYPE_F32), 67e12);
    EXPECT_DOUBLE_EQ(datasheet_figure(h100, OPB_ROOF_DRAM, -1), 3.35e12);
    EXPECT_DOUBLE_EQ(datasheet_figure(h100, OPB_ROOF_L2, -1), 0); // no vendor figure
    // The longer name wins: a PCIe card is not an SXM one.
    const Datasheet *pcie = find_datasheet("NVIDIA H100 PCIe");
    ASSERT_NE(pcie, nullptr);
    EXPECT_DOUBLE_EQ(datasheet_figure(pcie, OPB_ROOF_TENSOR, OPB_DTYPE_BF16), 756e12);
    EXPECT_DOUBLE_EQ(datasheet_figure(find_datasheet("NVIDIA H200"), OPB_ROOF_DRAM, -1), 4.8e12);
    // A100 has no FP8: 0, not another dtype's figure.
    EXPECT_DOUBLE_EQ(datasheet_figure(find_datasheet("NVIDIA A100-SXM4-80GB"), OPB_ROOF_TENSOR, OPB_DTYPE_F8_E4M3), 0);
    EXPECT_EQ(find_datasheet("NVIDIA GeForce GT 710"), nullptr);
    EXPECT_DOUBLE_EQ(datasheet_figure(nullptr, OPB_ROOF_TENSOR, OPB_DTYPE_BF16), 0);
}

TEST(RoofPlan, TheSweepCoversEachRoofWithAtLeastTwoShapes) {
    std::multiset<std::pair<int, int>> roofs;
    for (const RoofGemm &g : roof_gemm_sweep()) {
        roofs.insert({g.unit, g.dtype});
        EXPECT_GE(g.n, 4096);
        EXPECT_LE(g.n * g.n * 4 * 3, int64_t(3) << 30); // three f32 n x n matrices within 3 GiB
    }
    for (auto roof : {std::pair{int(OPB_ROOF_SIMT), int(OPB_DTYPE_F32)}, {OPB_ROOF_TENSOR, OPB_DTYPE_F32},
                      {OPB_ROOF_TENSOR, OPB_DTYPE_BF16}, {OPB_ROOF_TENSOR, OPB_DTYPE_F16},
                      {OPB_ROOF_TENSOR, OPB_DTYPE_F8_E4M3}, {OPB_ROOF_TENSOR, OPB_DTYPE_S8}})
        EXPECT_GE(roofs.count(roof), 2u) << roof.first << "/" << roof.second;
}

TEST(RoofPlan, EachSweepDtypeHasItsOperandAndOutputSizes) {
    // A and B in the dtype; D in f32 (f32 and TF32), the dtype (bf16, f16),
    // bf16 (FP8: cuBLASLt's FP8 kernels write bf16) or s32 (s8).
    EXPECT_EQ(roof_operand_bytes(OPB_DTYPE_F32), 4);
    EXPECT_EQ(roof_output_bytes(OPB_DTYPE_F32), 4);
    EXPECT_EQ(roof_operand_bytes(OPB_DTYPE_BF16), 2);
    EXPECT_EQ(roof_output_bytes(OPB_DTYPE_F16), 2);
    EXPECT_EQ(roof_operand_bytes(OPB_DTYPE_F8_E4M3), 1);
    EXPECT_EQ(roof_output_bytes(OPB_DTYPE_F8_E4M3), 2);
    EXPECT_EQ(roof_operand_bytes(OPB_DTYPE_S8), 1);
    EXPECT_EQ(roof_output_bytes(OPB_DTYPE_S8), 4);
}

TEST(RoofPlan, RepetitionsFillTheTimeWithinBounds) {
    const double flop = 2.0 * 8192 * 8192 * 8192; // 1.1 TFLOP
    EXPECT_EQ(gemm_repetitions(flop, 1.1e15, 0.5), 500);
    EXPECT_EQ(gemm_repetitions(flop, 1e9, 0.5), 3);
    EXPECT_EQ(gemm_repetitions(1, 1e15, 10), 10000);
    EXPECT_EQ(gemm_repetitions(0, 1e15, 1), 3);
}

TEST(RoofPlan, TheProbeClockIsCyclesOverNanoseconds) {
    EXPECT_DOUBLE_EQ(clock_mhz_from_probe(1'755'000, 1'000'000), 1755.0);
    EXPECT_DOUBLE_EQ(clock_mhz_from_probe(100, 0), 0.0);
}

TEST(RoofPlan, TheTriadOverrunsTheL2ForDramAndFitsItForL2) {
    const uint64_t l2 = 50ull << 20; // an H100's 50 MiB
    EXPECT_GE(triad_bytes_for_dram(l2), 4 * l2);
    EXPECT_GE(triad_bytes_for_dram(1 << 20), 256ull << 20);
    EXPECT_LT(triad_bytes_for_l2(l2), l2);
    EXPECT_DOUBLE_EQ(triad_traffic(3ull << 20), double(3ull << 20));
}
