// End to end: the real opbench program runs suites/quick.toml on every built
// backend, and the result set it writes is checked field by field; plus the
// CLI's validate / error paths and Google Benchmark's compare.py on the output.
#include "build_config.hpp"
#include "entry/results.hpp"
#include "measure/sample_codec.hpp"
#include "opbench/ops.hpp"

#include "case_outcome.hpp"
#include "shell_command.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

using opbench::test::Output;
using opbench::test::ran_to_the_end;
using opbench::test::run;

const std::string kOpbench = OPBENCH_EXE;
const std::string kSuites = std::string(OPBENCH_SOURCE_ROOT) + "/suites";

fs::path temp_dir() {
    fs::path d = fs::temp_directory_path() / ("opbench-e2e-" + std::to_string(::getpid()));
    fs::create_directories(d);
    return d;
}

// The quick suite, run once for all the tests below (it takes seconds).
class QuickSuiteRun : public ::testing::Test {
protected:
    static void SetUpTestSuite() {
        dir_ = new fs::path(temp_dir());
        out_path_ = new std::string((*dir_ / "quick.json").string());
        // Short measurement settings keep CI fast; what is checked is the
        // shape and truth of the output, not the speed.
        output_ = new Output(run(kOpbench + " run " + kSuites + "/quick.toml --no-progress --min-time 0.005" +
                                 " --max-time 0.05 --repetitions 2 --out " + *out_path_));
        std::ifstream in(*out_path_);
        raw_ = new json(in ? json::parse(in) : json());
        // The set stores each case's fields once (results/README.md); the
        // checks below read every entry with them, as written before that.
        result_ = new json(*raw_);
        opbench::expand_case_fields(*result_);
    }
    static void TearDownTestSuite() {
        fs::remove_all(*dir_);
        delete dir_;
        delete out_path_;
        delete output_;
        delete result_;
        delete raw_;
    }
    static std::vector<json> entries(const std::string &backend, const std::string &run_type = "iteration") {
        std::vector<json> out;
        for (const auto &e : (*result_)["benchmarks"])
            if (e.value("backend", "") == backend && e.value("run_type", "") == run_type) out.push_back(e);
        return out;
    }
    static inline fs::path *dir_ = nullptr;
    static inline std::string *out_path_ = nullptr;
    static inline Output *output_ = nullptr;
    static inline json *result_ = nullptr;
    static inline json *raw_ = nullptr; // the set as written
};

} // namespace

TEST_F(QuickSuiteRun, ExitsCleanlyAndSummarises) {
    EXPECT_EQ(output_->exit_code, 0) << output_->text;
    EXPECT_NE(output_->text.find(" failed, "), std::string::npos) << output_->text;
    EXPECT_NE(output_->text.find("0 failed"), std::string::npos) << output_->text;
    ASSERT_TRUE(result_->is_object()) << "no result set written:\n" << output_->text;
}

TEST_F(QuickSuiteRun, ContextMakesTheNumbersComparable) {
    ASSERT_TRUE(result_->contains("context"));
    const json &ctx = (*result_)["context"];
    EXPECT_TRUE(ctx.contains("num_cpus")) << "Google Benchmark's own context is kept";
    const json &o = ctx["opbench"];
    EXPECT_EQ(o["schema_version"], 1);
    EXPECT_EQ(o["suite"]["name"], "quick");
    EXPECT_EQ(o["suite"]["sha256"].get<std::string>().size(), 64u);
    EXPECT_FALSE(o["build"]["git_commit"].get<std::string>().empty());
    EXPECT_EQ(o["build"]["plugin_abi"], "1." + std::to_string(OPB_ABI_VERSION_MINOR));
    EXPECT_FALSE(o["machine"]["cpu_model"].get<std::string>().empty());
    EXPECT_TRUE(o["backends"]["naive"]["usable"].get<bool>());
    EXPECT_EQ(o["measurement"]["reference_backend"], "naive");
    EXPECT_GT(o["measurement"]["timer_overhead_seconds"].get<double>(), 0.0);
    EXPECT_GT(o["machine_peaks"]["all_threads"]["f32_gflops"].get<double>(), 0.0);
    EXPECT_GT(o["measurement"]["call_overhead_seconds"]["naive"].get<double>(), 0.0);
}

