// The cuda backend's NVML reader (issue 41 item 2) against a fake
// libnvidia-ml (fake_nvml.c): the library absent, a symbol missing, an NVML
// error code, the device not found, and figures read. No GPU needed.
// Arguments: the whole fake, the one without nvmlDeviceGetPowerUsage, the one
// with only the pre-12.2 reasons name.
#include "nvml_reader.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

using namespace opbench::cuda;

namespace {

std::string g_fake, g_no_power, g_old_reasons;
const std::string kUuid = "GPU-8c3f0b2e-1111-2222-3333-444455556666";

class NvmlReaderTest : public ::testing::Test {
protected:
    void SetUp() override {
        for (const char *v : {"FAKE_NVML_INIT_ERROR", "FAKE_NVML_POWER_ERROR", "FAKE_NVML_SHUTDOWN_FILE"})
            unsetenv(v);
        setenv("FAKE_NVML_UUID", kUuid.c_str(), 1);
        setenv("FAKE_NVML_POWER_MW", "612345", 1);
        setenv("FAKE_NVML_TEMP_C", "71", 1);
        // GpuIdle | SwPowerCap | HwThermalSlowdown
        setenv("FAKE_NVML_REASONS", "0x45", 1);
    }
};

TEST_F(NvmlReaderTest, ReadsPowerTemperatureAndReasonsWithoutIdle) {
    NvmlReader r({"/nonexistent/libnvidia-ml.so.1", g_fake}, kUuid);
    ASSERT_TRUE(r.available()) << r.unavailable();
    EXPECT_EQ(r.status(), "loaded from " + g_fake);
    const NvmlSample s = r.read();
    EXPECT_DOUBLE_EQ(s.power_watts, 612.345);
    EXPECT_DOUBLE_EQ(s.temperature_c, 71);
    EXPECT_EQ(s.clock_event_reasons, 0x44u); // the idle bit is left out
    EXPECT_EQ(r.reasons(), 0x44u);
}

TEST_F(NvmlReaderTest, TheLibraryAbsentSaysWhereItLooked) {
    NvmlReader r({"/nonexistent/a/libnvidia-ml.so.1", "/nonexistent/b/libnvidia-ml.so.1"}, kUuid);
    EXPECT_FALSE(r.available());
    EXPECT_EQ(r.unavailable(), "NVML not loaded: no libnvidia-ml.so.1 (tried /nonexistent/a/libnvidia-ml.so.1, "
                               "/nonexistent/b/libnvidia-ml.so.1)");
    EXPECT_EQ(r.status(), r.unavailable());
    const NvmlSample s = r.read(); // every figure unknown
    EXPECT_LT(s.power_watts, 0);
    EXPECT_LT(s.temperature_c, -273);
    EXPECT_EQ(s.clock_event_reasons, 0u);
}

TEST_F(NvmlReaderTest, AMissingSymbolIsNamed) {
    NvmlReader r({g_no_power}, kUuid);
    EXPECT_FALSE(r.available());
    EXPECT_EQ(r.unavailable(), "NVML at " + g_no_power + " lacks nvmlDeviceGetPowerUsage");
    EXPECT_LT(r.read().power_watts, 0);
}

TEST_F(NvmlReaderTest, AnOlderDriverServesTheReasonsUnderTheirOldName) {
    NvmlReader r({g_old_reasons}, kUuid);
    ASSERT_TRUE(r.available()) << r.unavailable();
    EXPECT_EQ(r.read().clock_event_reasons, 0x44u);
}

TEST_F(NvmlReaderTest, AnInitErrorGivesNvmlsOwnWordsAndCode) {
    setenv("FAKE_NVML_INIT_ERROR", "9", 1);
    NvmlReader r({g_fake}, kUuid);
    EXPECT_FALSE(r.available());
    EXPECT_EQ(r.unavailable(), "NVML at " + g_fake + ": nvmlInit_v2: Driver Not Loaded (NVML error 9)");
}

TEST_F(NvmlReaderTest, AnotherGpusUuidIsNotFoundAndNvmlIsShutDown) {
    const std::string shutdown_file = ::testing::TempDir() + "nvml_reader_test_shutdown";
    std::remove(shutdown_file.c_str());
    setenv("FAKE_NVML_SHUTDOWN_FILE", shutdown_file.c_str(), 1);
    {
        NvmlReader r({g_fake}, "GPU-00000000-0000-0000-0000-000000000000");
        EXPECT_FALSE(r.available());
        EXPECT_EQ(r.unavailable(), "NVML: nvmlDeviceGetHandleByUUID(GPU-00000000-0000-0000-0000-000000000000): "
                                   "Not Found (NVML error 6)");
    }
    std::ifstream in(shutdown_file);
    std::stringstream text;
    text << in.rdbuf();
    EXPECT_EQ(text.str(), "shutdown\n"); // initialised once, shut down once
}

TEST_F(NvmlReaderTest, AFigureTheDeviceRefusesIsUnknownAndSaidOnceInTheStatus) {
    setenv("FAKE_NVML_POWER_ERROR", "3", 1);
    NvmlReader r({g_fake}, kUuid);
    ASSERT_TRUE(r.available()) << r.unavailable();
    EXPECT_EQ(r.status(), "loaded from " + g_fake + "; power: Not Supported (NVML error 3)");
    const NvmlSample s = r.read();
    EXPECT_LT(s.power_watts, 0);
    EXPECT_DOUBLE_EQ(s.temperature_c, 71);
}

TEST_F(NvmlReaderTest, AMovedReaderKeepsItsDevice) {
    NvmlReader a({g_fake}, kUuid);
    NvmlReader b = std::move(a);
    EXPECT_FALSE(a.available()); // NOLINT(bugprone-use-after-move): the moved-from state is documented
    ASSERT_TRUE(b.available());
    EXPECT_DOUBLE_EQ(b.read().temperature_c, 71);
}

TEST(NvmlCandidates, TheLoaderPathComesFirstAndTheContainerMountLast) {
    const auto c = default_nvml_candidates();
    ASSERT_GE(c.size(), 2u);
    EXPECT_EQ(c.front(), "libnvidia-ml.so.1");
    EXPECT_EQ(c.back(), "/usr/local/nvidia/lib64/libnvidia-ml.so.1");
}

} // namespace

int main(int argc, char **argv) {
    ::testing::InitGoogleTest(&argc, argv);
    if (argc != 4) {
        std::fprintf(stderr, "usage: nvml_reader_test FAKE_NVML NO_POWER_FAKE OLD_REASONS_FAKE\n");
        return 2;
    }
    g_fake = argv[1];
    g_no_power = argv[2];
    g_old_reasons = argv[3];
    return RUN_ALL_TESTS();
}
