// corrupt: a test backend that computes every op with the naive backend and
// then makes one element or one row of the output wrong, at a seeded random
// place, so verification's power can be measured end to end (issue 10,
// tests/bench/opbench_bench.py fast-power).
//
// A proxy: it opens the naive plugin (NAIVE_PLUGIN_PATH, from meson), takes
// its table and replaces name, description, prepare, execute and release.
// What it corrupts comes from the environment, read at create:
//   OPBENCH_CORRUPT       "element": one element of the output is moved by
//                           ± the output's rms (the size of a typical value);
//                         "row": one row (last axis) of the output is scaled
//                           by 0.8 (a subtle error: it stays within the range
//                           of the row's inputs);
//                         "none" or unset: outputs are left correct.
//   OPBENCH_CORRUPT_SEED  the seed of the place (default 0).
// The place depends on the seed and the description only, so every execute
// of a plan corrupts the same place. Each prepare logs it at WARN level:
//   "corrupt: <mode> at flat element E / row R of R_total (seed S)".
#include "opbench/ops.hpp"
#include "opbench/plugin.h"

#include <dlfcn.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>

#ifndef NAIVE_PLUGIN_PATH
#error "NAIVE_PLUGIN_PATH must be defined (tests/plugins/meson.build)"
#endif

namespace {

const opb_backend_api *naive_api() {
    static const opb_backend_api *api = [] {
        void *h = dlopen(NAIVE_PLUGIN_PATH, RTLD_NOW | RTLD_LOCAL);
        if (!h) return static_cast<const opb_backend_api *>(nullptr);
        auto entry = reinterpret_cast<opb_plugin_entry_fn>(dlsym(h, OPB_PLUGIN_ENTRY_SYMBOL));
        return entry ? entry(OPB_ABI_VERSION) : nullptr;
    }();
    return api;
}

enum class Mode { none, element, row };

// The instance: the naive instance plus what to corrupt. The naive handle is
// the first member, so an opb_backend* of ours is never handed to naive.
struct Instance {
    opb_backend *inner;
    const opb_host_services *services;
    Mode mode;
    uint64_t seed;
};
Instance *self(opb_backend *b) { return reinterpret_cast<Instance *>(b); }

struct Plan {
    opb_plan *inner;
    opb_op_desc desc;
    int64_t elements, row_length;
    int64_t place; // flat element (element mode) or row (row mode)
    bool plus;     // element mode: the error's sign
};

uint64_t splitmix(uint64_t &s) {
    uint64_t z = (s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

opb_status create(const opb_host_services *services, opb_backend **out) {
    const opb_backend_api *api = naive_api();
    if (!api) return OPB_ERR_UNAVAILABLE;
    opb_backend *inner = nullptr;
    if (opb_status s = api->create(services, &inner); s != OPB_OK) return s;
    auto *inst = new (std::nothrow) Instance{inner, services, Mode::none, 0};
    if (!inst) {
        api->destroy(inner);
        return OPB_ERR_OUT_OF_MEMORY;
    }
    const char *mode = std::getenv("OPBENCH_CORRUPT");
    if (mode && std::strcmp(mode, "element") == 0) inst->mode = Mode::element;
    if (mode && std::strcmp(mode, "row") == 0) inst->mode = Mode::row;
    if (const char *seed = std::getenv("OPBENCH_CORRUPT_SEED")) inst->seed = std::strtoull(seed, nullptr, 10);
    *out = reinterpret_cast<opb_backend *>(inst);
    return OPB_OK;
}

void destroy(opb_backend *b) {
    naive_api()->destroy(self(b)->inner);
    delete self(b);
}

// Every other entry forwards to naive with the inner handle.
const char *last_error(opb_backend *b) { return naive_api()->last_error(self(b)->inner); }
opb_status probe(opb_backend *b) { return naive_api()->probe(self(b)->inner); }
opb_status device_info(opb_backend *b, opb_device_info *o) { return naive_api()->device_info(self(b)->inner, o); }
opb_status supports(opb_backend *b, const opb_op_desc *d) { return naive_api()->supports(self(b)->inner, d); }
opb_status alloc_(opb_backend *b, uint64_t n, void **o) { return naive_api()->alloc(self(b)->inner, n, o); }
void free_(opb_backend *b, void *p) { naive_api()->free(self(b)->inner, p); }
opb_status copy_in(opb_backend *b, void *d, const void *s, uint64_t n) {
    return naive_api()->copy_in(self(b)->inner, d, s, n);
}
opb_status copy_out(opb_backend *b, void *d, const void *s, uint64_t n) {
    return naive_api()->copy_out(self(b)->inner, d, s, n);
}
opb_status synchronize(opb_backend *b) { return naive_api()->synchronize(self(b)->inner); }
opb_status memory_stats(opb_backend *b, opb_memory_stats *o) { return naive_api()->memory_stats(self(b)->inner, o); }
void reset_peak(opb_backend *b) { naive_api()->reset_peak(self(b)->inner); }

opb_status prepare(opb_backend *b, const opb_op_desc *desc, opb_plan **out, uint64_t *ws) {
    Instance *inst = self(b);
    opb_plan *inner = nullptr;
    if (opb_status s = naive_api()->prepare(inst->inner, desc, &inner, ws); s != OPB_OK) return s;
    auto *plan = new (std::nothrow) Plan{inner, *desc, 0, 1, 0, true};
    if (!plan) {
        naive_api()->release(inst->inner, inner);
        return OPB_ERR_OUT_OF_MEMORY;
    }
    const auto specs = opbench::op_tensors(*desc);
    plan->elements = specs.back().elements();
    plan->row_length = specs.back().shape.back();
    // The place: from the seed and the description's bytes.
    uint64_t s = inst->seed;
    const auto *bytes = reinterpret_cast<const unsigned char *>(desc);
    for (std::size_t i = 0; i < sizeof *desc; ++i) s = s * 1099511628211ull ^ bytes[i];
    const uint64_t r = splitmix(s);
    const int64_t rows = plan->elements / plan->row_length;
    plan->place = inst->mode == Mode::row ? int64_t(r % uint64_t(rows)) : int64_t(r % uint64_t(plan->elements));
    plan->plus = (splitmix(s) >> 63) != 0;
    if (inst->mode != Mode::none) {
        char msg[200];
        std::snprintf(msg, sizeof msg, "corrupt: %s at flat element %lld / row %lld of %lld (seed %llu)",
                      inst->mode == Mode::row ? "row" : "element",
                      (long long)(inst->mode == Mode::row ? plan->place * plan->row_length : plan->place),
                      (long long)(inst->mode == Mode::row ? plan->place : plan->place / plan->row_length),
                      (long long)rows, (unsigned long long)inst->seed);
        inst->services->log(inst->services->host, OPB_LOG_WARN, msg);
    }
    *out = reinterpret_cast<opb_plan *>(plan);
    return OPB_OK;
}

opb_status execute(opb_backend *b, opb_plan *ph, void *const *tensors, int32_t count) {
    Instance *inst = self(b);
    Plan *plan = reinterpret_cast<Plan *>(ph);
    if (opb_status s = naive_api()->execute(inst->inner, plan->inner, tensors, count); s != OPB_OK) return s;
    if (inst->mode == Mode::none) return OPB_OK;
    void *out = tensors[count - 1]; // naive: host memory
    const int dt = plan->desc.dtype;
    if (inst->mode == Mode::element) {
        double sq = 0.0;
        for (int64_t i = 0; i < plan->elements; ++i) {
            const double v = opbench::load_as_f32(out, dt, i);
            sq += v * v;
        }
        const double rms = std::sqrt(sq / double(plan->elements));
        const double v = opbench::load_as_f32(out, dt, plan->place);
        opbench::store_from_f32(out, dt, plan->place, float(v + (plan->plus ? rms : -rms)));
    } else {
        const int64_t first = plan->place * plan->row_length;
        for (int64_t i = first; i < first + plan->row_length; ++i)
            opbench::store_from_f32(out, dt, i, 0.8f * opbench::load_as_f32(out, dt, i));
    }
    return OPB_OK;
}

void release(opb_backend *b, opb_plan *ph) {
    Plan *plan = reinterpret_cast<Plan *>(ph);
    naive_api()->release(self(b)->inner, plan->inner);
    delete plan;
}

const opb_backend_api kApi = {
    sizeof(opb_backend_api),
    OPB_ABI_VERSION,
    "corrupt",
    "1.0",
    "test backend: naive's results with one element or row made wrong (OPBENCH_CORRUPT)",
    "",
    create,
    destroy,
    last_error,
    probe,
    device_info,
    supports,
    alloc_,
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
    nullptr,
    nullptr,
    nullptr,
};

} // namespace

OPB_PLUGIN_ENTRY(host_version) {
    (void)host_version;
    return &kApi;
}
