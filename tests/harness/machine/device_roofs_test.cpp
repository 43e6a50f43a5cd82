// Device roofs (issue 41): the cache keyed per device, driver and clock; the
// roof that judges an entry; the share above 100% that must carry a cause.
#include "machine/device_roofs.hpp"

#include <gtest/gtest.h>

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

struct TempDir {
    std::filesystem::path path =
        std::filesystem::temp_directory_path() / ("opbench-device-roofs-" + std::to_string(::getpid()));
    TempDir() { std::filesystem::create_directories(path); }
    ~TempDir() { std::filesystem::remove_all(path); }
};

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

} // namespace
} // namespace opbench
