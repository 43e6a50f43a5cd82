// Will a case fit? An estimate of the memory one case on one backend needs,
// from the op's tensors, and the memory this machine (or --mem-limit) has for
// it. A case that cannot fit is skipped with "needs 12.5 MiB, 1.0 KiB available"
// before it starts, instead of being killed by the kernel's OOM killer
// half-way through a run.
#pragma once

#include "opbench/plugin.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace opbench {

// Bytes one case on one backend holds at its peak, by what holds them. The
// figures follow the run's recipe: host copies of every tensor (inputs made
// once, outputs zeroed), the backend's copies, the reference backend's copies
// and its outputs read back, the backend's outputs read back for the
// comparison, and each plan's workspace.
struct MemoryEstimate {
    uint64_t tensors = 0;   // host copies + the backend's copies + outputs read back
    uint64_t reference = 0; // the reference instance's copies + its outputs read back + its workspace
    uint64_t workspace = 0; // the measured backend's workspace (an upper bound over known backends)
    // Saturates at UINT64_MAX (an absurd shape must not wrap around to "fits").
    [[nodiscard]] uint64_t total() const;
};

// The op's intermediate storage the estimate assumes for one plan: what the
// largest-intermediate backend keeps, from the op table's workspace_bound
// (ops without one keep a row or a tile, counted as 0).
[[nodiscard]] uint64_t workspace_bound(const opb_op_desc &desc);

// `reference_runs`: the reference backend computes this case's outputs (the
// verify mode is full, or fast for an op with no fast check); otherwise its
// copies count nothing.
[[nodiscard]] MemoryEstimate estimate_case_memory(const opb_op_desc &desc, bool reference_runs = true);

// Memory a case may use: the least of MemAvailable (/proc/meminfo), the
// cgroup's memory.max - memory.current (a container's limit), and
// --mem-limit when given. `source` says which one bounds it.
struct MemoryBudget {
    uint64_t bytes = 0;
    std::string source; // "MemAvailable", "cgroup memory.max", "--mem-limit"
};
[[nodiscard]] MemoryBudget available_memory(std::optional<uint64_t> mem_limit);

// The rule behind available_memory, apart from reading the machine (whose
// MemAvailable moves between two reads): the least of the limits present.
struct MemoryLimits {
    std::optional<uint64_t> mem_available; // bytes, from /proc/meminfo
    std::optional<uint64_t> cgroup_left;   // memory.max - memory.current
    std::optional<uint64_t> mem_limit;     // --mem-limit
};
[[nodiscard]] MemoryBudget smallest_memory_limit(const MemoryLimits &limits);

// Empty when the case fits; else "needs 12.50 GiB, 7.25 GiB available (MemAvailable)".
[[nodiscard]] std::optional<std::string> memory_skip_reason(const MemoryEstimate &need, const MemoryBudget &have);

// ---- a device's memory (a GPU backend's) -------------------------------------

// What an entry would hold in its backend's device memory when that device
// is not the host (kind "gpu"): the formula is the entry's (a decoder's:
// workload/decoder.hpp, estimate_decoder_device_memory).
struct DeviceMemoryNeed {
    uint64_t weights = 0;     // weights (and the input embeddings) at the level's dtype
    uint64_t kv_cache = 0;    // K and V for the configured batch x context
    uint64_t activations = 0; // the largest step's activation buffers
    uint64_t workspace = 0;   // what the op table bounds of the plans' workspace
    // Saturates at UINT64_MAX, as MemoryEstimate::total.
    [[nodiscard]] uint64_t total() const;
};

// A backend's device as its probe saw it (context.opbench.backends.<name>.device).
struct DeviceMemory {
    std::string name;  // "NVIDIA H100 80GB HBM3"
    uint64_t free = 0; // bytes free when the backend was probed
};

// The device of a backend context when it is a GPU that says how much memory
// is free; nullopt for the host's (kind cpu), no device, or 0 (unknown).
[[nodiscard]] std::optional<DeviceMemory> gpu_device_memory(const nlohmann::json &backend_context);

// Empty when the entry fits; else "needs 17.10 GiB on the device (weights
// 15.00 GiB, KV cache 2.10 GiB, activations 1.2 MiB, workspace 64.0 KiB),
// 14.20 GiB free on NVIDIA H100".
[[nodiscard]] std::optional<std::string> device_memory_skip_reason(const DeviceMemoryNeed &need,
                                                                   const DeviceMemory &device);

// "16G", "512M", "1.5GiB", "2048" (bytes): bytes; nullopt when unreadable.
[[nodiscard]] std::optional<uint64_t> parse_memory_size(std::string_view text);

} // namespace opbench
