// fault: a test backend that misbehaves on purpose, for the isolation tests
// (tests/harness/isolation_test.cpp). It implements `add` in f32 correctly
// (so it verifies against naive) and nothing else, and on one case shape only
// it does what a broken plugin does:
//
//   OPBENCH_FAULT       segv | abort | exit0 | throw | bad_alloc | hang |
//                       slow (sleeps OPBENCH_FAULT_SLOW_MS, default 1000,
//                       then behaves) (unset or empty: behaves)
//   OPBENCH_FAULT_ROWS  the `rows` of the faulty case (default 13); 1 is
//                       the call-overhead probe's 1x1 add
//   OPBENCH_FAULT_PHASE where the fault strikes (default execute):
//                       create   in create(), whatever the shape;
//                       probe    in probe(), whatever the shape;
//                       prepare  in prepare();
//                       verify   in the plan's first execute (the one whose
//                                output is compared with the reference);
//                       execute  in the plan's second execute (the first
//                                warmup call, after verification passed).
//
// `throw` lets a C++ exception escape through the C boundary, which the ABI
// forbids and a careless plugin does anyway; `bad_alloc` throws
// std::bad_alloc the same way, as an allocation inside a library would.
#include "opbench/plugin.h"

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <stdexcept>
#include <string>
#include <thread>
#include <unistd.h>

struct opb_backend {
    char error[160];
};

struct opb_plan {
    int64_t elements = 0;
    bool faulty = false; // this plan's shape is the one that misbehaves
    int executes = 0;
};

namespace {

// A real SIGSEGV, as a buggy plugin makes it. Not caught by UBSan's null
// check (the ASan + UBSan build of .ci/run would stop it as undefined
// behaviour first); .ci/run sets handle_segv=0, so ASan leaves the signal be.
__attribute__((no_sanitize("undefined"), noinline)) void write_through_null() {
    // The pointer itself volatile: the compiler cannot prove it null and
    // drop or replace the store.
    static int *volatile null = nullptr;
    *null = 1;
}

std::string env(const char *name, const char *fallback) {
    const char *v = std::getenv(name);
    return v && *v ? v : fallback;
}

// Does what OPBENCH_FAULT says. Returns only for `slow` and an unknown mode.
void misbehave() {
    const std::string mode = env("OPBENCH_FAULT", "");
    if (mode == "slow") {
        std::this_thread::sleep_for(std::chrono::milliseconds(std::atoll(env("OPBENCH_FAULT_SLOW_MS", "1000").c_str())));
        return;
    }
    if (mode == "segv") {
        write_through_null();
    }
    if (mode == "abort") std::abort();
    if (mode == "exit0") std::exit(0);
    if (mode == "throw") throw std::runtime_error("fault plugin: thrown through the C boundary");
    if (mode == "bad_alloc") throw std::bad_alloc();
    if (mode == "hang")
        for (;;) ::pause();
}

// The fault strikes in `phase` (of the backend, or of a plan when given).
bool fault_in(const char *phase) {
    return env("OPBENCH_FAULT_PHASE", "execute") == phase && !env("OPBENCH_FAULT", "").empty();
}
bool fault_here(const opb_plan *plan, const char *phase) { return plan->faulty && fault_in(phase); }

opb_status fail(opb_backend *b, opb_status s, const char *msg) {
    std::snprintf(b->error, sizeof b->error, "%s", msg);
    return s;
}

opb_status create(const opb_host_services *, opb_backend **out) {
    if (fault_in("create")) misbehave();
    *out = static_cast<opb_backend *>(std::calloc(1, sizeof(opb_backend)));
    return *out ? OPB_OK : OPB_ERR_OUT_OF_MEMORY;
}
void destroy(opb_backend *b) { std::free(b); }
const char *last_error(opb_backend *b) { return b->error; }
opb_status probe(opb_backend *) {
    if (fault_in("probe")) misbehave();
    return OPB_OK;
}
opb_status device_info(opb_backend *, opb_device_info *out) {
    out->kind = OPB_DEVICE_CPU;
    std::snprintf(out->name, sizeof out->name, "fault test device");
    return OPB_OK;
}
opb_status supports(opb_backend *b, const opb_op_desc *d) {
    if (d->op != OPB_OP_ADD || d->dtype != OPB_DTYPE_F32) return fail(b, OPB_ERR_UNSUPPORTED, "fault: only add in f32");
    return OPB_OK;
}
opb_status alloc(opb_backend *b, uint64_t bytes, void **out) {
    *out = std::aligned_alloc(64, (bytes + 63) / 64 * 64 + 64);
    return *out ? OPB_OK : fail(b, OPB_ERR_OUT_OF_MEMORY, "fault: alloc failed");
}
void release_memory(opb_backend *, void *p) { std::free(p); }
opb_status copy(opb_backend *, void *dst, const void *src, uint64_t bytes) {
    std::memcpy(dst, src, bytes);
    return OPB_OK;
}
opb_status prepare(opb_backend *b, const opb_op_desc *d, opb_plan **out, uint64_t *ws) {
    opb_status s = supports(b, d);
    if (s != OPB_OK) return s;
    auto *plan = new opb_plan;
    plan->elements = d->p.eltwise.rows * d->p.eltwise.cols;
    plan->faulty = d->p.eltwise.rows == std::atoll(env("OPBENCH_FAULT_ROWS", "13").c_str());
    if (fault_here(plan, "prepare")) misbehave();
    *out = plan;
    if (ws) *ws = 0;
    return OPB_OK;
}
opb_status execute(opb_backend *b, opb_plan *plan, void *const *t, int32_t count) {
    if (count != 3) return fail(b, OPB_ERR_INVALID, "fault: add takes 3 tensors");
    ++plan->executes;
    if (plan->executes == 1 && fault_here(plan, "verify")) misbehave();
    if (plan->executes == 2 && fault_here(plan, "execute")) misbehave();
    const auto *x = static_cast<const float *>(t[0]);
    const auto *y = static_cast<const float *>(t[1]);
    auto *z = static_cast<float *>(t[2]);
    for (int64_t i = 0; i < plan->elements; ++i) z[i] = x[i] + y[i];
    return OPB_OK;
}
void release(opb_backend *, opb_plan *plan) { delete plan; }
opb_status synchronize(opb_backend *) { return OPB_OK; }
opb_status memory_stats(opb_backend *, opb_memory_stats *out) {
    out->current_bytes = out->peak_bytes = out->workspace_bytes = 0;
    return OPB_OK;
}
void reset_peak(opb_backend *) {}

const opb_backend_api kApi = [] {
    opb_backend_api a{};
    a.struct_size = sizeof a;
    a.abi_version = OPB_ABI_VERSION;
    a.name = "fault";
    a.version = "1";
    a.description = "test backend: add f32, misbehaving on one shape (OPBENCH_FAULT)";
    a.library_versions = "";
    a.create = create;
    a.destroy = destroy;
    a.last_error = last_error;
    a.probe = probe;
    a.device_info = device_info;
    a.supports = supports;
    a.alloc = alloc;
    a.free = release_memory;
    a.copy_in = copy;
    a.copy_out = copy;
    a.prepare = prepare;
    a.execute = execute;
    a.release = release;
    a.synchronize = synchronize;
    a.memory_stats = memory_stats;
    a.reset_peak = reset_peak;
    return a;
}();

} // namespace

OPB_PLUGIN_ENTRY(host_version) {
    (void)host_version;
    return &kApi;
}