TEST_F(QuickSuiteRun, NaiveCoversEveryOpAndBothAttentionVariantsAllRan) {
    std::set<std::string> ops, attention_variants;
    for (const auto &e : entries("naive")) {
        EXPECT_TRUE(ran_to_the_end(e["status"].get<std::string>())) << e["name"] << ": " << e["reason"];
        ops.insert(e["op"]);
        if (e["op"] == "attention") attention_variants.insert(e["variant"]);
    }
    for (int op = 0; op < OPB_OP_COUNT; ++op)
        EXPECT_TRUE(ops.count(std::string(opbench::op_name(op)))) << opbench::op_name(op);
    EXPECT_EQ(attention_variants, (std::set<std::string>{"composed", "fused"}));
}

TEST_F(QuickSuiteRun, EveryEntryThatRanIsVerifiedAndConsistent) {
    std::size_t checked = 0;
    for (const auto &e : (*result_)["benchmarks"]) {
        if (e["run_type"] != "iteration" || !ran_to_the_end(e["status"].get<std::string>())) continue;
        ++checked;
        const std::string name = e["name"];
        // Verified before being timed, in the default mode (fast): matmul by
        // Freivalds' check, attention by sampled exact rows, every other op
        // against the reference in full.
        EXPECT_TRUE(e["verified"].get<bool>()) << name;
        const json &v = e["verification"];
        ASSERT_TRUE(v.is_object()) << name;
        EXPECT_EQ(v["mode"], "fast") << name;
        EXPECT_TRUE(v["verified"].get<bool>()) << name;
        EXPECT_LE(v["worst_ratio"].get<double>(), 1.0) << name;
        EXPECT_GE(e["verify_seconds"].get<double>(), 0.0) << name;
        EXPECT_GT(e["measure_seconds"].get<double>(), 0.0) << name;
        const std::string expected_method = e["op"] == "matmul"      ? "freivalds"
                                            : e["op"] == "attention" ? "sampled-rows"
                                                                     : "reference";
        EXPECT_EQ(v["method"], expected_method) << name;
        if (expected_method == "reference") {
            ASSERT_TRUE(e["nmse"].is_number()) << name;
            EXPECT_LE(e["nmse"].get<double>(), e["nmse_threshold"].get<double>()) << name;
            EXPECT_EQ(v["checked"], v["total"]) << name;
        } else {
            EXPECT_TRUE(e["nmse"].is_null()) << name << ": the reference never ran";
            EXPECT_GT(v["checked"].get<int64_t>(), 0) << name;
        }
        if (e["backend"] == "naive") {
            EXPECT_TRUE(e["reference"].get<bool>()) << name;
            if (expected_method == "reference") {
                EXPECT_EQ(e["nmse"].get<double>(), 0.0) << name;
            }
        }
        // Memory figures are present, and plans report their workspace.
        const json &m = e["memory"];
        EXPECT_EQ(m["heap_tracked"].get<bool>(), OPBENCH_HEAP_TRACKED) << name; // false under a sanitizer
        EXPECT_GE(m["plugin_peak_bytes"].get<double>(), m["workspace_bytes"].get<double>()) << name;
        EXPECT_GT(m["rss_peak_bytes"].get<double>(), 0.0) << name;
        // Names are stable: op first, backend after be:.
        EXPECT_EQ(name.rfind(e["op"].get<std::string>() + "/", 0), 0u) << name;
        EXPECT_NE(name.find("/be:" + e["backend"].get<std::string>()), std::string::npos) << name;
        // A starved entry has no time of the op (case_outcome.hpp): the rest is about times.
        if (e["status"] != "passed") continue;
        // The reported time is the median of the samples, per call, in us.
        const json &st = e["stats"];
        EXPECT_EQ(e["time_unit"], "us");
        EXPECT_NEAR(e["real_time"].get<double>(), st["median"].get<double>() * 1e6, 1e-6 * e["real_time"].get<double>())
            << name;
        EXPECT_EQ(e["iterations"].get<double>(), st["samples"].get<double>() * st["calls_per_sample"].get<double>())
            << name;
        EXPECT_LE(st["min"].get<double>(), st["median"].get<double>()) << name;
        EXPECT_LE(st["median"].get<double>(), st["p90"].get<double>()) << name;
        EXPECT_LE(st["p90"].get<double>(), st["max"].get<double>()) << name;
        // max_time is the hard cap: fewer than min_samples only when it ran out.
        if (!st["timed_out"].get<bool>()) {
            EXPECT_GE(st["samples"].get<int>(), e["settings"]["min_samples"].get<int>()) << name;
        }
        EXPECT_TRUE(st["noise_target_met"].get<bool>() || st["timed_out"].get<bool>()) << name;
        ASSERT_TRUE(e["repetition_spread"].is_number()) << name << ": 2 repetitions have a spread";
        EXPECT_GE(e["repetition_spread"].get<double>(), 0.0) << name;
        // Rates follow from the op's work and the median time.
        const double t = st["median"].get<double>();
        EXPECT_NEAR(e["FLOP/s"].get<double>(), e["flops"].get<double>() / t, 1e-6 * e["FLOP/s"].get<double>()) << name;
        EXPECT_NEAR(e["bytes/s"].get<double>(), e["bytes"].get<double>() / t, 1e-6 * e["bytes/s"].get<double>())
            << name;
        EXPECT_NEAR(e["arithmetic_intensity"].get<double>(), e["flops"].get<double>() / e["bytes"].get<double>(), 1e-9)
            << name;
        // A roofline bound is named.
        static const std::set<std::string> bounds = {"compute-bound", "memory-bound", "overhead-bound"};
        EXPECT_TRUE(bounds.count(e["roofline"]["bound"].get<std::string>())) << name << " " << e["roofline"];
    }
    EXPECT_GT(checked, 0u);
}

