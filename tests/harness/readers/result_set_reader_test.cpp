#include "readers/result_set_reader.hpp"
#include "measure/sample_codec.hpp"

#include "../result_set_fixture.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <csignal>
#include <functional>
#include <thread>
#include <unistd.h>

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

TEST(ResultSetReader, ReadsTheSampleHistogramAndTheOlderSampleTimesAlike) {
    FakeSet s;
    FakeCase a;
    a.medians = {1e-5, 2e-5};
    s.cases = {a};
    nlohmann::json old_form = fake_set_json(s), new_form = old_form;
    // The writer's form (measure/sample_codec.hpp) of the same samples.
    for (auto &e : new_form["benchmarks"]) {
        if (!e.contains("stats")) continue; // aggregates
        auto &st = e["stats"];
        st["sample_histogram"] =
            encode_sample_histogram(st["sample_times"].get<std::vector<double>>(), st.value("calls_per_sample", 1), 1e-9);
        st.erase("sample_times");
    }
    const ResultSet o = parse_result_set(old_form.dump(), "old.json"), n = parse_result_set(new_form.dump(), "new.json");
    for (std::size_t r = 0; r < 2; ++r) {
        auto want = o.cases[0].repetitions[r].sample_times;
        std::sort(want.begin(), want.end());
        const auto &got = n.cases[0].repetitions[r].sample_times;
        ASSERT_EQ(got.size(), want.size());
        for (std::size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-9);
    }
    // A histogram that does not add up to `samples`, or is malformed, is refused by its JSON path.
    nlohmann::json short_form = new_form;
    auto &counts = short_form["benchmarks"][0]["stats"]["sample_histogram"]["counts"];
    counts = "2" + counts.get<std::string>().substr(1); // the first count was 1
    EXPECT_THROW(
        {
            try {
                (void)parse_result_set(short_form.dump(), "s.json");
            } catch (const ResultSetError &e) {
                EXPECT_NE(std::string(e.what()).find("benchmarks[0].stats.sample_histogram.counts"), std::string::npos)
                    << e.what();
                throw;
            }
        },
        ResultSetError);
    nlohmann::json bad = new_form;
    auto &ticks = bad["benchmarks"][1]["stats"]["sample_histogram"]["ticks"];
    ticks = "-5" + ticks.get<std::string>().substr(ticks.get<std::string>().find(' '));
    try {
        (void)parse_result_set(bad.dump(), "b.json");
        ADD_FAILURE() << "a negative tick was accepted";
    } catch (const ResultSetError &e) {
        EXPECT_NE(std::string(e.what()).find("b.json: benchmarks[1].stats.sample_histogram: ticks: item 0 ('-5')"),
                  std::string::npos)
            << e.what();
    }
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

TEST(ResultSetReader, ValidTimesKeepRepetitionsThatMissedTheirNoiseTargetAndSayItInTheQuality) {
    // The one policy (measure/entry_summary.hpp): every passed repetition
    // counts, so every view shows the same median; the miss is a reason.
    FakeCase c;
    c.medians = {1e-5, 5e-5, 2e-5};
    c.target_met = {true, false, true};
    FakeSet s;
    s.cases = {c};
    const CaseRecord rec = parse_result_set(fake_set_json(s).dump(), "a").cases[0];
    const ValidTimes v = valid_times(rec);
    EXPECT_EQ(v.status, "ok");
    EXPECT_EQ(v.repetition_medians.size(), 3u);
    EXPECT_DOUBLE_EQ(v.median, 2e-5);
    EXPECT_DOUBLE_EQ(v.summary.median_s, 2e-5);
    EXPECT_EQ(v.summary.missed_noise_target, 1u);
    EXPECT_EQ(v.summary.quality, Quality::noisy);
    EXPECT_DOUBLE_EQ(entry_summary(rec).median_s, 2e-5);
}

TEST(ResultSetReader, StarvedRepetitionsAreLeftOutOfTheMedianAndAnAllStarvedEntryHasNoTime) {
    FakeCase partly;
    partly.medians = {1e-5, 16e-3, 2e-5};
    partly.starved = {false, true, false};
    FakeCase all_flagged; // a set whose every repetition is flagged but says passed
    all_flagged.backend = "onednn";
    all_flagged.medians = {16e-3, 16e-3};
    all_flagged.starved = {true, true};
    FakeCase starved; // as the run writes it: status starved, figures kept
    starved.op = "gelu";
    starved.status = "starved";
    starved.reason = "every repetition starved: ...";
    starved.medians = {16e-3, 12e-3};
    FakeSet s;
    s.cases = {partly, all_flagged, starved};
    const ResultSet set = parse_result_set(fake_set_json(s).dump(), "a");
    const ValidTimes p = valid_times(set.cases[0]);
    EXPECT_EQ(p.status, "ok");
    EXPECT_DOUBLE_EQ(p.median, 1.5e-5);
    EXPECT_EQ(p.repetition_medians.size(), 2u);
    EXPECT_EQ(p.summary.starved_repetitions, 1u);
    EXPECT_EQ(p.summary.quality, Quality::noisy);
    EXPECT_NE(p.summary.reason_codes().find("starved"), std::string::npos) << p.summary.reason_codes();
    const ValidTimes a = valid_times(set.cases[1]);
    EXPECT_EQ(a.status, "starved");
    EXPECT_TRUE(a.repetition_medians.empty());
    const ValidTimes w = valid_times(set.cases[2]);
    EXPECT_EQ(w.status, "starved");
    EXPECT_EQ(w.why, "every repetition starved: ...");
    ASSERT_EQ(set.cases[2].repetitions.size(), 2u); // the figures, for the CSV
    EXPECT_TRUE(set.cases[2].repetitions[0].starved);
    EXPECT_DOUBLE_EQ(set.cases[2].repetitions[0].starved_share, 0.7);
}

TEST(ResultSetReader, NoValidTimeSaysWhy) {
    FakeCase failed;
    failed.backend = "onednn";
    failed.status = "failed";
    failed.reason = "nmse 0.3 over 1e-5";
    FakeSet s;
    s.cases = {failed};
    const ResultSet set = parse_result_set(fake_set_json(s).dump(), "a");
    const ValidTimes f = valid_times(set.cases[0]);
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

// Issue 19: the readers' one way in reads at most cap + 1 bytes, whatever
// the file is (a pipe that never ends here), and refuses a directory.
TEST(ResultSetReaderInput, ReadsAtMostCapPlusOneBytesFromAnEndlessPipe) {
    std::signal(SIGPIPE, SIG_IGN); // the writer sees EPIPE once the reader gives up
    int fds[2];
    ASSERT_EQ(::pipe(fds), 0);
    std::atomic<std::size_t> written{0};
    std::thread writer([&] {
        const std::string chunk(4096, ' ');
        for (;;) {
            const ssize_t n = ::write(fds[1], chunk.data(), chunk.size());
            if (n <= 0) break; // the reader closed its end: EPIPE
            written += static_cast<std::size_t>(n);
        }
        ::close(fds[1]);
    });
    const std::string path = "/proc/self/fd/" + std::to_string(fds[0]);
    try {
        (void)read_reader_input(path, 100000);
        ADD_FAILURE() << "an endless pipe was read to its end";
    } catch (const ResultSetError &e) {
        EXPECT_NE(std::string(e.what()).find(path + ": larger than the"), std::string::npos) << e.what();
    }
    ::close(fds[0]);
    writer.join();
    // The pipe's buffer (64 KiB) is all the writer got ahead of the reader.
    EXPECT_LT(written.load(), 100001u + (1u << 17));
}

TEST(ResultSetReaderInput, RefusesADirectoryAndNulBytesAndReadsARegularFile) {
    TempDir dir;
    try {
        (void)read_reader_input(dir.path.string());
        ADD_FAILURE();
    } catch (const ResultSetError &e) {
        EXPECT_NE(std::string(e.what()).find(dir.path.string() + ": is a directory"), std::string::npos) << e.what();
    }
    try {
        (void)read_reader_input("/dev/zero");
        ADD_FAILURE();
    } catch (const ResultSetError &e) {
        EXPECT_NE(std::string(e.what()).find("/dev/zero: a NUL byte at offset 0"), std::string::npos) << e.what();
    }
    const std::string p = write_fake_set(dir.path, "a.json", FakeSet{});
    EXPECT_GT(read_reader_input(p).size(), 100u);
    EXPECT_THROW((void)read_reader_input(p, 50), ResultSetError); // larger than a cap of 50 bytes
}

// Each rule of validate_result_set names the JSON path and what was expected.
TEST(ResultSetReaderSchema, EachRuleNamesThePathAndWhatWasExpected) {
    FakeSet s;
    FakeCase c;
    s.cases = {c};
    const nlohmann::json good = fake_set_json(s);
    EXPECT_NO_THROW(validate_result_set(good, "a.json"));
    struct Case {
        std::function<void(nlohmann::json &)> edit;
        std::string message;
    };
    const std::vector<Case> cases = {
        {[](auto &j) { j["benchmarks"][0]["real_time"] = "fast"; },
         "a.json: benchmarks[0].real_time: expected a finite number >= 0, got the string \"fast\""},
        {[](auto &j) { j["benchmarks"][0]["cpu_time"] = -1; }, "benchmarks[0].cpu_time: expected a finite number >= 0"},
        {[](auto &j) { j["benchmarks"][0]["stats"] = "none"; }, "benchmarks[0].stats: expected an object"},
        {[](auto &j) { j["benchmarks"][0]["stats"]["median"] = -5; },
         "benchmarks[0].stats.median: expected a time in seconds from 0 to 1e+06"},
        {[](auto &j) { j["benchmarks"][0]["time_unit"] = "weeks"; }, "benchmarks[0].time_unit: expected one of \"ns\""},
        {[](auto &j) { j["benchmarks"][0]["repetition_index"] = 1.5; },
         "benchmarks[0].repetition_index: expected a whole number >= 0"},
        {[](auto &j) { j["benchmarks"][0]["settings"]["cache"] = 1; },
         "benchmarks[0].settings.cache: expected one of \"warm\", \"cold\""},
        {[](auto &j) { j["benchmarks"][1] = 7; },
         "benchmarks[1]: expected an object (one benchmark entry), got the number 7"},
        {[](auto &j) { j["context"]["opbench"]["machine"] = "m"; },
         "context.opbench.machine: expected an object or null"},
        {[](auto &j) { j["context"]["opbench"]["build"]["git_commit"] = 3; },
         "context.opbench.build.git_commit: expected a string"},
        {[](auto &j) { j["context"] = "x"; }, "context: expected an object"},
        {[](auto &j) { j["benchmarks"].push_back(j["benchmarks"][2]); },
         "benchmarks[4]: entry 'add/C:128/R:32/dt:f32/be:naive/manual_time' repetition_index 2 appears twice (first as "
         "benchmarks[2])"},
    };
    for (const auto &k : cases) {
        nlohmann::json j = good;
        k.edit(j);
        try {
            validate_result_set(j, "a.json");
            ADD_FAILURE() << "accepted; expected: " << k.message;
        } catch (const ResultSetError &e) {
            EXPECT_NE(std::string(e.what()).find(k.message), std::string::npos) << e.what();
        }
    }
    // A number outside double's range is a JSON error, not an abort.
    EXPECT_THROW((void)parse_result_set("{\"benchmarks\": [1e999999]}", "a.json"), ResultSetError);
}
