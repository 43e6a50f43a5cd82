#include "readers/result_set_reader.hpp"

#include "result_set_fixture.hpp"

#include <gtest/gtest.h>

using namespace opbench;
using namespace opbench::test;

TEST(ResultSetReader, GroupsRepetitionsPerCaseAndIgnoresAggregates) {
    FakeSet s;
    FakeCase a;
    a.medians = {1e-5, 2e-5, 3e-5};
    FakeCase b = a;
    b.backend = "onednn";
    b.status = "skipped";
    b.reason = "no primitive";
    s.cases = {a, b};
    const ResultSet set = parse_result_set(fake_set_json(s).dump(), "x.json");
    ASSERT_EQ(set.cases.size(), 2u);
    EXPECT_EQ(set.cases[0].repetitions.size(), 3u);
    EXPECT_DOUBLE_EQ(set.cases[0].repetitions[1].median_seconds, 2e-5);
    EXPECT_EQ(set.cases[0].repetitions[0].sample_times.size(), 7u);
    EXPECT_EQ(set.cases[1].status, "skipped");
    EXPECT_EQ(set.cases[1].reason, "no primitive");
    EXPECT_TRUE(set.cases[1].repetitions.empty());
    EXPECT_EQ(set.suite_name(), "quick");
    EXPECT_EQ(set.commit(), "abc123def456");
    EXPECT_EQ(set.short_name(), "x");
}

TEST(ResultSetReader, MatchKeyLeavesThreadsAndCacheOut) {
    FakeCase a, b;
    b.threads = 1;
    b.cache = "cold";
    FakeSet s1, s2;
    s1.cases = {a};
    s2.cases = {b};
    const auto c1 = parse_result_set(fake_set_json(s1).dump(), "a").cases[0];
    const auto c2 = parse_result_set(fake_set_json(s2).dump(), "b").cases[0];
    EXPECT_NE(c1.name, c2.name); // thr:1 and cache:cold are in the name
    EXPECT_EQ(c1.match_key(), c2.match_key());
    EXPECT_NE(c1.match_key_with_settings(), c2.match_key_with_settings());
    EXPECT_EQ(c2.label(), "add/C:128/R:32/dt:f32");
    EXPECT_EQ(c2.shape(), "C:128 R:32");
}

TEST(ResultSetReader, BadJsonNamesFileLineAndColumn) {
    try {
        (void)parse_result_set("{\n  \"benchmarks\": [\n    1,,\n", "bad.json");
        FAIL() << "no error";
    } catch (const ResultSetError &e) {
        EXPECT_NE(std::string(e.what()).find("bad.json:3:"), std::string::npos) << e.what();
    }
}

TEST(ResultSetReader, RefusesWhatIsNotAnOpbenchSet) {
    EXPECT_THROW((void)parse_result_set("[1, 2]", "a.json"), ResultSetError);
    try {
        (void)parse_result_set(R"({"context": {}, "benchmarks": []})", "gb.json");
        FAIL();
    } catch (const ResultSetError &e) {
        EXPECT_NE(std::string(e.what()).find("no context.opbench"), std::string::npos);
    }
    nlohmann::json j = fake_set_json(FakeSet{});
    j["context"]["opbench"]["schema_version"] = 99;
    try {
        (void)parse_result_set(j.dump(), "new.json");
        FAIL();
    } catch (const ResultSetError &e) {
        EXPECT_NE(std::string(e.what()).find("schema version 99"), std::string::npos);
    }
    EXPECT_THROW((void)read_result_set("/nonexistent/x.json"), ResultSetError);
}

TEST(ResultSetReader, ValidTimesLeaveOutRepetitionsThatMissedTheirNoiseTarget) {
    FakeCase c;
    c.medians = {1e-5, 5e-5, 2e-5};
    c.target_met = {true, false, true};
    FakeSet s;
    s.cases = {c};
    const CaseRecord rec = parse_result_set(fake_set_json(s).dump(), "a").cases[0];
    ValidTimes v = valid_times(rec, false);
    EXPECT_EQ(v.status, "ok");
    EXPECT_EQ(v.repetition_medians.size(), 2u);
    EXPECT_EQ(v.excluded, 1u);
    EXPECT_DOUBLE_EQ(v.median, 1.5e-5);
    v = valid_times(rec, true);
    EXPECT_EQ(v.repetition_medians.size(), 3u);
    EXPECT_DOUBLE_EQ(v.median, 2e-5);
}

TEST(ResultSetReader, NoValidTimeSaysWhy) {
    FakeCase timed_out;
    timed_out.target_met = {false, false, false};
    FakeCase failed;
    failed.backend = "onednn";
    failed.status = "failed";
    failed.reason = "nmse 0.3 over 1e-5";
    FakeSet s;
    s.cases = {timed_out, failed};
    const ResultSet set = parse_result_set(fake_set_json(s).dump(), "a");
    const ValidTimes t = valid_times(set.cases[0], false);
    EXPECT_EQ(t.status, "timed_out");
    EXPECT_NE(t.why.find("not met in any of 3"), std::string::npos) << t.why;
    const ValidTimes f = valid_times(set.cases[1], false);
    EXPECT_EQ(f.status, "failed");
    EXPECT_EQ(f.why, "nmse 0.3 over 1e-5");
}

TEST(ResultSetReader, MachineIdIsTheHardwareNotTheHost) {
    FakeSet a, b, c;
    b.host = "runner-123"; // same hardware, another host name
    c.cores = 16;
    const std::string ia = parse_result_set(fake_set_json(a).dump(), "a").machine_id();
    EXPECT_EQ(ia, parse_result_set(fake_set_json(b).dump(), "b").machine_id());
    EXPECT_NE(ia, parse_result_set(fake_set_json(c).dump(), "c").machine_id());
    EXPECT_EQ(ia.rfind("amd-epyc-2c-", 0), 0u) << ia;
    nlohmann::json j = fake_set_json(a);
    j["context"]["opbench"]["machine"]["id"] = "ci-gpu-a100";
    EXPECT_EQ(machine_id(j["context"]), "ci-gpu-a100");
}

TEST(ResultSetReader, FormatSeconds) {
    EXPECT_EQ(format_seconds(4.33e-5), "43.3 us");
    EXPECT_EQ(format_seconds(3.56e-7), "356 ns");
    EXPECT_EQ(format_seconds(0.0123), "12.3 ms");
    EXPECT_EQ(format_seconds(2.5), "2.5 s");
}
