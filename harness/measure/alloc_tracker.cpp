// The heap interposer: replaces the C allocation functions and operator
// new / delete for the whole process and counts what goes through them.
// Compiled into executables only; see alloc_tracker.hpp for why and for
// exactly what is counted.
#include "measure/alloc_tracker.hpp"

#include <malloc.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <new>

// glibc's own allocator entry points. Calling them directly (not dlsym) keeps
// the replacements usable from the very first allocation of the process.
extern "C" {
void *__libc_malloc(std::size_t size);
void __libc_free(void *p);
void *__libc_calloc(std::size_t n, std::size_t size);
void *__libc_realloc(void *p, std::size_t size);
void *__libc_memalign(std::size_t alignment, std::size_t size);
}

namespace opbench {
namespace {

// constinit: zero before any code runs, so the allocations made by the
// dynamic loader and static constructors are counted too.
struct Counters {
    std::atomic<std::uint64_t> calls{0};
    std::atomic<std::uint64_t> bytes{0};
    std::atomic<std::uint64_t> frees{0};
    // Signed: a block allocated before interposition (the loader's early
    // allocator) and freed later would otherwise wrap below zero.
    std::atomic<std::int64_t> current{0};
    std::atomic<std::int64_t> peak{0};
};
constinit Counters g_counters;

constexpr auto kRelaxed = std::memory_order_relaxed;

void record_alloc(void *p, std::size_t requested) noexcept {
    g_counters.calls.fetch_add(1, kRelaxed);
    g_counters.bytes.fetch_add(requested, kRelaxed);
    const auto usable = static_cast<std::int64_t>(malloc_usable_size(p));
    const std::int64_t now = g_counters.current.fetch_add(usable, kRelaxed) + usable;
    std::int64_t peak = g_counters.peak.load(kRelaxed);
    while (now > peak && !g_counters.peak.compare_exchange_weak(peak, now, kRelaxed)) {}
}

// Must run before the block goes back to glibc (malloc_usable_size reads it).
void record_free(void *p) noexcept {
    g_counters.frees.fetch_add(1, kRelaxed);
    g_counters.current.fetch_sub(static_cast<std::int64_t>(malloc_usable_size(p)), kRelaxed);
}

void *tracked_malloc(std::size_t size) noexcept {
    void *p = __libc_malloc(size);
    if (p) record_alloc(p, size);
    return p;
}

void *tracked_memalign(std::size_t alignment, std::size_t size) noexcept {
    void *p = __libc_memalign(alignment, size);
    if (p) record_alloc(p, size);
    return p;
}

void tracked_free(void *p) noexcept {
    if (!p) return;
    record_free(p);
    __libc_free(p);
}

bool is_power_of_two(std::size_t x) { return x != 0 && (x & (x - 1)) == 0; }

std::size_t page_size() {
    static const std::size_t size = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
    return size;
}

// operator new's contract: retry through the new-handler while there is one;
// then throw std::bad_alloc, or return null for the nothrow forms (without
// throwing internally, which would allocate an exception object).
template <class Allocate>
void *new_with_handler(std::size_t size, Allocate allocate, bool nothrow) {
    if (size == 0) size = 1; // distinct non-null pointers for size 0
    for (;;) {
        if (void *p = allocate(size)) return p;
        std::new_handler handler = std::get_new_handler();
        if (!handler) {
            if (nothrow) return nullptr;
            throw std::bad_alloc();
        }
        if (!nothrow) {
            handler();
            continue;
        }
        try {
            handler();
        } catch (...) {
            return nullptr;
        }
    }
}

void *new_impl(std::size_t size, bool nothrow) { return new_with_handler(size, tracked_malloc, nothrow); }

void *aligned_new_impl(std::size_t size, std::align_val_t alignment, bool nothrow) {
    const auto al = static_cast<std::size_t>(alignment);
    return new_with_handler(
        size, [al](std::size_t n) { return tracked_memalign(al, n); }, nothrow);
}

} // namespace
} // namespace opbench

using opbench::g_counters;
using opbench::kRelaxed;

// --- accessors (see the weak declarations in alloc_tracker.hpp) --------------------

extern "C" void opb_alloc_tracker_snapshot(opbench::AllocCounters *out) noexcept {
    auto non_negative = [](std::int64_t v) { return v < 0 ? 0 : static_cast<std::uint64_t>(v); };
    out->calls = g_counters.calls.load(kRelaxed);
    out->bytes = g_counters.bytes.load(kRelaxed);
    out->frees = g_counters.frees.load(kRelaxed);
    out->current = non_negative(g_counters.current.load(kRelaxed));
    out->peak = non_negative(g_counters.peak.load(kRelaxed));
}

