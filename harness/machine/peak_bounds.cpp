#include "machine/peak_bounds.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string_view>
#include <utility>

namespace opbench {

namespace {

struct Figure {
    std::string_view name;
    double value;
    bool optional; // 0 means "not measured on this machine"
};

// Why `f`, measured on `threads` threads, cannot be real; "" when it can.
std::string off_bounds(const Figure &f, int threads, double lo, double hi, std::string_view unit) {
    if (f.optional && f.value == 0) return "";
    const double per_thread = f.value / threads;
    if (std::isfinite(per_thread) && per_thread >= lo && per_thread <= hi) return "";
    return fmt::format("{} on {} thread(s) is {:.3g} {}, outside {:g}-{:g} a thread", f.name, threads, f.value, unit, lo,
                       hi);
}

std::string implausible_thread_peaks(const ThreadPeaks &t) {
    if (t.threads < 1) return fmt::format("a thread count of {}", t.threads);
    const Figure compute[] = {{"the f32 peak", t.f32_gflops, false},
                              {"the bf16 peak", t.bf16_gflops, true},
                              {"the int8 peak", t.int8_gops, true},
                              {"the AMX-BF16 peak", t.amx_bf16_gflops, true},
                              {"the AMX-INT8 peak", t.amx_int8_gops, true},
                              {"the AVX2 f32 peak", t.avx2_f32_gflops, true},
                              {"the AVX2 int8 peak", t.avx2_int8_gops, true}};
    for (const Figure &f : compute)
        if (auto why = off_bounds(f, t.threads, kMinPlausibleGflopsPerThread, kMaxPlausibleGflopsPerThread,
                                  "GFLOP/s");
            !why.empty())
            return why;
    for (const Figure &f : {Figure{"the triad bandwidth", t.triad_gbps, false},
                            Figure{"the copy bandwidth", t.copy_gbps, false}})
        if (auto why = off_bounds(f, t.threads, kMinPlausibleGbpsPerThread, kMaxPlausibleGbpsPerThread, "GB/s");
            !why.empty())
            return why;
    return "";
}

} // namespace

std::string implausible_peaks(const MachinePeaks &peaks) {
    for (const ThreadPeaks *t : {&peaks.one_thread, &peaks.all_threads})
        if (auto why = implausible_thread_peaks(*t); !why.empty()) return why;
    for (const CacheRoof &roof : peaks.cache_roofs) {
        const Figure one{"the one-thread bandwidth", roof.one_thread_gbps, true};
        const Figure all{"the all-threads bandwidth", roof.all_threads_gbps, true};
        for (const auto &[f, threads] : {std::pair{one, 1}, std::pair{all, std::max(1, peaks.cores)}})
            if (auto why = off_bounds(f, threads, kMinPlausibleGbpsPerThread, kMaxPlausibleGbpsPerThread, "GB/s");
                !why.empty())
                return roof.level + " cache roof: " + why;
    }
    return "";
}

} // namespace opbench
