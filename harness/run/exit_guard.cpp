#include "run/exit_guard.hpp"

#include <atomic>
#include <mutex>

namespace opbench {

namespace {
std::mutex g_exit_guard_mutex;
std::function<void(int)> g_guard;
} // namespace

void arm_exit_guard(std::function<void(int status)> guard) {
    std::lock_guard lock(g_exit_guard_mutex);
    g_guard = std::move(guard);
}

void run_exit_guard(int status) {
    std::function<void(int)> guard;
    {
        std::lock_guard lock(g_exit_guard_mutex);
        guard.swap(g_guard); // once: an exit() inside the guard goes to the real exit
    }
    if (guard) guard(status);
}

} // namespace opbench
