// End to end: `opbench run --verify full|fast|off` through the real program,
// on the naive backend and on the corrupt test backend (naive's results with
// one element or row made wrong, tests/plugins/corrupt_plugin.cpp).
//   * fast (the default) checks matmul by Freivalds and attention by sampled
//     rows without running the reference, and catches a wrong matmul element;
//   * full compares with the reference, and a second run of the suite takes
//     its references from the on-disk cache;
//   * off marks every entry unverified, on the console and in JSON.
#include "case_outcome.hpp"
#include "shell_command.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <array>
#include <cstdlib>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

using opbench::test::Output;
using opbench::test::ran_to_the_end;
using opbench::test::run;

// matmul (two layouts), attention and softmax: one op of each kind of check.
constexpr const char *kSuite = R"(
[suite]
name = "verify-e2e"
[defaults]
backends = ["naive"]
dtypes = ["f32", "bf16"]
warmup = 0
min_time = 0.0005
max_time = 0.005
min_samples = 1
repetitions = 1
[[case]]
op = "matmul"
name = "mm"
shapes = [{m = 96, n = 80, k = 64}, {m = 40, n = 72, k = 48, trans_b = true, bias = true}]
[[case]]
op = "attention"
name = "attn"
heads = 2
seq = 48
head_dim = 16
causal = true
variant = "fused"
[[case]]
op = "softmax"
name = "sm"
rows = 32
cols = 64
)";

class VerifyRun : public ::testing::Test {
protected:
    void SetUp() override {
        dir_ = fs::temp_directory_path() / ("opbench-e2e-verify-" + std::to_string(::getpid()) + "-" +
                                            ::testing::UnitTest::GetInstance()->current_test_info()->name());
        fs::remove_all(dir_);
        fs::create_directories(dir_ / "cache");
        std::ofstream(dir_ / "suite.toml") << kSuite;
        // The machine's cached peaks (measured once per machine, seconds of
        // work) come along into this test's own cache directory.
        const char *env = std::getenv("OPBENCH_CACHE_DIR");
        const char *xdg = std::getenv("XDG_CACHE_HOME");
        const char *home = std::getenv("HOME");
        const fs::path real = env && *env   ? fs::path(env)
                              : xdg && *xdg ? fs::path(xdg) / "opbench"
                              : home        ? fs::path(home) / ".cache" / "opbench"
                                            : fs::path();
        std::error_code ec;
        if (!real.empty() && fs::is_directory(real, ec))
            for (const auto &f : fs::directory_iterator(real, ec))
                if (f.path().filename().string().rfind("machine-", 0) == 0)
                    fs::copy_file(f.path(), dir_ / "cache" / f.path().filename(), ec);
    }
    void TearDown() override { fs::remove_all(dir_); }

    // Runs the suite; `env` goes before the command (VAR=value ...).
    Output opbench(const std::string &args, const std::string &out_name, const std::string &env = "") {
        return run("OPBENCH_CACHE_DIR=" + (dir_ / "cache").string() + " " + env + " " + OPBENCH_EXE + " run " +
                   (dir_ / "suite.toml").string() + " --no-progress --out " + (dir_ / out_name).string() + " " + args);
    }
    json result(const std::string &out_name) {
        std::ifstream in(dir_ / out_name);
        return in ? json::parse(in) : json();
    }
    // Each case's first iteration entry: it holds the case's fields (results/README.md).
    static std::vector<json> entries(const json &r) {
        std::vector<json> out;
        std::set<std::string> seen;
        for (const auto &e : r["benchmarks"])
            if (e.value("run_type", "") == "iteration" && seen.insert(e.value("run_name", "")).second)
                out.push_back(e);
        return out;
    }

    fs::path dir_;
};

} // namespace

TEST_F(VerifyRun, FastIsTheDefaultAndNeverRunsTheReferenceForMatmulOrAttention) {
    Output o = opbench("", "fast.json");
    ASSERT_EQ(o.exit_code, 0) << o.text;
    json r = result("fast.json");
    std::set<std::string> methods;
    for (const auto &e : entries(r)) {
        const std::string name = e["name"];
        ASSERT_TRUE(ran_to_the_end(e["status"].get<std::string>())) << name << ": " << e["reason"];
        EXPECT_TRUE(e["verified"].get<bool>()) << name;
        const json &v = e["verification"];
        EXPECT_EQ(v["mode"], "fast") << name;
        methods.insert(v["method"]);
        if (e["op"] == "matmul") {
            EXPECT_EQ(v["method"], "freivalds") << name;
            EXPECT_EQ(v["vectors"], 4) << name;
            EXPECT_EQ(v["checked"], v["total"]) << name;
            EXPECT_TRUE(v.contains("seed")) << name;
        }
        if (e["op"] == "attention") {
            EXPECT_EQ(v["method"], "sampled-rows") << name;
            EXPECT_EQ(v["unit"], "rows") << name;
            EXPECT_EQ(v["total"], 2 * 48) << name;
            EXPECT_EQ(v["checked"], 2 * 8) << name; // first, last and 6 seeded rows per head
        }
        if (e["op"] == "matmul" || e["op"] == "attention") {
            EXPECT_FALSE(v.contains("reference")) << name << ": the reference backend never ran";
            EXPECT_TRUE(e["nmse"].is_null()) << name;
        } else {
            EXPECT_EQ(v["method"], "reference") << name;
            EXPECT_EQ(v["reference"], "computed") << name;
        }
        for (const char *f : {"prepare_seconds", "verify_seconds", "measure_seconds"})
            EXPECT_TRUE(e[f].is_number()) << name << " " << f;
    }
    EXPECT_EQ(methods, (std::set<std::string>{"freivalds", "sampled-rows", "reference"}));
    EXPECT_NE(o.text.find("verifying"), std::string::npos) << o.text;
    EXPECT_NE(o.text.find("measuring"), std::string::npos) << o.text;
    // Fast mode writes no reference to the cache.
    EXPECT_FALSE(fs::exists(dir_ / "cache" / "references") && !fs::is_empty(dir_ / "cache" / "references"));
}

