// fakegpu: the naive backend presented as a GPU whose plugin implements ABI
// 1.5's device entries with fixture figures (issue 41), so the run's and
// the readers' handling of device roofs and throttled repetitions is tested
// on a CPU (tests/harness/device_roofs_e2e_test.sh).
//
// Its roofs (measure_roofs) are tiny, so the entries' shares are far above
// 100% (each must then carry its cause); OPBENCH_FAKEGPU_ROOF_SCALE=F
// multiplies every figure (the ridge points stay), so F = 1e9 puts every
// share far below 100%. The ridge points pick the judge of each matmul:
//   simt f32     1e6 FLOP/s (datasheet 2e6)   ridge 1: a 32^3 f32 GEMM (5.3 FLOP/B)
//   tensor bf16  1e6 FLOP/s (no datasheet)    ridge 1
//   tensor s8    5e6 ops/s (no datasheet)     ridge 5: a 32^3 s8 GEMM (10.7)
//   dram         1e6 B/s (datasheet 1e18)     a GEMV (0.48 FLOP/B), softmax
// No tensor tf32 and no f16 roof: such entries get no share, said so.
//
//   OPBENCH_FAKEGPU_CLOCK_MHZ   the SM clock every repetition reads (default
//                               1500, the sustained clock: never throttled;
//                               900 is below 85% of it: throttled); a list
//                               ("1500,1400") is read in turn, one value per
//                               repetition of this process, from the first
//   OPBENCH_FAKEGPU_CLOCK_REASONS NVML's clock-event reasons mask each
//                               repetition reads (e.g. 0x44: sw power cap,
//                               hw thermal slowdown); the idle bit (0x1) is
//                               dropped, as the cuda plugin drops it
// As the cuda plugin, device_clocks reports the ceiling (1980 MHz) as the
// sustained clock until this process has run measure_roofs, then 1500: a
// worker process reading its own answer would judge 1500 throttled (76%);
// the harness reads the cached roofs' 1500 instead (device_probe.hpp).
//   OPBENCH_FAKEGPU_ROOFS       "fail": measure_roofs fails (the run says why)
//   OPBENCH_FAKEGPU_DEVICE_SHARE set (a share, e.g. 0.5): the plugin has a
//                               device timer and host time (timer_start,
//                               timer_stop, timer_host_seconds); the host
//                               time is the time spent inside execute and
//                               the device time that share of it, so a
//                               share below 1 makes every entry
//                               launch-bound (host time >= device time).
//                               (A share of the calls' wall time held the
//                               loop between calls too: device_roofs_e2e
//                               saw 1.5 us of device time to 1.2 us of
//                               host time for a 1 us call beside other tests.)
//                               Unset: no device timer, as before.
//   OPBENCH_FAKEGPU_FREE_MEMORY  bytes (a plain count) the device reports
//                               free (and at least as many total), so the
//                               device memory fit check (issue 42) is
//                               tested on a CPU. Unset: the host's, as
//                               naive reports them.
//   OPBENCH_FAKEGPU_TIMELINE    the kernel timeline (ABI 1.6, issue 42):
//                               "D0,G0,D1,G1,D2" (microseconds): each execute
//                               call "runs" kernels of D0, D1, D2 us with
//                               gaps G0, G1 between them, on stream 7 of a
//                               fixture device clock (the calls 2 us apart);
//                               "refuse": activity_begin fails as CUPTI does
//                               without the privilege. Unset: no entries.
//   OPBENCH_FAKEGPU_TIMELINE_SCOPES  "qk,softmax,pv": the kernels' plugin
//                               scopes, in order (unset: none)
//   OPBENCH_FAKEGPU_GRAPH       the graph launch mode (ABI 1.6, issue 41):
//                               "on": graph_prepare keeps the plan, tensors
//                               and call count, graph_launch runs the calls;
//                               "refuse": graph_prepare fails as a library
//                               that refuses stream capture does. Unset: no
//                               graph entries (the run measures batch).
//   OPBENCH_FAKEGPU_GRAPH_LOG   a file each graph entry appends a line to
//                               ("prepare K", "launch K", "release"), so a
//                               test counts captures, replays and releases
//
// It loads the naive plugin from OPBENCH_NAIVE_PLUGIN (the build's path,
// compiled in) and forwards every other call to its table.
#include "opbench/plugin.h"

