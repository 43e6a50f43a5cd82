// The entry loop (harness/run/entry_loop.hpp) through a fake host: a run's
// entries each alone, their repetitions in turn; a group (`ab`'s case: two
// sides) activated together, measured in its order in the slots it names,
// finished together; a member that fails or cannot run stops its group; and
// what the group's owner hears (each step, the finished group, each
// entry's records, the logged group).
#include "run/entry_loop.hpp"

#include "opbench/ops.hpp"
#include "run/run_log.hpp"
#include "run/runner.hpp"

#include <gtest/gtest.h>

#include <fmt/format.h>

#include <map>
#include <set>
#include <string>
#include <vector>

using namespace opbench;

namespace {

// Every call the loop makes, as "activate a", "measure b 2", "finish a";
// `fail_measure` names an entry backend whose given step fails,
// `cannot` a backend that cannot run.
class FakeHost final : public EntryHost {
public:
    std::vector<std::string> calls;
    std::string cannot;
    std::string fail_measure;
    int fail_at = -1; // that backend's measure call (0-based) that fails

    std::optional<MeasureFailure> cannot_run(const Entry &e) const override {
        if (e.backend() == cannot) return MeasureFailure{CaseStatus::skipped, "not installed here"};
        return std::nullopt;
    }
    Activation activate(const Entry &e, const CaseJob &) override {
        calls.push_back("activate " + e.backend());
        Activation a;
        a.status = CaseStatus::passed;
        return a;
    }
    RepetitionRecord measure(const Entry &e, std::size_t slot) override {
        calls.push_back(fmt::format("measure {} {}", e.backend(), slot));
        if (e.backend() == fail_measure && measures_[e.backend()]++ == fail_at)
            throw MeasureFailure{CaseStatus::failed, "crashed: SIGSEGV in execute"};
        RepetitionRecord rec;
        rec.summary.median = 1e-6 * double(calls.size());
        rec.summary.n = 5;
        rec.target_met = true;
        rec.sample_times = std::vector<double>(5, rec.summary.median);
        return rec;
    }
    FinishRecord finish(const Entry &e) override {
        calls.push_back("finish " + e.backend());
        return {};
    }
    bool interrupted() const override { return false; }
    int processes_of_case(const MeasureSettings &) const override { return 1; }
    RunFacts facts(const MachinePeaks &peaks) const override { return RunFacts{{}, {}, peaks}; }

private:
    std::map<std::string, int> measures_;
};

// What the group's owner heard, in order.
struct Recorder final : GroupObserver {
    std::vector<std::string> heard;
    void step_measured(std::size_t g, std::size_t k) override { heard.push_back(fmt::format("step {} {}", g, k)); }
    void group_finished(std::size_t g) override { heard.push_back(fmt::format("finished {}", g)); }
    void add_to_records(std::size_t i, std::vector<nlohmann::json> &records) override {
        heard.push_back(fmt::format("records {}", i));
        for (auto &r : records) r["marked"] = true;
    }
    void group_logged(std::size_t g) override { heard.push_back(fmt::format("logged {}", g)); }
};

Case add_case(std::vector<std::string> backends, int repetitions, int64_t cols = 8) {
    Case c;
    c.desc = make_desc(OPB_OP_ADD, OPB_DTYPE_F32);
    c.desc.p.eltwise = {4, cols};
    c.backends = std::move(backends);
    c.settings.repetitions = repetitions;
    return c;
}

struct Fixture {
    std::vector<Case> cases;
    std::vector<std::unique_ptr<Entry>> entries;
    FakeHost host;
    Recorder recorder;
    RunLog log{nlohmann::json::object(), std::nullopt};
    LoopOptions options{{}, false, false, std::nullopt, false};
    MachinePeaks peaks;

    explicit Fixture(std::vector<Case> c) : cases(std::move(c)), entries(planned_entries(cases, {}, "a")) {}

    void run(std::vector<EntryGroup> groups) {
        EntryLoop loop(entries, EntryLoop::Setup{host, log, options, peaks, JobDefaults{}, "a", nullptr,
                                                 std::move(groups), &recorder});
        loop.run();
    }
    // Each logged entry's status, by backend, and its records.
    std::map<std::string, nlohmann::json> logged() const {
        std::map<std::string, nlohmann::json> by_backend;
        const nlohmann::json set = log.result_set(true);
        for (const auto &b : set["benchmarks"]) by_backend[b["backend"].get<std::string>()].push_back(b);
        return by_backend;
    }
};

} // namespace

