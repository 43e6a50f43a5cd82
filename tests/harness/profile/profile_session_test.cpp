// harness/profile/profile_session.{hpp,cpp}: the schedule picks the recorded samples
// of each case x backend (counted from 0 per case), the plugin's scope switch
// is on only inside them, warmup steps are dropped, a failed case's open
// phases are closed, and the trace carries the case's parameters.
#include "profile/profile_session.hpp"

#include <gtest/gtest.h>

namespace opbench {
namespace {

struct FakeBackend {
    bool recording = false;
    std::vector<bool> seen; // switch state at each plugin call
    void execute(Profiler &p) {
        seen.push_back(recording);
        if (!recording) return;
        p.begin("qk", SpanKind::plugin);
        p.end();
        p.begin("softmax", SpanKind::plugin);
        p.end();
    }
};

ProfileOptions options(const char *schedule) {
    ProfileOptions o;
    o.hot_path = true;
    o.schedule = parse_trace_schedule(schedule);
    return o;
}

// One case: prepare, then `samples` samples of 2 calls each in one repetition.
std::vector<bool> run_case(ProfileSession &s, FakeBackend &be, const std::string &name, int samples) {
    s.case_begin(
        name, "fake", {{"op", "attention"}, {"params", {{"S", 64}}}}, [&](bool on) { be.recording = on; },
        [] { return std::optional<uint64_t>(); });
    s.phase_begin("prepare");
    be.execute(s.profiler());
    s.phase_end();
    s.phase_begin("repetition");
    std::vector<bool> recorded;
    for (int i = 0; i < samples; ++i) {
        recorded.push_back(s.sample_begin());
        for (int k = 0; k < 2; ++k) {
            s.call_begin("execute");
            be.execute(s.profiler());
            s.call_end();
        }
        s.call_begin("synchronize");
        s.call_end();
        s.sample_end();
    }
    s.phase_end();
    (void)s.case_end();
    return recorded;
}

TEST(ProfileSession, ScheduleChoosesRecordedSamplesPerCase) {
    ProfileSession s(options("wait=1,warmup=1,active=2,repeat=1"));
    s.run_begin({{"suite", "t"}});
    FakeBackend be;
    const auto first = run_case(s, be, "a/be:fake", 6);
    const auto second = run_case(s, be, "b/be:fake", 6);
    s.run_end();
    EXPECT_EQ(first, (std::vector<bool>{false, true, true, true, false, false}));
    EXPECT_EQ(second, first); // the count starts again for each case x backend

    // The switch was off in prepare and outside the recorded samples.
    ASSERT_EQ(be.seen.size(), 2u * (1 + 12));
    EXPECT_FALSE(be.seen[0]);                // prepare
    EXPECT_FALSE(be.seen[1] || be.seen[2]);  // sample 0: wait
    EXPECT_TRUE(be.seen[3] && be.seen[4]);   // sample 1: warmup (recorded, dropped)
    EXPECT_TRUE(be.seen[7] && be.seen[8]);   // sample 3: active
    EXPECT_FALSE(be.seen[9] || be.seen[10]); // sample 4: done
    EXPECT_FALSE(be.recording);

    ASSERT_EQ(s.cases().size(), 2u);
    const CaseProfile &c = s.cases()[0];
    EXPECT_EQ(c.recorded_samples, 2u);
    const ScopeTree &t = c.tree;
    ASSERT_NE(t.find("case/repetition/sample"), nullptr);
    EXPECT_EQ(t.find("case/repetition/sample")->calls, 2u); // the warmup step was dropped
    EXPECT_EQ(t.find("case/repetition/sample/execute")->calls, 4u);
    EXPECT_EQ(t.find("case/repetition/sample/execute/qk")->calls, 4u);
    EXPECT_EQ(t.find("case/repetition/sample/execute/qk")->kind, SpanKind::plugin);
    EXPECT_EQ(t.find("case/repetition/sample/synchronize")->calls, 2u);
    EXPECT_EQ(t.find("case/prepare")->children.size(), 0u);
    EXPECT_EQ(s.profiler().open_spans(), 0u);
}

TEST(ProfileSession, FailedCaseClosesItsOpenPhases) {
    ProfileSession s(options("wait=0,warmup=0,active=5,repeat=1"));
    s.run_begin({});
    bool recording = false;
    s.case_begin(
        "x", "fake", {}, [&](bool on) { recording = on; }, [] { return std::optional<uint64_t>(7); });
    s.phase_begin("repetition");
    EXPECT_TRUE(s.sample_begin());
    EXPECT_TRUE(recording);
    // execute threw: the runner goes straight to case_end
    const CaseProfile &c = s.case_end();
    EXPECT_FALSE(recording);
    EXPECT_EQ(s.profiler().open_spans(), 1u); // only the run
    EXPECT_NE(c.tree.find("case/repetition/sample"), nullptr);
    s.run_end();
    EXPECT_EQ(s.profiler().open_spans(), 0u);
    // The device memory figure went into the counter track.
    bool device = false;
    for (const auto &m : s.profiler().memory_samples()) device |= m.device_bytes == std::optional<uint64_t>(7);
    EXPECT_TRUE(device);
}

TEST(ProfileSession, DeviceTimeGoesOnTheDeviceTrack) {
    ProfileSession s(options("wait=0,warmup=0,active=1,repeat=1"));
    s.case_begin("x", "fake", {}, nullptr, nullptr);
    ASSERT_TRUE(s.sample_begin());
    s.sample_end(2e-6);
    (void)s.case_end();
    bool found = false;
    for (const Span &sp : s.profiler().spans())
        if (sp.kind == SpanKind::device) {
            found = true;
            EXPECT_EQ(sp.end_ns - sp.begin_ns, 2000);
        }
    EXPECT_TRUE(found);
}

TEST(ProfileSession, TraceHasCaseParametersAndContextSaysWhatWasRecorded) {
    ProfileSession s(options("wait=0,warmup=0,active=1,repeat=1"));
    s.run_begin({{"suite", "t"}});
    FakeBackend be;
    (void)run_case(s, be, "a", 2);
    s.run_end();
    const nlohmann::json t = s.trace(TraceInfo{});
    bool case_args = false;
    for (const auto &e : t["traceEvents"])
        if (e["name"] == "case" && e["ph"] == "X") case_args = e["args"]["params"]["S"] == 64;
    EXPECT_TRUE(case_args);
    const nlohmann::json ctx = s.options().context();
    EXPECT_EQ(ctx["enabled"], true);
    EXPECT_EQ(ctx["recorded_samples_in_statistics"], false);
    EXPECT_EQ(ctx["schedule"], "wait=0,warmup=0,active=1,repeat=1");
    const Table top = s.top_scopes();
    EXPECT_FALSE(top.rows.empty());
}

} // namespace
} // namespace opbench

namespace opbench {
namespace {

// The run hands one entry's records over with the case it recorded: every
// repetition gets the array, Google Benchmark's aggregate does not.
TEST(AttachCaseProfile, EachRepetitionOfTheEntryGetsItsArray) {
    ProfileSession s(options("wait=0,warmup=0,active=1,repeat=1"));
    FakeBackend be;
    (void)run_case(s, be, "attention/x/be:fake", 2);
    std::vector<nlohmann::json> records = {{{"run_name", "attention/x/be:fake/manual_time"}, {"run_type", "iteration"}},
                                           {{"run_name", "attention/x/be:fake/manual_time"}, {"run_type", "iteration"}},
                                           {{"run_name", "attention/x/be:fake/manual_time"}, {"run_type", "aggregate"}}};
    ASSERT_EQ(s.cases().size(), 1u);
    attach_case_profile(records, s.cases()[0]);
    EXPECT_TRUE(records[0]["profile"].is_array());
    EXPECT_EQ(records[0]["profile"], records[1]["profile"]);
    EXPECT_FALSE(records[2].contains("profile"));
    EXPECT_EQ(records[0]["profile"][0]["scope"], "case");
}

} // namespace
} // namespace opbench
