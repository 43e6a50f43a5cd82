/* Fake plugins for the loader's handshake tests. One source, built several
 * times with FAKE_MODE set to the defect under test (see meson.build). Written
 * in C so the ABI header is exercised from C too. */
#include "opbench/plugin.h"

#include <stdlib.h>
#include <string.h>

#define FAKE_GOOD 0
#define FAKE_WRONG_MAJOR 1
#define FAKE_SHORT_STRUCT 2
#define FAKE_NULL_TABLE 3
#define FAKE_NULL_ENTRY 4
#define FAKE_NEWER_MINOR 5
#define FAKE_ABI_1_2 6 /* built before int8 weights (ABI 1.3): must never be given an s8 case */
#define FAKE_ABI_1_4 7 /* a table that ends before ABI 1.5's entries, though they are set past its end */

#ifndef FAKE_MODE
#error "FAKE_MODE must be set"
#endif
#ifndef FAKE_NAME
#define FAKE_NAME "fake"
#endif

struct opb_backend {
    char error[128];
};

static opb_status fake_create(const opb_host_services *s, opb_backend **out) {
    (void)s;
    *out = (opb_backend *)calloc(1, sizeof(opb_backend));
    return *out ? OPB_OK : OPB_ERR_OUT_OF_MEMORY;
}
static void fake_destroy(opb_backend *b) { free(b); }
static const char *fake_last_error(opb_backend *b) { return b->error; }
static opb_status fake_probe(opb_backend *b) {
    (void)b;
    return OPB_OK;
}
static opb_status fake_device_info(opb_backend *b, opb_device_info *out) {
    (void)b;
    out->kind = OPB_DEVICE_CPU;
    strcpy(out->name, "fake device");
    return OPB_OK;
}
static opb_status fake_supports(opb_backend *b, const opb_op_desc *d) {
    (void)d;
    strcpy(b->error, "the fake backend runs no op");
    return OPB_ERR_UNSUPPORTED;
}
static opb_status fake_alloc(opb_backend *b, uint64_t n, void **out) {
    (void)b;
    *out = malloc(n ? n : 1);
    return *out ? OPB_OK : OPB_ERR_OUT_OF_MEMORY;
}
static void fake_free(opb_backend *b, void *p) {
    (void)b;
    free(p);
}
static opb_status fake_copy(opb_backend *b, void *dst, const void *src, uint64_t n) {
    (void)b;
    memcpy(dst, src, n);
    return OPB_OK;
}
static opb_status fake_prepare(opb_backend *b, const opb_op_desc *d, opb_plan **p, uint64_t *ws) {
    (void)d;
    (void)p;
    (void)ws;
    strcpy(b->error, "the fake backend runs no op");
    return OPB_ERR_UNSUPPORTED;
}
static opb_status fake_execute(opb_backend *b, opb_plan *p, void *const *t, int32_t n) {
    (void)b;
    (void)p;
    (void)t;
    (void)n;
    return OPB_ERR_INVALID;
}
static void fake_release(opb_backend *b, opb_plan *p) {
    (void)b;
    (void)p;
}
static opb_status fake_sync(opb_backend *b) {
    (void)b;
    return OPB_OK;
}
static opb_status fake_stats(opb_backend *b, opb_memory_stats *s) {
    (void)b;
    s->current_bytes = s->peak_bytes = s->workspace_bytes = 0;
    return OPB_OK;
}
static void fake_reset_peak(opb_backend *b) { (void)b; }

/* ABI 1.5: fixed, recognisable figures the loader tests read back. */
static opb_status fake_device_clocks(opb_backend *b, opb_device_clocks *out) {
    (void)b;
    strcpy(out->uuid, "FAKE-0000-uuid");
    strcpy(out->driver, "0.0.fake");
    out->sustained_mhz = 1500;
    out->max_mhz = 1980;
    return OPB_OK;
}
static opb_status fake_measure_roofs(opb_backend *b, opb_roof_fn fn, void *user) {
    (void)b;
    opb_device_roof roof;
    memset(&roof, 0, sizeof roof);
    roof.struct_size = sizeof roof;
    roof.abi_version = OPB_ABI_VERSION;
    roof.unit = OPB_ROOF_TENSOR;
    roof.dtype = OPB_DTYPE_BF16;
    roof.measured = 7.5e14;
    roof.datasheet = 9.89e14;
    roof.sm_clock_mhz = 1500;
    strcpy(roof.method, "fixture");
    fn(user, &roof);
    roof.unit = OPB_ROOF_DRAM;
    roof.dtype = -1;
    roof.measured = 3.0e12;
    roof.datasheet = 3.35e12;
    fn(user, &roof);
    return OPB_OK;
}
static opb_status fake_clock_begin(opb_backend *b) {
    (void)b;
    return OPB_OK;
}
static opb_status fake_clock_end(opb_backend *b, opb_clock_reading *out) {
    (void)b;
    out->sm_clock_mhz = 1410;
    out->power_watts = 650;
    out->temperature_c = 61;
    out->throttle_reasons = 0;
    return OPB_OK;
}
static opb_status fake_host_seconds(opb_backend *b, double *seconds) {
    (void)b;
    *seconds = 4e-6;
    return OPB_OK;
}

/* A table one field longer than ABI 1.0's, as a plugin of a later minor
 * version would export. */
typedef struct {
    opb_backend_api base;
    void *appended_in_a_later_minor;
} newer_api;

static newer_api table = {
    {
        sizeof(opb_backend_api),
        OPB_ABI_VERSION,
        FAKE_NAME,
        "0.0",
        "a plugin for loader tests",
        "",
        fake_create,
        fake_destroy,
        fake_last_error,
        fake_probe,
        fake_device_info,
        fake_supports,
        fake_alloc,
        fake_free,
        fake_copy,
        fake_copy,
        fake_prepare,
        fake_execute,
        fake_release,
        fake_sync,
        fake_stats,
        fake_reset_peak,
        NULL,
        NULL,
        NULL,
        NULL,
        fake_device_clocks,
        fake_measure_roofs,
        fake_clock_begin,
        fake_clock_end,
        fake_host_seconds,
    },
    NULL,
};

OPB_PLUGIN_ENTRY(host_version) {
    (void)host_version;
#if FAKE_MODE == FAKE_WRONG_MAJOR
    table.base.abi_version = (2u << 16) | 0u;
#elif FAKE_MODE == FAKE_SHORT_STRUCT
    table.base.struct_size = 24;
#elif FAKE_MODE == FAKE_NULL_TABLE
    return NULL;
#elif FAKE_MODE == FAKE_NULL_ENTRY
    table.base.prepare = NULL;
#elif FAKE_MODE == FAKE_ABI_1_2
    table.base.abi_version = (1u << 16) | 2u;
#elif FAKE_MODE == FAKE_ABI_1_4
    table.base.abi_version = (1u << 16) | 4u;
    table.base.struct_size = (uint32_t)offsetof(opb_backend_api, device_clocks);
#elif FAKE_MODE == FAKE_NEWER_MINOR
    table.base.struct_size = sizeof(newer_api);
    table.base.abi_version = OPB_ABI_VERSION + 1;
#endif
    return &table.base;
}
