// End to end (issue 12): the real opbench program with --profile, --trace and
// --trace-schedule on a small attention suite; the console's hot paths, the
// result set's profile arrays, bottlenecks and context, the trace file, and
// `opbench analyze` on the result. Also the bad inputs of the new options.
#include "build_config.hpp"
#include "entry/results.hpp"

#include "shell_command.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <set>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

using opbench::test::Output;
using opbench::test::run;

const std::string kOpbench = OPBENCH_EXE;

// With each case's fields on every entry (a set stores them on its first:
// results/README.md); a trace is read as it is.
json read_json(const fs::path &p) {
    std::ifstream in(p);
    json j = json::parse(in);
    opbench::expand_case_fields(j);
    return j;
}

bool built(const std::string &backend) {
    return std::string(OPBENCH_BUILT_BACKENDS).find(backend) != std::string::npos;
}

class ProfiledRun : public ::testing::Test {
protected:
    static void SetUpTestSuite() {
        dir_ = new fs::path(fs::temp_directory_path() / ("opbench-profile-e2e-" + std::to_string(::getpid())));
        fs::create_directories(*dir_);
        std::ofstream(*dir_ / "attention.toml") << R"([suite]
name = "profile-e2e"
[defaults]
backends = ["naive", "onednn"]
dtypes = ["f32"]
warmup = 1
min_time = 0.005
max_time = 1.0
min_samples = 3
repetitions = 1
[[case]]
op = "attention"
batch = 1
heads = 2
seq = 64
head_dim = 32
causal = true
variant = "composed"
[[case]]
op = "add"
rows = 8
cols = 8
)";
        const std::string backends = built("onednn") ? "naive,onednn" : "naive";
        output_ =
            new Output(run(kOpbench + " run " + (*dir_ / "attention.toml").string() + " --no-progress --backends " +
                           backends + " --profile --trace " + (*dir_ / "t.trace.json").string() +
                           " --trace-schedule wait=0,warmup=1,active=2,repeat=1 --out " + (*dir_ / "r.json").string()));
    }
    static void TearDownTestSuite() {
        std::error_code ec;
        fs::remove_all(*dir_, ec);
    }
    static fs::path *dir_;
    static Output *output_;
};
fs::path *ProfiledRun::dir_ = nullptr;
Output *ProfiledRun::output_ = nullptr;

TEST_F(ProfiledRun, ConsoleShowsHotPathsAndTopScopes) {
    ASSERT_EQ(output_->exit_code, 0) << output_->text;
    EXPECT_NE(output_->text.find("Hot paths"), std::string::npos) << output_->text;
    EXPECT_NE(output_->text.find("% parent"), std::string::npos);
    for (const char *scope : {"qk *", "mask *", "softmax *", "pv *"})
        EXPECT_NE(output_->text.find(scope), std::string::npos) << scope;
    EXPECT_NE(output_->text.find("Top scopes"), std::string::npos);
    EXPECT_NE(output_->text.find("trace of"), std::string::npos);
}

// Attention's components under the op's scope, and their shares with the
// scope's self time add up to its total.
TEST_F(ProfiledRun, ProfileArraysHoldTheComponentsAndTheyAddUp) {
    ASSERT_EQ(output_->exit_code, 0) << output_->text;
    const json set = read_json(*dir_ / "r.json");
    int attention_entries = 0;
    for (const auto &e : set["benchmarks"]) {
        if (e.value("run_type", "") != "iteration" || e.value("op", "") != "attention") continue;
        ++attention_entries;
        ASSERT_TRUE(e.contains("profile")) << e["name"];
        std::map<std::string, json> by_path;
        for (const auto &n : e["profile"]) {
            for (const char *k :
                 {"scope", "path", "parent", "calls", "total_s", "self_s", "min_s", "max_s", "allocs", "bytes"})
                ASSERT_TRUE(n.contains(k)) << k;
            by_path[n["path"]] = n;
        }
        const std::string parent = "case/repetition/sample/execute/attention";
        ASSERT_TRUE(by_path.count(parent)) << e["name"];
        double sum = by_path[parent]["self_s"].get<double>();
        for (const char *c : {"qk", "mask", "softmax", "pv"}) {
            ASSERT_TRUE(by_path.count(parent + "/" + c)) << e["name"] << " " << c;
            EXPECT_EQ(by_path[parent + "/" + c]["parent"], parent);
            EXPECT_EQ(by_path[parent + "/" + c]["kind"], "plugin");
            sum += by_path[parent + "/" + c]["total_s"].get<double>();
        }
        EXPECT_NEAR(sum, by_path[parent]["total_s"].get<double>(), 1e-9 * by_path[parent]["total_s"].get<double>());
        // Two active samples kept; the warmup step was dropped. (max_time 1 s:
        // its wall cap of 2 s, which would end the sampling and make the next
        // sample count, is far beyond the few samples this needs even on a
        // loaded machine.)
        EXPECT_EQ(by_path["case/repetition/sample"]["calls"], 2);
    }
    EXPECT_EQ(attention_entries, built("onednn") ? 2 : 1);
}

