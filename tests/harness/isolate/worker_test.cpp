// Tests of harness/worker: a child process per worker, each fault of a plugin
// (crash, abort, exit, exception, bad_alloc, hang) costing one request with a
// reason that names the phase, and the worker started afresh afterwards.
//
// The worker is this test program itself, started again with --test-worker:
// its handler does what the request's "do" says, as a faulty plugin would.
#include "isolate/worker.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <limits>
#include <csignal>
#include <cstdlib>
#include <new>
#include <stdexcept>
#include <string>
#include <thread>
#include <unistd.h>

using namespace opbench;
using nlohmann::json;

namespace {

// A real SIGSEGV, as a buggy plugin makes it. Not caught by UBSan's null
// check (the ASan + UBSan build of .ci/run would stop it as undefined
// behaviour first); .ci/run sets handle_segv=0, so ASan leaves the signal be.
__attribute__((no_sanitize("undefined"), noinline)) void write_through_null() {
    // The pointer itself volatile: the compiler cannot prove it null and
    // drop or replace the store.
    static int *volatile null = nullptr;
    *null = 1;
}

json test_handler(const json &request, PhaseReporter &phase) {
    const std::string what = request.at("do").get<std::string>();
    if (request.contains("phase")) phase.enter(request["phase"].get<std::string>());
    if (what == "echo") return request.at("value");
    if (what == "pid") return ::getpid();
    if (what == "big") return std::string(std::size_t(request.at("bytes").get<int>()), 'x');
    if (what == "sigint_state") {
        sigset_t blocked;
        sigprocmask(SIG_BLOCK, nullptr, &blocked);
        struct sigaction sa {};
        sigaction(SIGINT, nullptr, &sa);
        return json{{"blocked", sigismember(&blocked, SIGINT) == 1},
                    {"default", sa.sa_handler == SIG_DFL},
                    {"own_group", ::getpgrp() == ::getpid()}};
    }
    if (what == "segv") {
        write_through_null();
    }
    if (what == "abort") std::abort();
    if (what == "exit0") std::exit(0);
    if (what == "throw") throw std::runtime_error("boom");
    if (what == "throw_int") throw 42;
    // What a library's failed allocation throws (thrown directly: a real
    // 2^60-byte request would abort under AddressSanitizer instead).
    if (what == "bad_alloc") throw std::bad_alloc();
    if (what == "hang")
        for (;;) ::pause();
    throw std::invalid_argument("test worker: unknown request " + what);
}

std::vector<std::string> worker_command() { return {"/proc/self/exe", "--test-worker"}; }

json ask(const std::string &what, const std::string &phase = "") {
    json r{{"do", what}};
    if (!phase.empty()) r["phase"] = phase;
    return r;
}

TEST(Worker, AnswersRequestsInOneProcess) {
    WorkerProcess w(worker_command());
    WorkerOutcome a = w.call(json{{"do", "echo"}, {"value", {{"x", 1}, {"name", "matmul/M:1"}}}}, 10);
    ASSERT_TRUE(a.ok) << a.failure;
    EXPECT_EQ(a.reply["x"], 1);
    EXPECT_EQ(a.reply["name"], "matmul/M:1");
    WorkerOutcome p1 = w.call(ask("pid"), 10), p2 = w.call(ask("pid"), 10);
    ASSERT_TRUE(p1.ok && p2.ok);
    EXPECT_EQ(p1.reply, p2.reply) << "a healthy worker is reused";
    EXPECT_NE(p1.reply.get<int>(), ::getpid());
    EXPECT_EQ(w.starts(), 1);
}

TEST(Worker, CarriesRepliesLargerThanAPipeBuffer) {
    WorkerProcess w(worker_command());
    WorkerOutcome o = w.call(json{{"do", "big"}, {"bytes", 3 << 20}}, 30);
    ASSERT_TRUE(o.ok) << o.failure;
    EXPECT_EQ(o.reply.get<std::string>().size(), std::size_t(3) << 20);
}

// Messages cross as CBOR (worker.hpp): what JSON text cannot hold (NaN,
// infinities, bytes) comes back as it was, and text that is not UTF-8 (a
// plugin's message) comes back with U+FFFD in place of the bad byte.
TEST(Worker, CarriesWhatJsonTextCannot) {
    WorkerProcess w(worker_command());
    const json value = {std::nan(""), -std::numeric_limits<double>::infinity(), json::binary({0, 0xff, 7}),
                        std::string("bad \xff byte"), "caf\xc3\xa9"};
    WorkerOutcome o = w.call(json{{"do", "echo"}, {"value", value}}, 10);
    ASSERT_TRUE(o.ok) << o.failure;
    ASSERT_EQ(o.reply.size(), 5u);
    EXPECT_TRUE(std::isnan(o.reply[0].get<double>()));
    EXPECT_EQ(o.reply[1].get<double>(), -std::numeric_limits<double>::infinity());
    EXPECT_EQ(o.reply[2].get_binary(), json::binary_t({0, 0xff, 7}));
    EXPECT_EQ(o.reply[3], "bad \xef\xbf\xbd byte") << "the bad byte replaced, the rest kept";
    EXPECT_EQ(o.reply[4], "caf\xc3\xa9") << "valid UTF-8 untouched";
    EXPECT_NO_THROW((void)o.reply.dump()) << "the reply can be written as JSON text";
}

TEST(Worker, ReportsTheLastPhaseWithAReply) {
    WorkerProcess w(worker_command());
    WorkerOutcome o = w.call(json{{"do", "echo"}, {"value", 1}, {"phase", "verify"}}, 10);
    ASSERT_TRUE(o.ok);
    EXPECT_EQ(o.phase, "verify");
}

struct FaultCase {
    const char *what;
    const char *phase;
    const char *failure;
};

class WorkerFault : public ::testing::TestWithParam<FaultCase> {};

TEST_P(WorkerFault, CostsOneRequestAndTheWorkerIsStartedAgain) {
    const FaultCase &f = GetParam();
    WorkerProcess w(worker_command());
    WorkerOutcome before = w.call(ask("pid"), 10);
    ASSERT_TRUE(before.ok);

    WorkerOutcome o = w.call(ask(f.what, f.phase), 10);
    EXPECT_FALSE(o.ok);
    EXPECT_FALSE(o.interrupted);
    EXPECT_EQ(o.failure, f.failure);
    EXPECT_EQ(o.phase, f.phase);
    EXPECT_EQ(w.pid(), -1) << "the faulty child is gone";

    WorkerOutcome after = w.call(ask("pid"), 10);
    ASSERT_TRUE(after.ok) << after.failure;
    EXPECT_NE(after.reply, before.reply) << "a fresh process serves the next request";
    EXPECT_EQ(w.starts(), 2);
}

INSTANTIATE_TEST_SUITE_P(EachFault, WorkerFault,
                         ::testing::Values(FaultCase{"segv", "execute", "crashed: SIGSEGV in execute"},
                                           FaultCase{"abort", "execute", "crashed: SIGABRT in execute"},
                                           FaultCase{"exit0", "execute", "exited with status 0 during execute"},
                                           FaultCase{"throw", "execute", "exception: boom in execute"},
                                           FaultCase{"throw_int", "prepare",
                                                     "exception: of a type that is not std::exception in prepare"},
                                           FaultCase{"bad_alloc", "prepare", "exception: std::bad_alloc in prepare"}),
                         [](const auto &info) { return std::string(info.param.what); });

TEST(Worker, ACrashBeforeAnyPhaseSaysSo) {
    WorkerProcess w(worker_command());
    WorkerOutcome o = w.call(ask("segv"), 10);
    EXPECT_EQ(o.failure, "crashed: SIGSEGV while starting");
}

TEST(Worker, PhasesOfOneRequestDoNotLeakIntoTheNext) {
    WorkerProcess w(worker_command());
    ASSERT_TRUE(w.call(json{{"do", "echo"}, {"value", 1}, {"phase", "execute"}}, 10).ok);
    // Same phase name again: it must be sent again, or a crash would lose it.
    WorkerOutcome o = w.call(ask("abort", "execute"), 10);
    EXPECT_EQ(o.failure, "crashed: SIGABRT in execute");
}

TEST(Worker, AHangIsKilledAtTheTimeout) {
    WorkerProcess w(worker_command());
    const auto t0 = std::chrono::steady_clock::now();
    WorkerOutcome o = w.call(ask("hang", "execute"), 0.3);
    const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    EXPECT_FALSE(o.ok);
    EXPECT_EQ(o.failure, "timed out after 0.3 s in execute");
    EXPECT_GE(waited, 0.3);
    EXPECT_LT(waited, 5.0);
    EXPECT_TRUE(w.call(ask("pid"), 10).ok) << "the next request gets a new worker";
}

TEST(Worker, InterruptFromAnotherThreadEndsTheCallAsInterrupted) {
    WorkerProcess w(worker_command());
    ASSERT_TRUE(w.call(ask("pid"), 10).ok);
    std::thread stopper([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
        w.interrupt();
    });
    WorkerOutcome o = w.call(ask("hang", "execute"), 0);
    stopper.join();
    EXPECT_FALSE(o.ok);
    EXPECT_TRUE(o.interrupted);
    EXPECT_EQ(o.failure, "interrupted");
    EXPECT_EQ(o.phase, "execute");
    WorkerOutcome next = w.call(ask("pid"), 10);
    EXPECT_TRUE(next.ok);
    EXPECT_FALSE(next.interrupted) << "an interrupt applies to one call";
}

TEST(Worker, ChildStartsWithSignalsUnblockedInItsOwnProcessGroup) {
    // The parent blocks SIGINT for its signal watcher; the worker must not
    // inherit that, nor receive the terminal's Ctrl-C directly.
    sigset_t block, old;
    sigemptyset(&block);
    sigaddset(&block, SIGINT);
    pthread_sigmask(SIG_BLOCK, &block, &old);
    WorkerProcess w(worker_command());
    WorkerOutcome o = w.call(ask("sigint_state"), 10);
    pthread_sigmask(SIG_SETMASK, &old, nullptr);
    ASSERT_TRUE(o.ok) << o.failure;
    EXPECT_EQ(o.reply["blocked"], false);
    EXPECT_EQ(o.reply["default"], true);
    EXPECT_EQ(o.reply["own_group"], true);
}

TEST(Worker, StopEndsTheChild) {
    WorkerProcess w(worker_command());
    WorkerOutcome o = w.call(ask("pid"), 10);
    ASSERT_TRUE(o.ok);
    const pid_t child = o.reply.get<int>();
    w.stop();
    EXPECT_EQ(w.pid(), -1);
    EXPECT_NE(::kill(child, 0), 0) << "the child has exited and been reaped";
}

TEST(Worker, NoChildAtAllIsAnError) {
    WorkerProcess w({"/nonexistent/opbench-worker"});
    // posix_spawn reports the failed exec either at once or as exit status 127.
    try {
        WorkerOutcome o = w.call(ask("pid"), 10);
        EXPECT_FALSE(o.ok);
        EXPECT_EQ(o.failure, "exited with status 127 while starting");
    } catch (const std::runtime_error &e) {
        EXPECT_NE(std::string(e.what()).find("/nonexistent/opbench-worker"), std::string::npos);
    }
}

TEST(DescribeExit, NamesSignalsAndStatuses) {
    EXPECT_EQ(signal_name(SIGSEGV), "SIGSEGV");
    EXPECT_EQ(signal_name(SIGKILL), "SIGKILL");
    EXPECT_EQ(describe_exit(SIGBUS, "execute"), "crashed: SIGBUS in execute"); // raw wait status of a signal
    EXPECT_EQ(describe_exit(3 << 8, "create"), "exited with status 3 during create");
}

} // namespace

int main(int argc, char **argv) {
    if (argc > 1 && std::string(argv[1]) == "--test-worker") return serve_worker(test_handler);
    // Under AddressSanitizer a SIGSEGV would be reported and turned into
    // exit status 1; the workers must die of the signal, as in a plain build.
    const char *asan = std::getenv("ASAN_OPTIONS");
    ::setenv("ASAN_OPTIONS", (std::string(asan ? asan : "") + ":handle_segv=0").c_str(), 1);
    ::testing::InitGoogleTest(&argc, argv);
    return RUN_ALL_TESTS();
}