#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

opb_backend_api g_api; // naive's table, presented as a GPU with ABI 1.5's entries
const opb_backend_api *g_naive = nullptr;

opb_status fg_device_info(opb_backend *b, opb_device_info *out) {
    const opb_status s = g_naive->device_info(b, out);
    out->kind = OPB_DEVICE_GPU;
    std::snprintf(out->name, sizeof out->name, "fixture GPU (naive on the host)");
    if (const char *v = std::getenv("OPBENCH_FAKEGPU_FREE_MEMORY"); v && *v) {
        out->free_memory = std::strtoull(v, nullptr, 10);
        out->total_memory = std::max(out->total_memory, out->free_memory);
    }
    return s;
}

bool g_swept = false; // measure_roofs ran in this process

opb_status fg_device_clocks(opb_backend *, opb_device_clocks *out) {
    std::snprintf(out->uuid, sizeof out->uuid, "GPU-fixture-0000");
    std::snprintf(out->driver, sizeof out->driver, "0.0.fixture");
    out->sustained_mhz = g_swept ? 1500 : 1980;
    out->max_mhz = 1980;
    return OPB_OK;
}

void roof(opb_roof_fn fn, void *user, int32_t unit, int32_t dtype, double measured, double datasheet) {
    const char *v = std::getenv("OPBENCH_FAKEGPU_ROOF_SCALE");
    const double scale = v && std::atof(v) > 0 ? std::atof(v) : 1.0;
    opb_device_roof r;
    std::memset(&r, 0, sizeof r);
    r.struct_size = sizeof r;
    r.abi_version = OPB_ABI_VERSION;
    r.unit = unit;
    r.dtype = dtype;
    r.measured = measured * scale;
    r.datasheet = datasheet * scale;
    r.sm_clock_mhz = 1500;
    std::snprintf(r.method, sizeof r.method, "fixture figure");
    fn(user, &r);
}

opb_status fg_measure_roofs(opb_backend *, opb_roof_fn fn, void *user) {
    if (const char *v = std::getenv("OPBENCH_FAKEGPU_ROOFS"); v && std::string(v) == "fail") return OPB_ERR_INTERNAL;
    roof(fn, user, OPB_ROOF_SIMT, OPB_DTYPE_F32, 1e6, 2e6);
    roof(fn, user, OPB_ROOF_TENSOR, OPB_DTYPE_BF16, 1e6, 0);
    roof(fn, user, OPB_ROOF_TENSOR, OPB_DTYPE_S8, 5e6, 0);
    roof(fn, user, OPB_ROOF_DRAM, -1, 1e6, 1e18);
    g_swept = true;
    return OPB_OK;
}

opb_status fg_clock_begin(opb_backend *) { return OPB_OK; }

std::vector<std::string> split(const char *text); // "a,b" -> {"a", "b"}, below

// OPBENCH_FAKEGPU_CLOCK_MHZ's value for this process's next reading.
double next_clock_mhz() {
    static std::size_t reading = 0;
    const char *v = std::getenv("OPBENCH_FAKEGPU_CLOCK_MHZ");
    if (!v || !*v) return 1500;
    const std::vector<std::string> values = split(v);
    return std::atof(values[reading++ % values.size()].c_str());
}

opb_status fg_clock_end(opb_backend *, opb_clock_reading *out) {
    out->sm_clock_mhz = next_clock_mhz();
    out->power_watts = 300;
    out->temperature_c = 55;
    const char *reasons = std::getenv("OPBENCH_FAKEGPU_CLOCK_REASONS");
    out->throttle_reasons = reasons && *reasons ? std::strtoull(reasons, nullptr, 0) & ~0x1ull : 0;
    return OPB_OK;
}

// The device timer and host time (OPBENCH_FAKEGPU_DEVICE_SHARE).
double g_device_share = 0;
double g_host_seconds = 0; // inside execute since timer_start

