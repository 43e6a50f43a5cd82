// The cuda plugin's kernel timeline (ABI 1.6 activity_begin / activity_end,
// issue 42), from CUPTI's activity API: while a profiled sample runs, CUPTI
// records every kernel, copy and memset (start and end on its one
// timestamp clock, stream, correlation id); each execute call pushes its
// index as an external correlation id (CUSTOM0) and each step scope of the
// composed attention its name (CUSTOM1), so every record is handed over with
// the call and the scope that launched it.
//
// libcupti is opened with dlopen on first use, so the plugin loads and runs
// without it; where it is missing or the device refuses profiling
// (CUPTI_ERROR_INSUFFICIENT_PRIVILEGES: the driver's
// NVreg_RestrictProfilingToAdminUsers), begin() says why in one line and the
// host carries on without a timeline.
#pragma once

#include "opbench/plugin.h"

#include <cstdint>
#include <string>
#include <vector>

namespace opbench::cuda {

class KernelTimeline {
public:
    KernelTimeline() = default;
    KernelTimeline(const KernelTimeline &) = delete;
    KernelTimeline &operator=(const KernelTimeline &) = delete;

    // Starts recording; "" or why not ("CUPTI: libcupti.so.13 not found: ...").
    [[nodiscard]] std::string begin();
    // Stops, flushes and calls `fn` once per record in start order; "" or why not.
    [[nodiscard]] std::string end(opb_activity_fn fn, void *user);
    [[nodiscard]] bool recording() const { return recording_; }

    // Around one execute call (while recording): its records carry its index.
    void call_begin();
    void call_end();
    // Around one step scope ("qk", a string literal), while recording.
    void scope_begin(const char *name);
    void scope_end();

private:
    bool recording_ = false;
    int32_t calls_ = 0;
    std::vector<const char *> scope_names_; // index + 1 = the CUSTOM1 id
};

// A kernel's demangled name ("void foo<float>(float*)"), or `mangled` itself.
[[nodiscard]] std::string demangled(const char *mangled);

} // namespace opbench::cuda
