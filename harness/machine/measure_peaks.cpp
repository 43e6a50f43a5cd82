// measure_machine() (machine.hpp): the peak kernels (FMA, bf16, int8, AMX
// tiles, triad and copy), run on a pinned thread team, best of many trials.
#include "machine/machine.hpp"
#include "machine/system_readers.hpp"

#include <cpuid.h>
// GCC 12 warns falsely in its own avx512fintrin.h (PR 105593: the
// _mm512_undefined_* self-initialisation, e.g. inside _mm512_cvtepi32_ps,
// "'__Y' is used uninitialized"); silenced for that header only.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <immintrin.h>
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
#include <pthread.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <barrier>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace opbench {

namespace detail {

// --- compute kernels -----------------------------------------------------------
//
// Each runs `iters` iterations of independent multiply-add chains and returns
// a value that depends on all of them, so nothing is optimised away. The
// chains converge (acc = acc * 0.9999 + 1e-4 -> 1), so no overflow and no
// denormals. Enough accumulators cover FMA latency x throughput (4 cycles x 2
// ports on current x86 cores needs 8; 16 leaves headroom).

constexpr int kAvx512Accumulators = 16;

// Not _mm512_reduce_add_ps: GCC 12's version trips -Wuninitialized.
__attribute__((target("avx512f"))) float sum_lanes(__m512 v) {
    alignas(64) float lanes[16];
    _mm512_store_ps(lanes, v);
    float s = 0;
    for (float x : lanes) s += x;
    return s;
}
constexpr int kAvx2Accumulators = 12; // 16 ymm registers, 2 hold constants
constexpr int kScalarAccumulators = 8;

__attribute__((target("avx512f"))) float fma_avx512(std::uint64_t iters) {
    __m512 acc[kAvx512Accumulators];
    for (int j = 0; j < kAvx512Accumulators; ++j) acc[j] = _mm512_set1_ps(0.01f * j);
    const __m512 m = _mm512_set1_ps(0.9999f), a = _mm512_set1_ps(1e-4f);
    for (std::uint64_t i = 0; i < iters; ++i) {
#pragma GCC unroll 16
        for (int j = 0; j < kAvx512Accumulators; ++j) acc[j] = _mm512_fmadd_ps(acc[j], m, a);
    }
    __m512 sum = acc[0];
    for (int j = 1; j < kAvx512Accumulators; ++j) sum = _mm512_add_ps(sum, acc[j]);
    return sum_lanes(sum);
}
constexpr double kAvx512FlopsPerIter = kAvx512Accumulators * 16 * 2;

__attribute__((target("avx2,fma"))) float fma_avx2(std::uint64_t iters) {
    __m256 acc[kAvx2Accumulators];
    for (int j = 0; j < kAvx2Accumulators; ++j) acc[j] = _mm256_set1_ps(0.01f * j);
    const __m256 m = _mm256_set1_ps(0.9999f), a = _mm256_set1_ps(1e-4f);
    for (std::uint64_t i = 0; i < iters; ++i) {
#pragma GCC unroll 12
        for (int j = 0; j < kAvx2Accumulators; ++j) acc[j] = _mm256_fmadd_ps(acc[j], m, a);
    }
    alignas(32) float lanes[8];
    __m256 sum = acc[0];
    for (int j = 1; j < kAvx2Accumulators; ++j) sum = _mm256_add_ps(sum, acc[j]);
    _mm256_store_ps(lanes, sum);
    float s = 0;
    for (float x : lanes) s += x;
    return s;
}
constexpr double kAvx2FlopsPerIter = kAvx2Accumulators * 8 * 2;

float fma_scalar(std::uint64_t iters) {
    float acc[kScalarAccumulators];
    for (int j = 0; j < kScalarAccumulators; ++j) acc[j] = 0.01f * j;
    for (std::uint64_t i = 0; i < iters; ++i)
        for (int j = 0; j < kScalarAccumulators; ++j) acc[j] = acc[j] * 0.9999f + 1e-4f;
    float s = 0;
    for (float x : acc) s += x;
    return s;
}
constexpr double kScalarFlopsPerIter = kScalarAccumulators * 2;

// vdpbf16ps: per 512-bit instruction, 32 bf16 pairs multiplied and summed into
// 16 f32 lanes = 64 flops. Inputs are tiny so the sums stay far from overflow.
__attribute__((target("avx512f,avx512bf16"))) float bf16_avx512(std::uint64_t iters) {
    __m512 acc[kAvx512Accumulators];
    for (int j = 0; j < kAvx512Accumulators; ++j) acc[j] = _mm512_setzero_ps();
    const __m512bh x = _mm512_cvtne2ps_pbh(_mm512_set1_ps(1e-3f), _mm512_set1_ps(2e-3f));
    const __m512bh y = _mm512_cvtne2ps_pbh(_mm512_set1_ps(1e-3f), _mm512_set1_ps(5e-4f));
    for (std::uint64_t i = 0; i < iters; ++i) {
#pragma GCC unroll 16
        for (int j = 0; j < kAvx512Accumulators; ++j) acc[j] = _mm512_dpbf16_ps(acc[j], x, y);
    }
    __m512 sum = acc[0];
    for (int j = 1; j < kAvx512Accumulators; ++j) sum = _mm512_add_ps(sum, acc[j]);
    return sum_lanes(sum);
}
constexpr double kBf16FlopsPerIter = kAvx512Accumulators * 64;

// int8 multiply-accumulate, u8 x s8 into s32 lanes (the integers wrap
// harmlessly; the sum only keeps the loop alive). Ops count 2 per MAC.
// vpdpbusd: per 512-bit instruction, 64 u8 x s8 products summed in fours
// into 16 s32 lanes = 128 ops.
__attribute__((target("avx512f,avx512vnni"))) float int8_vnni(std::uint64_t iters) {
    __m512i acc[kAvx512Accumulators];
    for (int j = 0; j < kAvx512Accumulators; ++j) acc[j] = _mm512_set1_epi32(j);
    const __m512i a = _mm512_set1_epi8(3), b = _mm512_set1_epi8(-2);
    for (std::uint64_t i = 0; i < iters; ++i) {
#pragma GCC unroll 16
        for (int j = 0; j < kAvx512Accumulators; ++j) acc[j] = _mm512_dpbusd_epi32(acc[j], a, b);
    }
    __m512i sum = acc[0];
    for (int j = 1; j < kAvx512Accumulators; ++j) sum = _mm512_add_epi32(sum, acc[j]);
    return sum_lanes(_mm512_cvtepi32_ps(sum));
}
constexpr double kInt8VnniOpsPerIter = kAvx512Accumulators * 128;

// Without VNNI (AVX2, as oneDNN's int8 kernels do): vpmaddubsw multiplies 32
// u8 x s8 pairs and sums neighbours into 16 s16, vpmaddwd by ones widens
// them to 8 s32, vpaddd accumulates: 32 MACs = 64 ops per three instructions.
// The empty asm makes `a` new to the compiler for every product, so the
// loop-invariant multiply is neither hoisted nor shared between chains.
constexpr int kInt8Avx2Accumulators = 8; // + a, b, ones and temporaries in 16 ymm
__attribute__((target("avx2"))) float int8_avx2(std::uint64_t iters) {
    __m256i acc[kInt8Avx2Accumulators];
    for (int j = 0; j < kInt8Avx2Accumulators; ++j) acc[j] = _mm256_set1_epi32(j);
    __m256i a = _mm256_set1_epi8(3);
    const __m256i b = _mm256_set1_epi8(-2), ones = _mm256_set1_epi16(1);
    for (std::uint64_t i = 0; i < iters; ++i) {
#pragma GCC unroll 8
        for (int j = 0; j < kInt8Avx2Accumulators; ++j) {
            __asm__("" : "+x"(a));
            acc[j] = _mm256_add_epi32(acc[j], _mm256_madd_epi16(_mm256_maddubs_epi16(a, b), ones));
        }
    }
    __m256i sum = acc[0];
    for (int j = 1; j < kInt8Avx2Accumulators; ++j) sum = _mm256_add_epi32(sum, acc[j]);
    alignas(32) std::int32_t lanes[8];
    _mm256_store_si256(reinterpret_cast<__m256i *>(lanes), sum);
    float s = 0;
    for (std::int32_t x : lanes) s += static_cast<float>(x);
    return s;
}
constexpr double kInt8Avx2OpsPerIter = kInt8Avx2Accumulators * 64;

// --- AMX tile kernels (issue 28) ---------------------------------------------------
//
// Only run after amx_support() says the kernel granted tile data: a tile
// instruction before that is SIGILL. Eight 16-row x 64-byte tiles: four
// accumulators (tmm0-3), two A (tmm4-5) and two B (tmm6-7), so every
// TDP* in an iteration is independent of the three before it and the
// accumulator chains cover the instruction's latency (as the FMA loops'
// 16 accumulators do). Operands come from 64-byte-aligned memory once;
// the loop touches no memory, so it is the tile unit's peak, not a load's.

// LDTILECFG's 64-byte operand (palette 1).
struct alignas(64) TileConfig {
    std::uint8_t palette_id;
    std::uint8_t start_row;
    std::uint8_t reserved[14];
    std::uint16_t colsb[16];
    std::uint8_t rows[16];
};
static_assert(sizeof(TileConfig) == 64);

TileConfig full_tiles() {
    TileConfig cfg{};
    cfg.palette_id = 1;
    for (int t = 0; t < 8; ++t) {
        cfg.rows[t] = 16;
        cfg.colsb[t] = 64;
    }
    return cfg;
}

// One iteration = 4 TDPBF16PS, each 16 x 16 f32 results of 32 bf16 pairs:
// 16*16*32*2 = 16384 flops. Inputs are small bf16 values so the f32 sums
// stay finite (bf16 1/1024 = 0x3a80).
__attribute__((target("amx-tile,amx-bf16"))) float amx_bf16(std::uint64_t iters) {
    const TileConfig cfg = full_tiles();
    alignas(64) std::uint16_t a[16 * 32], b[16 * 32];
    alignas(64) float c[16 * 16];
    std::fill_n(a, 16 * 32, std::uint16_t{0x3a80});
    std::fill_n(b, 16 * 32, std::uint16_t{0x3a80});
    _tile_loadconfig(&cfg);
    _tile_zero(0);
    _tile_zero(1);
    _tile_zero(2);
    _tile_zero(3);
    _tile_loadd(4, a, 64);
    _tile_loadd(5, a, 64);
    _tile_loadd(6, b, 64);
    _tile_loadd(7, b, 64);
    for (std::uint64_t i = 0; i < iters; ++i) {
        _tile_dpbf16ps(0, 4, 6);
        _tile_dpbf16ps(1, 4, 7);
        _tile_dpbf16ps(2, 5, 6);
        _tile_dpbf16ps(3, 5, 7);
    }
    float s = 0;
    _tile_stored(0, c, 64);
    s += c[0];
    _tile_stored(3, c, 64);
    s += c[255];
    _tile_release();
    return s;
}
constexpr double kAmxBf16FlopsPerIter = 4 * 16 * 16 * 32 * 2;

// One iteration = 4 TDPBSSD, each 16 x 16 s32 results of 64 s8 x s8
// products: 16*16*64*2 = 32768 ops. The s32 sums wrap harmlessly.
__attribute__((target("amx-tile,amx-int8"))) float amx_int8(std::uint64_t iters) {
    const TileConfig cfg = full_tiles();
    alignas(64) std::int8_t a[16 * 64], b[16 * 64];
    alignas(64) std::int32_t c[16 * 16];
    std::fill_n(a, 16 * 64, std::int8_t{3});
    std::fill_n(b, 16 * 64, std::int8_t{-2});
    _tile_loadconfig(&cfg);
    _tile_zero(0);
    _tile_zero(1);
    _tile_zero(2);
    _tile_zero(3);
    _tile_loadd(4, a, 64);
    _tile_loadd(5, a, 64);
    _tile_loadd(6, b, 64);
    _tile_loadd(7, b, 64);
    for (std::uint64_t i = 0; i < iters; ++i) {
        _tile_dpbssd(0, 4, 6);
        _tile_dpbssd(1, 4, 7);
        _tile_dpbssd(2, 5, 6);
        _tile_dpbssd(3, 5, 7);
    }
    float s = 0;
    _tile_stored(0, c, 64);
    s += static_cast<float>(c[0]);
    _tile_stored(3, c, 64);
    s += static_cast<float>(c[255]);
    _tile_release();
    return s;
}
constexpr double kAmxInt8OpsPerIter = 4 * 16 * 16 * 64 * 2;

// --- bandwidth kernels ---------------------------------------------------------
//
// Plain loads and stores (no streaming stores), as STREAM compiled with gcc
// -O3 does; bytes counted the STREAM way (triad 24, copy 16 per element),
// write-allocate traffic not included. Written with intrinsics so the copy is
// not turned into a memcpy call (glibc's uses non-temporal stores at these
// sizes, which would measure something else). Arrays are 64-byte aligned and
// ranges are multiples of 8 doubles.

__attribute__((target("avx512f"))) void triad_avx512(double *a, const double *b, const double *c, double s,
                                                     std::size_t n) {
    const __m512d vs = _mm512_set1_pd(s);
    for (std::size_t i = 0; i < n; i += 8)
        _mm512_store_pd(a + i, _mm512_fmadd_pd(vs, _mm512_load_pd(c + i), _mm512_load_pd(b + i)));
}
__attribute__((target("avx512f"))) void copy_avx512(double *a, const double *b, std::size_t n) {
    for (std::size_t i = 0; i < n; i += 8) _mm512_store_pd(a + i, _mm512_load_pd(b + i));
}
__attribute__((target("avx2,fma"))) void triad_avx2(double *a, const double *b, const double *c, double s,
                                                    std::size_t n) {
    const __m256d vs = _mm256_set1_pd(s);
    for (std::size_t i = 0; i < n; i += 4)
        _mm256_store_pd(a + i, _mm256_fmadd_pd(vs, _mm256_load_pd(c + i), _mm256_load_pd(b + i)));
}
__attribute__((target("avx2"))) void copy_avx2(double *a, const double *b, std::size_t n) {
    for (std::size_t i = 0; i < n; i += 4) _mm256_store_pd(a + i, _mm256_load_pd(b + i));
}
void triad_sse2(double *a, const double *b, const double *c, double s, std::size_t n) {
    const __m128d vs = _mm_set1_pd(s);
    for (std::size_t i = 0; i < n; i += 2)
        _mm_store_pd(a + i, _mm_add_pd(_mm_load_pd(b + i), _mm_mul_pd(vs, _mm_load_pd(c + i))));
}
void copy_sse2(double *a, const double *b, std::size_t n) {
    for (std::size_t i = 0; i < n; i += 2) _mm_store_pd(a + i, _mm_load_pd(b + i));
}

// --- pinned thread team ----------------------------------------------------------

// Runs `trials` rounds of `work(tid)` on `threads`
// std::threads pinned one per CPU of `cpus` (round robin), with a barrier
// before and after each round. Returns each round's wall time in seconds,
// measured by thread 0 between the barriers. Threads live across rounds, so
// thread creation is never timed.
std::vector<double> run_team(int threads, const std::vector<int> &cpus, int trials,
                             const std::function<void(int)> &work) {
    std::vector<double> times(static_cast<std::size_t>(trials));
    std::barrier sync(threads);
    auto body = [&](int tid) {
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(cpus[static_cast<std::size_t>(tid) % cpus.size()], &set);
        // Pinning can be refused (a restricted cgroup); the figures are still valid.
        (void)pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
        std::chrono::steady_clock::time_point t0;
        for (int r = 0; r < trials; ++r) {
            sync.arrive_and_wait();
            if (tid == 0) t0 = std::chrono::steady_clock::now();
            work(tid);
            sync.arrive_and_wait();
            if (tid == 0)
                times[static_cast<std::size_t>(r)] =
                    std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        }
    };
    std::vector<std::thread> team;
    team.reserve(static_cast<std::size_t>(threads));
    for (int t = 0; t < threads; ++t) team.emplace_back(body, t);
    for (auto &t : team) t.join();
    return times;
}

double best(const std::vector<double> &v) { return *std::min_element(v.begin(), v.end()); }

std::atomic<float> g_sink{0}; // kernel results land here so they are live

using ComputeKernel = float (*)(std::uint64_t);

int trial_count(double trial_seconds, const MeasureOptions &opt) {
    const double n = std::ceil(opt.seconds_per_figure / trial_seconds);
    return std::clamp(static_cast<int>(std::min(n, 1e6)), opt.min_trials, std::max(opt.min_trials, 2000));
}

// Best-of-trials FLOP/s of `kernel` on `threads` threads. Iterations per trial
// are calibrated on the calling thread to last about compute_trial_seconds.
double compute_peak(ComputeKernel kernel, double flops_per_iter, int threads, const std::vector<int> &cpus,
                    const MeasureOptions &opt) {
    std::uint64_t iters = 1 << 10;
    double t = 0;
    for (;;) {
        const auto t0 = std::chrono::steady_clock::now();
        g_sink = g_sink + kernel(iters);
        t = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        if (t > opt.compute_trial_seconds / 4 || iters > (1ull << 40)) break;
        iters *= 4;
    }
    iters = std::max<std::uint64_t>(1, static_cast<std::uint64_t>(iters * opt.compute_trial_seconds / t));
    const auto times = run_team(threads, cpus, trial_count(opt.compute_trial_seconds, opt),
                                [&](int) { g_sink = g_sink + kernel(iters); });
    return flops_per_iter * static_cast<double>(iters) * threads / best(times);
}

struct FreeDeleter {
    void operator()(double *p) const { std::free(p); }
};
using Buffer = std::unique_ptr<double[], FreeDeleter>;

Buffer aligned_doubles(std::size_t n) {
    auto *p = static_cast<double *>(std::aligned_alloc(64, n * sizeof(double)));
    if (!p) throw std::runtime_error("measure_machine: cannot allocate bandwidth arrays");
    return Buffer(p);
}

struct BandwidthPeaks {
    double triad_gbps = 0, copy_gbps = 0;
};

// The range of `n` elements that thread `tid` of `threads` owns, in whole
// 64-byte lines so every vector kernel sees an aligned multiple of its width.
std::pair<std::size_t, std::size_t> chunk(std::size_t n, int tid, int threads) {
    const std::size_t lines = n / 8;
    const std::size_t lo = lines * static_cast<std::size_t>(tid) / static_cast<std::size_t>(threads);
    const std::size_t hi = lines * static_cast<std::size_t>(tid + 1) / static_cast<std::size_t>(threads);
    return {lo * 8, hi * 8};
}

BandwidthPeaks bandwidth_peaks(double *a, double *b, double *c, std::size_t n, int threads,
                               const std::vector<int> &cpus, const MeasureOptions &opt) {
    using Triad = void (*)(double *, const double *, const double *, double, std::size_t);
    using Copy = void (*)(double *, const double *, std::size_t);
    Triad triad = triad_sse2;
    Copy copy = copy_sse2;
    if (__builtin_cpu_supports("avx512f")) {
        triad = triad_avx512;
        copy = copy_avx512;
    } else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
        triad = triad_avx2;
        copy = copy_avx2;
    }
    int passes = 1; // over the arrays per trial: a cache-sized pass is too short to time alone
    auto triad_pass = [&](int tid) {
        const auto [lo, hi] = chunk(n, tid, threads);
        for (int p = 0; p < passes; ++p) triad(a + lo, b + lo, c + lo, 3.0, hi - lo);
    };
    auto copy_pass = [&](int tid) {
        const auto [lo, hi] = chunk(n, tid, threads);
        for (int p = 0; p < passes; ++p) copy(a + lo, b + lo, hi - lo);
    };
    // A first pass sizes the passes and the trial count (and warms the pages
    // and the clock): a trial lasts at least kMinTrialSeconds, far above the
    // team's barrier.
    constexpr double kMinTrialSeconds = 50e-6;
    double pass = best(run_team(threads, cpus, 3, triad_pass));
    if (pass < kMinTrialSeconds) {
        passes = static_cast<int>(std::min(1e6, std::ceil(kMinTrialSeconds / std::max(pass, 1e-9))));
        pass = best(run_team(threads, cpus, 3, triad_pass));
    }
    const int trials = trial_count(pass, opt);
    const double elems = static_cast<double>(n / 8 * 8) * passes;
    BandwidthPeaks r;
    r.triad_gbps = 24 * elems / best(run_team(threads, cpus, trials, triad_pass)) / 1e9;
    r.copy_gbps = 16 * elems / best(run_team(threads, cpus, trials, copy_pass)) / 1e9;
    return r;
}

} // namespace detail

