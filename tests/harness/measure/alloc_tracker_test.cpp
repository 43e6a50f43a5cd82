// Tests for harness/measure/alloc_tracker.cpp (the heap interposer) and
// harness/measure/rss.cpp. Built twice: as alloc_tracker_test with the interposer
// linked in, as opbench links it, and as alloc_tracker_absent_test
// (OPBENCH_TEST_WITHOUT_INTERPOSER) to cover the weak-symbol default path.
//
// Deltas are taken between two snapshots with nothing else in between: gtest
// allocates only when it reports, so every EXPECT comes after the second
// snapshot.
#include "measure/alloc_tracker.hpp"

#include <gtest/gtest.h>

#include <malloc.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>
#include <thread>
#include <vector>

namespace opbench {
namespace {

// Makes `p` observable so the compiler cannot elide an allocation/free pair
// (which C++ allows for new/delete and GCC does for malloc/free).
// Not const void *: GCC 12 takes a const pointer argument as a read of the
// (uninitialised) block it points to, -Wmaybe-uninitialized after malloc.
void escape(void *p) { asm volatile("" : : "g"(p) : "memory"); }

#ifdef OPBENCH_TEST_WITHOUT_INTERPOSER

TEST(AllocTrackerWithoutInterposer, InactiveAndAllZero) {
    EXPECT_FALSE(alloc_tracking_active());
    void *p = std::malloc(4096);
    escape(p);
    const AllocCounters c = alloc_snapshot();
    std::free(p);
    alloc_reset_peak(); // must be a harmless no-op
    EXPECT_EQ(c.calls, 0u);
    EXPECT_EQ(c.bytes, 0u);
    EXPECT_EQ(c.frees, 0u);
    EXPECT_EQ(c.current, 0u);
    EXPECT_EQ(c.peak, 0u);
}

#else

TEST(AllocTracker, ActiveWhenInterposerIsLinked) {
    EXPECT_TRUE(alloc_tracking_active());
    EXPECT_GT(alloc_snapshot().calls, 0u); // start-up allocations were seen
}

TEST(AllocTracker, MallocAndFreeCountExactly) {
    const AllocCounters a = alloc_snapshot();
    void *p = std::malloc(1000);
    escape(p);
    const AllocCounters b = alloc_snapshot();
    const std::size_t usable = malloc_usable_size(p);
    std::free(p);
    const AllocCounters c = alloc_snapshot();
    std::free(nullptr); // not a release
    const AllocCounters d = alloc_snapshot();

    EXPECT_EQ(b.calls - a.calls, 1u);
    EXPECT_EQ(b.bytes - a.bytes, 1000u);
    EXPECT_EQ(b.frees - a.frees, 0u);
    EXPECT_EQ(b.current - a.current, usable);
    EXPECT_GE(usable, 1000u);
    EXPECT_EQ(c.frees - b.frees, 1u);
    EXPECT_EQ(c.current, a.current);
    EXPECT_EQ(d.frees, c.frees);
}

TEST(AllocTracker, NewAndNewArrayCountRequestedBytes) {
    const AllocCounters a = alloc_snapshot();
    auto *one = new double(1.0);
    auto *many = new int[250]; // trivially destructible: no array cookie
    escape(one);
    escape(many);
    const AllocCounters b = alloc_snapshot();
    delete one;
    delete[] many;
    const AllocCounters c = alloc_snapshot();
    EXPECT_EQ(b.calls - a.calls, 2u);
    EXPECT_EQ(b.bytes - a.bytes, sizeof(double) + 250 * sizeof(int));
    EXPECT_EQ(c.frees - b.frees, 2u);
    EXPECT_EQ(c.current, a.current);
}

TEST(AllocTracker, AlignedNewIsCountedAndAligned) {
    struct alignas(128) Wide {
        char bytes[256];
    };
    const AllocCounters a = alloc_snapshot();
    auto *w = new Wide;
    escape(w);
    const AllocCounters b = alloc_snapshot();
    const auto address = reinterpret_cast<std::uintptr_t>(w);
    delete w;
    const AllocCounters c = alloc_snapshot();
    EXPECT_EQ(address % 128, 0u);
    EXPECT_EQ(b.calls - a.calls, 1u);
    EXPECT_EQ(b.bytes - a.bytes, sizeof(Wide));
    EXPECT_EQ(c.frees - b.frees, 1u);
    EXPECT_EQ(c.current, a.current);
}

TEST(AllocTracker, VectorAllocatesItsCapacity) {
    const AllocCounters a = alloc_snapshot();
    {
        std::vector<int> v(1000);
        escape(v.data());
        v.reserve(3000); // one new block, the old one released
        escape(v.data());
    }
    const AllocCounters b = alloc_snapshot();
    EXPECT_EQ(b.calls - a.calls, 2u);
    EXPECT_EQ(b.bytes - a.bytes, (1000 + 3000) * sizeof(int));
    EXPECT_EQ(b.frees - a.frees, 2u);
    EXPECT_EQ(b.current, a.current);
}

TEST(AllocTracker, CallocCountsProductAndRefusesOverflow) {
    const AllocCounters a = alloc_snapshot();
    void *p = std::calloc(10, 100);
    escape(p);
    volatile std::size_t huge = SIZE_MAX / 2;
    void *q = std::calloc(huge, 4); // overflows: refused, not counted
    escape(q);
    const AllocCounters b = alloc_snapshot();
    std::free(p);
    EXPECT_EQ(q, nullptr);
    EXPECT_EQ(b.calls - a.calls, 1u);
    EXPECT_EQ(b.bytes - a.bytes, 1000u);
}

TEST(AllocTracker, ReallocIsOneCallPlusOneFree) {
    void *p = std::malloc(100);
    escape(p);
    const AllocCounters a = alloc_snapshot();
    void *q = std::realloc(p, 100000); // grows: a new block for the new size
    escape(q);
    const AllocCounters b = alloc_snapshot();
    const std::size_t usable_q = malloc_usable_size(q);
    void *r = std::realloc(q, 0); // glibc: releases q, returns null
    const AllocCounters c = alloc_snapshot();
    void *s = std::realloc(nullptr, 64); // same as malloc(64)
    escape(s);
    const AllocCounters d = alloc_snapshot();
    std::free(s);

    EXPECT_EQ(b.calls - a.calls, 1u);
    EXPECT_EQ(b.bytes - a.bytes, 100000u);
    EXPECT_EQ(b.frees - a.frees, 1u);
    EXPECT_EQ(r, nullptr);
    EXPECT_EQ(c.calls, b.calls);
    EXPECT_EQ(c.frees - b.frees, 1u);
    EXPECT_EQ(b.current - c.current, usable_q);
    EXPECT_EQ(d.calls - c.calls, 1u);
    EXPECT_EQ(d.bytes - c.bytes, 64u);
    EXPECT_EQ(d.frees, c.frees);
}

TEST(AllocTracker, MemalignFamilyCountsAndAligns) {
    const AllocCounters a = alloc_snapshot();
    void *p1 = std::aligned_alloc(64, 4096);
    void *p2 = nullptr;
    const int rc = posix_memalign(&p2, 128, 1000);
    void *p3 = memalign(256, 100);
    void *p4 = valloc(100);
    void *bad = nullptr;
    const int bad_rc = posix_memalign(&bad, 3, 100); // not a power of two
    escape(p1);
    escape(p2);
    escape(p3);
    escape(p4);
    const AllocCounters b = alloc_snapshot();
    for (void *p : {p1, p2, p3, p4}) std::free(p);
    const AllocCounters c = alloc_snapshot();

    EXPECT_EQ(rc, 0);
    EXPECT_EQ(bad_rc, EINVAL);
    EXPECT_EQ(bad, nullptr);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(p1) % 64, 0u);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(p2) % 128, 0u);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(p3) % 256, 0u);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(p4) % static_cast<std::uintptr_t>(sysconf(_SC_PAGESIZE)), 0u);
    EXPECT_EQ(b.calls - a.calls, 4u);
    EXPECT_EQ(b.bytes - a.bytes, 4096u + 1000u + 100u + 100u);
    EXPECT_EQ(c.frees - b.frees, 4u);
    EXPECT_EQ(c.current, a.current);
}

