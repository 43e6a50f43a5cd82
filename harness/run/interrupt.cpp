#include "run/interrupt.hpp"

#include "files/scratch_file.hpp"
#include "writers/text_wrap.hpp"

#include <fmt/format.h>

#include <atomic>
#include <csignal>
#include <mutex>
#include <thread>
#include <unistd.h>

namespace opbench {

namespace {

std::atomic<int> g_signal{0};
std::mutex g_mutex; // guards the actions
std::function<void()> g_on_first, g_on_second;
std::string g_outcome; // what the first signal's message says becomes of the run (guarded by g_mutex)
std::once_flag g_installed;

void say(const std::string &text) { (void)!::write(STDERR_FILENO, text.data(), text.size()); }

const char *name_of(int sig) {
    switch (sig) {
    case SIGINT: return "SIGINT";
    case SIGTERM: return "SIGTERM";
    case SIGHUP: return "SIGHUP";
    case SIGQUIT: return "SIGQUIT";
    case SIGUSR1: return "SIGUSR1";
    case SIGUSR2: return "SIGUSR2";
    default: return "signal";
    }
}

void watch(sigset_t set) {
    for (;;) {
        int sig = 0;
        if (sigwait(&set, &sig) != 0) continue;
        int expected = 0;
        if (g_signal.compare_exchange_strong(expected, sig)) {
            std::function<void()> action;
            std::string outcome;
            {
                std::lock_guard lock(g_mutex);
                action = g_on_first;
                outcome = g_outcome;
            }
            if (!action) {
                // Nothing to finish (no run in progress: start-up, `opbench
                // machine`, ...): stop as the default disposition would.
                remove_all_scratch_files();
                ::_exit(128 + sig);
            }
            // Not "\n" + wrap_words(...): GCC 12 warns falsely on it (-Wrestrict, PR 105329).
            std::string message(1, '\n');
            if (outcome.empty())
                outcome = "the result set will hold the cases that finished, marked incomplete (--resume "
                          "finishes it)";
            message.append(wrap_words(fmt::format("opbench: {}: stopping; {}. {} again stops at once.", name_of(sig),
                                                  outcome, sig == SIGINT ? "Ctrl-C" : "The signal"),
                                      4, 0));
            say(message);
            action();
            continue;
        }
        say(fmt::format("\nopbench: {} again: stopping now.\n", name_of(sig)));
        std::function<void()> action;
        {
            std::lock_guard lock(g_mutex);
            action = g_on_second;
        }
        if (action) {
            try {
                action();
            } catch (const std::exception &e) {
                say(fmt::format("opbench: could not write the partial result set: {}\n", e.what()));
            }
        }
        remove_all_scratch_files();
        ::_exit(128 + g_signal.load());
    }
}

} // namespace

void install_interrupt_handling() {
    std::call_once(g_installed, [] {
        std::signal(SIGPIPE, SIG_IGN);
        // Past `ulimit -f` a write fails with EFBIG, reported as any failed
        // write (exit 3), instead of the default SIGXFSZ killing the run.
        std::signal(SIGXFSZ, SIG_IGN);
        sigset_t set;
        sigemptyset(&set);
        // A closed terminal or ssh session (SIGHUP), Ctrl-\ (SIGQUIT) and
        // SIGUSR1/SIGUSR2 (a batch system's warning before its kill; their
        // default ended the run at once, leaving an empty set) stop a run as
        // SIGINT/SIGTERM do: partial set, journal, 128 + signal.
        for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2}) sigaddset(&set, sig);
        pthread_sigmask(SIG_BLOCK, &set, nullptr);
        std::thread(watch, set).detach();
    });
}

bool interrupt_requested() noexcept { return g_signal.load() != 0; }
int interrupt_signal() noexcept { return g_signal.load(); }
int interrupt_exit_status() noexcept {
    const int s = g_signal.load();
    return s ? 128 + s : 0;
}

void on_first_interrupt(std::function<void()> action) {
    std::lock_guard lock(g_mutex);
    g_on_first = std::move(action);
}

void on_second_interrupt(std::function<void()> action) {
    std::lock_guard lock(g_mutex);
    g_on_second = std::move(action);
}

void set_interrupt_outcome(std::string text) {
    std::lock_guard lock(g_mutex);
    g_outcome = std::move(text);
}

} // namespace opbench
