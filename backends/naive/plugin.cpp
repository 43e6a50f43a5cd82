// The naive backend's plugin glue: the opb_backend_api table over kernels.hpp.
//
// Host memory from AlignedHostAllocator, counted by MemoryCounter; prepare
// validates the description and allocates the kernel's workspace; execute
// checks the tensors and runs the kernel. Every entry is wrapped in guarded()
// so no C++ exception reaches the host.
#include "kernels.hpp"

#include "opbench/backend_helpers.hpp"
#include "opbench/host_cpu.hpp"
#include "opbench/ops.hpp"

#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <new>
#include <string>
#include <vector>

#ifndef OPBENCH_NAIVE_VERSION
#error "OPBENCH_NAIVE_VERSION must be defined by the build (the project version)"
#endif

namespace opbench::naive {
namespace {

struct Backend : sdk::BackendBase {
    explicit Backend(const opb_host_services *s) : BackendBase(s, /*device_memory=*/false), scopes(s) {}
    sdk::AlignedHostAllocator allocator;
    sdk::ScopeHost scopes; // profiling scopes: the op, and composed attention's steps
};

struct Plan {
    opb_op_desc desc;
    void *workspace = nullptr;
    uint64_t workspace_bytes = 0;
    std::vector<TensorSpec> tensors; // op_tensors(desc), built once: execute allocates nothing
};

Backend *self(opb_backend *b) { return reinterpret_cast<Backend *>(b); }

// Reads the host's description into `out` (sdk::read_op_desc checks the
// header and the description) and says whether this backend runs it.
opb_status check_desc(Backend *b, const opb_op_desc *desc, opb_op_desc &out) {
    if (opb_status s = sdk::read_op_desc(b, "naive", desc, out); s != OPB_OK) return s;
    if (!has_kernel(out.op)) return sdk::unsupported_op(b, "naive", out.op);
    if (out.op == OPB_OP_MATMUL && out.variant == OPB_MATMUL_TF32)
        return b->fail(OPB_ERR_UNSUPPORTED, "naive: matmul variant tf32: tf32 is a GPU tensor-core mode; "
                                            "the reference computes in full precision (variant default)");
    return OPB_OK;
}

std::string cpu_model_name() { return opbench::host::cpu_model_name(); }

// ---- the entries ------------------------------------------------------------------

opb_status create(const opb_host_services *services, opb_backend **out) {
    if (!out) return OPB_ERR_INVALID;
    *out = nullptr;
    auto *b = new (std::nothrow) Backend(services);
    if (!b) {
        if (services) services->log(services->host, OPB_LOG_ERROR, "naive: out of host memory");
        return OPB_ERR_OUT_OF_MEMORY;
    }
    *out = reinterpret_cast<opb_backend *>(b);
    return OPB_OK;
}

void destroy(opb_backend *b) { delete self(b); }

const char *last_error(opb_backend *b) { return b ? self(b)->error.c_str() : "naive: backend handle is NULL"; }

opb_status probe(opb_backend *b) { return b ? OPB_OK : OPB_ERR_INVALID; }

opb_status device_info(opb_backend *bh, opb_device_info *out) {
    if (!bh) return OPB_ERR_INVALID;
    Backend *b = self(bh);
    return sdk::guarded(b, [&] {
        if (opb_status s = sdk::check_struct(b, "naive", "opb_device_info", out); s != OPB_OK) return s;
        opb_device_info info;
        std::memset(&info, 0, sizeof info);
        info.kind = OPB_DEVICE_CPU;
        std::string name = cpu_model_name();
        if (name.empty()) name = "unknown CPU (no model name in /proc/cpuinfo)";
        std::strncpy(info.name, name.c_str(), sizeof info.name - 1);
        const long pages = sysconf(_SC_PHYS_PAGES), avail = sysconf(_SC_AVPHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
        info.total_memory = pages > 0 && page > 0 ? uint64_t(pages) * uint64_t(page) : 0;
        info.free_memory = avail > 0 && page > 0 ? uint64_t(avail) * uint64_t(page) : 0;
        sdk::write_struct(out, info);
        return OPB_OK;
    });
}

opb_status supports(opb_backend *bh, const opb_op_desc *desc) {
    if (!bh) return OPB_ERR_INVALID;
    Backend *b = self(bh);
    return sdk::guarded(b, [&] {
        opb_op_desc d;
        return check_desc(b, desc, d);
    });
}

opb_status alloc(opb_backend *bh, uint64_t bytes, void **out) {
    if (!bh) return OPB_ERR_INVALID;
    Backend *b = self(bh);
    return sdk::guarded(b, [&] {
        if (!out) return b->fail(OPB_ERR_INVALID, "naive: alloc: out is NULL");
        *out = b->allocator.allocate(bytes, b->memory);
        if (!*out) return b->fail(OPB_ERR_OUT_OF_MEMORY, "naive: alloc of " + std::to_string(bytes) + " bytes failed");
        return OPB_OK;
    });
}

void free_(opb_backend *bh, void *ptr) {
    if (!bh) return;
    self(bh)->allocator.release(ptr, self(bh)->memory);
}

opb_status copy(opb_backend *bh, const char *what, void *dst, const void *src, uint64_t bytes) {
    if (!bh) return OPB_ERR_INVALID;
    Backend *b = self(bh);
    if (bytes == 0) return OPB_OK;
    if (!dst || !src)
        return b->fail(OPB_ERR_INVALID,
                       std::string("naive: ") + what + ": " + (dst ? "source" : "destination") + " is NULL");
    sdk::copy_host_memory(dst, src, bytes);
    return OPB_OK;
}
opb_status copy_in(opb_backend *b, void *dst, const void *host_src, uint64_t bytes) {
    return copy(b, "copy_in", dst, host_src, bytes);
}
opb_status copy_out(opb_backend *b, void *host_dst, const void *src, uint64_t bytes) {
    return copy(b, "copy_out", host_dst, src, bytes);
}

opb_status prepare(opb_backend *bh, const opb_op_desc *desc, opb_plan **out, uint64_t *workspace_bytes_out) {
    if (!bh) return OPB_ERR_INVALID;
    Backend *b = self(bh);
    return sdk::guarded(b, [&] {
        if (!out) return b->fail(OPB_ERR_INVALID, "naive: prepare: out is NULL");
        *out = nullptr;
        opb_op_desc d;
        if (opb_status s = check_desc(b, desc, d); s != OPB_OK) return s;
        auto *plan = new Plan{};
        plan->desc = d;
        plan->workspace_bytes = naive::workspace_bytes(d);
        plan->tensors = op_tensors(d);
        if (plan->workspace_bytes > 0) {
            const uint64_t rounded = (plan->workspace_bytes + 63) / 64 * 64;
            plan->workspace = std::aligned_alloc(64, rounded);
            if (!plan->workspace) {
                const uint64_t wanted = plan->workspace_bytes;
                delete plan;
                return b->fail(OPB_ERR_OUT_OF_MEMORY, "naive: prepare " + std::string(op_name(d.op)) + ": " +
                                                          std::to_string(wanted) + " bytes of workspace not available");
            }
            b->memory.workspace_acquired(plan->workspace_bytes);
        }
        if (workspace_bytes_out) *workspace_bytes_out = plan->workspace_bytes;
        *out = reinterpret_cast<opb_plan *>(plan);
        return OPB_OK;
    });
}

opb_status execute(opb_backend *bh, opb_plan *ph, void *const *tensors, int32_t count) {
    if (!bh) return OPB_ERR_INVALID;
    Backend *b = self(bh);
    return sdk::guarded(b, [&] {
        if (!ph) return b->fail(OPB_ERR_INVALID, "naive: execute: plan is NULL");
        const Plan &plan = *reinterpret_cast<Plan *>(ph);
        const auto &specs = plan.tensors;
        if (count != static_cast<int32_t>(specs.size()) || !tensors) {
            const std::string op(op_name(plan.desc.op));
            std::string names;
            for (const auto &t : specs) names += (names.empty() ? "" : ", ") + t.name;
            return b->fail(OPB_ERR_INVALID, "naive: execute " + op + ": expected " + std::to_string(specs.size()) +
                                                " tensors (" + names + "), got " + std::to_string(count) +
                                                (tensors ? "" : " and a NULL array"));
        }
        for (size_t i = 0; i < specs.size(); ++i)
            if (!tensors[i])
                return b->fail(OPB_ERR_INVALID, "naive: execute " + std::string(op_name(plan.desc.op)) + ": tensor " +
                                                    std::to_string(i) + " (" + specs[i].name + ") is NULL");
        // op_name's views are of string literals: null-terminated.
        OPB_SCOPE(b->scopes, op_name(plan.desc.op).data());
        run(plan.desc, tensors, plan.workspace, b->scopes);
        return OPB_OK;
    });
}

void release(opb_backend *bh, opb_plan *ph) {
    if (!bh || !ph) return;
    auto *plan = reinterpret_cast<Plan *>(ph);
    if (plan->workspace) {
        std::free(plan->workspace);
        self(bh)->memory.workspace_released(plan->workspace_bytes);
    }
    delete plan;
}

// execute is synchronous: nothing is ever in flight.
opb_status synchronize(opb_backend *b) { return b ? OPB_OK : OPB_ERR_INVALID; }

opb_status memory_stats(opb_backend *bh, opb_memory_stats *out) {
    return bh ? sdk::memory_stats(self(bh), "naive", out) : OPB_ERR_INVALID;
}

void reset_peak(opb_backend *b) {
    if (b) self(b)->memory.reset_peak();
}

void info(opb_backend *b, opb_info_fn fn, void *user) {
    if (!b || !fn) return;
    fn(user, "threads", "1");
    fn(user, "threading", "single-threaded; the description's threads field is ignored");
    fn(user, "accumulation",
       "f64: inputs widened exactly to double, every sum and transcendental in double, "
       "each output rounded once to its dtype");
    const std::string tile = std::to_string(kFusedTileQ) + " queries x " + std::to_string(kFusedTileKV) + " keys";
    fn(user, "fused_attention_tile", tile.c_str());
}

const opb_backend_api kApi = {
    sizeof(opb_backend_api),
    OPB_ABI_VERSION,
    "naive",
    OPBENCH_NAIVE_VERSION,
    "plain C++ reference implementation of every op (single-threaded, f64 accumulation)",
    "",
    create,
    destroy,
    last_error,
    probe,
    device_info,
    supports,
    alloc,
    free_,
    copy_in,
    copy_out,
    prepare,
    execute,
    release,
    synchronize,
    memory_stats,
    reset_peak,
    nullptr, // timer_start: no device timer on the host; the harness times with its clock
    nullptr, // timer_stop
    info,
    nullptr, // flush_cache: the host's CPU cache eviction is the right one
};

} // namespace
} // namespace opbench::naive

// The table is returned whatever the host's version: its leading struct_size
// and abi_version are stable across all versions, so a host of another major
// can read them and refuse with both version numbers in its message.
OPB_PLUGIN_ENTRY(host_version) {
    (void)host_version;
    return &opbench::naive::kApi;
}
