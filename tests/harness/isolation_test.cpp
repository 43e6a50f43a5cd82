// Isolation, journal and interruption through the real `opbench run`
// (issue 9): each fault of a plugin costs exactly its own case x backend,
// the good cases' results survive, and the exit status says a case failed;
// Ctrl-C leaves a valid result set marked incomplete that --resume finishes.
//
// The faulty plugin is tests/plugins/fault_plugin.cpp (OPBENCH_FAULT picks
// the fault, on rows = 13 only); the suite is isolation.toml.
#include "case_outcome.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

using opbench::test::ran_to_the_end;

struct Outcome {
    int status = -1; // exit status; 128 + signal when killed by one
    std::string output;
    double seconds = 0;
};

// Starts opbench with `args` and `env` (NAME=value); stdout and stderr go to
// `log`. `stdout_closed`: its stdout is a pipe nobody reads (| head).
pid_t start(const std::vector<std::string> &args, const std::vector<std::string> &env, const std::string &log,
            bool stdout_closed = false) {
    int pipefd[2] = {-1, -1};
    if (stdout_closed && ::pipe(pipefd) != 0) return -1;
    const pid_t pid = ::fork();
    if (pid == 0) {
        const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (stdout_closed) {
            ::close(pipefd[0]); // the reader is gone before anything is written
            ::dup2(pipefd[1], STDOUT_FILENO);
        } else {
            ::dup2(fd, STDOUT_FILENO);
        }
        ::dup2(fd, STDERR_FILENO);
        for (const auto &e : env) ::putenv(const_cast<char *>(e.c_str()));
        // Under AddressSanitizer a plugin's SIGSEGV would be reported and
        // turned into exit status 1; the worker must die of the signal.
        const char *asan = std::getenv("ASAN_OPTIONS");
        ::setenv("ASAN_OPTIONS", (std::string(asan ? asan : "") + ":handle_segv=0").c_str(), 1);
        std::vector<char *> argv;
        std::string exe = OPBENCH_EXE;
        argv.push_back(exe.data());
        std::vector<std::string> copy = args;
        for (auto &a : copy) argv.push_back(a.data());
        argv.push_back(nullptr);
        ::execv(exe.c_str(), argv.data());
        ::_exit(127);
    }
    if (stdout_closed) {
        ::close(pipefd[0]);
        ::close(pipefd[1]);
    }
    return pid;
}