TEST_F(ProfiledRun, ContextMarksTheProfilingRunAndEntriesHaveBottlenecks) {
    ASSERT_EQ(output_->exit_code, 0) << output_->text;
    const json set = read_json(*dir_ / "r.json");
    const json &p = set["context"]["opbench"]["profiling"];
    EXPECT_EQ(p["enabled"], true);
    EXPECT_EQ(p["recorded_samples_in_statistics"], false);
    EXPECT_EQ(p["schedule"], "wait=0,warmup=1,active=2,repeat=1");
    const std::set<std::string> kinds = {"memory-bound",     "compute-bound", "sync-bound", "overhead",
                                         "allocation-churn", "unoptimised",   "unknown"};
    for (const auto &e : set["benchmarks"]) {
        if (e.value("run_type", "") != "iteration" || e.value("status", "") != "passed") continue;
        ASSERT_TRUE(e.contains("bottleneck")) << e["name"];
        EXPECT_TRUE(kinds.count(e["bottleneck"]["kind"].get<std::string>())) << e["bottleneck"].dump();
        EXPECT_FALSE(e["bottleneck"]["suggestion"].get<std::string>().empty());
        // Recorded samples are not among the statistics' samples.
        std::size_t counted = 0;
        std::istringstream counts(e["stats"]["sample_histogram"]["counts"].get<std::string>());
        for (std::size_t n = 0; counts >> n;) counted += n;
        EXPECT_EQ(counted, e["stats"]["samples"].get<std::size_t>());
    }
}

TEST_F(ProfiledRun, TraceFileIsChromeTraceWithTheSpans) {
    ASSERT_EQ(output_->exit_code, 0) << output_->text;
    const json t = read_json(*dir_ / "t.trace.json");
    ASSERT_TRUE(t["traceEvents"].is_array());
    std::set<std::string> names;
    bool process_name = false, memory = false, case_params = false;
    for (const auto &e : t["traceEvents"]) {
        if (e["ph"] == "X") {
            names.insert(e["name"].get<std::string>());
            if (e["name"] == "case") case_params |= e["args"].contains("params") && e["args"]["params"].is_object();
        }
        if (e["ph"] == "M" && e["name"] == "process_name") process_name = true;
        if (e["ph"] == "C" && e["name"] == "memory") memory = e["args"].contains("heap_bytes");
    }
    for (const char *n : {"run", "case", "repetition", "sample", "execute", "qk", "mask", "softmax", "pv"})
        EXPECT_TRUE(names.count(n)) << n;
    EXPECT_TRUE(process_name);
    EXPECT_TRUE(memory);
    EXPECT_TRUE(case_params);
}

TEST_F(ProfiledRun, AnalyzeNamesBottlenecksAndTheDominantComponent) {
    ASSERT_EQ(output_->exit_code, 0) << output_->text;
    const Output a = run(kOpbench + " analyze " + (*dir_ / "r.json").string());
    EXPECT_EQ(a.exit_code, 0) << a.text;
    EXPECT_NE(a.text.find("Bottlenecks"), std::string::npos) << a.text;
    EXPECT_NE(a.text.find("suggestion"), std::string::npos) << a.text;
    EXPECT_NE(a.text.find("components: qk"), std::string::npos) << a.text; // the details, wrapped
    EXPECT_NE(a.text.find("dominant:"), std::string::npos) << a.text;
}

TEST(ProfileOptions, BadInputExits2AndSaysWhy) {
    const std::string suite = std::string(OPBENCH_SOURCE_ROOT) + "/suites/quick.toml";
    Output o = run(kOpbench + " run " + suite + " --no-out --profile --trace-schedule wait=1,colour=2");
    EXPECT_EQ(o.exit_code, 2) << o.text;
    EXPECT_NE(o.text.find("unknown key 'colour'"), std::string::npos) << o.text;
    o = run(kOpbench + " run " + suite + " --no-out --trace-schedule active=2");
    EXPECT_EQ(o.exit_code, 2) << o.text;
    EXPECT_NE(o.text.find("give one of them"), std::string::npos) << o.text;
    o = run(kOpbench + " analyze /nonexistent/r.json");
    EXPECT_EQ(o.exit_code, 2) << o.text;
    EXPECT_NE(o.text.find("/nonexistent/r.json: cannot open (No such file"), std::string::npos) << o.text;
}

} // namespace
