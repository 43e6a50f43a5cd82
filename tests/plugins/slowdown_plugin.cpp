// slowdown: a test backend for the CI gate (scripts/ci-bench.sh and
// tests/harness/ci_bench_test.sh). It runs `add` in f32, correctly (it
// verifies against naive), doing the element-wise sum kRepeats times per
// call so one call is tens of microseconds of real work. With
// OPBENCH_TEST_SLOWDOWN=F in the environment (F >= 1, read when the backend
// is created) it does F times the work: a slowdown by a known factor that
// load on the machine cannot hide, as a regression in a kernel would be.
#include "opbench/plugin.h"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

constexpr int kRepeats = 64;

} // namespace

struct opb_backend {
    char error[160];
    double factor; // work multiplier, 1 without OPBENCH_TEST_SLOWDOWN
};

namespace {

opb_status fail(opb_backend *b, opb_status s, const char *msg) {
    std::snprintf(b->error, sizeof b->error, "%s", msg);
    return s;
}

opb_status sd_create(const opb_host_services *, opb_backend **out) {
    auto *b = static_cast<opb_backend *>(std::calloc(1, sizeof(opb_backend)));
    if (!b) return OPB_ERR_OUT_OF_MEMORY;
    b->factor = 1;
    if (const char *env = std::getenv("OPBENCH_TEST_SLOWDOWN")) {
        const double f = std::atof(env);
        if (f >= 1 && f <= 1000) b->factor = f;
    }
    *out = b;
    return OPB_OK;
}
void sd_destroy(opb_backend *b) { std::free(b); }
const char *sd_last_error(opb_backend *b) { return b->error; }
opb_status sd_probe(opb_backend *) { return OPB_OK; }
opb_status sd_device_info(opb_backend *, opb_device_info *out) {
    out->kind = OPB_DEVICE_CPU;
    std::snprintf(out->name, sizeof out->name, "host (slowdown test backend)");
    return OPB_OK;
}
opb_status sd_supports(opb_backend *b, const opb_op_desc *d) {
    if (d->op != OPB_OP_ADD) return fail(b, OPB_ERR_UNSUPPORTED, "slowdown runs add only");
    if (d->dtype != OPB_DTYPE_F32) return fail(b, OPB_ERR_UNSUPPORTED, "slowdown runs f32 only");
    return OPB_OK;
}
opb_status sd_alloc(opb_backend *b, uint64_t bytes, void **out) {
    *out = std::aligned_alloc(64, bytes == 0 ? 64 : (bytes + 63) / 64 * 64);
    return *out ? OPB_OK : fail(b, OPB_ERR_OUT_OF_MEMORY, "slowdown: out of host memory");
}
void sd_free(opb_backend *, void *p) { std::free(p); }
opb_status sd_copy(opb_backend *, void *dst, const void *src, uint64_t n) {
    std::memcpy(dst, src, n);
    return OPB_OK;
}
// The plan is the element count.
opb_status sd_prepare(opb_backend *b, const opb_op_desc *d, opb_plan **plan, uint64_t *ws) {
    if (opb_status s = sd_supports(b, d); s != OPB_OK) return s;
    auto *n = static_cast<int64_t *>(std::malloc(sizeof(int64_t)));
    if (!n) return fail(b, OPB_ERR_OUT_OF_MEMORY, "slowdown: out of host memory");
    *n = d->p.eltwise.rows * d->p.eltwise.cols;
    *ws = 0;
    *plan = reinterpret_cast<opb_plan *>(n);
    return OPB_OK;
}
opb_status sd_execute(opb_backend *b, opb_plan *plan, void *const *t, int32_t count) {
    if (count != 3) return fail(b, OPB_ERR_INVALID, "slowdown: add takes 3 tensors");
    const int64_t n = *reinterpret_cast<int64_t *>(plan);
    const auto *x = static_cast<const float *>(t[0]);
    const auto *y = static_cast<const float *>(t[1]);
    auto *out = static_cast<float *>(t[2]);
    const long repeats = std::lround(kRepeats * b->factor);
    for (long r = 0; r < repeats; ++r) {
        for (int64_t i = 0; i < n; ++i) out[i] = x[i] + y[i];
        asm volatile("" : : "r"(out) : "memory"); // every repeat is done, none folded away
    }
    return OPB_OK;
}
void sd_release(opb_backend *, opb_plan *plan) { std::free(plan); }
opb_status sd_sync(opb_backend *) { return OPB_OK; }
opb_status sd_stats(opb_backend *, opb_memory_stats *s) {
    s->current_bytes = s->peak_bytes = s->workspace_bytes = 0;
    return OPB_OK;
}
void sd_reset_peak(opb_backend *) {}

const opb_backend_api kApi = {
    sizeof(opb_backend_api),
    OPB_ABI_VERSION,
    "slowdown",
    "1.0",
    "test backend: add f32, OPBENCH_TEST_SLOWDOWN=F times slower",
    "",
    sd_create,
    sd_destroy,
    sd_last_error,
    sd_probe,
    sd_device_info,
    sd_supports,
    sd_alloc,
    sd_free,
    sd_copy,
    sd_copy,
    sd_prepare,
    sd_execute,
    sd_release,
    sd_sync,
    sd_stats,
    sd_reset_peak,
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