// --- AMX support ---------------------------------------------------------------------

namespace {

// XCR0 without -mxsave: the instruction's bytes (xgetbv), ECX = 0. Only
// called when CPUID says OSXSAVE, so it cannot fault.
std::uint64_t read_xcr0() {
    std::uint32_t lo = 0, hi = 0;
    __asm__ volatile(".byte 0x0f, 0x01, 0xd0" : "=a"(lo), "=d"(hi) : "c"(0));
    return (std::uint64_t{hi} << 32) | lo;
}

AmxSupport ask_for_amx() {
    AmxSupport s;
    unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
    if (!__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx) || !(edx & (1u << 24))) {
        s.problem = "the CPU reports no AMX-TILE (CPUID.(7,0):EDX[24]; a hypervisor can hide it)";
        return s;
    }
    const bool bf16 = edx & (1u << 22), int8 = edx & (1u << 25);
    unsigned eax1 = 0, ebx1 = 0, ecx1 = 0, edx1 = 0;
    if (!__get_cpuid(1, &eax1, &ebx1, &ecx1, &edx1) || !(ecx1 & (1u << 27))) {
        s.problem = "AMX-TILE present but the OS has not enabled XSAVE (CPUID.1:ECX.OSXSAVE clear)";
        return s;
    }
    // Bits 17 (XTILECFG) and 18 (XTILEDATA): the OS saves tile state on a context switch.
    if ((read_xcr0() & (3ull << 17)) != (3ull << 17)) {
        s.problem = "AMX-TILE present but the OS does not save tile state (XCR0 bits 17-18 clear)";
        return s;
    }
    // Linux 5.16+: tile data is granted per process on request. Older kernels
    // answer EINVAL (no such arch_prctl code), a seccomp filter may answer EPERM.
    constexpr int kArchReqXcompPerm = 0x1023, kXfeatureXtiledata = 18;
    if (syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureXtiledata) != 0) {
        const int err = errno;
        s.problem = std::string("the kernel refused AMX tile data: arch_prctl(ARCH_REQ_XCOMP_PERM, "
                                "XFEATURE_XTILEDATA) failed: ") +
                    std::strerror(err) + (err == EINVAL ? " (a kernel before 5.16?)" : "");
        return s;
    }
    s.usable = true;
    s.bf16 = bf16;
    s.int8 = int8;
    if (!bf16 && !int8) s.problem = "AMX-TILE granted but the CPU has neither AMX-BF16 nor AMX-INT8";
    return s;
}

} // namespace