TEST(AllocTracker, FailedNewThrowsAndCountsNothing) {
    volatile std::size_t huge = SIZE_MAX / 4;
    const AllocCounters a = alloc_snapshot();
    char *nothrow = new (std::nothrow) char[huge];
    bool threw = false;
    try {
        char *p = new char[huge];
        escape(p);
        delete[] p;
    } catch (const std::bad_alloc &) {
        threw = true;
    }
    const AllocCounters b = alloc_snapshot();
    EXPECT_EQ(nothrow, nullptr);
    EXPECT_TRUE(threw);
    // The throw itself allocates its exception object (__cxa_allocate_exception
    // uses malloc); the failed requests themselves add nothing.
    EXPECT_LE(b.calls - a.calls, 1u);
    EXPECT_LT(b.bytes - a.bytes, 1024u);
}

TEST(AllocTracker, PeakIsHighWaterMarkSinceReset) {
    constexpr std::size_t kBig = 1 << 20;
    alloc_reset_peak();
    const AllocCounters a = alloc_snapshot();
    void *p = std::malloc(kBig);
    escape(p);
    const std::size_t usable = malloc_usable_size(p);
    std::free(p);
    const AllocCounters b = alloc_snapshot();
    alloc_reset_peak();
    const AllocCounters c = alloc_snapshot();

    EXPECT_EQ(a.peak, a.current);
    EXPECT_EQ(b.current, a.current);
    EXPECT_EQ(b.peak - b.current, usable);
    EXPECT_EQ(c.peak, c.current);
}

