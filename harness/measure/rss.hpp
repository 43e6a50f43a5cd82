// Process resident set size (issue 5, "Memory": process peak RSS per case).
//
// Linux only: read from /proc/self/status. None of these functions allocate
// heap memory (they read into a stack buffer), so calling them around a case
// does not disturb the allocation counters of alloc_tracker.hpp.
#pragma once

#include <cstdint>

namespace opbench {

// High-water mark of the resident set (VmHWM), bytes; 0 when unavailable.
[[nodiscard]] std::uint64_t peak_rss_bytes();

// Current resident set (VmRSS), bytes; 0 when unavailable.
[[nodiscard]] std::uint64_t current_rss_bytes();

// Resets the high-water mark to the current RSS by writing "5" to
// /proc/self/clear_refs (Linux >= 4.0), so the next peak_rss_bytes() is the
// peak since this call. Returns false when the kernel refuses (no such file,
// no permission, e.g. some sandboxes): the peak then covers the whole process
// lifetime, and callers should record that the per-case peak is not isolated.
[[nodiscard]] bool reset_peak_rss();

} // namespace opbench