// The kernel timeline (OPBENCH_FAKEGPU_TIMELINE).
std::vector<int64_t> g_timeline_us; // kernel, gap, kernel, ... microseconds
std::vector<std::string> g_timeline_scopes;
bool g_recording = false;
int32_t g_calls = 0;        // execute calls since activity_begin
std::string g_error;        // this fixture's own last error; empty: naive's
std::vector<std::string> g_names;

std::vector<std::string> split(const char *text) {
    std::vector<std::string> out;
    std::string item;
    for (const char *p = text; ; ++p) {
        if (*p == ',' || *p == 0) {
            out.push_back(item);
            item.clear();
            if (*p == 0) break;
        } else {
            item += *p;
        }
    }
    return out;
}

// This fixture's own error is read once (the host reads it right after the
// failed call); every other message is naive's.
const char *fg_last_error(opb_backend *b) {
    static std::string shown;
    if (g_error.empty()) return g_naive->last_error(b);
    shown.swap(g_error);
    g_error.clear();
    return shown.c_str();
}

opb_status fg_activity_begin(opb_backend *) {
    if (g_timeline_us.empty()) {
        g_error = "CUPTI: CUPTI_ERROR_INSUFFICIENT_PRIVILEGES: profiling needs NVreg_RestrictProfilingToAdminUsers=0 "
                  "(fixture)";
        return OPB_ERR_UNAVAILABLE;
    }
    g_error.clear();
    g_recording = true;
    g_calls = 0;
    return OPB_OK;
}

// Each call's kernels on a fixture device clock far from the host's.
opb_status fg_activity_end(opb_backend *, opb_activity_fn fn, void *user) {
    if (!g_recording) {
        g_error = "activity_end without activity_begin";
        return OPB_ERR_INVALID;
    }
    g_recording = false;
    uint64_t t = 5'000'000'000'000ull;
    for (int32_t call = 0; call < g_calls; ++call) {
        for (std::size_t i = 0; i < g_timeline_us.size(); i += 2) {
            const std::size_t k = i / 2;
            opb_activity a;
            std::memset(&a, 0, sizeof a);
            a.struct_size = sizeof a;
            a.abi_version = OPB_ABI_VERSION;
            a.kind = OPB_ACTIVITY_KERNEL;
            a.call = call;
            a.start_ns = t;
            a.end_ns = t + uint64_t(g_timeline_us[i]) * 1000;
            a.stream = 7;
            a.name = g_names[k].c_str();
            a.scope = k < g_timeline_scopes.size() ? g_timeline_scopes[k].c_str() : nullptr;
            fn(user, &a);
            t = a.end_ns + (i + 1 < g_timeline_us.size() ? uint64_t(g_timeline_us[i + 1]) * 1000 : 0);
        }
        t += 2000; // the next call's launch
    }
    return OPB_OK;
}

// The graph launch mode (OPBENCH_FAKEGPU_GRAPH).
struct FixtureGraph {
    bool held = false;
    opb_plan *plan = nullptr;
    std::vector<void *> tensors;
    int32_t calls = 0;
} g_graph;

void graph_log(const std::string &line) {
    const char *path = std::getenv("OPBENCH_FAKEGPU_GRAPH_LOG");
    if (!path || !*path) return;
    if (FILE *f = std::fopen(path, "a")) {
        std::fprintf(f, "%s\n", line.c_str());
        std::fclose(f);
    }
}

opb_status fg_graph_prepare(opb_backend *, opb_plan *plan, void *const *tensors, int32_t count, int32_t calls) {
    if (std::string(std::getenv("OPBENCH_FAKEGPU_GRAPH")) == "refuse") {
        g_error = "cudaStreamEndCapture: operation not permitted when stream is capturing (fixture)";
        return OPB_ERR_UNAVAILABLE;
    }
    g_graph = FixtureGraph{true, plan, std::vector<void *>(tensors, tensors + count), calls};
    graph_log("prepare " + std::to_string(calls));
    return OPB_OK;
}

