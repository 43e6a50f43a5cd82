// faultwrap: the naive backend under another name, which misbehaves inside
// the norms (layernorm and rmsnorm) when OPBENCH_FAULT says so: every other
// op runs as naive runs it. Decoder workloads call a norm in every layer, so
// this is a plugin that crashes inside a workload while its op cases of
// other ops pass (tests/harness/isolation_test.cpp, workload faults).
//
//   OPBENCH_FAULT   segv | abort | exit0 (unset or empty: behaves)
//
// It loads the naive plugin from OPBENCH_NAIVE_PLUGIN (the build's path,
// compiled in) and forwards every call to its table.
#include "opbench/plugin.h"

#include <dlfcn.h>

#include <cstdlib>
#include <cstring>
#include <mutex>
#include <set>
#include <string>

namespace {

opb_backend_api g_api;                 // naive's table with prepare / execute / release wrapped
const opb_backend_api *g_naive = nullptr;
std::mutex g_mutex;
std::set<const opb_plan *> g_norm_plans; // plans of a norm: the faulty ones

bool is_norm(const opb_op_desc *d) { return d->op == OPB_OP_LAYERNORM || d->op == OPB_OP_RMSNORM; }

__attribute__((no_sanitize("undefined"), noinline)) void write_through_null() {
    static int *volatile null = nullptr;
    *null = 1;
}

void misbehave() {
    const char *v = std::getenv("OPBENCH_FAULT");
    const std::string mode = v ? v : "";
    if (mode == "segv") write_through_null();
    if (mode == "abort") std::abort();
    if (mode == "exit0") std::exit(0);
}

opb_status fw_prepare(opb_backend *b, const opb_op_desc *desc, opb_plan **out, uint64_t *workspace) {
    const opb_status s = g_naive->prepare(b, desc, out, workspace);
    if (s == OPB_OK && is_norm(desc)) {
        std::lock_guard lock(g_mutex);
        g_norm_plans.insert(*out);
    }
    return s;
}

opb_status fw_execute(opb_backend *b, opb_plan *plan, void *const *tensors, int32_t count) {
    bool faulty;
    {
        std::lock_guard lock(g_mutex);
        faulty = g_norm_plans.count(plan) > 0;
    }
    if (faulty) misbehave();
    return g_naive->execute(b, plan, tensors, count);
}

void fw_release(opb_backend *b, opb_plan *plan) {
    {
        std::lock_guard lock(g_mutex);
        g_norm_plans.erase(plan);
    }
    g_naive->release(b, plan);
}

} // namespace

OPB_PLUGIN_ENTRY(host_version) {
    if (!g_naive) {
        void *lib = dlopen(OPBENCH_NAIVE_PLUGIN, RTLD_NOW | RTLD_LOCAL);
        if (!lib) return nullptr;
        auto entry = reinterpret_cast<opb_plugin_entry_fn>(dlsym(lib, OPB_PLUGIN_ENTRY_SYMBOL));
        g_naive = entry ? entry(host_version) : nullptr;
        if (!g_naive) return nullptr;
        std::memcpy(&g_api, g_naive, sizeof g_api);
        g_api.name = "faultwrap";
        g_api.description = "test backend: naive, misbehaving inside the norms when OPBENCH_FAULT is set";
        g_api.prepare = fw_prepare;
        g_api.execute = fw_execute;
        g_api.release = fw_release;
    }
    return &g_api;
}
