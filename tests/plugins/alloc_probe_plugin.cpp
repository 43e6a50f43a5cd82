// alloc_probe: a test backend whose memory behaviour is known to the byte,
// so the harness's memory figures can be checked exactly
// (tests/harness/memory_accounting_test.cpp).
//
// It implements one op, `add` in f32, correctly (it verifies against naive),
// and nothing else. What it allocates, all with glibc's allocator so the
// harness's heap interposer sees it:
//   * alloc():   one aligned_alloc per tensor, of exactly the requested size
//                (tensor sizes are multiples of 64 in the test); reported
//                through services->on_alloc / on_free. Sizes are remembered
//                in a fixed table inside the instance: no bookkeeping
//                allocation.
//   * prepare(): one malloc of ALLOC_PROBE_PREPARE_BYTES (P), every page
//                written (so it is resident and counts in RSS), reported
//                through on_alloc and as the plan's workspace. The block *is*
//                the plan handle: prepare makes no other allocation.
//   * execute(): one malloc of ALLOC_PROBE_EXECUTE_BYTES (E), written, then
//                freed; it is NOT reported through on_alloc (it stands for a
//                library's own allocation inside the timed region, which only
//                the interposer can see).
// P and E come from meson (tests/plugins/meson.build), which passes the same
// defines to the test.
#include "opbench/plugin.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#ifndef ALLOC_PROBE_PREPARE_BYTES
#error "ALLOC_PROBE_PREPARE_BYTES must be defined (tests/plugins/meson.build)"
#endif
#ifndef ALLOC_PROBE_EXECUTE_BYTES
#error "ALLOC_PROBE_EXECUTE_BYTES must be defined (tests/plugins/meson.build)"
#endif

namespace {

constexpr uint64_t kPrepareBytes = ALLOC_PROBE_PREPARE_BYTES;
constexpr uint64_t kExecuteBytes = ALLOC_PROBE_EXECUTE_BYTES;
constexpr int kMaxBlocks = 64;
constexpr std::size_t kPage = 4096;

} // namespace

struct opb_backend {
    const opb_host_services *services;
    char error[160];
    struct Block {
        void *ptr;
        uint64_t bytes;
    } blocks[kMaxBlocks]; // live tensors: fixed table, no allocation
    uint64_t current, peak, workspace;
};

