// results.cpp and entry.cpp: benchmark names and an entry's result-set
// entries made from its records (a round trip through text); atomic_file.cpp: atomic writing.
#include "entry/op_case_entry.hpp"
#include "entry/results.hpp"

#include "opbench/ops.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <unistd.h>

namespace fs = std::filesystem;
using namespace opbench;

namespace {
Case matmul_case() {
    Case c;
    c.desc = make_desc(OPB_OP_MATMUL, OPB_DTYPE_F32);
    c.desc.p.matmul = {1, 1024, 1024, 1024, 0, 0, 0, 0, 0.0f, 0, 0};
    c.backends = {"onednn"};
    c.where = {"suites/gemm.toml", 12, 1};
    return c;
}
Case attention_case() {
    Case c;
    c.desc = make_desc(OPB_OP_ATTENTION, OPB_DTYPE_F32, OPB_ATTENTION_FUSED);
    c.desc.p.attention = {1, 8, 512, 512, 64, 0.0f, 1, 0};
    return c;
}
fs::path temp_dir() {
    fs::path d = fs::temp_directory_path() / ("opbench-results-" + std::to_string(::getpid()));
    fs::create_directories(d);
    return d;
}
} // namespace

TEST(BenchmarkName, IsStableAndFilterable) {
    EXPECT_EQ(benchmark_name(matmul_case(), "onednn"),
              "matmul/B:1/M:1024/N:1024/K:1024/variant:default/dt:f32/be:onednn");
    EXPECT_EQ(benchmark_name(attention_case(), "naive"),
              "attention/B:1/H:8/S:512/D:64/causal:1/variant:fused/dt:f32/be:naive");
}

TEST(BenchmarkName, SettingsThatChangeTheMeasurementAndTheCaseNameAppear) {
    Case c = matmul_case();
    c.settings.threads = 1;
    c.settings.cache = CacheState::cold;
    c.name = "gpt2-small.mlp.up";
    EXPECT_EQ(
        benchmark_name(c, "onednn"),
        "matmul/B:1/M:1024/N:1024/K:1024/variant:default/dt:f32/thr:1/cache:cold/be:onednn/case:gpt2-small.mlp.up");
    Case a = attention_case();
    a.desc.p.attention.seq_q = 1;
    EXPECT_NE(benchmark_name(a, "naive").find("/Sq:1/Skv:512/"), std::string::npos);
}

// The one result path (issue 16): an entry's result-set entries are made
// from opbench's own records, in Google Benchmark's form, never from its JSON.
TEST(ResultEntries, IterationsAndAggregatesFromTheRecordsWithTheCaseFieldsAndSurviveATextRoundTrip) {
    const Case c = matmul_case();
    OpCaseEntry e(c, 0, "onednn", "naive");
    e.result.nmse = 1e-12;
    for (double median : {0.002, 0.004}) {
        RepetitionRecord rec;
        rec.summary.n = 40;
        rec.summary.median = median;
        rec.calls_per_sample = 5;
        rec.cpu_seconds_per_call = median / 2;
        rec.target_met = true;
        e.result.repetitions.push_back(rec);
    }
    e.result.memory.workspace_bytes = 4096;
    std::vector<nlohmann::json> out;
    for (const auto &j : result_entries(e)) out.push_back(nlohmann::json::parse(j.dump()));

    ASSERT_EQ(out.size(), 2u + 4u) << "two repetitions, then mean, median, stddev, cv";
    const std::string run_name = e.name() + "/manual_time";
    const auto &it = out[1];
    EXPECT_EQ(it["name"], run_name);
    EXPECT_EQ(it["run_name"], run_name);
    EXPECT_EQ(it["run_type"], "iteration");
    EXPECT_EQ(it["repetition_index"], 1);
    EXPECT_EQ(it["repetitions"], 2);
    EXPECT_EQ(it["time_unit"], "us");
    EXPECT_DOUBLE_EQ(it["real_time"].get<double>(), 4000.0) << "the repetition's median per call, in us";
    EXPECT_DOUBLE_EQ(it["cpu_time"].get<double>(), 2000.0);
    EXPECT_EQ(it["iterations"], 200) << "calls measured: samples x calls per sample";
    EXPECT_DOUBLE_EQ(it["FLOP/s"].get<double>(), 2.0 * 1024 * 1024 * 1024 / 0.004);
    EXPECT_EQ(it["M"], 1024.0);
    EXPECT_EQ(it["op"], "matmul");
    EXPECT_EQ(it["backend"], "onednn");
    EXPECT_EQ(it["status"], "passed");
    EXPECT_EQ(it["nmse"], 1e-12);
    EXPECT_EQ(it["flops"], 2.0 * 1024 * 1024 * 1024);
    EXPECT_EQ(it["params"]["M"], 1024);
    EXPECT_EQ(it["memory"]["workspace_bytes"], 4096);
    EXPECT_EQ(it["stats"]["samples"], 40);
    EXPECT_EQ(it["stats"]["median"], 0.004);
    EXPECT_EQ(it["suite_location"], "suites/gemm.toml:12:1");
    // The settings keep their result-set names (from the settings table) and values.
    const auto &st = it["settings"];
    EXPECT_EQ(st["cache"], "warm");
    EXPECT_EQ(st["threads"], 0);
    EXPECT_TRUE(st.contains("noise_target") && !st.contains("noise")) << st.dump();
    EXPECT_FALSE(st.contains("repetitions")) << "repetitions are the entries themselves";
    for (const char *k : {"warmup", "min_time", "max_time", "min_samples", "threads_resolved"})
        EXPECT_TRUE(st.contains(k)) << k;
    const auto &median = out[3];
    EXPECT_EQ(median["name"], run_name + "_median");
    EXPECT_EQ(median["run_type"], "aggregate");
    EXPECT_EQ(median["aggregate_name"], "median");
    EXPECT_DOUBLE_EQ(median["real_time"].get<double>(), 3000.0);
    EXPECT_EQ(median["op"], "matmul") << "aggregates carry the fields too";
    EXPECT_FALSE(median.contains("stats"));
    EXPECT_EQ(out[5]["aggregate_name"], "cv");
    EXPECT_EQ(out[5]["aggregate_unit"], "percentage");
}

