// Machine characterisation: peak kernels, the per-machine cache, roofline
// classification and the CPU context; see machine.hpp.
#include "machine/machine.hpp"
#include "machine/peak_bounds.hpp"

#include "files/trust.hpp"

#include "files/atomic_file.hpp"

#include "opbench/plugin.h"

#include <fmt/format.h>

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
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <barrier>
#include <chrono>
#include <cerrno>
#include <climits>
#include <cstdint>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <functional>
#include <limits>
#include <memory>
#include <set>
#include <sstream>
#include <stdexcept>
#include <thread>
#include <vector>

#include "opbench/host_cpu.hpp"

namespace opbench {

namespace detail {

// --- small system readers ----------------------------------------------------

std::string read_first_line(const std::filesystem::path &path) {
    std::ifstream in(path);
    std::string line;
    if (!in || !std::getline(in, line)) return {};
    while (!line.empty() && (line.back() == '\n' || line.back() == ' ')) line.pop_back();
    return line;
}

// Value of the first "key<tab>: value" line in /proc/cpuinfo.
std::string cpuinfo_field(const std::string &key) {
    std::ifstream in("/proc/cpuinfo");
    std::string line;
    while (std::getline(in, line)) {
        const auto colon = line.find(':');
        if (colon == std::string::npos) continue;
        std::string k = line.substr(0, colon);
        while (!k.empty() && (k.back() == ' ' || k.back() == '\t')) k.pop_back();
        if (k != key) continue;
        std::string v = line.substr(colon + 1);
        v.erase(0, v.find_first_not_of(' '));
        return v;
    }
    return {};
}

std::set<std::string> cpuinfo_flags() {
    std::istringstream words(cpuinfo_field("flags"));
    std::set<std::string> flags;
    for (std::string w; words >> w;) flags.insert(w);
    return flags;
}

std::vector<int> allowed_cpus() {
    cpu_set_t set;
    CPU_ZERO(&set);
    std::vector<int> cpus;
    if (sched_getaffinity(0, sizeof(set), &set) == 0) {
        for (int c = 0; c < CPU_SETSIZE; ++c)
            if (CPU_ISSET(c, &set)) cpus.push_back(c);
    }
    if (cpus.empty()) cpus.push_back(0);
    return cpus;
}

// FNV-1a, 64 bit: stable across runs and compilers (std::hash is neither).
std::uint64_t fnv1a64(const std::string &s) {
    std::uint64_t h = 0xcbf29ce484222325ull;
    for (unsigned char c : s) {
        h ^= c;
        h *= 0x100000001b3ull;
    }
    return h;
}

std::string utc_now_iso8601() {
    const std::time_t t = std::time(nullptr);
    std::tm tm{};
    gmtime_r(&t, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return buf;
}

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

// The CPUs of a sysfs list such as "0-3,8" that are also in `allowed`.
int cpus_in_list(const std::string &list, const std::vector<int> &allowed) {
    int count = 0;
    std::stringstream ranges(list);
    for (std::string range; std::getline(ranges, range, ',');) {
        const auto dash = range.find('-');
        const int lo = std::atoi(range.c_str());
        const int hi = dash == std::string::npos ? lo : std::atoi(range.c_str() + dash + 1);
        for (int cpu : allowed) count += cpu >= lo && cpu <= hi;
    }
    return count;
}

// CPU 0's data and unified caches from sysfs, smallest level first.
std::vector<CacheRoof> cache_levels(const std::vector<int> &allowed) {
    const std::filesystem::path dir = "/sys/devices/system/cpu/cpu0/cache";
    std::vector<std::pair<int, CacheRoof>> found;
    std::error_code ec;
    for (const auto &entry : std::filesystem::directory_iterator(dir, ec)) {
        if (entry.path().filename().string().rfind("index", 0) != 0) continue;
        const std::string type = read_first_line(entry.path() / "type");
        if (type != "Data" && type != "Unified") continue;
        const int level = std::atoi(read_first_line(entry.path() / "level").c_str());
        CacheRoof roof;
        roof.level = "L" + std::to_string(level) + (type == "Data" ? "d" : "");
        roof.bytes = host::parse_cache_size(read_first_line(entry.path() / "size"));
        roof.sharing_cpus = std::max(1, cpus_in_list(read_first_line(entry.path() / "shared_cpu_list"), allowed));
        if (level > 0 && roof.bytes > 0) found.emplace_back(level, roof);
    }
    std::sort(found.begin(), found.end(), [](const auto &x, const auto &y) { return x.first < y.first; });
    std::vector<CacheRoof> roofs;
    for (auto &[level, roof] : found) roofs.push_back(std::move(roof));
    return roofs;
}

} // namespace detail

// --- ThreadPeaks / MachinePeaks ------------------------------------------------------

ThreadPeaks MachinePeaks::at_threads(int threads) const {
    if (threads <= 1 || cores <= 1) return one_thread;
    if (threads >= cores) return all_threads;
    const double t = static_cast<double>(threads - 1) / static_cast<double>(cores - 1);
    auto lerp = [t](double lo, double hi) { return lo + t * (hi - lo); };
    ThreadPeaks p;
    p.threads = threads;
    p.f32_gflops = lerp(one_thread.f32_gflops, all_threads.f32_gflops);
    p.bf16_gflops = lerp(one_thread.bf16_gflops, all_threads.bf16_gflops);
    p.triad_gbps = lerp(one_thread.triad_gbps, all_threads.triad_gbps);
    p.copy_gbps = lerp(one_thread.copy_gbps, all_threads.copy_gbps);
    p.int8_gops = lerp(one_thread.int8_gops, all_threads.int8_gops);
    p.amx_bf16_gflops = lerp(one_thread.amx_bf16_gflops, all_threads.amx_bf16_gflops);
    p.amx_int8_gops = lerp(one_thread.amx_int8_gops, all_threads.amx_int8_gops);
    p.avx2_f32_gflops = lerp(one_thread.avx2_f32_gflops, all_threads.avx2_f32_gflops);
    p.avx2_int8_gops = lerp(one_thread.avx2_int8_gops, all_threads.avx2_int8_gops);
    return p;
}

PeakKind peak_kind(int dtype) {
    if (dtype == OPB_DTYPE_S8) return PeakKind::int8;
    return dtype == OPB_DTYPE_F32 ? PeakKind::f32 : PeakKind::bf16;
}
PeakKind peak_kind(std::string_view dtype_name) {
    if (dtype_name == "s8") return PeakKind::int8;
    return dtype_name == "f32" ? PeakKind::f32 : PeakKind::bf16;
}

std::uint64_t CacheRoof::capacity(int threads, int cores) const {
    // Threads are pinned one per allowed CPU in order, so they fill whole
    // instances of the cache before they reach another one.
    const int used = std::clamp(threads, 1, std::max(1, cores));
    const int instances = (used + sharing_cpus - 1) / sharing_cpus;
    return bytes * static_cast<std::uint64_t>(instances);
}

const CacheRoof *MachinePeaks::roof_for(double working_set_bytes, int threads) const {
    if (!(working_set_bytes > 0)) return nullptr;
    for (const CacheRoof &roof : cache_roofs)
        if (roof.all_threads_gbps > 0 && working_set_bytes <= static_cast<double>(roof.capacity(threads, cores)))
            return &roof;
    return nullptr;
}

double MachinePeaks::roof_gbps(const CacheRoof &roof, int threads) const {
    if (threads <= 1 || cores <= 1) return roof.one_thread_gbps;
    if (threads >= cores) return roof.all_threads_gbps;
    const double t = static_cast<double>(threads - 1) / static_cast<double>(cores - 1);
    return roof.one_thread_gbps + t * (roof.all_threads_gbps - roof.one_thread_gbps);
}

// An int field of a cache file. nlohmann converts a floating-point value to
// int with a plain cast, undefined beyond int's range (found by fuzzing
// tests/fuzz/fuzz_result_set.cpp), so only JSON integers in range are taken.
int int_field(const nlohmann::json &j, const char *key) {
    const nlohmann::json &v = j.at(key);
    if (v.is_number_integer()) {
        const auto n = v.get<std::int64_t>();
        if (v.is_number_unsigned() ? v.get<std::uint64_t>() <= INT_MAX : n >= INT_MIN && n <= INT_MAX)
            return static_cast<int>(n);
    }
    throw std::runtime_error(std::string("machine peaks: '") + key + "' is not an integer in int's range");
}

void to_json(nlohmann::json &j, const MachinePeaks &p) {
    // The version the figures were measured under: a schema-1 reading stays
    // 1 when written again, so it is never taken for one that tried AMX.
    j = {{"schema_version", p.schema_version},
         {"cpu_model", p.cpu_model},
         {"cores", p.cores},
         {"one_thread", p.one_thread},
         {"all_threads", p.all_threads},
         {"fma_isa", p.fma_isa},
         {"has_bf16", p.has_bf16},
         {"int8_isa", p.int8_isa},
         {"amx", p.amx},
         {"notes", p.notes},
         {"measured_at", p.measured_at},
         {"measure_seconds", p.measure_seconds},
         {"method", p.method},
         {"cache_roofs", p.cache_roofs}};
}

void from_json(const nlohmann::json &j, MachinePeaks &p) {
    const int version = int_field(j, "schema_version");
    if (version < kMachinePeaksOldestSchemaVersion || version > kMachinePeaksSchemaVersion)
        throw std::runtime_error("machine peaks schema version " + std::to_string(version) + ", expected " +
                                 std::to_string(kMachinePeaksOldestSchemaVersion) + " to " +
                                 std::to_string(kMachinePeaksSchemaVersion));
    p.schema_version = version;
    j.at("cpu_model").get_to(p.cpu_model);
    p.cores = int_field(j, "cores");
    for (auto [key, peaks] : {std::pair{"one_thread", &p.one_thread}, std::pair{"all_threads", &p.all_threads}}) {
        nlohmann::json figures = j.at(key);
        // ThreadPeaks' own reading (a macro's) takes any number as its thread count.
        (void)int_field(figures, "threads");
        // Optional: caches and result sets from before the int8 peak (0: not measured).
        if (!figures.contains("int8_gops")) figures["int8_gops"] = 0.0;
        // Optional: schema 1 had no AMX peaks (0: not measured).
        for (const char *amx_key : {"amx_bf16_gflops", "amx_int8_gops", "avx2_f32_gflops", "avx2_int8_gops"})
            if (!figures.contains(amx_key)) figures[amx_key] = 0.0;
        figures.get_to(*peaks);
    }
    j.at("fma_isa").get_to(p.fma_isa);
    j.at("has_bf16").get_to(p.has_bf16);
    p.int8_isa = j.contains("int8_isa") ? j.at("int8_isa").get<std::string>() : std::string(); // optional
    p.amx = j.contains("amx") ? j.at("amx").get<std::string>() : std::string();                // schema 2
    j.at("notes").get_to(p.notes);
    j.at("measured_at").get_to(p.measured_at);
    j.at("measure_seconds").get_to(p.measure_seconds);
    j.at("method").get_to(p.method);
    // Optional: machine caches and result sets from before the cache roofs.
    // CacheRoof's macro casts any number to its counts, so they are checked first.
    p.cache_roofs.clear();
    if (j.contains("cache_roofs")) {
        for (const nlohmann::json &roof : j.at("cache_roofs")) {
            if (int_field(roof, "sharing_cpus") < 1) throw std::runtime_error("machine peaks: 'sharing_cpus' < 1");
            if (!roof.at("bytes").is_number_unsigned()) throw std::runtime_error("machine peaks: 'bytes' not a count");
        }
        j.at("cache_roofs").get_to(p.cache_roofs);
    }
}

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

// The int8 kernel this CPU runs: VNNI where present, else AVX2's three-instruction MAC.
const char *int8_kernel_isa() {
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vnni")) return "avx512_vnni";
    if (__builtin_cpu_supports("avx2")) return "avx2";
    return "";
}

// int8 multiply-accumulate peaks with the kernel int8_kernel_isa() names.
void measure_int8(MachinePeaks &m, const std::vector<int> &cpus, const MeasureOptions &opt,
                  std::vector<std::string> &notes) {
    m.int8_isa = int8_kernel_isa();
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

// --- cache ---------------------------------------------------------------------------

std::filesystem::path machine_cache_dir() {
    auto env = [](const char *name) -> std::string {
        const char *v = std::getenv(name);
        return v ? v : "";
    };
    if (auto d = env("OPBENCH_CACHE_DIR"); !d.empty()) return d;
    if (auto d = env("XDG_CACHE_HOME"); !d.empty()) return std::filesystem::path(d) / "opbench";
    if (auto d = env("HOME"); !d.empty()) return std::filesystem::path(d) / ".cache" / "opbench";
    // No fixed shared path (such as /tmp/opbench-cache): another user could
    // plant files or symlinks there. No cache instead.
    return {};
}

std::string cache_dir_problem(const std::filesystem::path &dir) {
    if (dir.empty()) return "no cache directory: none of OPBENCH_CACHE_DIR, XDG_CACHE_HOME or HOME is set";
    if (std::string why = trust_problem(dir); !why.empty())
        return "cache directory " + dir.string() + " not used: " + why;
    return "";
}

std::filesystem::path machine_cache_path(const std::filesystem::path &dir, const std::string &cpu_model, int cores) {
    char hex[17];
    std::snprintf(hex, sizeof hex, "%016llx",
                  static_cast<unsigned long long>(detail::fnv1a64(cpu_model + "|" + std::to_string(cores))));
    return dir / ("machine-" + std::string(hex) + ".json");
}

std::optional<MachinePeaks> load_machine_peaks(const std::filesystem::path &path) {
    std::ifstream in(path);
    if (!in) return std::nullopt;
    try {
        return nlohmann::json::parse(in).get<MachinePeaks>();
    } catch (const std::exception &) {
        return std::nullopt; // corrupt or another version: the caller re-measures
    }
}

void save_machine_peaks(const MachinePeaks &peaks, const std::filesystem::path &path) {
    write_file_atomically(path.string(), nlohmann::json(peaks).dump(2) + "\n");
}

CachedMachinePeaks load_or_measure(bool remeasure, const std::filesystem::path &dir, const MeasureOptions &options) {
    CachedMachinePeaks r;
    const std::string model = cpu_model_name();
    const int cores = allowed_cpu_count();
    if (std::string why = cache_dir_problem(dir); !why.empty()) {
        r.peaks = measure_machine(options);
        r.warning = why;
        return r;
    }
    r.path = machine_cache_path(dir, model, cores);
    if (!remeasure) {
        // The hash could collide and a file could be copied between machines:
        // trust it only when it names this CPU and core count.
        // A cache from before the cache roofs, the int8 peak or the AMX peaks
        // (schema 1) is measured again.
        if (auto cached = load_machine_peaks(r.path); cached && cached->cpu_model == model && cached->cores == cores &&
                                                      (!cached->cache_roofs.empty() ||
                                                       detail::cache_levels(detail::allowed_cpus()).empty()) &&
                                                      (cached->one_thread.int8_gops > 0 || !*int8_kernel_isa()) &&
                                                      cached->schema_version == kMachinePeaksSchemaVersion) {
            r.remeasured_because = implausible_peaks(*cached);
            if (r.remeasured_because.empty()) {
                r.peaks = *cached;
                r.from_cache = true;
                return r;
            }
        }
    }
    r.peaks = measure_machine(options);
    try {
        save_machine_peaks(r.peaks, r.path);
    } catch (const std::exception &e) {
        r.warning = e.what();
        r.path.clear();
    }
    return r;
}

std::string peaks_origin_line(const CachedMachinePeaks &c) {
    if (c.from_cache) return "";
    std::string line = "opbench: ";
    if (!c.remeasured_because.empty())
        line += fmt::format("the cached machine peaks were not used ({}): ", c.remeasured_because);
    line += fmt::format("measured this machine's peaks for the rooflines in {:.1f} s", c.peaks.measure_seconds);
    if (c.warning.empty()) return line + fmt::format(" (once; cached in {})", c.path.string());
    return line + fmt::format("; not cached ({}), so each run measures them again: set OPBENCH_CACHE_DIR to a "
                              "writable directory to keep them",
                              c.warning);
}

// --- roofline ------------------------------------------------------------------------

namespace {

std::string percent(double pct) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.0f%%", pct);
    return buf;
}

// Roofline::above_roof_cause: the most specific reason known for this entry.
std::string above_roof_cause(const Roofline &r, const MachinePeaks &peaks, PeakKind kind, std::string_view isa) {
    std::vector<std::string> causes;
    const bool amx_isa = isa.find("amx") != std::string_view::npos;
    const std::string ran = isa.empty() ? std::string("the backend names no ISA")
                                        : "the backend ran " + std::string(isa);
    if (r.pct_peak_compute > 100) {
        const std::string head = percent(r.pct_peak_compute) + " of the " + r.compute_roof + " roof: ";
        if (amx_isa && kind != PeakKind::f32 && r.compute_roof.rfind("AMX", 0) != 0)
            causes.push_back(head + ran + " (AMX tiles), whose peak is not measured here (" +
                             (peaks.amx.empty() ? std::string("figures from before the AMX peaks: run opbench "
                                                              "machine --refresh")
                                                : peaks.amx) +
                             ")");
        else if (r.compute_roof.rfind("AMX", 0) == 0)
            causes.push_back(head + "faster than the tile loop's best (" + ran +
                             "): the case does fewer multiply-adds than its model counts (zero or skipped blocks)");
        else
            causes.push_back(head + ran + ": it does fewer FLOPs than its model counts, or uses instructions "
                                          "faster than that roof's kernel");
    }
    if (r.pct_peak_bandwidth > 100)
        causes.push_back(percent(r.pct_peak_bandwidth) + " of the " + r.bandwidth_roof +
                         " triad roof: its data sits in a faster level than its size suggests (reuse across calls), "
                         "or it moves fewer bytes than its model counts");
    std::string out;
    for (const std::string &c : causes) out += (out.empty() ? "" : "; ") + c;
    return out;
}

} // namespace

ComputeRoof compute_roof(const MachinePeaks &peaks, int threads, PeakKind kind, std::string_view isa) {
    const ThreadPeaks p = peaks.at_threads(threads);
    const bool named = !isa.empty() && isa != "all" && isa != "unknown";
    // oneDNN's names: avx512_core_amx has AMX tiles; avx512_core_bf16 and
    // above vdpbf16ps; avx512_core_vnni and above vpdpbusd; avx2, avx2_vnni,
    // avx and sse41 no AVX-512 at all.
    const bool amx = named && isa.find("amx") != std::string_view::npos;
    const bool avx512 = !named || isa.rfind("avx512", 0) == 0;
    const bool avx512_bf16 = !named || amx || isa.find("bf16") != std::string_view::npos;
    const bool avx512_vnni = !named || (avx512 && isa != "avx512_core");
    auto f32_roof = [&]() -> ComputeRoof {
        if (!avx512 && p.avx2_f32_gflops > 0) return {p.avx2_f32_gflops, "AVX2 FMA"};
        return {p.f32_gflops, peaks.fma_isa == "avx512f"    ? "AVX-512 FMA"
                              : peaks.fma_isa == "avx2+fma" ? "AVX2 FMA"
                                                            : "scalar FMA"};
    };
    switch (kind) {
    case PeakKind::bf16:
        if (amx && p.amx_bf16_gflops > 0) return {p.amx_bf16_gflops, "AMX-BF16"};
        if (avx512_bf16 && p.bf16_gflops > 0) return {p.bf16_gflops, "AVX512-BF16"};
        return f32_roof(); // no bf16 instructions: the products are f32 FMAs
    case PeakKind::int8:
        if (amx && p.amx_int8_gops > 0) return {p.amx_int8_gops, "AMX-INT8"};
        if (avx512_vnni && p.int8_gops > 0)
            return {p.int8_gops, peaks.int8_isa == "avx512_vnni" ? "AVX512-VNNI" : "AVX2 int8"};
        if (p.avx2_int8_gops > 0) return {p.avx2_int8_gops, "AVX2 int8"};
        if (p.int8_gops > 0) return {p.int8_gops, peaks.int8_isa == "avx512_vnni" ? "AVX512-VNNI" : "AVX2 int8"};
        return f32_roof();
    case PeakKind::f32: break;
    }
    return f32_roof();
}

Roofline classify(double flops, double bytes, double seconds_per_call, const MachinePeaks &peaks, int threads,
                  double fixed_cost_seconds, PeakKind kind, double working_set_bytes, std::string_view isa) {
    Roofline r;
    r.bound = "unknown";
    if (!(seconds_per_call > 0) || !std::isfinite(seconds_per_call) || !(flops >= 0) || !(bytes >= 0)) return r;
    const ThreadPeaks p = peaks.at_threads(threads);
    const ComputeRoof roof = compute_roof(peaks, threads, kind, isa);
    const double peak_gflops = roof.gflops;
    if (!(peak_gflops > 0) || !(p.triad_gbps > 0)) return r;
    r.compute_roof = roof.name;
    r.compute_roof_by_isa = !isa.empty() && roof.name != compute_roof(peaks, threads, kind).name;
    double bw_gbps = p.triad_gbps;
    if (const CacheRoof *roof = peaks.roof_for(working_set_bytes, threads)) {
        r.bandwidth_roof = roof->level;
        bw_gbps = std::max(bw_gbps, peaks.roof_gbps(*roof, threads)); // never below DRAM's
    }
    const double peak_flops = peak_gflops * 1e9, peak_bw = bw_gbps * 1e9;
    r.pct_peak_compute = 100.0 * flops / seconds_per_call / peak_flops;
    r.pct_peak_bandwidth = 100.0 * bytes / seconds_per_call / peak_bw;
    r.arithmetic_intensity = bytes > 0 ? flops / bytes : std::numeric_limits<double>::infinity();
    r.ridge_point = peak_flops / peak_bw;
    r.above_roof_cause = above_roof_cause(r, peaks, kind, isa);
    const bool nothing_to_do = flops == 0 && bytes == 0;
    if (nothing_to_do || (fixed_cost_seconds > 0 && seconds_per_call < 5 * fixed_cost_seconds))
        r.bound = "overhead-bound";
    else
        r.bound = r.arithmetic_intensity >= r.ridge_point ? "compute-bound" : "memory-bound";
    return r;
}

// --- context -------------------------------------------------------------------------

std::uint64_t llc_bytes() { return host::last_level_cache_bytes(); }

std::string cpu_model_name() {
    std::string m = host::cpu_model_name();
    return m.empty() ? "unknown" : m;
}

int allowed_cpu_count() { return static_cast<int>(detail::allowed_cpus().size()); }

nlohmann::json cpu_context() {
    using nlohmann::json;
    json j;
    j["cpu_model"] = cpu_model_name();

    const auto flags = detail::cpuinfo_flags();
    json isa = json::object();
    for (const char *f : {"avx2", "fma", "avx512f", "avx512_bf16", "avx512_fp16", "amx_tile", "amx_bf16", "amx_int8"})
        isa[f] = flags.count(f) > 0;
    j["isa"] = isa;

    // Logical CPUs and physical cores from /proc/cpuinfo's (physical id, core id)
    // pairs; a VM may omit them, then physical_cores is null.
    int logical = 0;
    std::set<std::pair<std::string, std::string>> physical;
    {
        std::ifstream in("/proc/cpuinfo");
        std::string line, phys_id;
        while (std::getline(in, line)) {
            const auto colon = line.find(':');
            if (colon == std::string::npos) continue;
            std::string key = line.substr(0, colon);
            while (!key.empty() && (key.back() == ' ' || key.back() == '\t')) key.pop_back();
            std::string value = line.substr(colon + 1);
            value.erase(0, value.find_first_not_of(' '));
            if (key == "processor") ++logical;
            if (key == "physical id") phys_id = value;
            if (key == "core id") physical.insert({phys_id, value});
        }
    }
    if (logical == 0) logical = static_cast<int>(std::thread::hardware_concurrency());
    j["logical_cores"] = logical;
    j["allowed_cores"] = allowed_cpu_count();
    j["physical_cores"] = physical.empty() ? json(nullptr) : json(physical.size());

    std::uint64_t mem_kib = 0;
    {
        std::ifstream in("/proc/meminfo");
        std::string key;
        while (in >> key) {
            if (key == "MemTotal:") {
                in >> mem_kib;
                break;
            }
            in.ignore(std::numeric_limits<std::streamsize>::max(), '\n');
        }
    }
    j["memory_total_bytes"] = mem_kib ? json(mem_kib * 1024) : json(nullptr);
    const std::uint64_t llc = llc_bytes();
    j["llc_bytes"] = llc ? json(llc) : json(nullptr);

    // Google Benchmark's rule: scaling is on unless the governor is
    // "performance". No cpufreq directory (common in VMs) means we cannot tell.
    const std::string governor = detail::read_first_line("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor");
    j["frequency_governor"] = governor.empty() ? "unknown" : governor;
    j["cpu_scaling_enabled"] = governor.empty() ? json(nullptr) : json(governor != "performance");
    const std::string boost = detail::read_first_line("/sys/devices/system/cpu/cpufreq/boost");
    const std::string no_turbo = detail::read_first_line("/sys/devices/system/cpu/intel_pstate/no_turbo");
    j["turbo_boost"] = !boost.empty()      ? json(boost == "1")
                       : !no_turbo.empty() ? json(no_turbo == "0")
                                           : json("unknown");

    utsname u{};
    if (uname(&u) == 0)
        j["kernel"] = std::string(u.sysname) + " " + u.release + " " + u.version + " " + u.machine;
    else
        j["kernel"] = "unknown";

    double load[3];
    if (getloadavg(load, 3) == 3)
        j["load_average"] = {load[0], load[1], load[2]};
    else
        j["load_average"] = nullptr;
    return j;
}

} // namespace opbench