const AmxSupport &amx_support() {
    static const AmxSupport support = ask_for_amx(); // thread-safe, once per process
    return support;
}

// --- measure_machine -----------------------------------------------------------------

namespace {

// f32 FMA peaks with the widest FMA the CPU has, and bf16 peaks where it has
// AVX512-BF16; what was not measured goes to `notes`.
void measure_compute(MachinePeaks &m, const std::vector<int> &cpus, const MeasureOptions &opt,
                     std::vector<std::string> &notes) {
    const int all = static_cast<int>(cpus.size());
    detail::ComputeKernel fma = detail::fma_scalar;
    double fma_flops = detail::kScalarFlopsPerIter;
    m.fma_isa = "scalar";
    if (__builtin_cpu_supports("avx512f")) {
        fma = detail::fma_avx512;
        fma_flops = detail::kAvx512FlopsPerIter;
        m.fma_isa = "avx512f";
    } else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
        fma = detail::fma_avx2;
        fma_flops = detail::kAvx2FlopsPerIter;
        m.fma_isa = "avx2+fma";
    }
    m.one_thread.f32_gflops = detail::compute_peak(fma, fma_flops, 1, cpus, opt) / 1e9;
    m.all_threads.f32_gflops = detail::compute_peak(fma, fma_flops, all, cpus, opt) / 1e9;
    // The AVX2 FMA roof, for backends held to AVX2 on an AVX-512 CPU.
    if (m.fma_isa == "avx512f" && __builtin_cpu_supports("fma")) {
        m.one_thread.avx2_f32_gflops = detail::compute_peak(detail::fma_avx2, detail::kAvx2FlopsPerIter, 1, cpus, opt) / 1e9;
        m.all_threads.avx2_f32_gflops = detail::compute_peak(detail::fma_avx2, detail::kAvx2FlopsPerIter, all, cpus, opt) / 1e9;
    } else if (m.fma_isa == "avx2+fma") {
        m.one_thread.avx2_f32_gflops = m.one_thread.f32_gflops;
        m.all_threads.avx2_f32_gflops = m.all_threads.f32_gflops;
    }