// The set's size does not grow with repetitions by their case's facts: each
// is stored on the case's first iteration entry only, where every reader
// takes it from (results/README.md, "Per-case fields").
TEST(StoreCaseFieldsOnce, KeepsThemOnEachCasesFirstIterationEntryOnly) {
    const Case c = matmul_case(), a = attention_case();
    nlohmann::json set = {{"context", {{"opbench", {{"schema_version", kResultSchemaVersion}}}}},
                          {"benchmarks", nlohmann::json::array()}};
    for (const Case *one : {&c, &a}) {
        OpCaseEntry e(*one, 0, "onednn", "naive");
        for (double median : {0.002, 0.004, 0.003}) {
            RepetitionRecord rec;
            rec.summary.n = 10;
            rec.summary.median = median;
            rec.sample_times.assign(10, median);
            e.result.repetitions.push_back(rec);
        }
        for (auto &j : result_entries(e)) {
            j["bottleneck"] = {{"kind", "memory-bound"}}; // as add_bottlenecks writes it, on every entry
            set["benchmarks"].push_back(j);
        }
    }
    const nlohmann::json full = set;
    store_case_fields_once(set);
    ASSERT_EQ(set["benchmarks"].size(), full["benchmarks"].size());
    EXPECT_EQ(set["context"]["opbench"]["per_case_fields"], per_case_keys());
    std::size_t firsts = 0;
    for (std::size_t i = 0; i < set["benchmarks"].size(); ++i) {
        const auto &was = full["benchmarks"][i], &now = set["benchmarks"][i];
        const bool first = now["run_type"] == "iteration" && now["repetition_index"] == 0;
        if (first) {
            ++firsts;
            EXPECT_EQ(now, was) << "a case's first iteration entry keeps every field";
            continue;
        }
        for (const char *k : {"settings", "memory", "verification", "roofline", "bottleneck", "params", "reason",
                              "suite_location", "repetition_spread"})
            EXPECT_FALSE(now.contains(k)) << k << " repeated on benchmarks[" << i << "]";
        for (const char *k : {"name", "run_name", "run_type", "real_time", "cpu_time", "time_unit", "iterations",
                              "op", "backend", "dtype", "variant", "case", "status"})
            EXPECT_EQ(now[k], was[k]) << k << " on benchmarks[" << i << "]: Google Benchmark's and the identity stay";
        if (now["run_type"] == "iteration") {
            EXPECT_EQ(now["stats"], was["stats"]);
        }
    }
    EXPECT_EQ(firsts, 2u);
    const nlohmann::json once = set;
    store_case_fields_once(set);
    EXPECT_EQ(set, once) << "a set already stored so is unchanged";
    EXPECT_LT(set.dump().size(), full.dump().size() * 3 / 4);
    nlohmann::json expanded = set;
    expand_case_fields(expanded);
    expanded["context"]["opbench"].erase("per_case_fields");
    EXPECT_EQ(expanded, full) << "expand_case_fields gives back every entry as written before";
}