TEST(EntryLoop, EachEntryAloneRunsItsRepetitionsInTurnWithoutGroups) {
    Fixture f({add_case({"a", "b"}, 2)});
    f.run({});
    const std::vector<std::string> want = {"activate a", "measure a 0", "measure a 1", "finish a",
                                           "activate b", "measure b 0", "measure b 1", "finish b"};
    EXPECT_EQ(f.host.calls, want);
    const std::vector<std::string> heard = {"step 0 0", "step 0 1", "finished 0", "records 0", "logged 0",
                                            "step 1 0", "step 1 1", "finished 1", "records 1", "logged 1"};
    EXPECT_EQ(f.recorder.heard, heard);
    for (const auto &[backend, records] : f.logged()) {
        int iterations = 0;
        for (const auto &r : records)
            if (r.value("run_type", "") == "iteration") {
                ++iterations;
                EXPECT_TRUE(r.contains("summary") && r.contains("metrics")) << backend;
                EXPECT_TRUE(r.value("marked", false)) << backend; // the owner's additions reach the set
            }
        EXPECT_EQ(iterations, 2) << backend;
    }
}

TEST(EntryLoop, AGroupIsActivatedTogetherMeasuredInItsOrderAndSlotsAndFinishedTogether) {
    Fixture f({add_case({"a", "b"}, 2)});
    f.run({EntryGroup{{0, 1}, {{0, 0}, {1, 1}, {1, 2}, {0, 3}}}});
    const std::vector<std::string> want = {"activate a", "activate b", "measure a 0", "measure b 1",
                                           "measure b 2", "measure a 3", "finish a",   "finish b"};
    EXPECT_EQ(f.host.calls, want);
    const std::vector<std::string> heard = {"step 0 0",  "step 0 1",  "step 0 2", "step 0 3",
                                            "finished 0", "records 0", "records 1", "logged 0"};
    EXPECT_EQ(f.recorder.heard, heard);
    const auto logged = f.logged();
    ASSERT_EQ(logged.size(), 2u);
    for (const auto &[backend, records] : logged) EXPECT_FALSE(records[0].value("error_occurred", false)) << backend;
}

TEST(EntryLoop, AMemberThatFailsStopsItsGroupAndTheOthersAreReleased) {
    Fixture f({add_case({"a", "b"}, 2)});
    f.host.fail_measure = "b";
    f.host.fail_at = 0;
    f.run({EntryGroup{{0, 1}, {{0, 0}, {1, 1}, {1, 2}, {0, 3}}}});
    // b's failed step released it in its host; a, still held, is finished; nothing more is measured.
    const std::vector<std::string> want = {"activate a", "activate b", "measure a 0", "measure b 1", "finish a"};
    EXPECT_EQ(f.host.calls, want);
    EXPECT_EQ(f.entries[1]->result.status, CaseStatus::failed);
    EXPECT_EQ(f.entries[1]->result.reason, "crashed: SIGSEGV in execute");
    EXPECT_EQ(f.entries[0]->result.status, CaseStatus::failed);
    EXPECT_EQ(f.entries[0]->result.reason, "stopped with b (failed: crashed: SIGSEGV in execute)");
    EXPECT_EQ(f.log.counts().at("failed"), 2);
}

TEST(EntryLoop, AGroupWithAMemberThatCannotRunIsSkippedWholeBeforeAnythingRuns) {
    Fixture f({add_case({"a", "b"}, 2), add_case({"a", "b"}, 1, 16)});
    f.host.cannot = "a";
    f.run({EntryGroup{{0, 1}, {{0, 0}, {1, 0}}}, EntryGroup{{2, 3}, {{1, 0}, {0, 0}}}});
    EXPECT_TRUE(f.host.calls.empty());
    for (const auto &e : f.entries) EXPECT_EQ(e->result.status, CaseStatus::skipped) << e->name();
    EXPECT_EQ(f.entries[1]->result.reason, "stopped with a (skipped: not installed here)");
    EXPECT_EQ(f.log.counts().at("skipped"), 4);
    // Each skipped group is still judged and logged by its owner, in order.
    const std::vector<std::string> heard = {"finished 0", "records 0", "records 1", "logged 0",
                                            "finished 1", "records 2", "records 3", "logged 1"};
    EXPECT_EQ(f.recorder.heard, heard);
}
