// Plugin loading: find backend plugins, open them with Boost.DLL, check the
// ABI handshake, and wrap an instance's C table in a small C++ class.
#pragma once

#include "plugin/scope_sink.hpp"
#include "opbench/plugin.h"

#include <boost/dll/shared_library.hpp>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace opbench {

// A plugin file that passed the handshake; shares ownership of the library.
struct LoadedPlugin {
    std::string path;
    const opb_backend_api *api = nullptr;
    std::shared_ptr<boost::dll::shared_library> library; // keeps the code mapped
    // Set for a variant given by `--plugin NAME@VARIANT=PATH` (plugin_variant.hpp):
    // the instance's name, which replaces the table's name everywhere.
    std::string instance;

    std::string name() const { return instance.empty() ? std::string(api->name) : instance; }
};

// A file that was refused, with one line saying why.
struct LoadFailure {
    std::string path;
    std::string reason; // "lib.so: symbol opb_plugin_entry: ABI version 2.0, host 1.0"
    // The backend the file would have provided, where known: the table's name
    // when the handshake got that far, else <name> of opbench-backend-<name>.so.
    // A suite naming it gets skipped entries carrying `reason`.
    std::string backend;
};

// Open one file and perform the handshake.
struct LoadResult {
    std::optional<LoadedPlugin> plugin;
    std::optional<LoadFailure> failure;
};
[[nodiscard]] LoadResult load_plugin(const std::string &path);

// Directories searched, in order: every entry of OPBENCH_PLUGIN_PATH (files or
// directories, ':'-separated), the build tree's backend directories, and the
// installed plugin directory. Later duplicates of a backend name are refused.
[[nodiscard]] std::vector<std::string> default_plugin_search_paths();

struct PluginSet {
    std::vector<LoadedPlugin> plugins;
    std::vector<LoadFailure> failures;
    // *.so files in a searched directory that were not opened because their
    // name does not match opbench-backend-*.so (shown by `opbench list`).
    std::vector<std::string> ignored;
    // --allow-insecure-plugins was given, and the files it let load that
    // would otherwise be refused ("<path>: <why>"): recorded in the result
    // set and shown on the console, so the choice leaves a trace.
    bool allow_insecure = false;
    std::vector<std::string> insecure_loaded;
    const LoadedPlugin *find(const std::string &name) const;
    std::vector<std::string> names() const;
    // Backends a suite may name: the loaded ones and those refused by name.
    std::vector<std::string> names_with_refused() const;
    // Why `name` cannot run: the loader's refusal for that backend, or "not
    // built or not found" with the loaded names. Empty when it is loaded.
    [[nodiscard]] std::string why_unavailable(const std::string &name) const;
};

struct DiscoverOptions {
    // Load files that others may write (see plugin_trust_problem).
    bool allow_insecure = false;
};

// Why a plugin file must not be opened, or empty: the file or the directory
// holding it is writable by others (mode o+w, sticky /tmp included), so anyone
// could replace the code that opbench runs at `opbench list`.
[[nodiscard]] std::string plugin_trust_problem(const std::string &path);

// Load every plugin found under `paths`. The file-name rule, documented for
// plugin authors in plugins/template/README.md ("How opbench finds a plugin"):
// a file named in `paths` is opened whatever its name; a directory
// contributes only its files named opbench-backend-*.so, and those of its
// subdirectories one level deep. Files failing plugin_trust_problem are
// refused, unopened, unless options.allow_insecure.
[[nodiscard]] PluginSet discover_plugins(const std::vector<std::string> &paths, const DiscoverOptions &options = {});

// Host-side accounting of what plugins report through the services struct.
struct HostAccounting {
    uint64_t host_current = 0, host_peak = 0;
    uint64_t device_current = 0, device_peak = 0;
    uint64_t alloc_calls = 0;
    void reset_peaks() {
        host_peak = host_current;
        device_peak = device_current;
        alloc_calls = 0;
    }
};

// One live instance of a backend (create ... destroy), with errors turned into
// messages. Not copyable.
class BackendInstance {
public:
    // Calls the plugin's create, then its probe. `on_phase`, when set, hears
    // "create" and "probe" as each call begins (a worker reports them to its
    // parent, so a crash names the call it happened in).
    explicit BackendInstance(const LoadedPlugin &plugin,
                             const std::function<void(std::string_view)> &on_phase = nullptr);
    ~BackendInstance();
    BackendInstance(const BackendInstance &) = delete;
    BackendInstance &operator=(const BackendInstance &) = delete;

    const opb_backend_api &api() const { return *api_; }
    opb_backend *handle() const { return handle_; }
    const std::string &name() const { return name_; }

    // Empty when usable; otherwise the reason (creation failure or probe's).
    const std::string &unusable_reason() const { return unusable_reason_; }
    bool usable() const { return unusable_reason_.empty(); }

    // The plugin's message for its last failed call, prefixed by the status.
    std::string error_text(opb_status status) const;

    HostAccounting &accounting() { return accounting_; }

    // Plugin scopes go to `profiler` (nullptr: nowhere) while recording is
    // on. Recording flips the switch plugins read (opb_host_services.profiling),
    // so change it only between calls into the plugin.
    void attach_scope_sink(ScopeSink *sink) {
        scope_sink_ = sink;
        if (!sink) profiling_ = 0;
    }
    void set_scope_recording(bool on) { profiling_ = (on && scope_sink_) ? 1u : 0u; }

private:
    static void log_cb(void *host, int32_t level, const char *message);
    static void on_alloc_cb(void *host, uint64_t bytes, int32_t is_device);
    static void on_free_cb(void *host, uint64_t bytes, int32_t is_device);
    static void scope_begin_cb(void *host, const char *name);
    static void scope_end_cb(void *host);

    const opb_backend_api *api_;
    std::string name_;
    opb_host_services services_{};
    opb_backend *handle_ = nullptr;
    std::string unusable_reason_;
    HostAccounting accounting_;
    ScopeSink *scope_sink_ = nullptr;
    uint32_t profiling_ = 0; // the word opb_host_services.profiling points at
};

const char *status_name(opb_status s);

} // namespace opbench
