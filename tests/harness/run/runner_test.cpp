// The runner's plan of a run, without plugins or Google Benchmark.
#include "run/runner.hpp"
#include "run/run_profile.hpp"

#include <gtest/gtest.h>

using namespace opbench;

namespace {

Suite two_cases() {
    return parse_suite(R"([suite]
name = "t"
[defaults]
backends = ["naive", "onednn"]
[[case]]
op = "add"
rows = 4
cols = [8, 16]
threads = [0, 2]
)",
                       "t.toml");
}

} // namespace

TEST(Runner, EffectiveCasesApplyOverridesAndResolveThreads) {
    const Suite suite = two_cases();
    ASSERT_EQ(suite.cases.size(), 4u);
    RunOptions o;
    o.overrides.set(*find_setting("warmup"), 7);
    o.backends = {"naive"};
    const auto cases = effective_cases(suite, CommandLineChanges{o.overrides, o.backends});
    ASSERT_EQ(cases.size(), 4u);
    for (const Case &c : cases) {
        EXPECT_EQ(c.settings.warmup, 7);
        EXPECT_EQ(c.backends, std::vector<std::string>{"naive"});
        EXPECT_EQ(c.desc.threads, resolve_threads(c.settings.threads));
        EXPECT_GE(c.desc.threads, 1) << "a backend never sees threads = 0";
    }
}

TEST(Runner, OverridesThatContradictTheSuiteAreBadInput) {
    RunOptions o;
    o.overrides.set(*find_setting("min_time"), 10); // suite max_time: default 2
    EXPECT_THROW((void)effective_cases(two_cases(), CommandLineChanges{o.overrides, o.backends}), SuiteError);
}

TEST(Runner, PlannedEntriesOnePerCaseAndBackendInOrder) {
    RunOptions o;
    o.backend.reference = "naive";
    const auto cases = effective_cases(two_cases(), CommandLineChanges{o.overrides, o.backends});
    const auto entries = planned_entries(cases, {}, o.backend.reference);
    std::vector<CaseResult> results;
    for (const auto &e : entries) results.push_back(e->result);
    ASSERT_EQ(results.size(), 8u);
    EXPECT_EQ(results[0].backend, "naive");
    EXPECT_TRUE(results[0].is_reference);
    EXPECT_EQ(results[1].backend, "onednn");
    EXPECT_FALSE(results[1].is_reference);
    EXPECT_EQ(results[0].source, &cases[0]);
    EXPECT_EQ(results[0].status, CaseStatus::passed);
    EXPECT_GT(results[0].nmse_threshold, 0);
    EXPECT_NE(results[2].name, results[0].name);
}

TEST(SummaryLine, GivesWallTimeAndWhereItWent) {
    RunSummary s;
    s.passed = 3;
    s.failed = 1;
    s.skipped = 2;
    s.wall_seconds = 100.0;
    s.measure_seconds = 75.0;
    s.verify_seconds = 5.0;
    s.prepare_seconds = 1.5;
    s.verify = VerifyMode::fast;
    const std::string line = summary_line(s);
    EXPECT_NE(line.find("3 passed, 1 failed, 2 skipped in 100.0 s"), std::string::npos) << line;
    EXPECT_NE(line.find("measuring 75.0 s (75%)"), std::string::npos) << line;
    EXPECT_NE(line.find("verifying 5.0 s (5%, fast)"), std::string::npos) << line;
    EXPECT_NE(line.find("preparing 1.5 s (2%)"), std::string::npos) << line;
    EXPECT_EQ(line.find("UNVERIFIED"), std::string::npos) << line;
    EXPECT_EQ(line.find("--processes 1"), std::string::npos) << "no moves, no advice: " << line;
    s.unverified = 3;
    s.verify = VerifyMode::off;
    EXPECT_NE(summary_line(s).find("3 passed UNVERIFIED"), std::string::npos) << summary_line(s);
}

// Moving cases to further worker processes (settings.processes) is the part
// of the preparing that --processes 1 removes: named from a tenth of the
// run, in a line of its own within 100 columns.
TEST(SummaryLine, NamesTheProcessesFlagWhereMovesTookATenthOfTheRun) {
    RunSummary s;
    s.wall_seconds = 100.0;
    s.measure_seconds = 80.0;
    s.prepare_seconds = 15.0;
    s.process_start_seconds = 9.9;
    EXPECT_EQ(summary_line(s).find("--processes 1"), std::string::npos) << summary_line(s);
    s.process_start_seconds = 12.3;
    const std::string line = summary_line(s);
    const auto at = line.find("preparing 15.0 s (15%)\n  of which 12.3 s moved cases to further worker processes");
    ASSERT_NE(at, std::string::npos) << line;
    const std::string advice = line.substr(line.find('\n', at) + 1);
    EXPECT_NE(advice.find("--processes 1"), std::string::npos) << advice;
    EXPECT_LE(advice.size(), 100u) << advice;
}

// Issue 17: a profile whose time per call differs from the entry's measured
// median by more than 2x says so; within 2x it says nothing.
TEST(ProfileCheck, SaysWhenTheProfileAndTheMeasurementDisagreeByMoreThanTwice) {
    EXPECT_EQ(opbench::profile_disagreement(1.9e-6, 1e-6), "");
    EXPECT_EQ(opbench::profile_disagreement(0.6e-6, 1e-6), "");
    EXPECT_EQ(opbench::profile_disagreement(0, 1e-6), "") << "no profile, no claim";
    const std::string slower = opbench::profile_disagreement(2.5e-6, 1e-6);
    EXPECT_NE(slower.find("execute took 2.5 us per call in the recorded samples, 1 us measured (2.5x)"),
              std::string::npos)
        << slower;
    EXPECT_NE(opbench::profile_disagreement(0.2e-6, 1e-6).find("(0.2x)"), std::string::npos);
}
