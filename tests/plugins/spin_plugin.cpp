// spin: a test wrapper for paired A/B runs (docs/measurement.md, "Paired
// A/B"). It forwards every call to another plugin file,
// OPBENCH_TEST_SPIN_INNER=PATH (e.g. the naive backend), under that
// backend's own name, so `--plugin naive@new=spin.so` is a build of naive;
// its execute then spins for OPBENCH_TEST_SPIN_EXTRA=F (0 <= F <= 10) times
// the time the inner execute took: a slowdown by a known fraction of the
// kernel's own time, which follows the machine's speed as a slower kernel
// would. Without OPBENCH_TEST_SPIN_INNER it offers no table (the loader
// refuses it, saying so). Built with SPIN_BACKEND_NAME, it offers the inner
// backend under that name instead.
#include "opbench/plugin.h"

#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

opb_backend_api g_api;              // the inner table, execute replaced
const opb_backend_api *g_inner = nullptr;
double g_extra = 0;
char g_description[256];

double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

opb_status spin_execute(opb_backend *b, opb_plan *plan, void *const *tensors, int32_t count) {
    const double t0 = now();
    const opb_status s = g_inner->execute(b, plan, tensors, count);
    const double t1 = now();
    const double until = t1 + g_extra * (t1 - t0);
    while (now() < until) {}
    return s;
}

} // namespace

OPB_PLUGIN_ENTRY(host_version) {
    if (OPB_ABI_MAJOR(host_version) != OPB_ABI_VERSION_MAJOR) return nullptr;
    if (g_inner) return &g_api;
    const char *inner = std::getenv("OPBENCH_TEST_SPIN_INNER");
    if (!inner || !*inner) return nullptr;
    if (const char *extra = std::getenv("OPBENCH_TEST_SPIN_EXTRA")) g_extra = std::clamp(std::atof(extra), 0.0, 10.0);
    void *lib = dlopen(inner, RTLD_NOW | RTLD_LOCAL);
    if (!lib) return nullptr;
    auto entry = reinterpret_cast<opb_plugin_entry_fn>(dlsym(lib, OPB_PLUGIN_ENTRY_SYMBOL));
    if (!entry) return nullptr;
    g_inner = entry(host_version);
    if (!g_inner) return nullptr;
    std::memset(&g_api, 0, sizeof g_api);
    std::memcpy(&g_api, g_inner, std::min<std::size_t>(sizeof g_api, g_inner->struct_size));
    g_api.struct_size = std::min<uint32_t>(sizeof g_api, g_inner->struct_size);
    std::snprintf(g_description, sizeof g_description, "spin test wrapper (+%g of execute) of: %s", g_extra,
                  g_inner->description ? g_inner->description : "");
    g_api.description = g_description;
#ifdef SPIN_BACKEND_NAME
    // A backend no opbench has (built as mybe-spin.so): an out-of-tree plugin
    // for `opbench ab`, whose suite names it (tests/harness/paired_e2e_test.sh).
    g_api.name = SPIN_BACKEND_NAME;
#endif
    g_api.execute = spin_execute;
    return &g_api;
}