extern "C" void opb_alloc_tracker_reset_peak() noexcept {
    g_counters.peak.store(g_counters.current.load(kRelaxed), kRelaxed);
}

// --- C allocation functions ------------------------------------------------------------

extern "C" {

void *malloc(std::size_t size) noexcept { return opbench::tracked_malloc(size); }

void free(void *p) noexcept { opbench::tracked_free(p); }

void *calloc(std::size_t n, std::size_t size) noexcept {
    std::size_t total = 0;
    if (__builtin_mul_overflow(n, size, &total)) {
        errno = ENOMEM;
        return nullptr;
    }
    void *p = __libc_calloc(n, size);
    if (p) opbench::record_alloc(p, total);
    return p;
}

void *realloc(void *old, std::size_t size) noexcept {
    if (!old) return opbench::tracked_malloc(size);
    // Read before the call: afterwards `old` may be gone.
    const auto old_usable = static_cast<std::int64_t>(malloc_usable_size(old));
    void *p = __libc_realloc(old, size);
    if (!p && size != 0) return nullptr; // failed: the old block is untouched
    // The old block is released (glibc frees it for size 0, or moved/resized it).
    g_counters.frees.fetch_add(1, kRelaxed);
    g_counters.current.fetch_sub(old_usable, kRelaxed);
    if (p) opbench::record_alloc(p, size);
    return p;
}

void *memalign(std::size_t alignment, std::size_t size) noexcept { return opbench::tracked_memalign(alignment, size); }

void *aligned_alloc(std::size_t alignment, std::size_t size) noexcept {
    return opbench::tracked_memalign(alignment, size);
}

int posix_memalign(void **out, std::size_t alignment, std::size_t size) noexcept {
    if (!opbench::is_power_of_two(alignment) || alignment % sizeof(void *) != 0) return EINVAL;
    void *p = opbench::tracked_memalign(alignment, size);
    if (!p) return ENOMEM;
    *out = p;
    return 0;
}

void *valloc(std::size_t size) noexcept { return opbench::tracked_memalign(opbench::page_size(), size); }

void *pvalloc(std::size_t size) noexcept {
    const std::size_t page = opbench::page_size();
    std::size_t rounded = 0;
    if (__builtin_add_overflow(size, page - 1, &rounded)) {
        errno = ENOMEM;
        return nullptr;
    }
    rounded &= ~(page - 1);
    return opbench::tracked_memalign(page, rounded == 0 ? page : rounded);
}

} // extern "C"

// --- operator new / delete, every replaceable form -------------------------------------

void *operator new(std::size_t size) { return opbench::new_impl(size, false); }
void *operator new[](std::size_t size) { return opbench::new_impl(size, false); }
void *operator new(std::size_t size, const std::nothrow_t &) noexcept { return opbench::new_impl(size, true); }
void *operator new[](std::size_t size, const std::nothrow_t &) noexcept { return opbench::new_impl(size, true); }
void *operator new(std::size_t size, std::align_val_t al) { return opbench::aligned_new_impl(size, al, false); }
void *operator new[](std::size_t size, std::align_val_t al) { return opbench::aligned_new_impl(size, al, false); }
void *operator new(std::size_t size, std::align_val_t al, const std::nothrow_t &) noexcept {
    return opbench::aligned_new_impl(size, al, true);
}
void *operator new[](std::size_t size, std::align_val_t al, const std::nothrow_t &) noexcept {
    return opbench::aligned_new_impl(size, al, true);
}

void operator delete(void *p) noexcept { opbench::tracked_free(p); }
void operator delete[](void *p) noexcept { opbench::tracked_free(p); }
void operator delete(void *p, const std::nothrow_t &) noexcept { opbench::tracked_free(p); }
void operator delete[](void *p, const std::nothrow_t &) noexcept { opbench::tracked_free(p); }
void operator delete(void *p, std::size_t) noexcept { opbench::tracked_free(p); }
void operator delete[](void *p, std::size_t) noexcept { opbench::tracked_free(p); }
void operator delete(void *p, std::align_val_t) noexcept { opbench::tracked_free(p); }
void operator delete[](void *p, std::align_val_t) noexcept { opbench::tracked_free(p); }
void operator delete(void *p, std::align_val_t, const std::nothrow_t &) noexcept { opbench::tracked_free(p); }
void operator delete[](void *p, std::align_val_t, const std::nothrow_t &) noexcept { opbench::tracked_free(p); }
void operator delete(void *p, std::size_t, std::align_val_t) noexcept { opbench::tracked_free(p); }
void operator delete[](void *p, std::size_t, std::align_val_t) noexcept { opbench::tracked_free(p); }
