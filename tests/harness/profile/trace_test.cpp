// harness/profile/trace.{hpp,cpp} and writers/chrome_trace_writer: the schedule's
// parsing and its step actions (the PyTorch profiler's semantics), and the
// Chrome Trace Event format checked field by field.
#include "profile/trace.hpp"

#include "writers/chrome_trace_writer.hpp"
#include "writers/writer.hpp"

#include <gtest/gtest.h>

#include <map>
#include <thread>

namespace opbench {
namespace {

// ---- schedule --------------------------------------------------------------------

TEST(TraceSchedule, ParsesEveryKeyInAnyOrder) {
    const TraceSchedule s = parse_trace_schedule("repeat=2, active=4,warmup=0,wait=3,skip_first=5");
    EXPECT_EQ(s.wait, 3);
    EXPECT_EQ(s.warmup, 0);
    EXPECT_EQ(s.active, 4);
    EXPECT_EQ(s.repeat, 2);
    EXPECT_EQ(s.skip_first, 5);
    EXPECT_EQ(to_string(s), "skip_first=5,wait=3,warmup=0,active=4,repeat=2");
    EXPECT_EQ(parse_trace_schedule(to_string(s)), s);
}

TEST(TraceSchedule, KeysLeftOutKeepTheDefaults) {
    const TraceSchedule s = parse_trace_schedule("active=7");
    EXPECT_EQ(s.active, 7);
    EXPECT_EQ(s.wait, TraceSchedule{}.wait);
    EXPECT_EQ(s.warmup, TraceSchedule{}.warmup);
    EXPECT_EQ(s.repeat, TraceSchedule{}.repeat);
}

std::string error_of(std::string_view text) {
    try {
        (void)parse_trace_schedule(text);
    } catch (const ScheduleError &e) {
        return e.what();
    }
    return "";
}

TEST(TraceSchedule, BadInputSaysWhatAndWhereAndWhatIsValid) {
    EXPECT_NE(error_of("wait=1,colour=2")
                  .find("unknown key 'colour' at column 8 (valid: skip_first, wait, warmup, active, repeat)"),
              std::string::npos)
        << error_of("wait=1,colour=2");
    EXPECT_NE(error_of("wait=1,wait=2").find("'wait' is given twice"), std::string::npos);
    EXPECT_NE(error_of("wait=-1").find("wait='-1' is not a whole number >= 0"), std::string::npos);
    EXPECT_NE(error_of("wait=1x").find("is not a whole number"), std::string::npos);
    EXPECT_NE(error_of("wait=").find("is not a whole number"), std::string::npos);
    EXPECT_NE(error_of("wait").find("is not key=N"), std::string::npos);
    EXPECT_NE(error_of("wait=1,,active=2").find("empty item at column 8"), std::string::npos);
    EXPECT_NE(error_of("active=0").find("active must be at least 1"), std::string::npos);
    EXPECT_NE(error_of("").find("is empty"), std::string::npos);
}

std::string actions(const TraceSchedule &s, int steps) {
    std::string out;
    for (int i = 0; i < steps; ++i) {
        const StepAction a = step_action(s, uint64_t(i));
        out += a == StepAction::none ? '.' : a == StepAction::warmup ? 'w' : 'R';
    }
    return out;
}

TEST(TraceSchedule, StepActionsFollowPyTorch) {
    // torch.profiler.schedule(wait=1, warmup=1, active=2, repeat=1)
    EXPECT_EQ(actions(parse_trace_schedule("wait=1,warmup=1,active=2,repeat=1"), 8), ".wRR....");
    // repeat=2: two cycles, then nothing
    EXPECT_EQ(actions(parse_trace_schedule("wait=1,warmup=1,active=2,repeat=2"), 10), ".wRR.wRR..");
    // repeat=0: cycles until the steps run out
    EXPECT_EQ(actions(parse_trace_schedule("wait=1,warmup=0,active=1,repeat=0"), 6), ".R.R.R");
    // skip_first comes once, before the first cycle
    EXPECT_EQ(actions(parse_trace_schedule("skip_first=2,wait=0,warmup=1,active=1,repeat=1"), 6), "..wR..");
}

TEST(TraceSchedule, FinishedWhenNoLaterStepIsRecorded) {
    const TraceSchedule s = parse_trace_schedule("skip_first=1,wait=1,warmup=1,active=2,repeat=2");
    EXPECT_FALSE(schedule_finished(s, 8));
    EXPECT_TRUE(schedule_finished(s, 9));
    for (uint64_t step = 9; step < 30; ++step) EXPECT_EQ(step_action(s, step), StepAction::none);
    EXPECT_FALSE(schedule_finished(parse_trace_schedule("repeat=0"), 1000000));
}

// ---- the format ------------------------------------------------------------------------

// run > case (with parameters) > sample > softmax (plugin), a worker thread's
// scope, a device span and two memory samples.
const Profiler &recorded() {
    static Profiler p;
    static bool done = false;
    if (done) return p;
    done = true;
    p.begin("run", SpanKind::host, nlohmann::json{{"suite", "t"}});
    p.memory(1000, std::nullopt);
    p.begin("case", SpanKind::host, nlohmann::json{{"op", "attention"}, {"params", {{"S", 128}}}});
    p.begin("sample");
    const int64_t t0 = p.now_ns();
    p.begin("softmax", SpanKind::plugin);
    p.end();
    p.device_span("sample [device]", t0, 1e-6);
    p.end();
    std::thread([&] {
        p.begin("worker", SpanKind::plugin);
        p.end();
    }).join();
    p.end();
    p.memory(2000, uint64_t{4096});
    p.end();
    return p;
}

TEST(ChromeTrace, FormatFieldByField) {
    TraceInfo info;
    info.process_name = "opbench run t";
    info.device_name = "device: fake";
    info.metadata = {{"suite", "t"}};
    const nlohmann::json trace = chrome_trace(recorded(), info);

    ASSERT_TRUE(trace.is_object());
    EXPECT_EQ(trace["displayTimeUnit"], "ns");
    EXPECT_EQ(trace["otherData"]["suite"], "t");
    ASSERT_TRUE(trace["traceEvents"].is_array());

    std::map<std::string, int> phases;
    std::map<std::string, nlohmann::json> x_by_name;
    std::vector<nlohmann::json> counters, meta;
    for (const auto &e : trace["traceEvents"]) {
        ASSERT_TRUE(e.contains("ph") && e["ph"].is_string()) << e.dump();
        ASSERT_TRUE(e.contains("pid") && e["pid"].is_number_integer()) << e.dump();
        ASSERT_TRUE(e.contains("name") && e["name"].is_string()) << e.dump();
        const std::string ph = e["ph"];
        ++phases[ph];
        if (ph == "X") {
            // Complete event: ts and dur in microseconds, a category, a thread, args.
            for (const char *k : {"ts", "dur"}) {
                ASSERT_TRUE(e[k].is_number()) << e.dump();
                EXPECT_GE(e[k].get<double>(), 0.0) << e.dump();
            }
            ASSERT_TRUE(e["tid"].is_number_integer()) << e.dump();
            ASSERT_TRUE(e["cat"] == "host" || e["cat"] == "plugin" || e["cat"] == "device") << e.dump();
            ASSERT_TRUE(e["args"].is_object()) << e.dump();
            x_by_name[e["name"]] = e;
        } else if (ph == "C") {
            ASSERT_TRUE(e["ts"].is_number()) << e.dump();
            ASSERT_TRUE(e["args"].is_object()) << e.dump();
            for (const auto &[k, v] : e["args"].items()) EXPECT_TRUE(v.is_number()) << k;
            counters.push_back(e);
        } else if (ph == "M") {
            ASSERT_TRUE(e["args"].is_object()) << e.dump();
            meta.push_back(e);
        } else {
            ADD_FAILURE() << "unexpected phase " << ph;
        }
    }
    EXPECT_EQ(phases["X"], 6); // run, case, sample, softmax, worker, device
    EXPECT_EQ(phases["C"], 2);

    // Process and thread names.
    auto has_meta = [&](const std::string &what, int pid, const std::string &name) {
        for (const auto &m : meta)
            if (m["name"] == what && m["pid"] == pid && m["args"].value("name", "") == name) return true;
        return false;
    };
    EXPECT_TRUE(has_meta("process_name", 1, "opbench run t"));
    EXPECT_TRUE(has_meta("process_name", 2, "device: fake"));
    EXPECT_TRUE(has_meta("thread_name", 2, "device timer"));
    const int main_tid = x_by_name["run"]["tid"];
    EXPECT_TRUE(has_meta("thread_name", 1, "harness (tid " + std::to_string(main_tid) + ")"));
    const int worker_tid = x_by_name["worker"]["tid"];
    EXPECT_NE(worker_tid, main_tid);
    EXPECT_TRUE(has_meta("thread_name", 1, "thread " + std::to_string(worker_tid)));

    // Case parameters as args; allocation figures on host and plugin spans.
    EXPECT_EQ(x_by_name["case"]["args"]["op"], "attention");
    EXPECT_EQ(x_by_name["case"]["args"]["params"]["S"], 128);
    // The run span allocated (the case's args, the worker thread): heap figures;
    // the softmax scope did not: none.
    if (OPBENCH_HEAP_TRACKED) { // not under a sanitizer (no interposer there)
        EXPECT_GT(x_by_name["run"]["args"]["allocs"].get<int>(), 0);
        EXPECT_TRUE(x_by_name["run"]["args"].contains("alloc_bytes"));
        EXPECT_FALSE(x_by_name["softmax"]["args"].contains("allocs"));
    }
    EXPECT_EQ(x_by_name["softmax"]["cat"], "plugin");
    EXPECT_EQ(x_by_name["sample"]["cat"], "host");

    // Nesting: each child lies inside its parent on the same thread.
    auto inside = [&](const char *child, const char *parent) {
        const auto &c = x_by_name[child], &p = x_by_name[parent];
        EXPECT_EQ(c["tid"], p["tid"]) << child;
        EXPECT_GE(c["ts"].get<double>(), p["ts"].get<double>()) << child;
        EXPECT_LE(c["ts"].get<double>() + c["dur"].get<double>(), p["ts"].get<double>() + p["dur"].get<double>() + 1e-9)
            << child;
    };
    inside("case", "run");
    inside("sample", "case");
    inside("softmax", "sample");

    // The device span: its own process, 1 us long, starting with the sample's work.
    EXPECT_EQ(x_by_name["sample [device]"]["pid"], 2);
    EXPECT_DOUBLE_EQ(x_by_name["sample [device]"]["dur"].get<double>(), 1.0);
    EXPECT_EQ(x_by_name["sample [device]"]["cat"], "device");

    // Memory counters: heap always, device where known.
    EXPECT_EQ(counters[0]["name"], "memory");
    EXPECT_EQ(counters[0]["args"]["heap_bytes"], 1000);
    EXPECT_FALSE(counters[0]["args"].contains("device_bytes"));
    EXPECT_EQ(counters[1]["args"]["device_bytes"], 4096);
}

TEST(ChromeTrace, WriterPutsOneEventPerLineAndParsesBack) {
    Document doc;
    doc.data = chrome_trace(recorded(), TraceInfo{});
    const Writer *w = find_writer("chrome-trace");
    ASSERT_NE(w, nullptr);
    EXPECT_EQ(w->extension, ".trace.json");
    const std::string text = w->write(doc);
    const nlohmann::json back = nlohmann::json::parse(text);
    EXPECT_EQ(back, doc.data);
    std::size_t lines = 0;
    for (char c : text) lines += c == '\n';
    EXPECT_GE(lines, doc.data["traceEvents"].size());
    // A result set is not a trace: refused, not written as an empty one.
    Document set;
    set.data = {{"benchmarks", nlohmann::json::array()}};
    EXPECT_THROW((void)w->write(set), std::invalid_argument);
}

} // namespace
} // namespace opbench