    m.has_bf16 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bf16");
    if (m.has_bf16) {
        m.one_thread.bf16_gflops =
            detail::compute_peak(detail::bf16_avx512, detail::kBf16FlopsPerIter, 1, cpus, opt) / 1e9;
        m.all_threads.bf16_gflops =
            detail::compute_peak(detail::bf16_avx512, detail::kBf16FlopsPerIter, all, cpus, opt) / 1e9;
    } else {
        notes.push_back("bf16 not measured: the CPU lacks AVX512-BF16 (bf16_gflops = 0)");
    }
}

// int8 multiply-accumulate peaks with the kernel detail::int8_kernel_isa() names.
void measure_int8(MachinePeaks &m, const std::vector<int> &cpus, const MeasureOptions &opt,
                  std::vector<std::string> &notes) {
    m.int8_isa = detail::int8_kernel_isa();
    if (m.int8_isa.empty()) {
        notes.push_back("int8 not measured: the CPU lacks AVX2 (int8_gops = 0)");
        return;
    }
    const bool vnni = m.int8_isa == "avx512_vnni";
    const detail::ComputeKernel kernel = vnni ? detail::int8_vnni : detail::int8_avx2;
    const double ops = vnni ? detail::kInt8VnniOpsPerIter : detail::kInt8Avx2OpsPerIter;
    m.one_thread.int8_gops = detail::compute_peak(kernel, ops, 1, cpus, opt) / 1e9;
    m.all_threads.int8_gops = detail::compute_peak(kernel, ops, static_cast<int>(cpus.size()), cpus, opt) / 1e9;
    // The AVX2 int8 roof, for backends held to AVX2 on a VNNI CPU.
    if (vnni) {
        m.one_thread.avx2_int8_gops = detail::compute_peak(detail::int8_avx2, detail::kInt8Avx2OpsPerIter, 1, cpus, opt) / 1e9;
        m.all_threads.avx2_int8_gops = detail::compute_peak(detail::int8_avx2, detail::kInt8Avx2OpsPerIter,
                                                            static_cast<int>(cpus.size()), cpus, opt) / 1e9;
    } else {
        m.one_thread.avx2_int8_gops = m.one_thread.int8_gops;
        m.all_threads.avx2_int8_gops = m.all_threads.int8_gops;
    }
}

