// Whether cached machine peaks could be a real CPU's figures. The cache is a
// file in the user's cache directory: an edit, a copy from another machine or
// a bad disk can leave 1e308 or 1e-6 GFLOP/s there, and a roof of either makes
// every entry's "% of peak" nonsense (88,048,153% or 0%). Such a cache is
// measured again, with one line saying why (load_or_measure).
#pragma once

#include "machine/machine.hpp"

#include <string>

namespace opbench {

// Per thread, what no CPU of today or the next years leaves: an AVX-512 core
// at 6 GHz with four FMA pipes does under 800 f32 GFLOP/s; AMX-INT8 does
// about 8,000 GOP/s a core. The bounds are wide on purpose: they catch
// corruption, not a slow or a fast machine.
inline constexpr double kMinPlausibleGflopsPerThread = 0.01;
inline constexpr double kMaxPlausibleGflopsPerThread = 50'000;
// Triad or copy bandwidth, per thread, any cache level or DRAM.
inline constexpr double kMinPlausibleGbpsPerThread = 0.01;
inline constexpr double kMaxPlausibleGbpsPerThread = 20'000;

// "" when every figure of `peaks` lies within the bounds above (a figure a
// machine did not measure, 0 for bf16, int8 or AMX, is allowed); otherwise
// which figure is off, its value and the bounds, in one clause.
[[nodiscard]] std::string implausible_peaks(const MachinePeaks &peaks);

} // namespace opbench
