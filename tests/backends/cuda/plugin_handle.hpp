// Test helper: dlopen the built CUDA plugin, check the ABI handshake, and
// give tests host services that record allocation accounting.
#ifndef OPBENCH_TESTS_CUDA_PLUGIN_HANDLE_HPP
#define OPBENCH_TESTS_CUDA_PLUGIN_HANDLE_HPP

#include "opbench/plugin.h"

#include <dlfcn.h>

#include <cstdint>
#include <string>

namespace opbench::test {

struct RecordingHost {
    int64_t device_bytes = 0, host_bytes = 0;
    int allocs = 0, frees = 0;
    std::string last_log;
};

inline opb_host_services recording_services(RecordingHost *h) {
    opb_host_services s{};
    s.struct_size = sizeof s;
    s.abi_version = OPB_ABI_VERSION;
    s.host = h;
    s.log = [](void *host, int32_t, const char *m) { static_cast<RecordingHost *>(host)->last_log = m; };
    s.on_alloc = [](void *host, uint64_t bytes, int32_t dev) {
        auto *r = static_cast<RecordingHost *>(host);
        (dev ? r->device_bytes : r->host_bytes) += static_cast<int64_t>(bytes);
        ++r->allocs;
    };
    s.on_free = [](void *host, uint64_t bytes, int32_t dev) {
        auto *r = static_cast<RecordingHost *>(host);
        (dev ? r->device_bytes : r->host_bytes) -= static_cast<int64_t>(bytes);
        ++r->frees;
    };
    s.scope_begin = [](void *, const char *) {};
    s.scope_end = [](void *) {};
    return s;
}

// Opens the plugin and resolves its entry; `error` says what failed.
struct PluginHandle {
    void *lib = nullptr;
    opb_plugin_entry_fn entry = nullptr;
    const opb_backend_api *api = nullptr;
    std::string error;

    explicit PluginHandle(const char *path) {
        lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
        if (!lib) {
            const char *e = dlerror();
            error = std::string("dlopen(") + path + "): " + (e ? e : "?");
            return;
        }
        entry = reinterpret_cast<opb_plugin_entry_fn>(dlsym(lib, OPB_PLUGIN_ENTRY_SYMBOL));
        if (!entry) {
            error = std::string(path) + ": no symbol " OPB_PLUGIN_ENTRY_SYMBOL;
            return;
        }
        api = entry(OPB_ABI_VERSION);
        if (!api) error = std::string(path) + ": entry returned NULL for ABI " + std::to_string(OPB_ABI_VERSION);
    }
    ~PluginHandle() {
        if (lib) dlclose(lib);
    }
    PluginHandle(const PluginHandle &) = delete;
    PluginHandle &operator=(const PluginHandle &) = delete;
};

} // namespace opbench::test

#endif