// AMX-BF16 and AMX-INT8 tile peaks where the kernel grants tile data; else
// why not, in `amx` and the notes (the bf16 / int8 roofs are then the
// AVX-512 ones: nothing changes but the note).
void measure_amx(MachinePeaks &m, const std::vector<int> &cpus, const MeasureOptions &opt,
                 std::vector<std::string> &notes) {
    const AmxSupport &amx = amx_support();
    if (!amx.usable) {
        m.amx = "not measured: " + amx.problem;
        // Only worth a note where /proc/cpuinfo claims AMX (or the kernel said no):
        // on a CPU without it, nothing changes.
        if (detail::cpuinfo_flags().count("amx_tile") || amx.problem.find("refused") != std::string::npos)
            notes.push_back("AMX " + m.amx);
        return;
    }
    const int all = static_cast<int>(cpus.size());
    if (amx.bf16) {
        m.one_thread.amx_bf16_gflops = detail::compute_peak(detail::amx_bf16, detail::kAmxBf16FlopsPerIter, 1, cpus, opt) / 1e9;
        m.all_threads.amx_bf16_gflops = detail::compute_peak(detail::amx_bf16, detail::kAmxBf16FlopsPerIter, all, cpus, opt) / 1e9;
    } else {
        notes.push_back("AMX-BF16 not measured: the CPU has AMX-TILE without AMX-BF16");
    }
    if (amx.int8) {
        m.one_thread.amx_int8_gops = detail::compute_peak(detail::amx_int8, detail::kAmxInt8OpsPerIter, 1, cpus, opt) / 1e9;
        m.all_threads.amx_int8_gops = detail::compute_peak(detail::amx_int8, detail::kAmxInt8OpsPerIter, all, cpus, opt) / 1e9;
    } else {
        notes.push_back("AMX-INT8 not measured: the CPU has AMX-TILE without AMX-INT8");
    }
    m.amx = "measured";
}

