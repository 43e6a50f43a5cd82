// opbench SDK — a loop over [0, n) in two fixed halves on two threads.
//
// For work that runs before any sample, while the case's CPUs are otherwise
// idle: Freivalds' passes (fast_checks.hpp), a CPU plugin's large copies
// (backend_helpers.hpp, copy_host_memory) and the harness's first touches
// of large host buffers. The halves are fixed, not the machine's CPU count,
// so a sum taken in halves comes out the same on every machine.
// Header-only; the C++ standard library only.
#ifndef OPBENCH_TWO_HALVES_HPP
#define OPBENCH_TWO_HALVES_HPP

#include <cstdint>
#include <system_error>
#include <thread>

namespace opbench::sdk {

// body(n / 2, n) on a thread of its own beside body(0, n / 2) on this one,
// when `worth_a_thread` (the caller's judgment of the work) and n >= 2; else
// body(0, n) in one go, as also where no thread can be started
// (std::system_error: a process limit).
template <class Body>
void in_two_halves(int64_t n, bool worth_a_thread, Body body) {
    if (n < 2 || !worth_a_thread) {
        body(int64_t(0), n);
        return;
    }
    const int64_t mid = n / 2;
    std::thread second;
    try {
        second = std::thread([&] { body(mid, n); });
    } catch (const std::system_error &) {
        body(int64_t(0), n);
        return;
    }
    body(int64_t(0), mid);
    second.join();
}

} // namespace opbench::sdk

#endif // OPBENCH_TWO_HALVES_HPP
