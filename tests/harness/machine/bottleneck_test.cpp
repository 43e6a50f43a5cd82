// harness/machine/bottleneck.{hpp,cpp}: the roofs an entry is judged against (the
// threads it really uses; a GPU's own peaks, never the CPU's), and each kind
// of verdict with its severity thresholds. Synthetic figures only.
#include "machine/bottleneck.hpp"

#include <gtest/gtest.h>

namespace opbench {
namespace {

MachinePeaks two_core_machine() {
    MachinePeaks m;
    m.cores = 2;
    m.one_thread = {1, 100.0, 200.0, 20.0, 25.0}; // GFLOP/s f32, bf16, GB/s triad, copy
    m.all_threads = {2, 200.0, 400.0, 30.0, 35.0};
    return m;
}

TEST(ThreadsUsed, BackendFixedCountWinsThenCaseThenDefaultThenCores) {
    const nlohmann::json naive = {{"threads", "1"}};
    const nlohmann::json onednn = {{"default_threads", "2"}};
    const nlohmann::json none = nlohmann::json::object();
    EXPECT_EQ(threads_used(0, naive, 2), 1);
    EXPECT_EQ(threads_used(2, naive, 2), 1); // naive ignores the case's setting
    EXPECT_EQ(threads_used(0, onednn, 2), 2);
    EXPECT_EQ(threads_used(1, onednn, 2), 1);
    EXPECT_EQ(threads_used(0, none, 16), 16);
    EXPECT_EQ(threads_used(0, nlohmann::json(nullptr), 0), 1);
    EXPECT_EQ(threads_used(0, {{"threads", "many"}}, 4), 4); // not a number: ignored
}

TEST(PeaksFor, CpuUsesThePeaksOfTheThreadsUsed) {
    const MachinePeaks m = two_core_machine();
    const auto one = peaks_for(false, 1, m, std::nullopt, PeakKind::f32);
    ASSERT_TRUE(one);
    EXPECT_DOUBLE_EQ(one->flops_per_s, 100e9);
    EXPECT_DOUBLE_EQ(one->bytes_per_s, 20e9);
    EXPECT_EQ(one->source, "CPU, 1 thread");
    const auto all = peaks_for(false, 2, m, std::nullopt, PeakKind::bf16);
    ASSERT_TRUE(all);
    EXPECT_DOUBLE_EQ(all->flops_per_s, 400e9);
    EXPECT_EQ(all->source, "CPU, 2 threads");
    EXPECT_FALSE(peaks_for(false, 1, MachinePeaks{}, std::nullopt, PeakKind::f32));
}

TEST(PeaksFor, GpuNeverGetsCpuPeaks) {
    const MachinePeaks m = two_core_machine();
    EXPECT_FALSE(peaks_for(true, 2, m, std::nullopt, PeakKind::f32));
    const RoofPeaks dev{60e12, 3e12, "device: theoretical"};
    const auto p = peaks_for(true, 2, m, dev, PeakKind::f32);
    ASSERT_TRUE(p);
    EXPECT_DOUBLE_EQ(p->flops_per_s, 60e12);
    EXPECT_DOUBLE_EQ(p->bytes_per_s, 3e12);
}

TEST(DevicePeaks, FromBackendInfoStringsOrNumbers) {
    const nlohmann::json info = {{"peak_f32_gflops", "60000"},
                                 {"peak_bf16_gflops", 990000.0},
                                 {"peak_bandwidth_gbps", "3350.4"},
                                 {"peak_source", "theoretical"}};
    const auto f32 = device_peaks_from_info(info, PeakKind::f32);
    ASSERT_TRUE(f32);
    EXPECT_DOUBLE_EQ(f32->flops_per_s, 60000e9);
    EXPECT_DOUBLE_EQ(f32->bytes_per_s, 3350.4e9);
    EXPECT_EQ(f32->source, "device: theoretical");
    EXPECT_DOUBLE_EQ(device_peaks_from_info(info, PeakKind::bf16)->flops_per_s, 990000e9);
    EXPECT_FALSE(device_peaks_from_info({{"peak_f32_gflops", "1"}}, PeakKind::f32));
    EXPECT_FALSE(device_peaks_from_info({{"peak_f32_gflops", "0"}, {"peak_bandwidth_gbps", "1"}}, PeakKind::f32));
}

EntryFigures elementwise_add(double seconds) {
    EntryFigures e;
    e.op = "add";
    e.backend = "naive";
    e.seconds = seconds;
    e.flops = 1e6;
    e.bytes = 12e6;
    return e;
}

TEST(Analyse, SingleThreadedCaseIsJudgedAgainstTheOneThreadRoof) {
    const MachinePeaks m = two_core_machine();
    EntryFigures e = elementwise_add(1e-3); // 12 GB/s
    e.peaks = peaks_for(false, 1, m, std::nullopt, PeakKind::f32);
    const Bottleneck one = analyse(e);
    EXPECT_EQ(one.kind, "memory-bound");
    EXPECT_NEAR(one.utilisation, 0.6, 1e-12); // 12 of 20 GB/s
    EXPECT_EQ(one.severity, "low");
    EXPECT_NE(one.suggestion.find("fewer bytes"), std::string::npos);
    // Judged against both cores it would look worse: 12 of 30 GB/s.
    e.peaks = peaks_for(false, 2, m, std::nullopt, PeakKind::f32);
    const Bottleneck all = analyse(e);
    EXPECT_NEAR(all.utilisation, 0.4, 1e-12);
    EXPECT_EQ(all.severity, "medium");
    EXPECT_NEAR(all.headroom, 0.6, 1e-12);
    EXPECT_NEAR(all.impact(e.seconds), 0.6e-3, 1e-15);
}

TEST(Analyse, SeverityThresholdsOfTheRoofs) {
    const MachinePeaks m = two_core_machine();
    EntryFigures e = elementwise_add(0);
    e.peaks = peaks_for(false, 1, m, std::nullopt, PeakKind::f32);
    auto at = [&](double utilisation) {
        e.seconds = e.bytes / (utilisation * 20e9);
        return analyse(e);
    };
    EXPECT_EQ(at(0.65).severity, "low");
    EXPECT_EQ(at(0.59).severity, "medium");
    EXPECT_EQ(at(0.29).severity, "high");
    EXPECT_EQ(at(0.29).kind, "memory-bound");
    EXPECT_EQ(at(0.09).kind, "unoptimised");
    EXPECT_EQ(at(0.09).severity, "high");
    EXPECT_NE(at(0.09).suggestion.find("optimised backend"), std::string::npos);
}

TEST(Analyse, ComputeBoundAboveTheRidge) {
    EntryFigures e;
    e.op = "matmul";
    e.backend = "onednn";
    e.threads = 2;
    e.flops = 2e9;
    e.bytes = 12e6; // 167 FLOP/byte, ridge 200/30 = 6.7
    e.seconds = 2e9 / (0.8 * 200e9);
    e.peaks = peaks_for(false, 2, two_core_machine(), std::nullopt, PeakKind::f32);
    const Bottleneck b = analyse(e);
    EXPECT_EQ(b.kind, "compute-bound");
    EXPECT_NEAR(b.utilisation, 0.8, 1e-12);
    EXPECT_EQ(b.severity, "low");
}

TEST(Analyse, OverheadWhenTheCallIsMostlyFixedCost) {
    EntryFigures e = elementwise_add(2e-6);
    e.peaks = peaks_for(false, 1, two_core_machine(), std::nullopt, PeakKind::f32);
    e.call_overhead_s = 1e-6;
    Bottleneck b = analyse(e);
    EXPECT_EQ(b.kind, "overhead");
    EXPECT_EQ(b.severity, "high"); // half the call
    EXPECT_NEAR(b.headroom, 0.5, 1e-12);
    e.seconds = 4e-6; // a quarter
    b = analyse(e);
    EXPECT_EQ(b.kind, "overhead");
    EXPECT_EQ(b.severity, "medium");
    e.seconds = 6e-6; // beyond 5x the fixed cost: the roofline decides
    EXPECT_NE(analyse(e).kind, "overhead");
}

// Issue 41: host time per call at or above device time names the launch.
TEST(Analyse, LaunchBoundWhenTheHostTakesAsLongToIssueACallAsTheDeviceToRunIt) {
    EntryFigures e = elementwise_add(12e-6);
    e.is_gpu = true;
    e.backend = "cuda";
    e.peaks = RoofPeaks{60e12, 3e12, "device"};
    e.device_seconds = 5e-6;
    e.host_seconds = 11e-6;
    Bottleneck b = analyse(e);
    EXPECT_EQ(b.kind, "launch-bound");
    EXPECT_EQ(b.severity, "high");
    EXPECT_NE(b.suggestion.find("fuse"), std::string::npos) << b.suggestion;
    EXPECT_NE(b.suggestion.find("batch"), std::string::npos) << b.suggestion;
    EXPECT_NE(b.suggestion.find("CUDA graph"), std::string::npos) << b.suggestion;
    e.host_seconds = 4e-6; // issued faster than it runs: not the launch
    EXPECT_NE(analyse(e).kind, "launch-bound");
    e.host_seconds.reset(); // a plugin without host time (ABI 1.4): never launch-bound
    EXPECT_NE(analyse(e).kind, "launch-bound");
    e.is_gpu = false; // a CPU backend's execute is its work: never launch-bound
    e.host_seconds = 11e-6;
    EXPECT_NE(analyse(e).kind, "launch-bound");
}

TEST(Analyse, SyncBoundWhenTheDeviceIsMostlyIdle) {
    EntryFigures e = elementwise_add(100e-6);
    e.is_gpu = true;
    e.backend = "cuda";
    e.peaks = RoofPeaks{60e12, 3e12, "device"};
    e.device_seconds = 10e-6;
    Bottleneck b = analyse(e);
    EXPECT_EQ(b.kind, "sync-bound");
    EXPECT_EQ(b.severity, "high");
    EXPECT_NEAR(b.utilisation, 0.1, 1e-12);
    e.device_seconds = 90e-6; // busy: the roofline decides (12e6 B in 100 us = 4% of 3 TB/s)
    b = analyse(e);
    EXPECT_EQ(b.kind, "unoptimised");
    EXPECT_EQ(b.description.find("CPU"), std::string::npos);
}

// A device-timed entry's median is its device time: whether the device
// idles is read against the host's wall time per call recorded beside it.
TEST(Analyse, SyncBoundReadsTheWallTimeBesideADeviceTimedMedian) {
    EntryFigures e = elementwise_add(10e-6); // the median: the device's 10 us
    e.is_gpu = true;
    e.backend = "cuda";
    e.peaks = RoofPeaks{60e12, 3e12, "device"};
    e.device_seconds = 10e-6;
    EXPECT_NE(analyse(e).kind, "sync-bound") << "no wall time: busy 100% of its own median";
    e.wall_seconds = 100e-6;
    const Bottleneck b = analyse(e);
    EXPECT_EQ(b.kind, "sync-bound");
    EXPECT_NEAR(b.utilisation, 0.1, 1e-12);
}

// Host allocations are not in a device timer's time; the host's own cost is
// launch-bound's to name.
TEST(Analyse, ADeviceTimedEntryIsNeverAllocationChurn) {
    EntryFigures e = elementwise_add(10e-6);
    e.is_gpu = true;
    e.backend = "cuda";
    e.peaks = RoofPeaks{60e12, 3e12, "device"};
    e.device_seconds = 10e-6;
    e.allocs = 2500;
    e.alloc_bytes = 1.7 * 1024 * 1024;
    EXPECT_NE(analyse(e).kind, "allocation-churn");
    e.device_seconds.reset(); // a GPU plugin without a device timer: its wall time holds them
    EXPECT_EQ(analyse(e).kind, "allocation-churn");
}

TEST(Analyse, GpuWithoutDevicePeaksHasNoRooflineVerdict) {
    EntryFigures e = elementwise_add(1e-3);
    e.is_gpu = true;
    e.backend = "cuda";
    e.peaks = peaks_for(true, 2, two_core_machine(), std::nullopt, PeakKind::f32);
    const Bottleneck b = analyse(e);
    EXPECT_EQ(b.kind, "unknown");
    EXPECT_NE(b.description.find("CPU peaks do not apply"), std::string::npos);
}

TEST(Analyse, AllocationChurnFromTheEstimatedCost) {
    EntryFigures e = elementwise_add(50e-6);
    e.peaks = peaks_for(false, 1, two_core_machine(), std::nullopt, PeakKind::f32);
    e.allocs = 100; // 100 x 100 ns = 10 us of 50 us: 20%
    Bottleneck b = analyse(e);
    EXPECT_EQ(b.kind, "allocation-churn");
    EXPECT_EQ(b.severity, "medium");
    EXPECT_NEAR(b.headroom, 0.2, 1e-9);
    e.alloc_bytes = 400e3; // + 400 kB / 20 GB/s = 20 us: 60%
    b = analyse(e);
    EXPECT_EQ(b.severity, "high");
    e.allocs = 1;
    e.alloc_bytes = 0; // 100 ns of 50 us: not worth a verdict
    EXPECT_NE(analyse(e).kind, "allocation-churn");
}

TEST(Analyse, NoTimeIsUnknown) {
    EXPECT_EQ(analyse(EntryFigures{}).kind, "unknown");
    const nlohmann::json j = to_json(analyse(elementwise_add(0)));
    for (const char *k : {"kind", "severity", "utilisation", "headroom", "description", "suggestion"})
        EXPECT_TRUE(j.contains(k)) << k;
}

} // namespace
} // namespace opbench