// Triad and copy bandwidth on one thread and on all; returns the elements
// per array (4x the last-level cache, 64 to 512 MiB, unless given).
std::size_t measure_bandwidth(MachinePeaks &m, const std::vector<int> &cpus, const MeasureOptions &opt) {
    const int all = static_cast<int>(cpus.size());
    std::size_t bytes = opt.bandwidth_array_bytes;
    if (bytes == 0)
        bytes = std::clamp<std::uint64_t>(4 * llc_bytes(), std::uint64_t{64} << 20, std::uint64_t{512} << 20);
    const std::size_t n = std::max<std::size_t>(bytes / sizeof(double) / 64 * 64, 64);
    auto a = detail::aligned_doubles(n), b = detail::aligned_doubles(n), c = detail::aligned_doubles(n);
    // First touch by the team that will use the pages (NUMA placement), not
    // by this thread.
    detail::run_team(all, cpus, 1, [&](int tid) {
        const auto [lo, hi] = detail::chunk(n, tid, all);
        for (std::size_t i = lo; i < hi; ++i) {
            a[i] = 0.0;
            b[i] = 1.0;
            c[i] = 2.0;
        }
    });
    const auto one = detail::bandwidth_peaks(a.get(), b.get(), c.get(), n, 1, cpus, opt);
    const auto many = detail::bandwidth_peaks(a.get(), b.get(), c.get(), n, all, cpus, opt);
    m.one_thread.triad_gbps = one.triad_gbps;
    m.one_thread.copy_gbps = one.copy_gbps;
    m.all_threads.triad_gbps = many.triad_gbps;
    m.all_threads.copy_gbps = many.copy_gbps;
    return n;
}

