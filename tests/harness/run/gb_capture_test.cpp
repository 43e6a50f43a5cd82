// Tests of harness/gb_capture: Google Benchmark's own JSON, captured in memory
// one benchmark at a time, as it would have written it to a file.
#include "run/gb_capture.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

using namespace opbench;
using nlohmann::json;

namespace {

TEST(JsonCapture, HandsOnTheContextAndEachBenchmarksEntriesAsTheyFinish) {
    std::vector<std::string> order; // what happened, in order
    json context;
    std::vector<std::vector<json>> pieces;
    JsonCapture capture(
        [&](json c) {
            order.push_back("context");
            context = std::move(c);
        },
        [&](std::vector<json> e) {
            order.push_back("runs");
            pieces.push_back(std::move(e));
        });
    JsonCapture second(nullptr, nullptr); // a tee feeds several reporters
    TeeReporter tee({&capture, &second});

    benchmark::RegisterBenchmark("fast/n:1",
                                 [&](benchmark::State &st) {
                                     order.push_back("bench fast");
                                     for (auto _ : st) st.SetIterationTime(1e-6);
                                 })
        ->UseManualTime()
        ->Iterations(1);
    benchmark::RegisterBenchmark("broken/n:2",
                                 [&](benchmark::State &st) {
                                     order.push_back("bench broken");
                                     capture.flush(); // as the runner does when a new case starts
                                     st.SkipWithError("failed: crashed: SIGSEGV in execute");
                                     for (auto _ : st) {}
                                 })
        ->UseManualTime()
        ->Iterations(1);
    std::vector<std::string> args = {"gb_capture_test", "--benchmark_repetitions=2"};
    std::vector<char *> argv;
    for (auto &a : args) argv.push_back(a.data());
    int argc = static_cast<int>(argv.size());
    benchmark::Initialize(&argc, argv.data());
    benchmark::RunSpecifiedBenchmarks(&tee);
    benchmark::ClearRegisteredBenchmarks();

    ASSERT_TRUE(context.is_object());
    EXPECT_TRUE(context.contains("num_cpus"));
    EXPECT_TRUE(context.contains("library_build_type"));
    // One benchmark's entries (repetitions and aggregates, reported in two
    // calls) are handed on together: when the next one starts, or at the end.
    EXPECT_EQ(order, (std::vector<std::string>{"context", "bench fast", "bench fast", "bench broken", "runs",
                                               "bench broken", "runs"}));
    ASSERT_EQ(pieces.size(), 2u);
    // Two repetitions and their aggregates (mean, median, stddev, cv).
    ASSERT_EQ(pieces[0].size(), 6u);
    EXPECT_EQ(pieces[0][0]["run_name"], "fast/n:1/iterations:1/manual_time");
    EXPECT_EQ(pieces[0][0]["run_type"], "iteration");
    EXPECT_EQ(pieces[0][1]["repetition_index"], 1);
    EXPECT_EQ(pieces[0][2]["run_type"], "aggregate");
    EXPECT_DOUBLE_EQ(pieces[0][0]["real_time"].get<double>(), 1.0e3) << "1 us in ns, Google Benchmark's default unit";
    ASSERT_FALSE(pieces[1].empty());
    EXPECT_EQ(pieces[1][0]["error_occurred"], true);
    EXPECT_EQ(pieces[1][0]["error_message"], "failed: crashed: SIGSEGV in execute");
}

TEST(FilterReporter, PassesOnOnlyTheRunsItKeeps) {
    std::vector<std::vector<json>> seen;
    JsonCapture capture(nullptr, [&](std::vector<json> e) { seen.push_back(std::move(e)); });
    FilterReporter filter(capture, [](const benchmark::BenchmarkReporter::Run &r) {
        return !(r.error_occurred && r.error_message == "interrupted");
    });
    benchmark::RegisterBenchmark("kept",
                                 [](benchmark::State &st) {
                                     for (auto _ : st) st.SetIterationTime(1e-6);
                                 })
        ->UseManualTime()
        ->Iterations(1);
    benchmark::RegisterBenchmark("abandoned",
                                 [](benchmark::State &st) {
                                     st.SkipWithError("interrupted");
                                     for (auto _ : st) {}
                                 })
        ->UseManualTime()
        ->Iterations(1);
    std::vector<std::string> args = {"gb_capture_test", "--benchmark_repetitions=1"};
    std::vector<char *> argv;
    for (auto &a : args) argv.push_back(a.data());
    int argc = static_cast<int>(argv.size());
    benchmark::Initialize(&argc, argv.data());
    benchmark::RunSpecifiedBenchmarks(&filter);
    benchmark::ClearRegisteredBenchmarks();
    ASSERT_EQ(seen.size(), 1u);
    EXPECT_EQ(seen[0][0]["run_name"], "kept/iterations:1/manual_time");
}

// Each report's text is taken and dropped: the buffer never holds more than
// one report, so a long run costs linear time (it used to copy everything
// written so far on every report: quadratic over a 100,000-case run).
TEST(JsonCapture, HoldsNoTextBetweenReportsHoweverLongTheRun) {
    std::size_t entries = 0, largest_buffer = 0;
    JsonCapture capture(nullptr, [&](std::vector<json> e) { entries += e.size(); });
    struct Probe : benchmark::BenchmarkReporter {
        JsonCapture &c;
        std::size_t &largest;
        Probe(JsonCapture &c, std::size_t &largest) : c(c), largest(largest) {}
        bool ReportContext(const Context &ctx) override { return c.ReportContext(ctx); }
        void ReportRuns(const std::vector<Run> &runs) override {
            c.ReportRuns(runs);
            largest = std::max(largest, c.buffered_bytes());
        }
        void Finalize() override { c.Finalize(); }
    } probe(capture, largest_buffer);
    for (int i = 0; i < 200; ++i)
        benchmark::RegisterBenchmark(("many/i:" + std::to_string(i)).c_str(),
                                     [](benchmark::State &st) {
                                         for (auto _ : st) st.SetIterationTime(1e-6);
                                     })
            ->UseManualTime()
            ->Iterations(1);
    std::vector<std::string> args = {"gb_capture_test", "--benchmark_repetitions=1"}; // flags are global
    std::vector<char *> argv;
    for (auto &a : args) argv.push_back(a.data());
    int argc = static_cast<int>(argv.size());
    benchmark::Initialize(&argc, argv.data());
    benchmark::RunSpecifiedBenchmarks(&probe);
    benchmark::ClearRegisteredBenchmarks();
    EXPECT_EQ(entries, 200u);
    EXPECT_EQ(largest_buffer, 0u) << "text left in the buffer after a report";
}

} // namespace