TEST(ResultEntries, ASkippedEntryIsOneErrorEntryWithItsReason) {
    const Case c = attention_case();
    OpCaseEntry e(c, 0, "onednn", "naive");
    e.result.status = CaseStatus::skipped;
    e.result.reason = "no fused attention primitive";
    const auto out = result_entries(e);
    ASSERT_EQ(out.size(), 1u);
    const auto &s = out[0];
    EXPECT_EQ(s["status"], "skipped");
    EXPECT_EQ(s["reason"], "no fused attention primitive");
    EXPECT_EQ(s["error_occurred"], true);
    EXPECT_EQ(s["error_message"], "skipped: no fused attention primitive");
    EXPECT_EQ(s["real_time"], 0);
    EXPECT_TRUE(s["nmse"].is_null());
}

TEST(WriteFileAtomically, WritesCompletelyAndLeavesNoTemporaryFile) {
    fs::path dir = temp_dir() / "nested";
    fs::path file = dir / "set.json";
    write_file_atomically(file.string(), "{\"a\": 1}\n");
    std::ifstream in(file);
    std::string text((std::istreambuf_iterator<char>(in)), {});
    EXPECT_EQ(text, "{\"a\": 1}\n");
    std::size_t entries = 0;
    for ([[maybe_unused]] const auto &e : fs::directory_iterator(dir)) ++entries;
    EXPECT_EQ(entries, 1u);
    fs::remove_all(dir.parent_path());
}

TEST(WriteFileAtomically, AFailedWriteChangesNothingAndLeavesNoTemporaryFile) {
    // The target is a non-empty directory, so the final rename fails (even
    // for root) after the temporary file was written.
    fs::path dir = temp_dir();
    fs::path target = dir / "set.json";
    fs::create_directory(target);
    std::ofstream(target / "inside") << "old";
    EXPECT_THROW(write_file_atomically(target.string(), "new"), std::runtime_error);
    std::ifstream in(target / "inside");
    std::string text((std::istreambuf_iterator<char>(in)), {});
    EXPECT_EQ(text, "old");
    std::size_t entries = 0;
    for ([[maybe_unused]] const auto &e : fs::directory_iterator(dir)) ++entries;
    EXPECT_EQ(entries, 1u) << "the temporary file was removed";
    fs::remove_all(dir);
}

TEST(CheckUniqueNames, RefusesTwoCasesThatMeasureTheSameThingAtTheLaterOne) {
    Case a = matmul_case(), b = matmul_case();
    b.where = {"suites/gemm.toml", 20, 1};
    EXPECT_NO_THROW(check_unique_names({a}));
    try {
        check_unique_names({a, b});
        FAIL() << "duplicate not refused";
    } catch (const SuiteError &e) {
        EXPECT_EQ(e.where().line, 20);
        EXPECT_NE(std::string(e.what()).find("suites/gemm.toml:12:1"), std::string::npos) << e.what();
    }
    b.name = "another";
    EXPECT_NO_THROW(check_unique_names({a, b}));
}

TEST(CaseFields, RepetitionSpreadIsTheHalfRangeOfRepetitionMediansOverTheirMedian) {
    Case c = matmul_case();
    CaseResult r;
    r.source = &c;
    r.backend = "onednn";
    RepetitionRecord a, b, d;
    a.summary.median = 1.0;
    b.summary.median = 1.2;
    d.summary.median = 1.1;
    r.repetitions = {a};
    EXPECT_TRUE(case_fields(r)["repetition_spread"].is_null()) << "one repetition has no spread";
    r.repetitions = {a, b, d};
    EXPECT_NEAR(case_fields(r)["repetition_spread"].get<double>(), 0.1 / 1.1, 1e-12);
}

TEST(CaseFields, VerificationAndWhereTheTimeWent) {
    Case c = matmul_case();
    CaseResult r;
    r.source = &c;
    r.backend = "onednn";
    // Never reached the check (skipped): no verification object, not verified.
    nlohmann::json j = case_fields(r);
    EXPECT_TRUE(j["verification"].is_null());
    EXPECT_FALSE(j["verified"].get<bool>());
    // Checked by Freivalds.
    r.checked = true;
    r.verification.mode = VerifyMode::fast;
    r.verification.verified = true;
    r.verification.method = "freivalds";
    r.prepare_seconds = 0.5;
    r.verify_seconds = 0.25;
    r.measure_seconds = 3.0;
    j = case_fields(r);
    EXPECT_TRUE(j["verified"].get<bool>());
    EXPECT_EQ(j["verification"]["method"], "freivalds");
    EXPECT_EQ(j["prepare_seconds"], 0.5);
    EXPECT_EQ(j["verify_seconds"], 0.25);
    EXPECT_EQ(j["measure_seconds"], 3.0);
    // Off: never reads as verified.
    r.verification = Verification{};
    r.verification.mode = VerifyMode::off;
    r.verification.method = "none";
    j = case_fields(r);
    EXPECT_FALSE(j["verified"].get<bool>());
    EXPECT_EQ(j["verification"]["mode"], "off");
}