// The set's size does not grow with repetitions or samples: a case's fields
// are on its first iteration entry only, and no histogram has more bins than
// the bound.
TEST_F(QuickSuiteRun, CaseFieldsAreStoredOnceAndHistogramsAreBounded) {
    std::map<std::string, int> carriers, iterations;
    for (const auto &e : (*raw_)["benchmarks"]) {
        const std::string name = e["run_name"];
        if (e["run_type"] == "iteration") ++iterations[name];
        carriers[name] += e.contains("settings") && e.contains("memory");
        if (e["run_type"] == "iteration" && iterations[name] == 1) {
            EXPECT_TRUE(e.contains("settings") && e.contains("memory") && e.contains("verification")) << name;
        }
        for (const char *k : {"op", "backend", "dtype", "variant", "case", "status"})
            EXPECT_TRUE(e.contains(k)) << k << " on every entry of " << name;
        if (!e.contains("stats")) continue;
        const std::string counts = e["stats"]["sample_histogram"]["counts"];
        EXPECT_LE(std::count(counts.begin(), counts.end(), ' ') + 1, long(opbench::kSampleHistogramMaxBins)) << name;
    }
    ASSERT_FALSE(carriers.empty());
    for (const auto &[name, n] : carriers) EXPECT_EQ(n, 1) << name << ": its fields once";
    EXPECT_EQ((*raw_)["context"]["opbench"]["per_case_fields"], opbench::per_case_keys());
}

TEST_F(QuickSuiteRun, FlopsMatchTheFormulaForTheShape) {
    for (const auto &e : entries("naive")) {
        if (e["op"] != "matmul") continue;
        const json &p = e["params"];
        double expected =
            2.0 * p["B"].get<double>() * p["M"].get<double>() * p["N"].get<double>() * p["K"].get<double>();
        if (p["bias"].get<bool>()) expected += p["B"].get<double>() * p["M"].get<double>() * p["N"].get<double>();
        EXPECT_EQ(e["flops"].get<double>(), expected) << e["name"];
    }
}

TEST_F(QuickSuiteRun, RepetitionsAreSeparateEntriesWithAggregates) {
    // An entry whose every repetition starved on a busy machine is one row
    // with no repetition (its status says so); every other one has both.
    std::map<std::string, int> per_name;
    std::set<std::string> starved;
    for (const auto &e : entries("naive")) {
        per_name[e["name"]]++;
        if (e.value("status", "") == "starved") starved.insert(e["name"]);
    }
    for (const auto &[name, n] : per_name) {
        if (starved.contains(name)) continue;
        EXPECT_EQ(n, 2) << name;
    }
    ASSERT_LT(starved.size(), per_name.size()) << "every entry starved: nothing here had two repetitions";
    EXPECT_FALSE(entries("naive", "aggregate").empty());
}