// Triad bandwidth of each cache level, on a working set of half the level
// (three arrays), for one thread and for all.
void measure_cache_roofs(MachinePeaks &m, const std::vector<int> &cpus, const MeasureOptions &opt) {
    const int all = static_cast<int>(cpus.size());
    m.cache_roofs = detail::cache_levels(cpus);
    for (CacheRoof &roof : m.cache_roofs) {
        auto triad_gbps = [&](int threads) {
            // Three arrays of whole 64-byte lines, a 64-element share each thread at least.
            const std::size_t n = std::max<std::size_t>(
                roof.capacity(threads, m.cores) / 2 / 3 / sizeof(double) / 64 * 64, 64 * std::size_t(threads));
            auto a = detail::aligned_doubles(n), b = detail::aligned_doubles(n), c = detail::aligned_doubles(n);
            std::fill_n(a.get(), n, 0.0);
            std::fill_n(b.get(), n, 1.0);
            std::fill_n(c.get(), n, 2.0);
            return detail::bandwidth_peaks(a.get(), b.get(), c.get(), n, threads, cpus, opt).triad_gbps;
        };
        roof.one_thread_gbps = triad_gbps(1);
        roof.all_threads_gbps = triad_gbps(all);
    }
}

} // namespace

MachinePeaks measure_machine(const MeasureOptions &options) {
    MeasureOptions opt = options;
    const MeasureOptions defaults;
    opt.min_trials = std::max(1, opt.min_trials);
    if (!(opt.seconds_per_figure >= 0)) opt.seconds_per_figure = defaults.seconds_per_figure;
    if (!(opt.compute_trial_seconds > 0)) opt.compute_trial_seconds = defaults.compute_trial_seconds;
    const auto start = std::chrono::steady_clock::now();
    const std::vector<int> cpus = detail::allowed_cpus();
    const int all = static_cast<int>(cpus.size());

    MachinePeaks m;
    m.cpu_model = cpu_model_name();
    m.cores = all;
    m.measured_at = detail::utc_now_iso8601();
    m.one_thread.threads = 1;
    m.all_threads.threads = all;

    std::vector<std::string> notes;
    measure_compute(m, cpus, opt, notes);
    measure_int8(m, cpus, opt, notes);
    measure_amx(m, cpus, opt, notes);
    const std::size_t n = measure_bandwidth(m, cpus, opt);
    measure_cache_roofs(m, cpus, opt);

    for (std::size_t i = 0; i < notes.size(); ++i) m.notes += (i ? "; " : "") + notes[i];
    std::ostringstream method;
    method << "f32: " << m.fma_isa << " FMA, independent accumulator chains, 2 flops/lane; "
           << (m.has_bf16 ? "bf16: vdpbf16ps, 64 flops/instruction; " : "")
           << (m.int8_isa == "avx512_vnni" ? "int8: vpdpbusd, 128 ops/instruction; "
               : m.int8_isa == "avx2"      ? "int8: vpmaddubsw+vpmaddwd+vpaddd, 64 ops per 3 instructions; "
                                           : "")
           << (m.amx == "measured" ? "AMX: tdpbf16ps 16384 flops and tdpbssd 32768 ops/instruction, 4 tile "
                                     "accumulators; "
                                   : "")
           << "triad a=b+s*c and copy a=b on 3 arrays of " << (n * sizeof(double) >> 20)
           << " MiB doubles, 24/16 bytes per element (write-allocate not counted); cache roofs: triad on half "
           << "of each cache level (its instances the threads use); "
           << "threads pinned one per allowed CPU; best of many short trials (" << opt.seconds_per_figure
           << " s per figure)";
    m.method = method.str();
    m.measure_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return m;
}

} // namespace opbench
