// Device roofs (issue 41): the cache keyed per device, driver and clock; the
// roof that judges an entry; the share above 100% that must carry a cause.
#include "machine/bottleneck.hpp"
#include "machine/device_roofs.hpp"
#include "measure/entry_metrics.hpp"
#include "../result_set_fixture.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <unistd.h>

namespace opbench {
namespace {

DeviceRoofs h100_like() {
    DeviceRoofs d;
    d.backend = "cuda";
    d.device = "NVIDIA H100 80GB HBM3";
    d.uuid = "GPU-1111";
    d.driver = "580.65.06";
    d.sustained_mhz = 1755;
    d.max_mhz = 1980;
    d.roofs = {
        {RoofUnit::simt, "f32", 5.1e13, 6.69e13, 1755, "cuBLASLt sgemm"},
        {RoofUnit::tensor, "f32", 3.6e14, 4.95e14, 1755, "cuBLASLt tf32"},
        {RoofUnit::tensor, "bf16", 7.4e14, 9.89e14, 1755, "cuBLASLt bf16"},
        {RoofUnit::tensor, "s8", 1.4e15, 1.979e15, 1755, "cuBLASLt int8"},
        {RoofUnit::dram, "", 2.9e12, 3.35e12, 1755, "triad 4x L2"},
        {RoofUnit::l2, "", 9.0e12, 0, 1755, "copy inside L2"},
    };
    return d;
}

using test::TempDir; // a fresh directory, removed with what is in it

TEST(DeviceRoofs, EachEntryIsJudgedAgainstTheUnitAndDtypeThatRanIt) {
    const DeviceRoofs d = h100_like();
    EXPECT_EQ(roof_for_entry(d, "matmul", "bf16", false)->label(), "tensor bf16");
    EXPECT_EQ(roof_for_entry(d, "attention", "bf16", false)->label(), "tensor bf16");
    EXPECT_EQ(roof_for_entry(d, "matmul", "s8", false)->label(), "tensor s8");
    EXPECT_EQ(roof_for_entry(d, "matmul", "f32", true)->label(), "tensor tf32");
    EXPECT_EQ(roof_for_entry(d, "matmul", "f32", false)->label(), "simt f32");
    EXPECT_EQ(roof_for_entry(d, "softmax", "bf16", false)->label(), "dram");
    EXPECT_EQ(roof_for_entry(d, "layernorm", "f32", false)->label(), "dram");
    // No f16 roof measured: no share rather than another unit's.
    EXPECT_EQ(roof_for_entry(d, "matmul", "f16", false), nullptr);
}

TEST(DeviceRoofs, ABf16GemmIsAShareOfTheTensorRoofNotOfTheFp32One) {
    const DeviceRoofs d = h100_like();
    const RoofShare s = share_of_roof(d, "matmul", "bf16", false, 4.56e14, 1e12);
    ASSERT_NE(s.roof, nullptr);
    EXPECT_NEAR(s.share, 4.56e14 / 7.4e14, 1e-9);
    EXPECT_TRUE(s.cause.empty());
    // A memory-bound op is judged on its bytes.
    const RoofShare m = share_of_roof(d, "add", "f32", false, 1e11, 1.45e12);
    EXPECT_NEAR(m.share, 0.5, 1e-9);
}

TEST(DeviceRoofs, AShareAbove100PercentCarriesACause) {
    const DeviceRoofs d = h100_like();
    const RoofShare below_sheet = share_of_roof(d, "matmul", "bf16", false, 8.0e14, 0);
    EXPECT_GT(below_sheet.share, 1);
    EXPECT_NE(below_sheet.cause.find("measured tensor bf16 roof"), std::string::npos) << below_sheet.cause;
    const RoofShare above_sheet = share_of_roof(d, "attention", "bf16", false, 1.2e15, 0);
    EXPECT_NE(above_sheet.cause.find("datasheet"), std::string::npos) << above_sheet.cause;
}

TEST(DeviceRoofs, TheCacheIsKeptPerDeviceDriverAndClock) {
    TempDir dir;
    const DeviceRoofs d = h100_like();
    const auto path = device_roofs_cache_path(dir.path, d.uuid, d.driver, d.max_mhz);
    EXPECT_NE(path, device_roofs_cache_path(dir.path, d.uuid, "590.1", d.max_mhz));
    EXPECT_NE(path, device_roofs_cache_path(dir.path, d.uuid, d.driver, 1755));
    EXPECT_NE(path, device_roofs_cache_path(dir.path, "GPU-2222", d.driver, d.max_mhz));
    save_device_roofs(d, path);
    const auto back = load_device_roofs(path, d.uuid, d.driver, d.max_mhz);
    ASSERT_TRUE(back.has_value());
    ASSERT_EQ(back->roofs.size(), d.roofs.size());
    EXPECT_EQ(back->roofs[2].label(), "tensor bf16");
    EXPECT_DOUBLE_EQ(back->roofs[2].measured, 7.4e14);
    EXPECT_DOUBLE_EQ(back->roofs[2].datasheet, 9.89e14);
    // The same file read for another device, driver or clock is not trusted.
    EXPECT_FALSE(load_device_roofs(path, "GPU-2222", d.driver, d.max_mhz).has_value());
    EXPECT_FALSE(load_device_roofs(path, d.uuid, "590.1", d.max_mhz).has_value());
    EXPECT_FALSE(load_device_roofs(path, d.uuid, d.driver, 1410).has_value());
    // Garbage reads as no cache.
    std::ofstream(path) << "{not json";
    EXPECT_FALSE(load_device_roofs(path, d.uuid, d.driver, d.max_mhz).has_value());
}

TEST(DeviceRoofs, MachineLinesShowDatasheetBesideMeasuredWithin100Columns) {
    const auto lines = device_roofs_lines(h100_like());
    ASSERT_EQ(lines.size(), 2u + 6u);
    for (const auto &l : lines) EXPECT_LE(l.size(), 100u) << l;
    EXPECT_NE(lines[4].find("740.0 T/s"), std::string::npos) << lines[4];
    EXPECT_NE(lines[4].find("989.0 T/s"), std::string::npos) << lines[4];
    EXPECT_NE(lines[4].find("75%"), std::string::npos) << lines[4];
    EXPECT_NE(lines[7].find("l2"), std::string::npos) << lines[7];
}

// A roof the plugin could not measure (its GEMM refused) says so with its
// reason whole, on 100-column lines of its own, and judges no entry.
TEST(DeviceRoofs, AnUnmeasuredRoofShowsItsReasonWrapped) {
    DeviceRoofs roofs = h100_like();
    DeviceRoof fp8;
    fp8.unit = RoofUnit::tensor;
    fp8.dtype = "f8e4m3";
    fp8.datasheet = 1978.9e12;
    fp8.method = "not measured: roof GEMM f8e4m3 cublasLtMatmul: CUBLAS_STATUS_NOT_SUPPORTED: the requested "
                 "functionality is not supported";
    roofs.roofs.push_back(fp8);
    const auto lines = device_roofs_lines(roofs);
    std::string text; // the lines joined by spaces: the reason's words in order
    for (const auto &l : lines) {
        EXPECT_LE(l.size(), 100u) << l;
        text += (text.empty() ? "" : " ") + l.substr(l.find_first_not_of(' '));
    }
    EXPECT_NE(text.find("tensor f8e4m3"), std::string::npos) << text;
    EXPECT_NE(text.find("not measured: roof GEMM f8e4m3 cublasLtMatmul: CUBLAS_STATUS_NOT_SUPPORTED: the requested "
                        "functionality is not supported"),
              std::string::npos)
        << text;
    EXPECT_EQ(roofs.find(RoofUnit::tensor, "f8e4m3"), nullptr) << "an unmeasured roof judges nothing";
}

// A GPU backend's context as the run records it: device kind gpu, and the
// roofs its plugin measured (plugin/device_probe.hpp add_device_roofs).
nlohmann::json gpu_context(bool with_roofs) {
    nlohmann::json c = {{"device", {{"kind", "gpu"}, {"name", "NVIDIA H100 80GB HBM3"}}},
                        {"plugin_abi", with_roofs ? "1.5" : "1.4"},
                        {"info", {{"peak_f32_gflops", "66900"}, {"peak_bandwidth_gbps", "3350"}}}};
    if (with_roofs) c["device_roofs"] = h100_like();
    return c;
}

TEST(DeviceRoofs, TheRunJudgesEachGpuEntryByTheRoofOfItsUnitAndDtype) {
    const nlohmann::json ctx = gpu_context(true);
    const MachinePeaks cpu;
    // matmul 2048^3 bf16 at 456 TFLOP/s (H100, cold L2): compute-bound, 62% of the tensor bf16 roof, not 682% of FP32.
    const double flops = 2.0 * 2048 * 2048 * 2048, bytes = 3.0 * 2048 * 2048 * 2;
    const Roofline bf16 = roofline_for(flops, bytes, flops / 4.56e14, ctx, 0, cpu, 5e-6, PeakKind::bf16, 0,
                                       RoofKey{"matmul", "bf16", "default"});
    ASSERT_TRUE(bf16.device_roof.has_value());
    EXPECT_EQ(bf16.device_roof->roof, "tensor bf16");
    EXPECT_NEAR(bf16.device_roof->share, 4.56e14 / 7.4e14, 1e-9);
    EXPECT_NEAR(bf16.pct_peak_compute, 100 * 4.56e14 / 7.4e14, 1e-6);
    EXPECT_DOUBLE_EQ(bf16.device_roof->datasheet, 9.89e14);
    EXPECT_EQ(bf16.bound, "compute-bound");
    EXPECT_EQ(bf16.compute_roof, "tensor bf16");
    EXPECT_TRUE(bf16.above_roof_cause.empty()) << bf16.above_roof_cause;
    // The same shape in f32: SIMT, or TF32 tensor cores for the tf32 variant.
    const double f32_bytes = 2 * bytes;
    EXPECT_EQ(roofline_for(flops, f32_bytes, 1e-3, ctx, 0, cpu, 0, PeakKind::f32, 0, RoofKey{"matmul", "f32", "default"})
                  .device_roof->roof,
              "simt f32");
    EXPECT_EQ(roofline_for(flops, f32_bytes, 1e-3, ctx, 0, cpu, 0, PeakKind::f32, 0, RoofKey{"matmul", "f32", "tf32"})
                  .device_roof->roof,
              "tensor tf32");
    EXPECT_EQ(roofline_for(flops, bytes / 2, 1e-3, ctx, 0, cpu, 0, PeakKind::int8, 0, RoofKey{"matmul", "s8", "default"})
                  .device_roof->roof,
              "tensor s8");
    // Element-wise and normalising ops: DRAM, on their bytes.
    const Roofline add = roofline_for(1e6, 1.2e7, 1.2e7 / 1.45e12, ctx, 0, cpu, 0, PeakKind::f32, 0,
                                      RoofKey{"add", "f32", "default"});
    EXPECT_EQ(add.device_roof->roof, "dram");
    EXPECT_NEAR(add.device_roof->share, 0.5, 1e-9);
    EXPECT_NEAR(add.pct_peak_bandwidth, 50, 1e-6);
    EXPECT_EQ(add.bound, "memory-bound");
}

TEST(DeviceRoofs, AMatmulBelowTheRidgePointIsJudgedByDram) {
    // A decode GEMV (M = 1, 4096 x 4096 bf16): 1 FLOP/byte, far below the tensor roof's ridge (255).
    const double flops = 2.0 * 4096 * 4096, bytes = 2.0 * (4096 + 4096 * 4096 + 4096);
    const Roofline r = roofline_for(flops, bytes, bytes / 2.0e12, gpu_context(true), 0, MachinePeaks{}, 0,
                                    PeakKind::bf16, 0, RoofKey{"matmul", "bf16", "default"});
    ASSERT_TRUE(r.device_roof.has_value());
    EXPECT_EQ(r.device_roof->roof, "dram");
    EXPECT_NEAR(r.device_roof->share, 2.0e12 / 2.9e12, 1e-9);
    EXPECT_EQ(r.bound, "memory-bound");
    EXPECT_LT(r.pct_peak_compute, 1); // still recorded, of the tensor bf16 roof
}

TEST(DeviceRoofs, EveryShareAbove100PercentTheViewsShowCarriesItsCause) {
    const nlohmann::json ctx = gpu_context(true);
    // Causal attention counted as full: 1.2 PFLOP/s "of" a 740 T/s roof, above the datasheet's 989.
    const double flops = 1e12, bytes = 1e9;
    const Roofline r = roofline_for(flops, bytes, flops / 1.2e15, ctx, 0, MachinePeaks{}, 0, PeakKind::bf16, 0,
                                    RoofKey{"attention", "bf16", "fused"});
    EXPECT_EQ(r.device_roof->roof, "tensor bf16");
    EXPECT_GT(r.device_roof->share, 1);
    EXPECT_NE(r.device_roof->cause.find("datasheet"), std::string::npos) << r.device_roof->cause;
    EXPECT_NE(r.above_roof_cause.find("162% of the device's tensor bf16 roof"), std::string::npos)
        << r.above_roof_cause;
    // The views read it: the % of the judging roof, named, with the cause beside it.
    EntryMetricInputs in;
    in.summary.median_s = flops / 1.2e15;
    in.flops = flops;
    in.bytes = bytes;
    in.pct_peak_compute = r.pct_peak_compute;
    in.pct_peak_bandwidth = r.pct_peak_bandwidth;
    in.bound = r.bound;
    in.device_roof = r.device_roof->roof;
    EXPECT_EQ(peak_text(in), "162% tensor bf16");
    // Judged by DRAM, the bandwidth share is shown even where the compute one is larger.
    in.device_roof = "dram";
    in.pct_peak_compute = 80;
    in.pct_peak_bandwidth = 40;
    EXPECT_EQ(peak_text(in), "40% dram");
}

TEST(DeviceRoofs, AnEntryWhoseRoofWasNotMeasuredGetsNoShareAndSaysWhich) {
    const Roofline r = roofline_for(1e9, 1e6, 1e-3, gpu_context(true), 0, MachinePeaks{}, 0, PeakKind::bf16, 0,
                                    RoofKey{"matmul", "f16", "default"});
    ASSERT_TRUE(r.device_roof.has_value());
    EXPECT_TRUE(r.device_roof->roof.empty());
    EXPECT_NE(r.device_roof->missing.find("no tensor f16 roof"), std::string::npos) << r.device_roof->missing;
    EXPECT_TRUE(std::isnan(r.pct_peak_compute));
    // analyze: no roofline, saying which roof is missing (not "the backend reports no device peaks").
    const auto peaks = device_peaks(gpu_context(true), RoofKey{"matmul", "f16", "default"}, PeakKind::bf16);
    ASSERT_TRUE(peaks.has_value());
    EXPECT_EQ(peaks->flops_per_s, 0);
    EXPECT_NE(peaks->source.find("measured no tensor f16 roof"), std::string::npos) << peaks->source;
    // The views show no % for it, not its DRAM share.
    EntryMetricInputs in;
    in.summary.median_s = 1e-3;
    in.pct_peak_compute = r.pct_peak_compute;
    in.pct_peak_bandwidth = 500;
    in.bound = r.bound;
    in.device_roof = "none";
    EXPECT_EQ(peak_text(in), "-");
}

TEST(DeviceRoofs, APluginWithoutMeasuredRoofsKeepsTheReportedFp32PeakAndSaysSo) {
    const double flops = 2.0 * 2048 * 2048 * 2048, bytes = 3.0 * 2048 * 2048 * 2;
    const Roofline r = roofline_for(flops, bytes, flops / 4.56e14, gpu_context(false), 0, MachinePeaks{}, 0,
                                    PeakKind::bf16, 0, RoofKey{"matmul", "bf16", "default"});
    EXPECT_FALSE(r.device_roof.has_value());
    EXPECT_EQ(r.compute_roof, "device FP32");
    EXPECT_GT(r.pct_peak_compute, 600);
    EXPECT_NE(r.above_roof_cause.find("its plugin (ABI 1.4) measures no device roofs"), std::string::npos)
        << r.above_roof_cause;
    // analyze's roofs: the measured ones where the context has them, else the reported FP32 peak.
    const auto measured = device_peaks(gpu_context(true), RoofKey{"matmul", "bf16", "default"}, PeakKind::bf16);
    ASSERT_TRUE(measured.has_value());
    EXPECT_DOUBLE_EQ(measured->flops_per_s, 7.4e14);
    EXPECT_DOUBLE_EQ(measured->bytes_per_s, 2.9e12);
    EXPECT_NE(measured->source.find("tensor bf16"), std::string::npos);
    const auto reported = device_peaks(gpu_context(false), RoofKey{"matmul", "bf16", "default"}, PeakKind::bf16);
    ASSERT_TRUE(reported.has_value());
    EXPECT_DOUBLE_EQ(reported->flops_per_s, 66900e9);
}

} // namespace
} // namespace opbench