TEST_F(VerifyRun, FullComparesWithTheReferenceAndTheSecondRunIsServedFromTheCache) {
    for (const char *out : {"full1.json", "full2.json"}) {
        Output o = opbench("--verify full", out);
        ASSERT_EQ(o.exit_code, 0) << o.text;
    }
    const json first = result("full1.json"), second = result("full2.json");
    const auto a = entries(first), b = entries(second);
    ASSERT_EQ(a.size(), b.size());
    ASSERT_FALSE(a.empty());
    for (std::size_t i = 0; i < a.size(); ++i) {
        const std::string name = a[i]["name"];
        EXPECT_EQ(a[i]["verification"]["method"], "reference") << name;
        EXPECT_EQ(a[i]["verification"]["reference"], "computed") << name;
        EXPECT_EQ(b[i]["verification"]["reference"], "cache") << name;
        // The same reference, so the same verdict to the bit.
        EXPECT_EQ(a[i]["nmse"], b[i]["nmse"]) << name;
        EXPECT_TRUE(a[i]["nmse"].is_number()) << name;
    }
    std::size_t files = 0;
    for (const auto &f : fs::directory_iterator(dir_ / "cache" / "references")) files += f.path().extension() == ".ref";
    EXPECT_EQ(files, a.size()) << "one reference per case (the naive backend only)";
    // --no-reference-cache computes again.
    Output o = opbench("--verify full --no-reference-cache", "full3.json");
    ASSERT_EQ(o.exit_code, 0) << o.text;
    const json third = result("full3.json");
    for (const auto &e : entries(third)) EXPECT_EQ(e["verification"]["reference"], "computed");
}

TEST_F(VerifyRun, OffIsUnverifiedOnTheConsoleAndInJson) {
    Output o = opbench("--verify off", "off.json");
    ASSERT_EQ(o.exit_code, 0) << o.text;
    const json off = result("off.json");
    for (const auto &e : entries(off)) {
        EXPECT_TRUE(ran_to_the_end(e["status"].get<std::string>())) << e["name"];
        EXPECT_FALSE(e["verified"].get<bool>()) << e["name"];
        EXPECT_EQ(e["verification"]["mode"], "off");
        EXPECT_EQ(e["verification"]["method"], "none");
        EXPECT_FALSE(e["verification"]["verified"].get<bool>());
        // A starved entry (a busy machine: every repetition waited for a
        // CPU) is an error entry, without the repetitions' label.
        if (e["status"] == "passed") {
            EXPECT_NE(e.value("label", "").find("UNVERIFIED"), std::string::npos) << e.dump();
        }
    }
    EXPECT_NE(o.text.find("UNVERIFIED: --verify off"), std::string::npos) << o.text;
}

TEST_F(VerifyRun, AnUnknownModeExits2) {
    Output o = opbench("--verify quick", "bad.json");
    EXPECT_EQ(o.exit_code, 2) << o.text;
    EXPECT_NE(o.text.find("full"), std::string::npos) << o.text;
}

TEST_F(VerifyRun, FastModeCatchesOneWrongMatmulElementOnTheCorruptBackend) {
    const std::string env =
        std::string("OPBENCH_PLUGIN_PATH=") + CORRUPT_PLUGIN_DIR + " OPBENCH_CORRUPT=element OPBENCH_CORRUPT_SEED=5";
    Output o = opbench("--backends corrupt", "corrupt.json", env);
    EXPECT_EQ(o.exit_code, 1) << o.text; // failed cases
    std::size_t matmuls = 0;
    const json r = result("corrupt.json");
    ASSERT_TRUE(r.contains("benchmarks")) << o.text;
    for (const auto &e : r["benchmarks"]) {
        if (e.value("op", "") != "matmul") continue;
        ++matmuls;
        EXPECT_EQ(e["status"], "failed") << e["name"];
        EXPECT_NE(e["reason"].get<std::string>().find("verification failed (freivalds)"), std::string::npos)
            << e["reason"];
        EXPECT_FALSE(e["verified"].get<bool>());
    }
    EXPECT_EQ(matmuls, 4u);
}