void fg_graph_release(opb_backend *) {
    if (!g_graph.held) return;
    g_graph = FixtureGraph{};
    graph_log("release");
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

opb_status fg_execute(opb_backend *b, opb_plan *plan, void *const *tensors, int32_t count) {
    const auto t0 = std::chrono::steady_clock::now();
    const opb_status s = g_naive->execute(b, plan, tensors, count);
    g_host_seconds += seconds_since(t0);
    if (g_recording) ++g_calls;
    return s;
}

opb_status fg_graph_launch(opb_backend *b) {
    if (!g_graph.held) {
        g_error = "graph_launch without graph_prepare";
        return OPB_ERR_INVALID;
    }
    graph_log("launch " + std::to_string(g_graph.calls));
    for (int32_t k = 0; k < g_graph.calls; ++k) {
        const opb_status s =
            fg_execute(b, g_graph.plan, g_graph.tensors.data(), static_cast<int32_t>(g_graph.tensors.size()));
        if (s != OPB_OK) return s;
    }
    return OPB_OK;
}

opb_status fg_timer_start(opb_backend *) {
    g_host_seconds = 0;
    return OPB_OK;
}

opb_status fg_timer_stop(opb_backend *, double *seconds) {
    *seconds = g_device_share * g_host_seconds;
    return OPB_OK;
}

opb_status fg_timer_host_seconds(opb_backend *, double *seconds) {
    *seconds = g_host_seconds;
    return OPB_OK;
}

} // namespace

OPB_PLUGIN_ENTRY(host_version) {
    if (OPB_ABI_MAJOR(host_version) != OPB_ABI_VERSION_MAJOR) return nullptr;
    if (!g_naive) {
        void *lib = dlopen(OPBENCH_NAIVE_PLUGIN, RTLD_NOW | RTLD_LOCAL);
        if (!lib) return nullptr;
        auto entry = reinterpret_cast<opb_plugin_entry_fn>(dlsym(lib, OPB_PLUGIN_ENTRY_SYMBOL));
        g_naive = entry ? entry(host_version) : nullptr;
        if (!g_naive) return nullptr;
        std::memset(&g_api, 0, sizeof g_api);
        std::memcpy(&g_api, g_naive, std::min<std::size_t>(sizeof g_api, g_naive->struct_size));
        g_api.struct_size = sizeof g_api;
        g_api.abi_version = OPB_ABI_VERSION;
        g_api.name = "fakegpu";
        g_api.description = "test backend: naive presented as a GPU with fixture device roofs and clock (ABI 1.5)";
        g_api.device_info = fg_device_info;
        g_api.device_clocks = fg_device_clocks;
        g_api.measure_roofs = fg_measure_roofs;
        g_api.clock_begin = fg_clock_begin;
        g_api.clock_end = fg_clock_end;
        if (const char *v = std::getenv("OPBENCH_FAKEGPU_DEVICE_SHARE"); v && std::atof(v) > 0) {
            g_device_share = std::atof(v);
            g_api.execute = fg_execute;
            g_api.timer_start = fg_timer_start;
            g_api.timer_stop = fg_timer_stop;
            g_api.timer_host_seconds = fg_timer_host_seconds;
        }
        if (const char *v = std::getenv("OPBENCH_FAKEGPU_TIMELINE"); v && *v) {
            if (std::string(v) != "refuse")
                for (const std::string &us : split(v)) g_timeline_us.push_back(std::atoll(us.c_str()));
            for (std::size_t k = 0; k < (g_timeline_us.size() + 1) / 2; ++k)
                g_names.push_back("fixture_kernel_" + std::to_string(k));
            if (const char *s = std::getenv("OPBENCH_FAKEGPU_TIMELINE_SCOPES"); s && *s) g_timeline_scopes = split(s);
            g_api.execute = fg_execute;
            g_api.last_error = fg_last_error;
            g_api.activity_begin = fg_activity_begin;
            g_api.activity_end = fg_activity_end;
        }
        if (const char *v = std::getenv("OPBENCH_FAKEGPU_GRAPH"); v && *v) {
            g_api.execute = fg_execute;
            g_api.last_error = fg_last_error;
            g_api.graph_prepare = fg_graph_prepare;
            g_api.graph_launch = fg_graph_launch;
            g_api.graph_release = fg_graph_release;
        }
    }
    return &g_api;
}