TEST_F(QuickSuiteRun, UnusableOrUnsupportedCasesAreSkippedWithTheirReason) {
    std::size_t skipped = 0;
    for (const auto &e : (*result_)["benchmarks"]) {
        if (e["status"] != "skipped") continue;
        ++skipped;
        EXPECT_FALSE(e["reason"].get<std::string>().empty()) << e["name"];
        EXPECT_TRUE(e["error_occurred"].get<bool>()) << e["name"];
    }
    const std::string built = OPBENCH_BUILT_BACKENDS;
    if (built.find("cuda") != std::string::npos) {
        auto cuda = entries("cuda");
        ASSERT_FALSE(cuda.empty());
        for (const auto &e : cuda) {
            // Without a GPU every cuda case is skipped with the probe's reason;
            // with one, each is verified like any other backend.
            if (e["status"] == "skipped")
                EXPECT_NE(e["reason"].get<std::string>().find("CUDA"), std::string::npos);
            else
                EXPECT_TRUE(ran_to_the_end(e["status"].get<std::string>())) << e["name"];
        }
    }
    if (built.find("onednn") != std::string::npos) {
        bool rmsnorm_or_fused_reported = false;
        for (const auto &e : entries("onednn"))
            if (e["op"] == "attention" && e["variant"] == "fused") rmsnorm_or_fused_reported = true;
        EXPECT_TRUE(rmsnorm_or_fused_reported) << "an unsupported case is data, never omitted";
    }
    EXPECT_GT(skipped + entries("naive").size(), 0u);
}

TEST_F(QuickSuiteRun, CompareDotPyAcceptsTheResultSet) {
    const std::string compare = "/usr/share/benchmark/compare.py";
    if (!fs::exists(compare) || !fs::exists("/usr/bin/python3")) GTEST_SKIP() << "libbenchmark-tools not installed";
    Output o = run("/usr/bin/python3 " + compare + " benchmarks " + *out_path_ + " " + *out_path_);
    EXPECT_EQ(o.exit_code, 0) << o.text;
    EXPECT_NE(o.text.find("be:naive"), std::string::npos) << o.text;
}

TEST(OpbenchCli, ValidatePrintsTheExpandedCaseCount) {
    Output o = run(kOpbench + " validate " + kSuites + "/quick.toml");
    EXPECT_EQ(o.exit_code, 0) << o.text;
    EXPECT_NE(o.text.find("ok: suite 'quick'"), std::string::npos) << o.text;
    EXPECT_NE(o.text.find(" cases ("), std::string::npos) << o.text;
}

TEST(OpbenchCli, EveryHelpFitsOneHundredColumns) {
    // CLI11 2.1 printed each description on one line (run --help: 378
    // columns); cli/help_format wraps them beside their names.
    for (const char *command : {"", "list", "validate", "run", "machine", "analyze", "compare", "report", "history",
                                "merge", "archive", "ab"}) {
        Output o = run(kOpbench + " " + command + " --help");
        EXPECT_EQ(o.exit_code, 0) << command << ": " << o.text;
        EXPECT_NE(o.text.find("Options:"), std::string::npos) << command << ": " << o.text;
        std::istringstream lines(o.text);
        for (std::string line; std::getline(lines, line);) {
            if (line.rfind("Usage: ", 0) == 0) continue; // holds the program's path, as it was called
            EXPECT_LE(line.size(), 100u) << "opbench " << command << " --help:\n" << line;
        }
    }
}

