// Tests of harness/interrupt: the first SIGINT/SIGTERM sets a flag and runs
// the on-first action on the watcher thread; a second one runs the on-second
// action and exits at once with 128 + signal; SIGPIPE does not end the process.
#include "run/interrupt.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <thread>
#include <unistd.h>

using namespace opbench;

namespace {

bool wait_until(const std::function<bool()> &done) {
    for (int i = 0; i < 500; ++i) {
        if (done()) return true;
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return false;
}

// Each scenario runs in its own process (gtest re-executes this program for
// "threadsafe" death tests), so each starts with no signal seen yet.
class InterruptTest : public ::testing::Test {
protected:
    void SetUp() override { GTEST_FLAG_SET(death_test_style, "threadsafe"); }
};

TEST_F(InterruptTest, FirstSignalSetsTheFlagAndRunsTheFirstAction) {
    EXPECT_EXIT(
        {
            install_interrupt_handling();
            std::atomic<bool> abandoned{false};
            on_first_interrupt([&] { abandoned = true; });
            if (interrupt_requested()) std::_Exit(10);
            ::kill(::getpid(), SIGINT);
            if (!wait_until([&] { return abandoned.load(); })) std::_Exit(11);
            if (!interrupt_requested() || interrupt_signal() != SIGINT) std::_Exit(12);
            std::_Exit(interrupt_exit_status() == 130 ? 0 : 13);
        },
        ::testing::ExitedWithCode(0), "SIGINT: stopping");
}

TEST_F(InterruptTest, SecondSignalRunsTheSecondActionAndExitsAtOnce) {
    EXPECT_EXIT(
        {
            install_interrupt_handling();
            on_first_interrupt([] {}); // a run is in progress: the first signal only asks it to stop
            on_second_interrupt([] { std::fputs("partial result set written\n", stderr); });
            ::kill(::getpid(), SIGTERM);
            wait_until([] { return interrupt_requested(); });
            ::kill(::getpid(), SIGTERM);
            std::this_thread::sleep_for(std::chrono::seconds(20)); // never reached: the watcher exits
            std::_Exit(1);
        },
        ::testing::ExitedWithCode(143), "partial result set written");
}

TEST_F(InterruptTest, WithNothingToFinishTheFirstSignalEndsTheProcess) {
    // `opbench machine`, start-up: Ctrl-C must stop them as it always did.
    EXPECT_EXIT(
        {
            install_interrupt_handling();
            ::kill(::getpid(), SIGINT);
            std::this_thread::sleep_for(std::chrono::seconds(20)); // never reached
            std::_Exit(1);
        },
        ::testing::ExitedWithCode(130), "");
}

TEST_F(InterruptTest, SignalsNeverReachOtherThreads) {
    // A thread started after installing (an OpenMP worker, say) inherits the
    // blocked mask: the signal goes to the watcher only.
    EXPECT_EXIT(
        {
            install_interrupt_handling();
            std::atomic<bool> blocked{false};
            std::thread t([&] {
                sigset_t mask;
                pthread_sigmask(SIG_BLOCK, nullptr, &mask);
                blocked = sigismember(&mask, SIGINT) && sigismember(&mask, SIGTERM);
            });
            t.join();
            std::_Exit(blocked ? 0 : 1);
        },
        ::testing::ExitedWithCode(0), "");
}

TEST_F(InterruptTest, AClosedPipeDoesNotEndTheProcess) {
    EXPECT_EXIT(
        {
            install_interrupt_handling();
            int fds[2];
            if (::pipe(fds) != 0) std::_Exit(2);
            ::close(fds[0]);
            const ssize_t n = ::write(fds[1], "x", 1);
            std::_Exit(n < 0 && errno == EPIPE ? 0 : 1);
        },
        ::testing::ExitedWithCode(0), "");
}

} // namespace