int wait_for(pid_t pid, double limit_seconds) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(limit_seconds);
    int st = 0;
    while (::waitpid(pid, &st, WNOHANG) == 0) {
        if (std::chrono::steady_clock::now() > deadline) {
            ::kill(pid, SIGKILL);
            ::waitpid(pid, &st, 0);
            return -2; // the test's own limit: opbench hung
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

std::string slurp(const std::string &path) {
    std::ifstream in(path);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// The tests count cases, repetitions and worker processes, not times. CI
// runs them beside other tests on two CPUs, where every repetition of a tiny
// case can starve (rightly: its thread waited for a CPU a third of the time)
// and a starved entry has no repetitions to count. So the opbench runs they
// start take a higher scheduling priority where the test may give one (root
// or CAP_SYS_NICE: beside two `yes` hogs the worker-count test passed 6 of 6,
// 1 of 3 without; the interrupt-and-resume tests failed at load 8 under the
// sanitizers), and keep the same priority, with retries, where it may not.
class RaisedPriority {
public:
    RaisedPriority() : before_(getpriority(PRIO_PROCESS, 0)) {
        raised_ = setpriority(PRIO_PROCESS, 0, before_ - 10) == 0;
    }
    ~RaisedPriority() {
        if (raised_) setpriority(PRIO_PROCESS, 0, before_);
    }
    RaisedPriority(const RaisedPriority &) = delete;
    RaisedPriority &operator=(const RaisedPriority &) = delete;

private:
    int before_;
    bool raised_ = false;
};

class IsolationTest : public ::testing::Test {
protected:
    void SetUp() override {
        char tmpl[] = "/tmp/opbench-isolation-test-XXXXXX";
        ASSERT_NE(::mkdtemp(tmpl), nullptr);
        dir_ = tmpl;
        out_ = (fs::path(dir_) / "r.json").string();
    }
    void TearDown() override { fs::remove_all(dir_); }
    const RaisedPriority priority_; // inherited by the opbench runs a test starts

    Outcome run(std::vector<std::string> args, std::vector<std::string> env = {}, double limit = 120) {
        bool has_path = false; // a test may name its own plugins
        for (const auto &e : env) has_path = has_path || e.rfind("OPBENCH_PLUGIN_PATH=", 0) == 0;
        if (!has_path) env.push_back(std::string("OPBENCH_PLUGIN_PATH=") + FAULT_PLUGIN);
        const std::string log = (fs::path(dir_) / "log.txt").string();
        const auto t0 = std::chrono::steady_clock::now();
        Outcome r;
        r.status = wait_for(start(args, env, log), limit);
        r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        r.output = slurp(log);
        return r;
    }
    Outcome run_fault(const std::string &fault, std::vector<std::string> extra = {}, const std::string &phase = "") {
        std::vector<std::string> args = {"run", ISOLATION_SUITE, "--out", out_, "--no-progress"};
        args.insert(args.end(), extra.begin(), extra.end());
        std::vector<std::string> env = {"OPBENCH_FAULT=" + fault};
        if (!phase.empty()) env.push_back("OPBENCH_FAULT_PHASE=" + phase);
        return run(args, env);
    }
    json result_set() const {
        std::ifstream in(out_);
        return json::parse(in);
    }
    // Status and reason of each case x backend (its first entry).
    std::map<std::string, std::pair<std::string, std::string>> outcomes() const {
        std::map<std::string, std::pair<std::string, std::string>> m;
        const json rs = result_set(); // kept alive for the loop
        for (const auto &e : rs["benchmarks"]) {
            const std::string name = e.value("run_name", std::string());
            if (!m.count(name)) m[name] = {e.value("status", std::string()), e.value("reason", std::string())};
        }
        return m;
    }
    // Each case's repetitions' stats.process, in order.
    std::map<std::string, std::vector<int>> processes_of_each_case() const {
        std::map<std::string, std::vector<int>> m;
        const json rs = result_set();
        for (const auto &e : rs["benchmarks"])
            if (e.value("run_type", "") == "iteration" && e.contains("stats"))
                m[e["run_name"]].push_back(e["stats"]["process"].get<int>());
        return m;
    }
    // run(), again (with --force) up to 3 times while a case's every
    // repetition starved: such an entry has no repetitions of its own, and
    // says nothing of the workers (CI runs these beside other tests).
    Outcome run_until_not_starved(std::vector<std::string> args) {
        Outcome r;
        for (int attempt = 0; attempt < 3; ++attempt) {
            r = run(args);
            if (r.status != 0 || r.output.find("starved (no time") == std::string::npos) break;
            if (std::find(args.begin(), args.end(), "--force") == args.end()) args.push_back("--force");
        }
        return r;
    }
    // Nothing but the result set is left in its directory (no journal, no scratch).
    std::vector<std::string> leftovers() const {
        std::vector<std::string> names;
        for (const auto &f : fs::directory_iterator(dir_))
            if (f.path().filename() != "r.json" && f.path().filename() != "log.txt")
                names.push_back(f.path().filename().string());
        return names;
    }
    std::string dir_, out_;
};

const std::string kBad = "add/R:13/C:16/dt:f32/be:fault/manual_time";

struct Fault {
    const char *fault, *phase, *reason;
};

class EachFault : public IsolationTest, public ::testing::WithParamInterface<Fault> {};

TEST_P(EachFault, CostsExactlyItsOwnCase) {
    const Fault f = GetParam();
    const Outcome r = run_fault(f.fault, {}, f.phase);
    ASSERT_EQ(r.status, 1) << "a failed case exits 1\n" << r.output;
    const auto got = outcomes();
    ASSERT_EQ(got.size(), 6u) << r.output;
    for (const auto &[name, outcome] : got) {
        if (name == kBad) continue;
        EXPECT_TRUE(ran_to_the_end(outcome.first)) << name << ": " << outcome.second;
    }
    ASSERT_TRUE(got.count(kBad));
    EXPECT_EQ(got.at(kBad).first, "failed");
    const std::string want = std::string(f.reason) + " (backend 'fault', case add/R:13/C:16/dt:f32/be:fault)";
    EXPECT_EQ(got.at(kBad).second, want);
    // The passed cases carry their measurements.
    const json rs = result_set();
    for (const auto &e : rs["benchmarks"])
        if (e.value("status", "") == "passed" && e.value("run_type", "") == "iteration") {
            EXPECT_GT(e["real_time"].get<double>(), 0.0) << e["name"];
        }
    EXPECT_EQ(rs["context"]["opbench"]["complete"], true);
    EXPECT_EQ(rs["context"]["opbench"]["measurement"]["isolation"], "process");
    EXPECT_TRUE(leftovers().empty()) << leftovers().front();
}

INSTANTIATE_TEST_SUITE_P(Plugin, EachFault,
                         ::testing::Values(Fault{"segv", "execute", "crashed: SIGSEGV in execute"},
                                           Fault{"abort", "execute", "crashed: SIGABRT in execute"},
                                           Fault{"exit0", "execute", "exited with status 0 during execute"},
                                           Fault{"throw", "execute",
                                                 "exception: fault plugin: thrown through the C boundary in execute"},
                                           Fault{"bad_alloc", "execute", "exception: std::bad_alloc in execute"},
                                           Fault{"segv", "prepare", "crashed: SIGSEGV in prepare"},
                                           Fault{"exit0", "verify", "exited with status 0 during verify"}),
                         [](const auto &info) { return std::string(info.param.fault) + "_in_" + info.param.phase; });

// A fault while the backend is opened or probed, before any of its cases:
// the parent makes no plugin call, so it costs that backend only. Its cases
// fail with the cause, phase and backend; naive's pass; exit 1.
struct BackendFault {
    const char *fault, *phase, *rows, *reason;
};

class EachBackendFault : public IsolationTest, public ::testing::WithParamInterface<BackendFault> {};

TEST_P(EachBackendFault, CostsOnlyThatBackend) {
    const BackendFault f = GetParam();
    std::vector<std::string> args = {"run", ISOLATION_SUITE, "--out", out_, "--no-progress"};
    const Outcome r = run(args, {std::string("OPBENCH_FAULT=") + f.fault, std::string("OPBENCH_FAULT_PHASE=") + f.phase,
                                 std::string("OPBENCH_FAULT_ROWS=") + f.rows});
    ASSERT_EQ(r.status, 1) << "the faulty backend's cases failed\n" << r.output;
    const auto got = outcomes();
    ASSERT_EQ(got.size(), 6u) << r.output;
    const std::string want = std::string(f.reason) + " (backend 'fault')";
    for (const auto &[name, outcome] : got)
        if (name.find("/be:fault") != std::string::npos) {
            EXPECT_EQ(outcome.first, "failed") << name;
            EXPECT_EQ(outcome.second, want) << name;
        } else {
            EXPECT_TRUE(ran_to_the_end(outcome.first)) << name << ": " << outcome.second;
        }
    const json rs = result_set();
    const json &context = rs["context"]["opbench"];
    EXPECT_EQ(context["complete"], true);
    EXPECT_EQ(context["backends"]["fault"]["usable"], false);
    EXPECT_EQ(context["backends"]["fault"]["unusable_reason"], want);
    EXPECT_EQ(context["backends"]["naive"]["usable"], true);
    EXPECT_TRUE(context["measurement"]["call_overhead_seconds"].contains("naive")) << context["measurement"];
    EXPECT_FALSE(context["measurement"]["call_overhead_seconds"].contains("fault"));
    for (const auto &e : rs["benchmarks"])
        if (e.value("status", "") == "passed" && e.value("run_type", "") == "iteration") {
            EXPECT_GT(e["real_time"].get<double>(), 0.0) << e["name"];
        }
    EXPECT_TRUE(leftovers().empty()) << leftovers().front();
}

INSTANTIATE_TEST_SUITE_P(
    Plugin, EachBackendFault,
    ::testing::Values(BackendFault{"segv", "create", "13", "crashed: SIGSEGV in create"},
                      BackendFault{"exit0", "create", "13", "exited with status 0 during create"},
                      BackendFault{"throw", "probe", "13",
                                   "exception: fault plugin: thrown through the C boundary in probe"},
                      // rows = 1: the call-overhead probe's 1x1 add, in its first timed execute
                      BackendFault{"segv", "execute", "1", "crashed: SIGSEGV in call-overhead"}),
    [](const auto &info) {
        return std::string(info.param.fault) + "_in_" + info.param.phase + "_rows" + info.param.rows;
    });

TEST_F(IsolationTest, AHangInCreateIsCutAtTheCaseTimeout) {
    const Outcome r = run({"run", ISOLATION_SUITE, "--out", out_, "--no-progress", "--case-timeout", "1"},
                          {"OPBENCH_FAULT=hang", "OPBENCH_FAULT_PHASE=create"});
    ASSERT_EQ(r.status, 1) << r.output;
    EXPECT_LT(r.seconds, 60) << "a backend that hangs in create costs the timeout, not the run";
    int passed = 0;
    for (const auto &[name, o] : outcomes()) {
        passed += ran_to_the_end(o.first);
        if (name.find("/be:fault") != std::string::npos) {
            EXPECT_EQ(o.second, "timed out after 1 s in create (backend 'fault')") << name;
        }
    }
    EXPECT_EQ(passed, 3);
}

TEST_F(IsolationTest, AHangIsCutAtTheCaseTimeout) {
    const Outcome r = run_fault("hang", {"--case-timeout", "1"});
    ASSERT_EQ(r.status, 1) << r.output;
    EXPECT_LT(r.seconds, 60) << "one hung case costs its timeout, not the run";
    const auto got = outcomes();
    EXPECT_EQ(got.at(kBad).second,
              "timed out after 1 s in execute (backend 'fault', case add/R:13/C:16/dt:f32/be:fault)");
    int passed = 0;
    for (const auto &[name, o] : got) passed += ran_to_the_end(o.first);
    EXPECT_EQ(passed, 5);
    const json rs = result_set();
    for (const auto &e : rs["benchmarks"])
        if (e.value("run_name", "") == kBad && e.contains("settings")) { // per-case fields: on its first entry
            EXPECT_EQ(e["settings"]["timeout"], 1.0) << "the timeout is recorded";
        }
}

// A workload is an entry like an op case (issue 16): under the default
// isolation it runs in its backend's worker, so a plugin crashing, aborting
// or exiting inside a decoder workload costs that workload entry only. The
// same backend's op case (softmax: no norm) and naive's workload still pass,
// and the set is complete.
class WorkloadFault : public IsolationTest, public ::testing::WithParamInterface<const char *> {};

TEST_P(WorkloadFault, CostsOnlyTheWorkloadEntry) {
    const std::string fault = GetParam();
    const Outcome r = run({"run", WORKLOAD_FAULT_SUITE, "--out", out_, "--no-progress"},
                          {"OPBENCH_FAULT=" + fault, std::string("OPBENCH_PLUGIN_PATH=") + FAULTWRAP_PLUGIN});
    ASSERT_EQ(r.status, 1) << "a failed entry makes the run exit 1\n" << r.output;
    const auto got = outcomes();
    const std::string bad = "decoder/tiny.layer/phase:prefill/dt:f32/thr:1/be:faultwrap/manual_time";
    ASSERT_TRUE(got.count(bad)) << r.output;
    EXPECT_EQ(got.at(bad).first, "failed");
    const std::string cause = fault == "segv"    ? "crashed: SIGSEGV"
                              : fault == "abort" ? "crashed: SIGABRT"
                                                 : "exited with status 0";
    EXPECT_EQ(got.at(bad).second.rfind(cause, 0), 0u) << got.at(bad).second;
    EXPECT_NE(got.at(bad).second.find("(backend 'faultwrap', case " + bad.substr(0, bad.size() - 12) + ")"),
              std::string::npos)
        << got.at(bad).second;
    for (const char *ok : {"decoder/tiny.layer/phase:prefill/dt:f32/thr:1/be:naive/manual_time",
                           "decoder/tiny.layer/phase:decode/dt:f32/thr:1/be:naive/manual_time",
                           "softmax/B:1/R:8/C:32/dt:f32/thr:1/be:faultwrap/manual_time"}) {
        ASSERT_TRUE(got.count(ok)) << ok << "\n" << r.output;
        EXPECT_TRUE(ran_to_the_end(got.at(ok).first)) << ok << ": " << got.at(ok).second;
    }
    EXPECT_EQ(result_set()["context"]["opbench"]["complete"], true);
    // The naive entry carries its whole-model figures, made in the parent
    // from what its worker measured.
    const json set = result_set(); // kept alive for the loop
    for (const auto &e : set["benchmarks"])
        if (e.value("run_name", "") == "decoder/tiny.layer/phase:decode/dt:f32/thr:1/be:naive/manual_time" &&
            e.value("run_type", "") == "iteration" && e.value("repetition_index", -1) == 0) { // holds the case's fields
            ASSERT_TRUE(e["decoder"].is_object());
            EXPECT_GT(e["decoder"]["tokens_per_second"].get<double>(), 0);
            EXPECT_GT(e["decoder"]["kv_cache_bytes_per_token"].get<double>(), 0);
        }
}

INSTANTIATE_TEST_SUITE_P(InsideAWorkload, WorkloadFault, ::testing::Values("segv", "abort", "exit0"));

TEST_F(IsolationTest, WithoutIsolationAThrowFailsItsCaseAndTheRunGoesOn) {
    const Outcome r = run_fault("throw", {"--isolate", "none"});
    ASSERT_EQ(r.status, 1) << r.output;
    const auto got = outcomes();
    EXPECT_EQ(got.at(kBad).first, "failed");
    EXPECT_EQ(got.at(kBad).second.rfind("exception: fault plugin: thrown through the C boundary in execute", 0), 0u)
        << got.at(kBad).second;
    EXPECT_EQ(result_set()["context"]["opbench"]["measurement"]["isolation"], "none");
}

// exit() in plugin code inside opbench's own process used to end the run with
// the plugin's status 0, no result set and no message. Now the case is failed
// with the cause, the set of what finished is written (incomplete), exit 1.
TEST_F(IsolationTest, WithoutIsolationAnExitFailsItsCaseAndWritesWhatFinished) {
    const Outcome r = run_fault("exit0", {"--isolate", "none"});
    ASSERT_EQ(r.status, 1) << r.output;
    EXPECT_NE(r.output.find("exited with status 0 in opbench's own process (case add/R:13/C:16/dt:f32/be:fault)"),
              std::string::npos)
        << r.output;
    EXPECT_NE(r.output.find("--resume"), std::string::npos) << r.output;
    const json rs = result_set();
    EXPECT_EQ(rs["context"]["opbench"]["complete"], false);
    const auto got = outcomes();
    ASSERT_TRUE(got.count(kBad)) << "the case in progress is recorded";
    EXPECT_EQ(got.at(kBad).first, "failed");
    EXPECT_EQ(got.at(kBad).second.rfind("exited with status 0 in opbench's own process", 0), 0u) << got.at(kBad).second;
    int passed = 0;
    for (const auto &[name, o] : got) passed += ran_to_the_end(o.first);
    EXPECT_GE(passed, 1) << "the cases that finished before it are kept";
}

TEST_F(IsolationTest, ACaseThatCannotFitIsSkippedBeforeItStarts) {
    const Outcome r = run_fault("", {"--mem-limit", "1K"});
    ASSERT_EQ(r.status, 0) << r.output;
    ASSERT_EQ(outcomes().size(), 6u);
    for (const auto &[name, o] : outcomes()) {
        EXPECT_EQ(o.first, "skipped") << name;
        // Sizes in units that show them ("needs 0.00 GiB" said nothing).
        EXPECT_EQ(o.second.rfind("needs ", 0), 0u) << o.second;
        EXPECT_NE(o.second.find(" KiB, 1.0 KiB available (--mem-limit)"), std::string::npos) << o.second;
    }
}

TEST_F(IsolationTest, AClosedStdoutDoesNotLoseTheRun) {
    const std::string log = (fs::path(dir_) / "log.txt").string();
    const pid_t pid = start({"run", ISOLATION_SUITE, "--out", out_, "--no-progress", "--backends", "naive"},
                            {std::string("OPBENCH_PLUGIN_PATH=") + FAULT_PLUGIN}, log, /*stdout_closed=*/true);
    EXPECT_EQ(wait_for(pid, 120), 0) << slurp(log);
    EXPECT_EQ(result_set()["context"]["opbench"]["complete"], true);
    EXPECT_EQ(outcomes().size(), 3u);
}

// Waits until the journal holds `cases` finished case x backend.
bool journal_has(const std::string &journal, std::size_t cases, double limit) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(limit);
    while (std::chrono::steady_clock::now() < deadline) {
        std::ifstream in(journal);
        std::string line;
        std::size_t n = 0;
        while (std::getline(in, line)) n += line.rfind("{\"case\"", 0) == 0;
        if (n >= cases) return true;
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return false;
}

class Interrupt : public IsolationTest, public ::testing::WithParamInterface<std::pair<int, int>> {};

TEST_P(Interrupt, LeavesAnIncompleteResultSetThatResumeFinishes) {
    const auto [sig, expected_status] = GetParam();
    const std::string log = (fs::path(dir_) / "log.txt").string();
    const std::vector<std::string> args = {"run", QUICK_SUITE, "--backends", "naive", "--out", out_, "--no-progress"};
    const pid_t pid = start(args, {}, log);
    ASSERT_TRUE(journal_has(out_ + ".journal", 2, 120)) << slurp(log);
    ::kill(pid, sig);
    ASSERT_EQ(wait_for(pid, 120), expected_status) << slurp(log);

    const json partial = result_set();
    EXPECT_EQ(partial["context"]["opbench"]["complete"], false);
    EXPECT_EQ(partial["context"]["opbench"]["journal"], fs::absolute(out_ + ".journal").string());
    std::set<std::string> before;
    for (const auto &e : partial["benchmarks"]) {
        before.insert(e["run_name"].get<std::string>());
        EXPECT_TRUE(ran_to_the_end(e["status"].get<std::string>()))
            << e["run_name"] << ": abandoned cases stay out of the set";
    }
    EXPECT_GE(before.size(), 2u);
    EXPECT_LT(before.size(), 23u);
    EXPECT_NE(slurp(log).find("--resume"), std::string::npos) << "the console says how to finish it";
    // The per-backend table counts what the summary line counts: the case the
    // signal abandoned is in neither (it used to show as "1 failed").
    {
        const std::string text = slurp(log);
        std::smatch row, line;
        ASSERT_TRUE(std::regex_search(text, row, std::regex(R"(\n\s*naive\s+(\d+)\s+(\d+)\s+(\d+)\s)"))) << text;
        ASSERT_TRUE(std::regex_search(text, line, std::regex(R"(opbench: (\d+) passed, (\d+) failed, (\d+) skipped)")))
            << text;
        EXPECT_EQ(row[1].str(), line[1].str()) << "passed\n" << text;
        EXPECT_EQ(row[2].str(), line[2].str()) << "failed\n" << text;
        EXPECT_EQ(row[3].str(), line[3].str()) << "skipped\n" << text;
    }

    const Outcome resumed = run({"run", "--resume", out_, "--no-progress"});
    ASSERT_EQ(resumed.status, 0) << resumed.output;
    const json done = result_set();
    EXPECT_EQ(done["context"]["opbench"]["complete"], true);
    EXPECT_EQ(done["context"]["opbench"]["resumed_at"].size(), 1u);
    std::map<std::string, int> reps;
    for (const auto &e : done["benchmarks"])
        if (e.value("run_type", "") == "iteration") ++reps[e["run_name"].get<std::string>()];
    EXPECT_EQ(reps.size(), 23u) << "every case of quick.toml on naive, once";
    for (const auto &[name, n] : reps) EXPECT_EQ(n, 9) << name << ": its repetitions, none twice";
    // The cases that had finished were kept, not run again: same entries.
    for (const auto &e : partial["benchmarks"]) {
        bool found = false;
        for (const auto &d : done["benchmarks"]) found = found || d == e;
        EXPECT_TRUE(found) << e["name"];
    }
    EXPECT_TRUE(leftovers().empty()) << "the journal goes with the complete set: " << leftovers().front();
}

INSTANTIATE_TEST_SUITE_P(Signals, Interrupt, ::testing::Values(std::pair{SIGINT, 130}, std::pair{SIGTERM, 143}),
                         [](const auto &info) { return info.param.first == SIGINT ? "SIGINT" : "SIGTERM"; });

// Issue 19: a single SIGTERM did not stop a 100,000-case run for 14.5 min
// (Google Benchmark held every case registered at once: the first case was
// journaled after 150 s, and the signal waited). The one entry loop hands it
// 64 entries a pass, so the run starts measuring at once and stops at the
// signal. The bounds are liveness limits, minutes above what the loop needs
// even on a loaded 2-vCPU machine (measured: docs/reliability.md).
TEST_F(IsolationTest, ASigtermStopsAHundredThousandEntryRun) {
    const std::string suite = (fs::path(dir_) / "huge.toml").string();
    {
        std::ofstream out(suite);
        out << "[suite]\nname = \"huge\"\ndescription = \"100,000 adds\"\n[defaults]\nbackends = [\"naive\"]\n"
               "dtypes = [\"f32\"]\nwarmup = 1\nmin_time = 0.0001\nmax_time = 0.001\nmin_samples = 3\n"
               "repetitions = 1\n[[case]]\nop = \"add\"\nrows = [";
        for (int r = 1; r <= 1000; ++r) out << (r > 1 ? "," : "") << r;
        out << "]\ncols = [";
        for (int c = 1; c <= 100; ++c) out << (c > 1 ? "," : "") << c;
        out << "]\n";
    }
    const std::string log = (fs::path(dir_) / "log.txt").string();
    const pid_t pid =
        start({"run", suite, "--isolate", "none", "--out", out_, "--no-progress"}, {}, log);
    ASSERT_TRUE(journal_has(out_ + ".journal", 1, 120)) << "no entry journaled within 120 s\n" << slurp(log);
    const auto t0 = std::chrono::steady_clock::now();
    ::kill(pid, SIGTERM);
    ASSERT_EQ(wait_for(pid, 120), 143) << slurp(log);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    EXPECT_LT(seconds, 60) << "the signal was heard late";
    const json partial = result_set();
    EXPECT_EQ(partial["context"]["opbench"]["complete"], false);
    EXPECT_GE(partial["benchmarks"].size(), 1u);
    EXPECT_LT(partial["benchmarks"].size(), 100000u);
}

// Issue 19: a trace that cannot be written at the end (its directory removed
// while the run goes) costs neither the result set nor the run: the set is
// written complete, the trace's failure is named, and the exit is 3.
TEST_F(IsolationTest, ATraceThatCannotBeWrittenAtTheEndKeepsTheResultSet) {
    const fs::path trace_dir = fs::path(dir_) / "traces";
    fs::create_directories(trace_dir);
    const std::string log = (fs::path(dir_) / "log.txt").string();
    const pid_t pid = start({"run", QUICK_SUITE, "--backends", "naive", "--benchmark_filter=add|silu|gelu|softmax", "--out", out_,
                             "--no-progress", "--trace", (trace_dir / "t.json").string()},
                            {}, log);
    ASSERT_TRUE(journal_has(out_ + ".journal", 1, 120)) << slurp(log);
    // Gone before the trace is written at the end, and a file in its place,
    // so the directory cannot be made again.
    fs::remove_all(trace_dir);
    std::ofstream(trace_dir.string()) << "not a directory";
    ASSERT_EQ(wait_for(pid, 300), 3) << slurp(log);
    EXPECT_NE(slurp(log).find("--trace " + (trace_dir / "t.json").string() + ": not written"), std::string::npos)
        << slurp(log);
    const json set = result_set();
    EXPECT_EQ(set["context"]["opbench"]["complete"], true);
    EXPECT_TRUE(fs::is_regular_file(trace_dir)) << "the file in the directory's place is left alone";
}

TEST_F(IsolationTest, ASecondCtrlCStopsAtOnceAndStillWritesTheSet) {
    const std::string log = (fs::path(dir_) / "log.txt").string();
    // A hang that the first Ctrl-C would wait on in process (--isolate none):
    // only the second one can end it.
    const pid_t pid = start({"run", ISOLATION_SUITE, "--out", out_, "--no-progress", "--isolate", "none"},
                            {std::string("OPBENCH_PLUGIN_PATH=") + FAULT_PLUGIN, "OPBENCH_FAULT=hang"}, log);
    ASSERT_TRUE(journal_has(out_ + ".journal", 3, 120)) << slurp(log);
    std::this_thread::sleep_for(std::chrono::milliseconds(500)); // now inside the hang
    ::kill(pid, SIGINT);
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    ::kill(pid, SIGINT);
    ASSERT_EQ(wait_for(pid, 30), 130) << slurp(log);
    const json partial = result_set();
    EXPECT_EQ(partial["context"]["opbench"]["complete"], false);
    std::set<std::string> names;
    for (const auto &e : partial["benchmarks"]) names.insert(e["run_name"].get<std::string>());
    EXPECT_EQ(names.size(), 3u) << "the three cases before the hang";
}

TEST_F(IsolationTest, ResumeRefusesWhatItCannotContinue) {
    std::ofstream(out_) << R"({"context": {"opbench": {"complete": true}}, "benchmarks": []})";
    Outcome r = run({"run", "--resume", out_});
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.output.find("nothing to resume"), std::string::npos) << r.output;
    r = run({"run", "--resume", out_, ISOLATION_SUITE});
    EXPECT_EQ(r.status, 2) << r.output;
}

// --resume used to ignore every option given with it (a run that crashed
// under --isolate none crashed again on each resume). Now the options that
// change what is measured are refused, naming them, and the safe ones
// (--isolate here) replace the run's own.
TEST_F(IsolationTest, ResumeRefusesOptionsItWouldIgnoreAndHonoursTheSafeOnes) {
    // An interrupted run: exit() in the fault plugin, in opbench's own process.
    const Outcome first = run_fault("exit0", {"--isolate", "none"});
    ASSERT_EQ(first.status, 1) << first.output;
    ASSERT_EQ(result_set()["context"]["opbench"]["complete"], false);

    Outcome r = run({"run", "--resume", out_, "--backends", "naive", "--repetitions", "3"});
    EXPECT_EQ(r.status, 2) << r.output;
    EXPECT_NE(r.output.find("--resume continues the run with its own settings, and --backends, --repetitions "
                            "would change what it measures"),
              std::string::npos)
        << r.output;
    EXPECT_EQ(result_set()["context"]["opbench"]["complete"], false) << "nothing ran";

    r = run({"run", "--resume", out_, "--isolate", "process", "--no-progress"});
    EXPECT_EQ(r.status, 1) << "the case failed by exit() stays failed\n" << r.output;
    const json done = result_set();
    EXPECT_EQ(done["context"]["opbench"]["complete"], true);
    EXPECT_EQ(done["context"]["opbench"]["measurement"]["isolation"], "process") << "--isolate was honoured";
    EXPECT_EQ(outcomes().size(), 6u) << "every case x backend, once";
}

// A full disk during the run (here: a 40 KiB file-size limit, the journal
// hits it) is the environment's fault: exit 3 (it was 2, bad input), the
// reservation and the journal kept, and the printed command resumes the run.
TEST_F(IsolationTest, AJournalThatCannotGrowExits3AndResumeFinishesTheRun) {
    const std::string log = (fs::path(dir_) / "log.txt").string();
    const std::string cmd = "bash -c \"trap '' XFSZ; ulimit -f 40; exec " + std::string(OPBENCH_EXE) + " run " +
                            QUICK_SUITE + " --backends naive --no-progress --out " + out_ + "\" > " + log + " 2>&1";
    const int status = std::system(cmd.c_str());
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 3) << slurp(log);
    EXPECT_NE(slurp(log).find("cannot append"), std::string::npos) << slurp(log);
    EXPECT_NE(slurp(log).find("`opbench run --resume " + out_ + "` finishes the run"), std::string::npos) << slurp(log);
    EXPECT_TRUE(fs::exists(out_)) << "the reservation is kept";
    EXPECT_TRUE(fs::exists(out_ + ".journal"));
    const Outcome resumed = run({"run", "--resume", out_, "--no-progress"});
    ASSERT_EQ(resumed.status, 0) << resumed.output;
    EXPECT_EQ(result_set()["context"]["opbench"]["complete"], true);
}

// --force replaced an earlier set; a SIGKILL before the new one is written
// leaves that old, complete set with the new run's journal beside it. The
// advice and --resume then work (it said "nothing to resume").
TEST_F(IsolationTest, ResumeAfterForceAndAKillUsesTheJournalBesideTheOldSet) {
    ASSERT_EQ(run({"run", ISOLATION_SUITE, "--backends", "naive", "--out", out_, "--no-progress"}).status, 0);
    ASSERT_EQ(result_set()["context"]["opbench"]["complete"], true);
    const std::string log = (fs::path(dir_) / "log.txt").string();
    const pid_t pid =
        start({"run", QUICK_SUITE, "--backends", "naive", "--out", out_, "--force", "--no-progress"}, {}, log);
    ASSERT_TRUE(journal_has(out_ + ".journal", 2, 120)) << slurp(log);
    ::kill(pid, SIGKILL);
    wait_for(pid, 30);
    const Outcome resumed = run({"run", "--resume", out_, "--no-progress"});
    ASSERT_EQ(resumed.status, 0) << resumed.output;
    const json done = result_set();
    EXPECT_EQ(done["context"]["opbench"]["complete"], true);
    EXPECT_EQ(done["context"]["opbench"]["suite"]["name"], "quick") << "the new run's set, finished";
}

// A case's repetitions are spread over the backend's pool of worker
// processes, 3 by default (settings.processes, case_host.hpp), back to back
// or interleaved, each recorded in stats.process; in process they all say 0.
TEST_F(IsolationTest, ACasesRepetitionsComeFromThreeWorkerProcesses) {
    auto run = [&](std::vector<std::string> args) { return run_until_not_starved(std::move(args)); };
    Outcome r =
        run({"run", ISOLATION_SUITE, "--out", out_, "--no-progress", "--backends", "naive", "--repetitions", "6"});
    ASSERT_EQ(r.status, 0) << r.output;
    auto got = processes_of_each_case();
    ASSERT_EQ(got.size(), 3u) << r.output;
    for (const auto &[name, processes] : got) EXPECT_EQ(processes, (std::vector<int>{0, 0, 1, 1, 2, 2})) << name;

    // Interleaved, a case is activated again whenever another ran between its
    // repetitions; each run of repetitions (an activation, or a move after a
    // worker's share of 2) takes the pool's next worker, so however the
    // random order splits the 6 repetitions, all three workers take part.
    r = run({"run", ISOLATION_SUITE, "--out", out_, "--force", "--no-progress", "--backends", "naive", "--repetitions",
             "6", "--benchmark_enable_random_interleaving=true"});
    ASSERT_EQ(r.status, 0) << r.output;
    got = processes_of_each_case();
    ASSERT_EQ(got.size(), 3u) << r.output;
    for (const auto &[name, processes] : got)
        EXPECT_EQ(std::set<int>(processes.begin(), processes.end()), (std::set<int>{0, 1, 2})) << name;

    r = run({"run", ISOLATION_SUITE, "--out", out_, "--force", "--no-progress", "--backends", "naive", "--repetitions",
             "6", "--isolate", "none"});
    ASSERT_EQ(r.status, 0) << r.output;
    for (const auto &[name, processes] : processes_of_each_case()) EXPECT_EQ(processes, std::vector<int>(6, 0)) << name;
}

// `--processes N` spreads a case's repetitions over N workers, recorded as
// settings.processes; 1 keeps every repetition in the process that verified
// the case, which then prepares it once (process_start_seconds 0, where the
// fault backend's 1.5 s sleep in each process's prepare would show twice).
TEST_F(IsolationTest, TheProcessesSettingSpreadsRepetitionsOverThatManyWorkers) {
    Outcome r = run_until_not_starved({"run", ISOLATION_SUITE, "--out", out_, "--no-progress", "--backends", "naive",
                                       "--repetitions", "6", "--processes", "2"});
    ASSERT_EQ(r.status, 0) << r.output;
    auto got = processes_of_each_case();
    ASSERT_EQ(got.size(), 3u) << r.output;
    for (const auto &[name, processes] : got) EXPECT_EQ(processes, (std::vector<int>{0, 0, 0, 1, 1, 1})) << name;
    const json two = result_set(); // kept alive for the loop
    for (const auto &e : two["benchmarks"]) {
        if (!e.contains("settings")) continue;
        EXPECT_EQ(e["settings"]["processes"], 2) << e["name"];
    }

    r = run({"run", ISOLATION_SUITE, "--out", out_, "--force", "--no-progress", "--backends", "fault",
             "--repetitions", "3", "--processes", "1", "--benchmark_filter=R:13"},
            {"OPBENCH_FAULT=slow", "OPBENCH_FAULT_PHASE=prepare", "OPBENCH_FAULT_SLOW_MS=1500"});
    ASSERT_EQ(r.status, 0) << r.output;
    for (const auto &[name, processes] : processes_of_each_case()) EXPECT_EQ(processes, std::vector<int>(3, 0)) << name;
    const json rs = result_set();
    bool seen = false;
    for (const auto &e : rs["benchmarks"])
        if (e.value("run_name", "") == kBad && e.contains("process_start_seconds")) {
            seen = true;
            EXPECT_EQ(e["process_start_seconds"].get<double>(), 0.0) << "no second process prepared the case";
            EXPECT_EQ(e["settings"]["processes"], 1);
        }
    EXPECT_TRUE(seen) << rs.dump(1);

    // Out of range: refused before anything runs, naming the range.
    r = run({"run", ISOLATION_SUITE, "--no-out", "--backends", "naive", "--processes", "0"});
    EXPECT_EQ(r.status, 2) << r.output;
    EXPECT_NE(r.output.find("--processes"), std::string::npos) << r.output;
}

// A case's further worker processes prepare it again (start, inputs, plan,
// warm-up) before their first repetition: that time is the entry's
// process_start_seconds, not its measure_seconds (issue 44: it was inside
// "measuring"). The fault backend sleeps 1.5 s in each process's prepare of
// the rows = 13 case; its 3 repetitions take one process each.
TEST_F(IsolationTest, ALaterProcessPreparingIsNotMeasuring) {
    Outcome r = run({"run", ISOLATION_SUITE, "--out", out_, "--no-progress", "--backends", "fault", "--repetitions",
                     "3", "--benchmark_filter=R:13"},
                    {"OPBENCH_FAULT=slow", "OPBENCH_FAULT_PHASE=prepare", "OPBENCH_FAULT_SLOW_MS=1500"});
    ASSERT_EQ(r.status, 0) << r.output;
    const json rs = result_set();
    const json *first = nullptr;
    for (const auto &e : rs["benchmarks"])
        if (e.value("run_name", "") == kBad && e.contains("measure_seconds")) first = &e;
    ASSERT_NE(first, nullptr) << rs.dump(1);
    EXPECT_GE((*first)["prepare_seconds"].get<double>(), 1.5) << "the first process's prepare";
    EXPECT_GE((*first)["process_start_seconds"].get<double>(), 3.0) << "two further processes, 1.5 s each";
    // Three repetitions of max_time 0.02 s: well under one sleep, which the
    // two moves would each have added to it.
    EXPECT_LT((*first)["measure_seconds"].get<double>(), 1.5);
    EXPECT_NE(r.output.find("preparing"), std::string::npos) << r.output;
}

} // namespace
