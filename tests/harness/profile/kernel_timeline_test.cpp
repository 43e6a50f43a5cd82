// harness/profile/kernel_timeline.{hpp,cpp} (issue 42): a call's device span,
// busy time (overlaps counted once) and gaps; records split per call; the
// device clock aligned to the host's; the result set's object and the
// console line; and the profile session keeping a kept sample's records (and
// putting them on the GPU track) while dropping a warmup's.
#include "profile/kernel_timeline.hpp"
#include "profile/profile_session.hpp"
#include "writers/text_wrap.hpp"

#include <gtest/gtest.h>

namespace opbench {
namespace {

DeviceActivity k(int64_t start, int64_t end, int32_t call = 0, std::string scope = {}, uint32_t stream = 1) {
    DeviceActivity a;
    a.name = "k" + std::to_string(start);
    a.scope = std::move(scope);
    a.call = call;
    a.start_ns = start;
    a.end_ns = end;
    a.stream = stream;
    return a;
}

TEST(CallTimeline, SpanBusyAndGapsOfThreeKernels) {
    // 10 busy, 5 idle, 20 busy, 5 idle, 10 busy (given out of order).
    const CallTimeline t = call_timeline({k(140, 150), k(100, 110), k(115, 135)});
    EXPECT_EQ(t.count, 3u);
    EXPECT_EQ(t.span_ns, 50);
    EXPECT_EQ(t.busy_ns, 40);
    EXPECT_EQ(t.gap_ns(), 10);
    EXPECT_EQ(t.gaps_ns, (std::vector<int64_t>{5, 5}));
    EXPECT_DOUBLE_EQ(t.busy_share(), 0.8);
    ASSERT_EQ(t.kernels.size(), 3u);
    EXPECT_EQ(t.kernels.front().start_ns, 100); // in start order
}

TEST(CallTimeline, OverlappingKernelsOnTwoStreamsCountOnce) {
    // [0,10) and [5,20) on two streams overlap: busy 20 of a 30 span, one gap of 5.
    const CallTimeline t = call_timeline({k(0, 10, 0, {}, 1), k(5, 20, 0, {}, 2), k(25, 30)});
    EXPECT_EQ(t.span_ns, 30);
    EXPECT_EQ(t.busy_ns, 25);
    EXPECT_EQ(t.gaps_ns, (std::vector<int64_t>{5}));
    // A kernel inside another adds nothing.
    EXPECT_EQ(call_timeline({k(0, 100), k(10, 20)}).busy_ns, 100);
    EXPECT_TRUE(call_timeline({k(0, 100), k(10, 20)}).gaps_ns.empty());
}

TEST(CallTimeline, NoRecordsIsAnEmptyCall) {
    const CallTimeline t = call_timeline({});
    EXPECT_EQ(t.count, 0u);
    EXPECT_EQ(t.span_ns, 0);
    EXPECT_DOUBLE_EQ(t.busy_share(), 1.0);
}

TEST(SplitCalls, GroupsByCallAndPutsUnknownCallsTogether) {
    const auto calls = split_calls({k(0, 10, 0), k(100, 110, 1), k(20, 30, 0), k(50, 60, -1), k(70, 80, -3)});
    ASSERT_EQ(calls.size(), 3u);
    EXPECT_EQ(calls[0].call, -1);
    EXPECT_EQ(calls[0].count, 2u);
    EXPECT_EQ(calls[1].call, 0);
    EXPECT_EQ(calls[1].span_ns, 30);
    EXPECT_EQ(calls[1].gaps_ns, (std::vector<int64_t>{10}));
    EXPECT_EQ(calls[2].call, 1);
}

TEST(ClockAlignment, TheSamplesFirstRecordLandsOnTheFirstExecute) {
    const std::vector<DeviceActivity> rs = {k(5'000'200, 5'000'300), k(5'000'000, 5'000'100)};
    const int64_t offset = device_to_host_offset(rs, 1'000);
    EXPECT_EQ(5'000'000 + offset, 1'000);
    EXPECT_EQ(5'000'200 + offset, 1'200); // the device's spacing kept
    EXPECT_EQ(device_to_host_offset({}, 1'000), 0);
}

TEST(KernelTimelineJson, MediansOverCallsScopesAndExamples) {
    KernelTimeline t;
    t.offered = true;
    std::vector<DeviceActivity> sample;
    for (int32_t c = 0; c < 6; ++c) { // each call: 10 busy, 10 idle, 10 busy, 10 idle, 10 busy
        const int64_t t0 = 1000 * c;
        sample.push_back(k(t0, t0 + 10, c, "qk"));
        sample.push_back(k(t0 + 20, t0 + 30, c, "softmax"));
        sample.push_back(k(t0 + 40, t0 + 50, c, "pv"));
    }
    t.add_sample(sample);
    const nlohmann::json j = kernel_timeline_json(t);
    EXPECT_EQ(j["status"], "recorded");
    EXPECT_EQ(j["samples"], 1);
    EXPECT_EQ(j["calls"], 6);
    EXPECT_DOUBLE_EQ(j["kernels_per_call"].get<double>(), 3.0);
    EXPECT_DOUBLE_EQ(j["device_seconds_per_call"].get<double>(), 50e-9);
    EXPECT_DOUBLE_EQ(j["busy_seconds_per_call"].get<double>(), 30e-9);
    EXPECT_DOUBLE_EQ(j["gap_seconds_per_call"].get<double>(), 20e-9);
    EXPECT_DOUBLE_EQ(j["busy_share"].get<double>(), 0.6);
    EXPECT_NEAR(j["gap_share"].get<double>(), 0.4, 1e-12);
    EXPECT_DOUBLE_EQ(j["max_gap_seconds"].get<double>(), 10e-9);
    ASSERT_EQ(j["scopes"].size(), 3u);
    for (const auto &s : j["scopes"]) {
        EXPECT_DOUBLE_EQ(s["seconds_per_call"].get<double>(), 10e-9) << s.dump();
        EXPECT_DOUBLE_EQ(s["share"].get<double>(), 0.2) << s.dump();
    }
    // Only the first calls list their kernels.
    ASSERT_EQ(j["example_calls"].size(), KernelTimeline::kExampleCalls);
    const auto &first = j["example_calls"][0];
    ASSERT_EQ(first["kernels"].size(), 3u);
    EXPECT_EQ(first["kernels"][1]["scope"], "softmax");
    EXPECT_DOUBLE_EQ(first["kernels"][1]["start_seconds"].get<double>(), 20e-9);
    EXPECT_EQ(first["gaps_seconds"].size(), 2u);
}

TEST(KernelTimelineJson, RefusedAndEmpty) {
    KernelTimeline t;
    t.offered = true;
    t.refused = "CUPTI: insufficient privileges";
    EXPECT_EQ(kernel_timeline_json(t), nlohmann::json({{"status", "refused"}, {"reason", t.refused}}));
    EXPECT_EQ(kernel_timeline_line(t), "refused: CUPTI: insufficient privileges");
    t.refused.clear();
    EXPECT_EQ(kernel_timeline_json(t)["status"], "empty");
}

TEST(KernelTimelineLine, FitsAConsoleLine) {
    KernelTimeline t;
    t.add_sample({k(0, 10'000), k(20'000, 30'000), k(40'000, 50'000)});
    const std::string line = kernel_timeline_line(t);
    EXPECT_NE(line.find("3 kernels per call"), std::string::npos) << line;
    EXPECT_NE(line.find("busy 60%"), std::string::npos) << line;
    EXPECT_NE(line.find("gaps 40%"), std::string::npos) << line;
    EXPECT_LE(display_width(line), 80u) << line; // leaves room for the case's name
}

// The session: a recorded sample's records go into the case and onto the
// kernel tracks, aligned to the first execute; a warmup's are dropped.
TEST(ProfileSessionTimeline, KeepsRecordedSamplesAndDropsWarmups) {
    ProfileOptions o;
    o.schedule = parse_trace_schedule("wait=0,warmup=1,active=1,repeat=1");
    ProfileSession s(o);
    s.run_begin(nullptr);
    s.case_begin("c", "fake", nullptr, nullptr, nullptr);
    int begins = 0, ends = 0;
    ActivitySource src;
    src.begin = [&] {
        ++begins;
        return std::string();
    };
    src.end = [&](std::vector<DeviceActivity> &out) {
        ++ends;
        out = {k(9'000'000, 9'000'010, 0), k(9'000'020, 9'000'030, 0)};
        return std::string();
    };
    s.set_activity_source(src);
    for (int i = 0; i < 3; ++i) { // warmup, record, none
        (void)s.sample_begin();
        s.call_begin("execute");
        s.call_end();
        s.sample_end();
    }
    const CaseProfile &c = s.case_end();
    s.run_end();
    EXPECT_EQ(begins, 2);
    EXPECT_EQ(ends, 2);
    EXPECT_TRUE(c.timeline.offered);
    EXPECT_EQ(c.timeline.samples, 1u);
    ASSERT_EQ(c.timeline.calls.size(), 1u);
    EXPECT_EQ(c.timeline.calls[0].busy_ns, 20);
    // Two kernel spans (the warmup's were not added), the first at the execute's start.
    std::vector<Span> kernels, executes;
    for (const Span &sp : s.profiler().spans()) {
        if (sp.kind == SpanKind::kernel) kernels.push_back(sp);
        if (s.profiler().name(sp.name) == "execute") executes.push_back(sp);
    }
    ASSERT_EQ(kernels.size(), 2u);
    ASSERT_EQ(executes.size(), 1u);
    EXPECT_LE(kernels[0].begin_ns, executes[0].begin_ns);
    EXPECT_GE(kernels[0].begin_ns, executes[0].begin_ns - 1'000'000); // aligned near it, not on the device's clock
    EXPECT_EQ(kernels[1].begin_ns - kernels[0].begin_ns, 20);
    EXPECT_TRUE(is_kernel_thread(kernels[0].thread));
    // Not a scope of the host's: the hot-path tree leaves them out.
    for (const auto &n : c.tree.nodes) EXPECT_NE(n.kind, SpanKind::kernel) << n.path;
    // The trace: a GPU stream track with the two kernels.
    const nlohmann::json trace = s.trace({});
    int on_track = 0;
    bool named = false;
    for (const auto &e : trace["traceEvents"]) {
        if (e["ph"] == "X" && e["cat"] == "kernel" && e["pid"] == 2 && e["tid"] == 3) ++on_track;
        if (e["ph"] == "M" && e["name"] == "thread_name" && e["tid"] == 3)
            named = e["args"]["name"] == "GPU stream 1 kernels";
    }
    EXPECT_EQ(on_track, 2);
    EXPECT_TRUE(named);
}

TEST(ProfileSessionTimeline, ARefusalIsKeptAndNotRetried) {
    ProfileOptions o;
    o.schedule = parse_trace_schedule("wait=0,warmup=0,active=3,repeat=1");
    ProfileSession s(o);
    s.case_begin("c", "fake", nullptr, nullptr, nullptr);
    int begins = 0;
    ActivitySource src;
    src.begin = [&] {
        ++begins;
        return std::string("no privilege");
    };
    src.end = [&](std::vector<DeviceActivity> &) { return std::string(); };
    s.set_activity_source(src);
    for (int i = 0; i < 3; ++i) {
        (void)s.sample_begin();
        s.sample_end();
    }
    const CaseProfile &c = s.case_end();
    EXPECT_EQ(begins, 1);
    EXPECT_EQ(c.timeline.refused, "no privilege");
    EXPECT_EQ(c.recorded_samples, 3u); // the samples themselves went on
}

} // namespace
} // namespace opbench
