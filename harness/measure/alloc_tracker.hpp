// Process-wide heap accounting (issue 5, "Memory": peak host bytes and
// allocations per iteration, a library's own allocations included).
//
// How it is wired, and why:
//   * harness/measure/alloc_tracker.cpp replaces malloc, free, calloc, realloc,
//     aligned_alloc, posix_memalign, memalign, valloc, pvalloc and every form
//     of operator new / delete (plain, array, nothrow, sized, aligned). The
//     replacements forward to glibc's __libc_* entry points (no dlsym, so no
//     recursion at start-up) and count into lock-free atomics. It must be
//     compiled into the *executable* (opbench, or a test that wants counts):
//     only a definition in the executable interposes on every shared object
//     loaded later, plugins and their libraries included. It is deliberately
//     not in opbench_core: a static library member that nobody references is
//     never linked, and tests linking opbench_core should keep glibc's malloc.
//   * The accessors below are inline and reach the interposer through two
//     weak extern "C" symbols. Code in opbench_core (the runner) calls them
//     freely: in a program with the interposer the symbols resolve to it; in
//     one without, the weak references resolve to null and the accessors take
//     their default path (zero counters, alloc_tracking_active() == false).
//     No registration step, no start-up order to get wrong: the counters are
//     constant-initialised, so allocations made before main() are counted.
//
// What is counted (all monotonic except current / peak):
//   calls    successful allocations: malloc (including malloc(0)), calloc,
//            the memalign family, operator new (each form), and realloc when
//            it returns a block for a non-zero size;
//   bytes    the sizes *requested* by those calls, summed;
//   frees    releases of non-null blocks: free, operator delete, and realloc
//            for the old block it released (moved, or size 0);
//   current  bytes in live blocks as malloc_usable_size() reports them, so
//            allocation and release balance exactly; a block counts its
//            allocator rounding (up to 15 bytes for small blocks, to the page
//            for mmapped ones), hence current >= the requested live bytes;
//   peak     the largest `current` since start-up or alloc_reset_peak().
// A block resized by realloc counts as one call (new size) plus one free.
// Thread-safe; a snapshot is not atomic across fields while other threads
// allocate (each field is).
#pragma once

#include <cstdint>

#include "measure/rss.hpp" // peak_rss_bytes(), current_rss_bytes(), reset_peak_rss()

namespace opbench {

struct AllocCounters {
    std::uint64_t calls = 0;
    std::uint64_t bytes = 0;
    std::uint64_t frees = 0;
    std::uint64_t current = 0;
    std::uint64_t peak = 0;
};

} // namespace opbench

// The interposer's entry points, defined only in harness/measure/alloc_tracker.cpp.
// Weak so that a program without the interposer links and sees null here.
extern "C" {
__attribute__((weak)) void opb_alloc_tracker_snapshot(opbench::AllocCounters *out) noexcept;
__attribute__((weak)) void opb_alloc_tracker_reset_peak() noexcept;
}

namespace opbench {

// True when the interposer is linked into this program, i.e. the counters
// below are real.
[[nodiscard]] inline bool alloc_tracking_active() noexcept { return opb_alloc_tracker_snapshot != nullptr; }

// Current counters; all zero when tracking is not active. Does not allocate.
[[nodiscard]] inline AllocCounters alloc_snapshot() noexcept {
    AllocCounters c;
    if (opb_alloc_tracker_snapshot) opb_alloc_tracker_snapshot(&c);
    return c;
}

// Sets peak to current, so the next snapshot's peak is the high-water mark
// since this call. No effect when tracking is not active.
inline void alloc_reset_peak() noexcept {
    if (opb_alloc_tracker_reset_peak) opb_alloc_tracker_reset_peak();
}

// Counter differences b - a for calls, bytes and frees (what happened between
// two snapshots); current and peak are taken from b.
[[nodiscard]] inline AllocCounters alloc_delta(const AllocCounters &a, const AllocCounters &b) noexcept {
    return {b.calls - a.calls, b.bytes - a.bytes, b.frees - a.frees, b.current, b.peak};
}

} // namespace opbench
