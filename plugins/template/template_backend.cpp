// opbench backend "template": the skeleton of an out-of-tree backend plugin.
//
// It runs two real ops on the host, add and silu in f32, and reports every
// other op or dtype as unsupported with the reason, which opbench records as a
// skipped case. Replace `run_add` / `run_silu` and `check` with your
// library's calls; the rest (memory, plans, errors) is what every backend needs.
//
// Rules this file follows (see README.md): the only exported symbol is
// opb_plugin_entry; no C++ exception and no std:: type crosses the boundary
// (every entry runs inside sdk::guarded); errors are a status plus a message
// kept for last_error; execute allocates nothing (opbench measures
// allocs_per_call, and the template's test asserts it is 0).
#include "opbench/backend_helpers.hpp"
#include "opbench/ops.hpp"
#include "opbench/plugin.h"

#include <cmath>
#include <cstring>
#include <string>

#ifndef TEMPLATE_VERSION
#error "TEMPLATE_VERSION is defined by meson.build (the project version)"
#endif

namespace {

using opbench::sdk::BackendBase;
using opbench::sdk::guarded;

// One instance per create(): the SDK's BackendBase holds the error string and
// the memory counter; host memory comes from the SDK's aligned allocator.
struct Backend : BackendBase {
    explicit Backend(const opb_host_services *s) : BackendBase(s, /*device_memory=*/false) {}
    opbench::sdk::AlignedHostAllocator allocator;
};
Backend *self(opb_backend *b) { return reinterpret_cast<Backend *>(b); }

// A prepared op. Real backends keep their library's plan (primitive, handle,
// workspace) here; this one needs only the description.
struct Plan {
    opb_op_desc desc;
    int32_t tensor_count; // counted here, not in execute: execute allocates nothing
};

// ---- the ops ----------------------------------------------------------------------

void run_add(const opb_eltwise_params &p, const float *a, const float *b, float *y) {
    const int64_t n = p.rows * p.cols;
    for (int64_t i = 0; i < n; ++i) y[i] = a[i] + b[i];
}

void run_silu(const opb_eltwise_params &p, const float *x, float *y) {
    const int64_t n = p.rows * p.cols;
    for (int64_t i = 0; i < n; ++i) y[i] = x[i] / (1.0f + std::exp(-x[i]));
}

// Well-formed (INVALID otherwise) and offered (UNSUPPORTED otherwise, so the
// host records a skip); `d` receives the checked copy of the description.
opb_status check(Backend *b, const opb_op_desc *in, opb_op_desc &d) {
    // Header (ABI major, struct_size), validation, ops this SDK does not know.
    if (opb_status s = opbench::sdk::read_op_desc(b, "template", in, d); s != OPB_OK) return s;
    if (d.op != OPB_OP_ADD && d.op != OPB_OP_SILU)
        return opbench::sdk::unsupported_op(b, "template", d.op, "add and silu");
    if (d.dtype != OPB_DTYPE_F32)
        return b->fail(OPB_ERR_UNSUPPORTED, "template: " + std::string(opbench::op_name(d.op)) + " " +
                                                std::string(opbench::dtype_name(d.dtype)) +
                                                ": not implemented by the template backend "
                                                "(it offers f32)");
    return OPB_OK;
}

// ---- the table's entries ------------------------------------------------------------

opb_status create(const opb_host_services *services, opb_backend **out) {
    if (!out) return OPB_ERR_INVALID;
    try {
        *out = reinterpret_cast<opb_backend *>(new Backend(services));
        return OPB_OK;
    } catch (...) { // no instance yet, so no last_error: log through the host
        if (services) services->log(services->host, OPB_LOG_ERROR, "template: create failed");
        *out = nullptr;
        return OPB_ERR_OUT_OF_MEMORY;
    }
}

void destroy(opb_backend *b) { delete self(b); }

const char *last_error(opb_backend *b) { return b ? self(b)->error.c_str() : "template: NULL backend"; }

// A backend over a device or a library checks here that it can run, and says
// why not with OPB_ERR_UNAVAILABLE. Host code runs everywhere.
opb_status probe(opb_backend *) { return OPB_OK; }

opb_status device_info(opb_backend *bh, opb_device_info *out) {
    Backend *b = self(bh);
    return guarded(b, [&] {
        // NULL, another ABI major or a too-short header: INVALID, said once in the SDK.
        if (opb_status s = opbench::sdk::check_struct(b, "template", "opb_device_info", out); s != OPB_OK) return s;
        opb_device_info info{};
        info.kind = OPB_DEVICE_CPU;
        std::strncpy(info.name, "host CPU", sizeof info.name - 1);
        info.total_memory = 0; // unknown: 0 is the documented answer
        info.free_memory = 0;
        opbench::sdk::write_struct(out, info); // never past the caller's struct_size
        return OPB_OK;
    });
}

opb_status supports(opb_backend *bh, const opb_op_desc *desc) {
    Backend *b = self(bh);
    return guarded(b, [&] {
        opb_op_desc d;
        return check(b, desc, d);
    });
}

opb_status alloc(opb_backend *bh, uint64_t bytes, void **out) {
    Backend *b = self(bh);
    return guarded(b, [&] {
        if (!out) return b->fail(OPB_ERR_INVALID, "template: alloc: out is NULL");
        *out = b->allocator.allocate(bytes, b->memory); // 64-byte aligned, counted
        return *out ? OPB_OK
                    : b->fail(OPB_ERR_OUT_OF_MEMORY, "template: alloc of " + std::to_string(bytes) + " bytes failed");
    });
}

void free_(opb_backend *bh, void *ptr) { self(bh)->allocator.release(ptr, self(bh)->memory); }

// Host memory: copies are memcpy. A device backend copies host <-> device here.
opb_status copy_in(opb_backend *, void *dst, const void *src, uint64_t bytes) {
    if (bytes) std::memcpy(dst, src, bytes);
    return OPB_OK;
}
opb_status copy_out(opb_backend *, void *dst, const void *src, uint64_t bytes) {
    if (bytes) std::memcpy(dst, src, bytes);
    return OPB_OK;
}

// Everything that is not the op itself happens here, outside the timed region.
opb_status prepare(opb_backend *bh, const opb_op_desc *desc, opb_plan **out, uint64_t *ws) {
    Backend *b = self(bh);
    return guarded(b, [&] {
        if (!out) return b->fail(OPB_ERR_INVALID, "template: prepare: out is NULL");
        *out = nullptr;
        opb_op_desc d; // a copy: the host may reuse its description
        if (opb_status s = check(b, desc, d); s != OPB_OK) return s;
        auto *plan = new Plan{d, opbench::op_tensor_list(d).count};
        if (ws) *ws = 0; // no workspace; report and count it (memory.workspace_acquired) if any
        *out = reinterpret_cast<opb_plan *>(plan);
        return OPB_OK;
    });
}

// Only the op: this is what opbench times.
opb_status execute(opb_backend *bh, opb_plan *ph, void *const *t, int32_t count) {
    Backend *b = self(bh);
    return guarded(b, [&] {
        if (!ph || !t) return b->fail(OPB_ERR_INVALID, "template: execute: NULL plan or tensors");
        const Plan &plan = *reinterpret_cast<Plan *>(ph);
        const opb_op_desc &d = plan.desc;
        const int32_t expected = plan.tensor_count;
        if (count != expected)
            return b->fail(OPB_ERR_INVALID, "template: execute " + std::string(opbench::op_name(d.op)) + ": expected " +
                                                std::to_string(expected) + " tensors, got " + std::to_string(count));
        if (d.op == OPB_OP_ADD)
            run_add(d.p.eltwise, static_cast<const float *>(t[0]), static_cast<const float *>(t[1]),
                    static_cast<float *>(t[2]));
        else
            run_silu(d.p.eltwise, static_cast<const float *>(t[0]), static_cast<float *>(t[1]));
        return OPB_OK;
    });
}

void release(opb_backend *, opb_plan *ph) { delete reinterpret_cast<Plan *>(ph); }

// execute ran to completion already. A device backend waits for its stream here.
opb_status synchronize(opb_backend *) { return OPB_OK; }

opb_status memory_stats(opb_backend *bh, opb_memory_stats *out) {
    return opbench::sdk::memory_stats(self(bh), "template", out);
}

void reset_peak(opb_backend *b) { self(b)->memory.reset_peak(); }

void info(opb_backend *, opb_info_fn fn, void *user) {
    fn(user, "threads", "1");
    fn(user, "ops", "add, silu (f32)");
}

const opb_backend_api kApi = {
    sizeof(opb_backend_api),
    OPB_ABI_VERSION,
    "template",
    TEMPLATE_VERSION,
    "out-of-tree skeleton backend: add and silu in f32 on the host",
    "", // the libraries this backend wraps, with versions; none here
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
    nullptr,
    nullptr, // timer_start / timer_stop (optional): no device timer
    info,
    nullptr, // flush_cache (optional): the host evicts CPU caches itself
};

} // namespace

OPB_PLUGIN_ENTRY(host_version) {
    (void)host_version; // the host checks our abi_version against its own
    return &kApi;
}
