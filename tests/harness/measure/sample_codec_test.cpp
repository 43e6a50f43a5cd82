// measure/sample_codec: the result set's sample histogram keeps every sample
// to the timer's tick (decoding gives the same values, sorted), survives a
// JSON round trip, is a fraction of the decimal form's size, leaves the U
// test's answer unchanged, keeps at most its bound of bins however many
// samples (each then within half its coarser unit), and refuses malformed
// histograms by name.
#include "measure/sample_codec.hpp"
#include "readers/mann_whitney.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>

using namespace opbench;

namespace {

// Per-call times as the recipe records them: whole-nanosecond sample totals
// divided by the calls in a sample, read through a double clock far from 0.
std::vector<double> recipe_like_samples(std::size_t n, double center_ns, int calls, unsigned seed) {
    std::mt19937 rng(seed);
    std::lognormal_distribution<double> jitter(0.0, 0.05);
    std::vector<double> out;
    const double clock_base = 123456.789012345; // seconds since boot, as steady_clock reads
    for (std::size_t i = 0; i < n; ++i) {
        const double total_ns = std::round(center_ns * calls * jitter(rng));
        const double t0 = clock_base + double(i), t1 = t0 + total_ns * 1e-9;
        out.push_back((t1 - t0) / calls);
    }
    return out;
}

} // namespace

TEST(SampleCodec, DecodesEverySampleToItsTickSorted) {
    const int calls = 37;
    const auto samples = recipe_like_samples(5000, 850.0, calls, 1);
    const nlohmann::json h = encode_sample_histogram(samples, calls, 1e-9, std::numeric_limits<std::size_t>::max());
    EXPECT_EQ(h["tick_seconds"], 1e-9);
    const auto back = decode_sample_histogram(nlohmann::json::parse(h.dump()), calls);
    ASSERT_EQ(back.size(), samples.size());
    auto sorted = samples;
    std::sort(sorted.begin(), sorted.end());
    ASSERT_TRUE(std::is_sorted(back.begin(), back.end()));
    for (std::size_t i = 0; i < back.size(); ++i)
        EXPECT_NEAR(back[i], sorted[i], 0.5e-9 / calls) << "sample " << i << " moved by more than half a tick";
}

TEST(SampleCodec, IsMuchSmallerThanDecimalDoubles) {
    const auto samples = recipe_like_samples(20000, 2000.0, 4, 2);
    // As the set is written: indented, a decimal array puts each number on a line.
    const std::size_t decimal = nlohmann::json(samples).dump(2).size();
    const std::size_t compact = encode_sample_histogram(samples, 4, 1e-9).dump(2).size();
    EXPECT_LT(compact * 10, decimal) << "compact " << compact << " bytes vs decimal " << decimal;
}

TEST(SampleCodec, BoundsItsBinsAndKeepsEachSampleWithinHalfItsUnit) {
    const int calls = 37;
    std::size_t sizes[2] = {};
    int at = 0;
    for (std::size_t n : {2000u, 40000u}) { // a slow and a fast CPU's samples of one repetition
        const auto samples = recipe_like_samples(n, 850.0, calls, 7);
        const nlohmann::json h = encode_sample_histogram(samples, calls, 1e-9);
        const auto counts = h["counts"].get<std::string>();
        const std::size_t bins = std::count(counts.begin(), counts.end(), ' ') + 1;
        EXPECT_LE(bins, kSampleHistogramMaxBins);
        EXPECT_GT(bins, kSampleHistogramMaxBins / 2) << "the unit doubled once too often";
        const double unit = h["tick_seconds"].get<double>();
        const double ratio = unit / 1e-9;
        EXPECT_GT(ratio, 1.5) << "these samples have more distinct ticks than the bound";
        EXPECT_DOUBLE_EQ(ratio, std::exp2(std::round(std::log2(ratio)))) << "a power-of-two multiple of the tick";
        const auto back = decode_sample_histogram(nlohmann::json::parse(h.dump()), calls);
        ASSERT_EQ(back.size(), samples.size());
        auto sorted = samples;
        std::sort(sorted.begin(), sorted.end());
        for (std::size_t i = 0; i < back.size(); ++i)
            ASSERT_NEAR(back[i], sorted[i], (0.5 * unit + 0.5e-9) / calls) << "sample " << i;
        sizes[at++] = h.dump().size();
    }
    // 20x the samples: the histogram stays about the same size.
    EXPECT_LT(double(sizes[1]), 1.5 * double(sizes[0])) << sizes[0] << " vs " << sizes[1] << " bytes";
}

