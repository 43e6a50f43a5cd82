// The drift canary (harness/measure/canary.hpp): its readings are real
// times of the same work, its drift and median figures, and its JSON.
#include "measure/canary.hpp"

#include <gtest/gtest.h>

#include <stdexcept>
#include <vector>

using namespace opbench;

TEST(Canary, MeasuresBothKernels) {
    const CanaryReading r = measure_canary();
    EXPECT_GT(r.fma_seconds, 0);
    EXPECT_GT(r.copy_seconds, 0);
    // Short enough to run between pair blocks even on a loaded 2-vCPU VM.
    EXPECT_LT(r.seconds(), 0.1);
}

TEST(Canary, SeriesKeepsTimes) {
    CanarySeries s;
    (void)s.read();
    (void)s.read();
    ASSERT_EQ(s.readings().size(), 2u);
    EXPECT_LE(s.readings()[0].at_seconds, s.readings()[1].at_seconds);
}

TEST(Canary, DriftAndMedian) {
    const std::vector<CanaryReading> r = {{0, 1e-3, 1e-3}, {1, 2e-3, 2e-3}, {2, 1e-3, 1e-3}, {3, 1.5e-3, 1.5e-3}};
    EXPECT_DOUBLE_EQ(canary_median_seconds(r), 2.5e-3);
    EXPECT_DOUBLE_EQ(canary_drift(r), (4e-3 - 2e-3) / 2.5e-3);
    EXPECT_EQ(canary_drift(std::vector<CanaryReading>{{0, 1, 1}}), 0);
    EXPECT_EQ(canary_median_seconds(std::vector<CanaryReading>{}), 0);
}

TEST(Canary, JsonRoundTripAndBadInput) {
    const std::vector<CanaryReading> r = {{0.5, 1e-3, 2e-3}};
    const auto back = canary_from_json(canary_json(r));
    ASSERT_EQ(back.size(), 1u);
    EXPECT_DOUBLE_EQ(back[0].at_seconds, 0.5);
    EXPECT_DOUBLE_EQ(back[0].copy_seconds, 2e-3);
    EXPECT_THROW((void)canary_from_json(nlohmann::json::array()), std::invalid_argument);
    EXPECT_THROW((void)canary_from_json({{"readings", {{{"at", 0}, {"fma", -1}, {"copy", 1}}}}}),
                 std::invalid_argument);
}