TEST(AllocTracker, ThreadsCountEveryCall) {
    constexpr int kThreads = 4, kPerThread = 10000;
    std::atomic<int> ready{0}, finished{0};
    std::atomic<bool> go{false}, leave{false};
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t)
        threads.emplace_back([&] {
            ready.fetch_add(1);
            while (!go.load()) std::this_thread::yield();
            for (int i = 0; i < kPerThread; ++i) {
                void *p = std::malloc(64);
                escape(p);
                std::free(p);
            }
            finished.fetch_add(1);
            // Stay alive until the snapshot: thread exit frees its own state.
            while (!leave.load()) std::this_thread::yield();
        });
    while (ready.load() < kThreads) std::this_thread::yield();
    const AllocCounters a = alloc_snapshot();
    go.store(true);
    while (finished.load() < kThreads) std::this_thread::yield();
    const AllocCounters b = alloc_snapshot();
    leave.store(true);
    for (auto &t : threads) t.join();
    EXPECT_EQ(b.calls - a.calls, std::uint64_t{kThreads} * kPerThread);
    EXPECT_EQ(b.bytes - a.bytes, std::uint64_t{kThreads} * kPerThread * 64);
    EXPECT_EQ(b.frees - a.frees, std::uint64_t{kThreads} * kPerThread);
    EXPECT_EQ(b.current, a.current);
}

TEST(AllocDelta, SubtractsCountsAndKeepsLaterLevels) {
    const AllocCounters a{10, 1000, 4, 500, 900};
    const AllocCounters b{15, 1800, 6, 700, 1200};
    const AllocCounters d = alloc_delta(a, b);
    EXPECT_EQ(d.calls, 5u);
    EXPECT_EQ(d.bytes, 800u);
    EXPECT_EQ(d.frees, 2u);
    EXPECT_EQ(d.current, 700u);
    EXPECT_EQ(d.peak, 1200u);
}

// --- rss.cpp ----------------------------------------------------------------

// Linux keeps RSS in per-CPU batched counters, so /proc may lag the truth by a
// few dozen pages per CPU; allow that much, no more.
std::uint64_t rss_slack() {
    return 64ull * static_cast<std::uint64_t>(sysconf(_SC_PAGESIZE)) *
           static_cast<std::uint64_t>(std::max(1L, sysconf(_SC_NPROCESSORS_ONLN)));
}

TEST(Rss, TouchingABufferRaisesRssByItsPages) {
    constexpr std::size_t kBytes = 64 << 20; // above glibc's mmap threshold: fresh pages
    const std::uint64_t before = current_rss_bytes();
    auto *p = static_cast<char *>(std::malloc(kBytes));
    ASSERT_NE(p, nullptr);
    std::memset(p, 1, kBytes);
    escape(p);
    const std::uint64_t after = current_rss_bytes();
    const std::uint64_t peak = peak_rss_bytes();
    std::free(p);
    const std::uint64_t released = current_rss_bytes();

    ASSERT_GT(before, 0u) << "/proc/self/status has no VmRSS";
    EXPECT_GE(after + rss_slack(), before + kBytes);
    EXPECT_GE(peak + rss_slack(), after);
    EXPECT_LT(released, after - kBytes / 2); // munmap gave the pages back
}

TEST(Rss, ResetPeakDropsHighWaterMarkOrSaysItCannot) {
    constexpr std::size_t kBytes = 64 << 20;
    auto *p = static_cast<char *>(std::malloc(kBytes));
    ASSERT_NE(p, nullptr);
    std::memset(p, 1, kBytes);
    escape(p);
    std::free(p);
    const std::uint64_t peak_before = peak_rss_bytes();
    if (!reset_peak_rss()) GTEST_SKIP() << "kernel refused /proc/self/clear_refs: peak RSS not resettable here";
    const std::uint64_t peak_after = peak_rss_bytes();
    EXPECT_LT(peak_after + kBytes / 2, peak_before);
    EXPECT_GE(peak_after + rss_slack(), current_rss_bytes());
}

#endif // OPBENCH_TEST_WITHOUT_INTERPOSER

} // namespace
} // namespace opbench