namespace {

opb_status fail(opb_backend *b, opb_status s, const char *msg) {
    std::snprintf(b->error, sizeof b->error, "%s", msg);
    return s;
}

void account_alloc(opb_backend *b, uint64_t bytes) {
    b->current += bytes;
    if (b->current > b->peak) b->peak = b->current;
    b->services->on_alloc(b->services->host, bytes, 0);
}

void account_free(opb_backend *b, uint64_t bytes) {
    b->current -= bytes;
    b->services->on_free(b->services->host, bytes, 0);
}

// Keeps the compiler from proving a malloc/free pair dead and removing it.
inline void escape(void *p) { asm volatile("" : : "r"(p) : "memory"); }

opb_status probe_create(const opb_host_services *s, opb_backend **out) {
    auto *b = static_cast<opb_backend *>(std::calloc(1, sizeof(opb_backend)));
    if (!b) return OPB_ERR_OUT_OF_MEMORY;
    b->services = s;
    *out = b;
    return OPB_OK;
}
void probe_destroy(opb_backend *b) { std::free(b); }
const char *probe_last_error(opb_backend *b) { return b->error; }
opb_status probe_probe(opb_backend *) { return OPB_OK; }
opb_status probe_device_info(opb_backend *, opb_device_info *out) {
    out->kind = OPB_DEVICE_CPU;
    std::snprintf(out->name, sizeof out->name, "host (alloc_probe test backend)");
    out->total_memory = out->free_memory = 0;
    return OPB_OK;
}

opb_status probe_supports(opb_backend *b, const opb_op_desc *d) {
    if (d->op != OPB_OP_ADD) return fail(b, OPB_ERR_UNSUPPORTED, "alloc_probe runs add only");
    if (d->dtype != OPB_DTYPE_F32) return fail(b, OPB_ERR_UNSUPPORTED, "alloc_probe runs f32 only");
    return OPB_OK;
}

opb_status probe_alloc(opb_backend *b, uint64_t bytes, void **out) {
    int slot = -1;
    for (int i = 0; i < kMaxBlocks; ++i)
        if (!b->blocks[i].ptr) {
            slot = i;
            break;
        }
    if (slot < 0) return fail(b, OPB_ERR_OUT_OF_MEMORY, "alloc_probe: more than 64 live tensors");
    const uint64_t rounded = bytes == 0 ? 64 : (bytes + 63) / 64 * 64;
    void *p = std::aligned_alloc(64, rounded);
    if (!p) return fail(b, OPB_ERR_OUT_OF_MEMORY, "alloc_probe: out of host memory");
    b->blocks[slot] = {p, bytes};
    account_alloc(b, bytes);
    *out = p;
    return OPB_OK;
}

void probe_free(opb_backend *b, void *p) {
    for (auto &blk : b->blocks)
        if (blk.ptr == p && p) {
            std::free(p);
            account_free(b, blk.bytes);
            blk = {nullptr, 0};
            return;
        }
}

opb_status probe_copy(opb_backend *, void *dst, const void *src, uint64_t n) {
    std::memcpy(dst, src, n);
    return OPB_OK;
}

opb_status probe_prepare(opb_backend *b, const opb_op_desc *d, opb_plan **plan, uint64_t *ws) {
    if (opb_status s = probe_supports(b, d); s != OPB_OK) return s;
    auto *block = static_cast<unsigned char *>(std::malloc(kPrepareBytes));
    if (!block) return fail(b, OPB_ERR_OUT_OF_MEMORY, "alloc_probe: out of host memory");
    // Touch every page so the whole block is resident. The first bytes hold
    // the op's size (rows x cols) for execute.
    for (std::size_t i = 0; i < kPrepareBytes; i += kPage) block[i] = 1;
    block[kPrepareBytes - 1] = 1;
    const int64_t n = d->p.eltwise.rows * d->p.eltwise.cols;
    std::memcpy(block, &n, sizeof n);
    account_alloc(b, kPrepareBytes);
    b->workspace += kPrepareBytes;
    *ws = kPrepareBytes;
    *plan = reinterpret_cast<opb_plan *>(block);
    return OPB_OK;
}

opb_status probe_execute(opb_backend *b, opb_plan *plan, void *const *t, int32_t count) {
    if (count != 3) return fail(b, OPB_ERR_INVALID, "alloc_probe: add takes 3 tensors");
    int64_t n = 0;
    std::memcpy(&n, plan, sizeof n);
    // The known per-call allocation: one malloc of E bytes, written, freed.
    auto *scratch = static_cast<unsigned char *>(std::malloc(kExecuteBytes));
    if (!scratch) return fail(b, OPB_ERR_OUT_OF_MEMORY, "alloc_probe: out of host memory");
    std::memset(scratch, 0, kExecuteBytes);
    escape(scratch);
    std::free(scratch);
    const auto *x = static_cast<const float *>(t[0]);
    const auto *y = static_cast<const float *>(t[1]);
    auto *out = static_cast<float *>(t[2]);
    for (int64_t i = 0; i < n; ++i) out[i] = x[i] + y[i];
    return OPB_OK;
}

void probe_release(opb_backend *b, opb_plan *plan) {
    if (!plan) return;
    std::free(plan);
    b->workspace -= kPrepareBytes;
    account_free(b, kPrepareBytes);
}

opb_status probe_sync(opb_backend *) { return OPB_OK; }
opb_status probe_stats(opb_backend *b, opb_memory_stats *s) {
    s->current_bytes = b->current;
    s->peak_bytes = b->peak;
    s->workspace_bytes = b->workspace;
    return OPB_OK;
}
void probe_reset_peak(opb_backend *b) { b->peak = b->current; }

const opb_backend_api kApi = {
    sizeof(opb_backend_api),
    OPB_ABI_VERSION,
    "alloc_probe",
    "1.0",
    "test backend: add f32 with known allocations (prepare P bytes, execute E bytes)",
    "",
    probe_create,
    probe_destroy,
    probe_last_error,
    probe_probe,
    probe_device_info,
    probe_supports,
    probe_alloc,
    probe_free,
    probe_copy,
    probe_copy,
    probe_prepare,
    probe_execute,
    probe_release,
    probe_sync,
    probe_stats,
    probe_reset_peak,
    nullptr, // timer_start
    nullptr, // timer_stop
    nullptr, // info
    nullptr, // flush_cache
};

} // namespace

OPB_PLUGIN_ENTRY(host_version) {
    if (OPB_ABI_MAJOR(host_version) != OPB_ABI_VERSION_MAJOR) return nullptr;
    return &kApi;
}
