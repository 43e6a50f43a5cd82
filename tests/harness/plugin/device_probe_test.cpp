// ABI 1.5's device entries read through plugin/device_probe.hpp (issue 41):
// the fake plugin built against 1.5 gives its identity, roofs and clock; the
// one built against 1.4 gives none, and the host reads nothing past its table.
#include "plugin/device_probe.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <sys/stat.h>
#include <unistd.h>

using namespace opbench;

namespace {

std::string fake(const std::string &file) { return std::string(FAKE_PLUGIN_DIR) + "/" + file; }

LoadedPlugin load(const std::string &file) {
    LoadResult r = load_plugin(fake(file));
    if (!r.plugin) throw std::runtime_error(r.failure ? r.failure->reason : file);
    return *r.plugin;
}

struct CacheDir {
    std::filesystem::path path =
        std::filesystem::temp_directory_path() / ("opbench-device-probe-" + std::to_string(::getpid()));
    CacheDir() {
        std::filesystem::remove_all(path);
        std::filesystem::create_directories(path);
        ::chmod(path.c_str(), 0700); // the cache's trust rule: written by its owner only
    }
    ~CacheDir() { std::filesystem::remove_all(path); }
};

} // namespace

TEST(DeviceProbe, AnAbi15PluginGivesItsIdentityClockAndHostTime) {
    const LoadedPlugin p = load("fake-good.so");
    BackendInstance be(p);
    ASSERT_TRUE(be.usable());
    const auto id = device_identity(be);
    ASSERT_TRUE(id.has_value());
    EXPECT_EQ(id->uuid, "FAKE-0000-uuid");
    EXPECT_EQ(id->driver, "0.0.fake");
    EXPECT_DOUBLE_EQ(id->sustained_mhz, 1500);
    device_clock_begin(be);
    const ClockReading c = device_clock_end(be);
    EXPECT_DOUBLE_EQ(c.sm_clock_mhz, 1410);
    EXPECT_DOUBLE_EQ(c.power_watts, 650);
    EXPECT_FALSE(judge_throttle(c, id->sustained_mhz).throttled); // 94% of sustained
    EXPECT_DOUBLE_EQ(device_host_seconds(be), 4e-6);
}

TEST(DeviceProbe, RoofsAreMeasuredOnceThenReadFromTheCacheOfThatDevice) {
    const LoadedPlugin p = load("fake-good.so");
    BackendInstance be(p);
    CacheDir dir;
    const auto first = load_or_measure_device_roofs(be, dir.path, false);
    ASSERT_TRUE(first.has_value());
    EXPECT_FALSE(first->from_cache);
    EXPECT_TRUE(first->warning.empty()) << first->warning;
    ASSERT_EQ(first->roofs.roofs.size(), 2u);
    EXPECT_EQ(first->roofs.roofs[0].label(), "tensor bf16");
    EXPECT_EQ(first->roofs.roofs[1].label(), "dram");
    EXPECT_EQ(first->roofs.device, "fake device");
    EXPECT_EQ(first->roofs.uuid, "FAKE-0000-uuid");
    const auto again = load_or_measure_device_roofs(be, dir.path, false);
    ASSERT_TRUE(again.has_value());
    EXPECT_TRUE(again->from_cache);
    EXPECT_EQ(again->path, first->path);
    EXPECT_DOUBLE_EQ(again->roofs.find(RoofUnit::tensor, "bf16")->datasheet, 9.89e14);
    EXPECT_FALSE(load_or_measure_device_roofs(be, dir.path, true)->from_cache);
}

TEST(DeviceProbe, AnAbi14PluginGivesNoneOfTheDeviceEntries) {
    const LoadedPlugin p = load("fake-abi-1-4.so");
    BackendInstance be(p);
    ASSERT_TRUE(be.usable());
    CacheDir dir;
    EXPECT_FALSE(device_identity(be).has_value());
    EXPECT_FALSE(measure_device_roofs(be).has_value());
    EXPECT_FALSE(load_or_measure_device_roofs(be, dir.path, false).has_value());
    device_clock_begin(be);
    EXPECT_DOUBLE_EQ(device_clock_end(be).sm_clock_mhz, 0);
    EXPECT_LT(device_host_seconds(be), 0);
}
