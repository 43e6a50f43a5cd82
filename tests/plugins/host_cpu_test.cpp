// The shared host CPU readers (plugins/opbench/host_cpu.hpp), on a fake sysfs tree.
#include "opbench/host_cpu.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <unistd.h>

namespace fs = std::filesystem;

namespace {

void write(const fs::path &p, const std::string &text) {
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text << "\n";
}

} // namespace

TEST(HostCpu, ParsesSysfsCacheSizes) {
    EXPECT_EQ(opbench::host::parse_cache_size("32K"), 32u << 10);
    EXPECT_EQ(opbench::host::parse_cache_size("2M"), 2u << 20);
    EXPECT_EQ(opbench::host::parse_cache_size("512"), 512u);
    EXPECT_EQ(opbench::host::parse_cache_size(""), 0u);
    EXPECT_EQ(opbench::host::parse_cache_size("K"), 0u);
}

TEST(HostCpu, LastLevelIsTheHighestLevelDataOrUnifiedCache) {
    const fs::path dir = fs::temp_directory_path() / ("opbench-host-cpu-" + std::to_string(::getpid()));
    fs::remove_all(dir);
    write(dir / "index0/type", "Data");
    write(dir / "index0/level", "1");
    write(dir / "index0/size", "32K");
    write(dir / "index1/type", "Instruction"); // ignored, however large
    write(dir / "index1/level", "3");
    write(dir / "index1/size", "64M");
    write(dir / "index2/type", "Unified");
    write(dir / "index2/level", "2");
    write(dir / "index2/size", "1024K");
    write(dir / "index3/type", "Unified");
    write(dir / "index3/level", "3");
    write(dir / "index3/size", "32768K");
    EXPECT_EQ(opbench::host::last_level_cache_bytes(dir), std::uint64_t(32) << 20);
    fs::remove_all(dir);
    EXPECT_EQ(opbench::host::last_level_cache_bytes(dir), 0u) << "no sysfs: 0";
}
