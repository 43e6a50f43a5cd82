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
#elif FAKE_MODE == FAKE_NEWER_MINOR
    table.base.struct_size = sizeof(newer_api);
    table.base.abi_version = OPB_ABI_VERSION + 1;
#endif
    return &table.base;
}