TEST(SampleCodec, LeavesTheUTestUnchanged) {
    // Two runs 1% apart: the U test's p-value on the decoded samples equals
    // the one on the originals (only sub-tick double noise is dropped).
    const int calls = 12;
    const auto a = recipe_like_samples(800, 1000.0, calls, 3), b = recipe_like_samples(800, 1010.0, calls, 4);
    const std::size_t unbounded = std::numeric_limits<std::size_t>::max();
    const auto da = decode_sample_histogram(encode_sample_histogram(a, calls, 1e-9, unbounded), calls);
    const auto db = decode_sample_histogram(encode_sample_histogram(b, calls, 1e-9, unbounded), calls);
    const double p = mann_whitney_u(a, b).p_value;
    EXPECT_NEAR(mann_whitney_u(da, db).p_value, p, 1e-3);
    // With the bins' bound (these samples spread over 5%, so the unit is
    // coarse): the same answer at 5%, the p-value within a few hundredths.
    const auto ba = decode_sample_histogram(encode_sample_histogram(a, calls, 1e-9), calls);
    const auto bb = decode_sample_histogram(encode_sample_histogram(b, calls, 1e-9), calls);
    const double bounded = mann_whitney_u(ba, bb).p_value;
    EXPECT_EQ(bounded < 0.05, p < 0.05) << bounded << " vs " << p;
    EXPECT_NEAR(bounded, p, 0.03);
}

TEST(SampleCodec, WritesTicksAsDifferences) {
    const nlohmann::json h = encode_sample_histogram({3e-9, 1e-9, 3e-9, 7e-9}, 1, 1e-9);
    EXPECT_EQ(h["ticks"], "1 2 4");
    EXPECT_EQ(h["counts"], "1 2 1");
    const std::vector<double> want{1e-9, 3e-9, 3e-9, 7e-9}, got = decode_sample_histogram(h, 1);
    ASSERT_EQ(got.size(), want.size());
    for (std::size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-20);
}

TEST(SampleCodec, RefusesMalformedHistogramsByMember) {
    const auto fails_with = [](const nlohmann::json &h, const std::string &what) {
        try {
            (void)decode_sample_histogram(h, 1);
            ADD_FAILURE() << "accepted " << h.dump();
        } catch (const SampleHistogramError &e) {
            EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
        }
    };
    fails_with(nlohmann::json::array(), "expected an object");
    fails_with({{"tick_seconds", 0}, {"ticks", "1"}, {"counts", "1"}}, "tick_seconds");
    fails_with({{"tick_seconds", 1e-9}, {"ticks", "1 2"}, {"counts", "1"}}, "as many counts as ticks (2 and 1)");
    fails_with({{"tick_seconds", 1e-9}, {"ticks", "1 -2"}, {"counts", "1 1"}}, "ticks: item 1 ('-2')");
    fails_with({{"tick_seconds", 1e-9}, {"ticks", "1"}, {"counts", "0"}}, "counts: item 0");
    fails_with({{"tick_seconds", 1e-9}, {"ticks", "1"}, {"counts", "1.5"}}, "counts: item 0 ('1.5')");
    fails_with({{"tick_seconds", 1e-9}, {"ticks", {1}}, {"counts", "1"}}, "ticks: expected a string");
    fails_with({{"tick_seconds", 1e-9}, {"ticks", "1"}, {"counts", "1099511627776"}}, "more than");
}