TEST(OpbenchCli, ValidateNamesEachWorkloadLevelByItsDtype) {
    // model-decoders.toml has llama-3-8b.l2 at f32, bf16, s8 and f8e4m3: four
    // lines that must not read alike. No op cases: "ops: none", not an empty list.
    Output o = run(kOpbench + " validate " + kSuites + "/models/model-decoders.toml");
    EXPECT_EQ(o.exit_code, 0) << o.text;
    for (const char *level :
         {"'llama-3-8b.l2' f32:", "'llama-3-8b.l2' bf16:", "'llama-3-8b.l2' s8:", "'llama-3-8b.l2' f8e4m3:"})
        EXPECT_NE(o.text.find(level), std::string::npos) << level << "\n" << o.text;
    EXPECT_NE(o.text.find("ops: none\n"), std::string::npos) << o.text;
}

TEST(OpbenchCli, ABadSuiteIsRefusedWithLineAndColumnBeforeAnythingRuns) {
    fs::path dir = temp_dir();
    fs::path bad = dir / "bad.toml";
    std::ofstream(bad) << "[suite]\nname = \"bad\"\n\n[[case]]\nop = \"matmul\"\nm = 0\nn = 8\nk = 8\n";
    Output o = run(kOpbench + " run " + bad.string() + " --out " + (dir / "x.json").string());
    EXPECT_EQ(o.exit_code, 2) << o.text;
    EXPECT_NE(o.text.find(bad.string() + ":6:5"), std::string::npos) << o.text;
    EXPECT_FALSE(fs::exists(dir / "x.json")) << "nothing is written for a refused suite";
    fs::remove_all(dir);
}

TEST(OpbenchCli, BenchmarkFilterSelectsEntriesAndBadArgumentsAreRefused) {
    fs::path dir = temp_dir();
    const std::string out = (dir / "f.json").string();
    Output o = run(kOpbench + " run " + kSuites + "/quick.toml --no-progress --min-time 0.002 --max-time 0.01" +
                   " --repetitions 1 --out " + out + " --benchmark_filter=^add/.*be:naive");
    ASSERT_EQ(o.exit_code, 0) << o.text;
    std::ifstream in(out);
    json r = json::parse(in);
    ASSERT_FALSE(r["benchmarks"].empty());
    for (const auto &e : r["benchmarks"]) {
        EXPECT_EQ(e["op"], "add");
        EXPECT_EQ(e["backend"], "naive");
    }
    Output bad = run(kOpbench + " run " + kSuites + "/quick.toml --no-such-option");
    EXPECT_EQ(bad.exit_code, 2) << bad.text;
    EXPECT_NE(bad.text.find("--no-such-option"), std::string::npos) << bad.text;
    Output typo = run(kOpbench + " run " + kSuites + "/quick.toml --backends naive,onedn");
    EXPECT_EQ(typo.exit_code, 2) << typo.text;
    EXPECT_NE(typo.text.find("unknown backend 'onedn' (known: "), std::string::npos) << typo.text;
    Output no_ref = run(kOpbench + " run " + kSuites + "/quick.toml --reference nope");
    EXPECT_EQ(no_ref.exit_code, 2) << no_ref.text;
    EXPECT_NE(no_ref.text.find("reference backend 'nope' is not loaded"), std::string::npos) << no_ref.text;
    fs::remove_all(dir);
}

TEST(OpbenchCli, ListShowsBackendsOpsAndSuites) {
    Output o = run(kOpbench + " list");
    EXPECT_EQ(o.exit_code, 0) << o.text;
    EXPECT_NE(o.text.find("naive"), std::string::npos);
    EXPECT_NE(o.text.find("usable"), std::string::npos);
    EXPECT_NE(o.text.find("attention  variants: composed, fused"), std::string::npos) << o.text;
    EXPECT_NE(o.text.find("quick.toml"), std::string::npos) << o.text;
    EXPECT_NE(o.text.find("models/llama-3-8b.toml"), std::string::npos) << "suites/models/ is listed\n" << o.text;
    // Every line fits 100 columns (cuda's no-driver reason alone ran to 213),
    // but for a word no line can hold (a long plugin path).
    std::istringstream lines(o.text);
    for (std::string line; std::getline(lines, line);) {
        if (line.size() <= 100) continue;
        std::size_t longest = 0;
        std::istringstream words(line);
        for (std::string w; words >> w;) longest = std::max(longest, w.size());
        EXPECT_GT(longest, 80u) << "a " << line.size() << "-column line:\n" << line;
    }
}