namespace opbench {
namespace {

TEST(RooflineFor, NaiveAgainstOneThreadGpuAgainstItsOwnPeaksOrNone) {
    const MachinePeaks m = two_core_machine();
    const nlohmann::json naive = {{"device", {{"kind", "cpu"}}}, {"info", {{"threads", "1"}}}};
    // 12e6 bytes in 1 ms: 12 GB/s = 60% of one thread's 20, 40% of both cores' 30.
    EXPECT_NEAR(roofline_for(1e6, 12e6, 1e-3, naive, 2, m, 0, PeakKind::f32).pct_peak_bandwidth, 60.0, 1e-9);
    const nlohmann::json onednn = {{"device", {{"kind", "cpu"}}}, {"info", {{"default_threads", "2"}}}};
    EXPECT_NEAR(roofline_for(1e6, 12e6, 1e-3, onednn, 2, m, 0, PeakKind::f32).pct_peak_bandwidth, 40.0, 1e-9);
    const nlohmann::json gpu = {{"device", {{"kind", "gpu"}}}, {"info", nlohmann::json::object()}};
    EXPECT_EQ(roofline_for(1e6, 12e6, 1e-3, gpu, 2, m, 0, PeakKind::f32).bound, "unknown");
    const nlohmann::json gpu_peaks = {{"device", {{"kind", "gpu"}}},
                                      {"info", {{"peak_f32_gflops", "1000"}, {"peak_bandwidth_gbps", "100"}}}};
    const Roofline r = roofline_for(1e6, 12e6, 1e-3, gpu_peaks, 2, m, 0, PeakKind::f32);
    EXPECT_NEAR(r.pct_peak_bandwidth, 12.0, 1e-9);
    EXPECT_NEAR(r.ridge_point, 10.0, 1e-12);
    EXPECT_EQ(r.bound, "memory-bound");
}

// The cuda backend reports only its FP32 peak; on an H100 bf16 GEMMs ran at
// 951% of it (2026-11-26). Each such entry names that cause (issue 28).
TEST(RooflineFor, AGpuDtypeWithoutItsOwnPeakSaysSo) {
    const MachinePeaks m = two_core_machine();
    const nlohmann::json gpu = {{"device", {{"kind", "gpu"}}},
                                {"info", {{"peak_f32_gflops", "1000"}, {"peak_bandwidth_gbps", "100"}}}};
    // 5e9 FLOP in 1 ms: 5 TFLOP/s, 500% of the 1 TFLOP/s FP32 roof.
    const Roofline bf16 = roofline_for(5e9, 1e6, 1e-3, gpu, 1, m, 0, PeakKind::bf16);
    EXPECT_NEAR(bf16.pct_peak_compute, 500.0, 1e-9);
    EXPECT_EQ(bf16.compute_roof, "device FP32");
    EXPECT_NE(bf16.above_roof_cause.find("500% of the device's FP32 peak"), std::string::npos) << bf16.above_roof_cause;
    EXPECT_NE(bf16.above_roof_cause.find("no bf16 peak (peak_bf16_gflops)"), std::string::npos);
    // With its own bf16 peak the same entry is within the roof and has no cause.
    nlohmann::json own = gpu;
    own["info"]["peak_bf16_gflops"] = "10000";
    const Roofline within = roofline_for(5e9, 1e6, 1e-3, own, 1, m, 0, PeakKind::bf16);
    EXPECT_NEAR(within.pct_peak_compute, 50.0, 1e-9);
    EXPECT_EQ(within.compute_roof, "device");
    EXPECT_EQ(within.above_roof_cause, "");
}

} // namespace
} // namespace opbench
