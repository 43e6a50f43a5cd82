#include "plugin/plugin_loader.hpp"

#include "files/trust.hpp"

#include <boost/dll/runtime_symbol_info.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <dlfcn.h>
#include <filesystem>
#include <iostream>
#include <set>
#include <sys/stat.h>

#include "build_config.hpp"

namespace fs = std::filesystem;

namespace opbench {

const char *status_name(opb_status s) {
    switch (s) {
    case OPB_OK: return "ok";
    case OPB_ERR_UNSUPPORTED: return "unsupported";
    case OPB_ERR_INVALID: return "invalid argument";
    case OPB_ERR_OUT_OF_MEMORY: return "out of memory";
    case OPB_ERR_DEVICE: return "device error";
    case OPB_ERR_UNAVAILABLE: return "unavailable";
    case OPB_ERR_INTERNAL: return "internal error";
    }
    return "unknown status";
}

namespace {

std::string version_text(uint32_t v) { return fmt::format("{}.{}", OPB_ABI_MAJOR(v), OPB_ABI_MINOR(v)); }

// Bytes of opb_backend_api that a plugin of ABI minor version 0 provides.
// When fields are appended in a later minor version, this stays: the host
// treats fields beyond a plugin's struct_size as absent (NULL).
constexpr std::size_t kMinApiSize = offsetof(opb_backend_api, flush_cache) + sizeof(void *);

// The mandatory function entries, checked for NULL after the handshake.
struct Mandatory {
    const char *name;
    bool (*present)(const opb_backend_api &);
};
#define OPB_MANDATORY(field)                                                                                           \
    Mandatory {                                                                                                        \
#field, [](const opb_backend_api &a) { return a.field != nullptr; }                                            \
    }
const Mandatory kMandatory[] = {
    OPB_MANDATORY(create),      OPB_MANDATORY(destroy),     OPB_MANDATORY(last_error),   OPB_MANDATORY(probe),
    OPB_MANDATORY(device_info), OPB_MANDATORY(supports),    OPB_MANDATORY(alloc),        OPB_MANDATORY(free),
    OPB_MANDATORY(copy_in),     OPB_MANDATORY(copy_out),    OPB_MANDATORY(prepare),      OPB_MANDATORY(execute),
    OPB_MANDATORY(release),     OPB_MANDATORY(synchronize), OPB_MANDATORY(memory_stats), OPB_MANDATORY(reset_peak),
};
#undef OPB_MANDATORY

bool is_shared_object(const fs::path &p) {
    std::error_code ec;
    return fs::is_regular_file(p, ec) && p.extension() == ".so";
}

bool is_backend_file(const fs::path &p) {
    return is_shared_object(p) && p.filename().string().rfind("opbench-backend-", 0) == 0;
}

// "a FIFO", "a socket", "a character device", ... for what `p` names
// (through symlinks) when that is no regular file; "" for a regular file.
std::string not_a_file_kind(const fs::path &p) {
    std::error_code ec;
    switch (fs::status(p, ec).type()) {
    case fs::file_type::regular: return "";
    case fs::file_type::fifo: return "a FIFO";
    case fs::file_type::socket: return "a socket";
    case fs::file_type::character: return "a character device";
    case fs::file_type::block: return "a block device";
    default: return "not a regular file";
    }
}

// Files in `dir` and one level of its subdirectories accepted by `keep`, sorted.
std::vector<fs::path> scan_dir(const fs::path &dir, bool (*keep)(const fs::path &)) {
    std::vector<fs::path> out;
    std::error_code ec;
    for (const auto &entry : fs::directory_iterator(dir, ec)) {
        if (entry.is_directory(ec)) {
            if (entry.path().extension() == ".p") continue; // Meson's object directories
            for (const auto &inner : fs::directory_iterator(entry.path(), ec))
                if (keep(inner.path())) out.push_back(inner.path());
        } else if (keep(entry.path())) {
            out.push_back(entry.path());
        }
    }
    std::sort(out.begin(), out.end());
    return out;
}

} // namespace

// <name> of a file called opbench-backend-<name>.so, else empty.
std::string backend_name_from_file(const std::string &path) {
    const std::string file = fs::path(path).filename().string();
    const std::string prefix = "opbench-backend-", suffix = ".so";
    if (file.size() <= prefix.size() + suffix.size() || file.rfind(prefix, 0) != 0 ||
        file.compare(file.size() - suffix.size(), suffix.size(), suffix) != 0)
        return "";
    return file.substr(prefix.size(), file.size() - prefix.size() - suffix.size());
}

LoadResult load_plugin(const std::string &path) {
    LoadResult result;
    std::string backend = backend_name_from_file(path);
    auto refuse = [&](std::string why) {
        result.failure = LoadFailure{path, fmt::format("{}: {}", path, why), backend};
        return result;
    };

    auto lib = std::make_shared<boost::dll::shared_library>();
    try {
        lib->load(path, boost::dll::load_mode::rtld_now | boost::dll::load_mode::rtld_local);
    } catch (const std::exception &e) {
        return refuse(fmt::format("not a loadable shared library ({})", e.what()));
    }
    if (!lib->has(OPB_PLUGIN_ENTRY_SYMBOL))
        return refuse(fmt::format("no symbol {}: not an opbench plugin", OPB_PLUGIN_ENTRY_SYMBOL));

    auto &entry = lib->get<const opb_backend_api *(uint32_t)>(OPB_PLUGIN_ENTRY_SYMBOL);
    const opb_backend_api *api = entry(OPB_ABI_VERSION);
    if (api == nullptr)
        return refuse(fmt::format("symbol {}: returned no table for host ABI {}", OPB_PLUGIN_ENTRY_SYMBOL,
                                  version_text(OPB_ABI_VERSION)));
    // Under another major version the layout past the two leading fields is
    // unknown, so the name is read only when the major version matches.
    if (OPB_ABI_MAJOR(api->abi_version) == OPB_ABI_VERSION_MAJOR &&
        api->struct_size >= offsetof(opb_backend_api, name) + sizeof api->name && api->name && api->name[0])
        backend = api->name;
    if (OPB_ABI_MAJOR(api->abi_version) != OPB_ABI_VERSION_MAJOR)
        return refuse(fmt::format("symbol {}: plugin ABI version {}, host ABI version {} "
                                  "(major versions must match)",
                                  OPB_PLUGIN_ENTRY_SYMBOL, version_text(api->abi_version),
                                  version_text(OPB_ABI_VERSION)));
    if (api->struct_size < kMinApiSize)
        return refuse(fmt::format("symbol {}: opb_backend_api is {} bytes, ABI {} needs at least "
                                  "{} (short struct)",
                                  OPB_PLUGIN_ENTRY_SYMBOL, api->struct_size, version_text(api->abi_version),
                                  kMinApiSize));
    if (api->name == nullptr || api->name[0] == '\0')
        return refuse(fmt::format("symbol {}: the table has no backend name", OPB_PLUGIN_ENTRY_SYMBOL));
    for (const auto &m : kMandatory)
        if (!m.present(*api))
            return refuse(fmt::format("symbol {}: mandatory entry '{}' is NULL", OPB_PLUGIN_ENTRY_SYMBOL, m.name));

    // An accepted plugin is never unmapped, even when its last handle closes:
    // the libraries it wraps keep threads (OpenMP workers) and exit handlers
    // that point into its code, and unmapping under them crashes at exit.
    ::dlopen(path.c_str(), RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE);

    result.plugin = LoadedPlugin{path, api, std::move(lib), {}};
    return result;
}

std::vector<std::string> default_plugin_search_paths() {
    std::vector<std::string> paths;
    if (const char *env = std::getenv("OPBENCH_PLUGIN_PATH")) {
        std::string s = env;
        std::size_t start = 0;
        while (start <= s.size()) {
            std::size_t end = s.find(':', start);
            if (end == std::string::npos) end = s.size();
            if (end > start) paths.push_back(s.substr(start, end - start));
            start = end + 1;
        }
    }
    // Running from a build tree: <build>/harness/opbench finds <build>/backends/*/.
    std::error_code ec;
    boost::dll::fs::error_code bec;
    fs::path exe = boost::dll::program_location(bec).string();
    if (!bec) {
        fs::path build_backends = exe.parent_path().parent_path() / "backends";
        if (fs::is_directory(build_backends, ec)) paths.push_back(build_backends.string());
    }
    paths.push_back(OPBENCH_PLUGIN_INSTALL_DIR);
    return paths;
}

std::string plugin_trust_problem(const std::string &path) {
    const std::string why = trust_problem(path);
    if (why.empty()) return "";
    return fmt::format("{}: not loaded: {}; anyone who can change it could change the code opbench would run "
                       "(chown / chmod go-w it, or pass --allow-insecure-plugins)",
                       path, why);
}

PluginSet discover_plugins(const std::vector<std::string> &paths, const DiscoverOptions &options) {
    PluginSet set;
    set.allow_insecure = options.allow_insecure;
    std::set<fs::path> seen;
    auto try_file = [&](const fs::path &file) {
        std::error_code ec;
        fs::path canonical = fs::weakly_canonical(file, ec);
        if (!seen.insert(ec ? file : canonical).second) return;
        // Checked before opening: opening runs the library's constructors.
        const std::string untrusted = trust_problem(file.string());
        if (!untrusted.empty() && !options.allow_insecure) {
            set.failures.push_back(
                {file.string(), plugin_trust_problem(file.string()), backend_name_from_file(file.string())});
            return;
        }
        LoadResult r = load_plugin(file.string());
        if (r.failure) {
            set.failures.push_back(*r.failure);
            return;
        }
        if (!untrusted.empty()) set.insecure_loaded.push_back(fmt::format("{}: {}", file.string(), untrusted));
        if (const LoadedPlugin *prior = set.find(r.plugin->name())) {
            set.failures.push_back({file.string(),
                                    fmt::format("{}: backend '{}' is already loaded from {}", file.string(),
                                                r.plugin->name(), prior->path),
                                    ""}); // the name is loaded: a suite runs the first one
            return;
        }
        set.plugins.push_back(std::move(*r.plugin));
    };

    const std::string install_dir = OPBENCH_PLUGIN_INSTALL_DIR;
    for (const auto &entry : paths) {
        fs::path p = entry;
        std::error_code ec;
        if (fs::is_directory(p, ec)) {
            // Only opbench-backend-*.so: a directory may also hold the
            // libraries a plugin links, and opening one runs its code.
            for (const auto &f : scan_dir(p, is_backend_file)) try_file(f);
            for (const auto &f : scan_dir(p, is_shared_object))
                if (!is_backend_file(f)) set.ignored.push_back(f.string());
        } else if (fs::exists(p, ec)) {
            // Opening a FIFO, socket or device for the loader would block or
            // read what is not a library (issue 44: a FIFO hung `list`).
            if (const std::string kind = not_a_file_kind(p); !kind.empty())
                set.failures.push_back({entry,
                                        fmt::format("{}: is {}, not a shared library file; not opened", entry, kind),
                                        backend_name_from_file(entry)});
            else
                try_file(p);
        } else if (entry != install_dir) {
            set.failures.push_back(
                {entry, fmt::format("{}: no such file or directory", entry), backend_name_from_file(entry)});
        }
    }
    return set;
}

const LoadedPlugin *PluginSet::find(const std::string &name) const {
    for (const auto &p : plugins)
        if (p.name() == name) return &p;
    return nullptr;
}

std::vector<std::string> PluginSet::names() const {
    std::vector<std::string> out;
    for (const auto &p : plugins) out.push_back(p.name());
    return out;
}

std::vector<std::string> PluginSet::names_with_refused() const {
    std::vector<std::string> out = names();
    for (const auto &f : failures)
        if (!f.backend.empty() && std::find(out.begin(), out.end(), f.backend) == out.end()) out.push_back(f.backend);
    return out;
}

std::string PluginSet::why_unavailable(const std::string &name) const {
    if (find(name)) return "";
    for (const auto &f : failures)
        if (f.backend == name) return fmt::format("backend '{}' was refused by the loader: {}", name, f.reason);
    const std::string loaded = fmt::format("{}", fmt::join(names(), ", "));
    return fmt::format("backend '{}' is not available: not built or not found (loaded: {})", name,
                       loaded.empty() ? "none" : loaded);
}

// ---- BackendInstance ----------------------------------------------------------

BackendInstance::BackendInstance(const LoadedPlugin &plugin, const std::function<void(std::string_view)> &on_phase)
    : api_(plugin.api), name_(plugin.name()) {
    services_.struct_size = sizeof services_;
    services_.abi_version = OPB_ABI_VERSION;
    services_.host = this;
    services_.log = &log_cb;
    services_.on_alloc = &on_alloc_cb;
    services_.on_free = &on_free_cb;
    services_.scope_begin = &scope_begin_cb;
    services_.scope_end = &scope_end_cb;
    services_.profiling = &profiling_;

    if (on_phase) on_phase("create");
    opb_status s = api_->create(&services_, &handle_);
    if (s != OPB_OK || handle_ == nullptr) {
        handle_ = nullptr;
        unusable_reason_ = fmt::format("create failed: {}", status_name(s));
        return;
    }
    if (on_phase) on_phase("probe");
    s = api_->probe(handle_);
    if (s != OPB_OK) unusable_reason_ = error_text(s);
}

BackendInstance::~BackendInstance() {
    if (handle_) api_->destroy(handle_);
}

std::string BackendInstance::error_text(opb_status status) const {
    const char *msg = handle_ ? api_->last_error(handle_) : nullptr;
    if (msg && *msg) return msg;
    return status_name(status);
}

void BackendInstance::log_cb(void *host, int32_t level, const char *message) {
    auto *self = static_cast<BackendInstance *>(host);
    static const bool verbose = std::getenv("OPBENCH_VERBOSE") != nullptr;
    if (level < OPB_LOG_WARN && !verbose) return;
    static const char *names[] = {"debug", "info", "warning", "error"};
    const char *lvl = (level >= 0 && level <= 3) ? names[level] : "log";
    std::cerr << "[" << self->name_ << "] " << lvl << ": " << (message ? message : "") << "\n";
}

void BackendInstance::on_alloc_cb(void *host, uint64_t bytes, int32_t is_device) {
    auto &a = static_cast<BackendInstance *>(host)->accounting_;
    ++a.alloc_calls;
    if (is_device) {
        a.device_current += bytes;
        a.device_peak = std::max(a.device_peak, a.device_current);
    } else {
        a.host_current += bytes;
        a.host_peak = std::max(a.host_peak, a.host_current);
    }
}

void BackendInstance::on_free_cb(void *host, uint64_t bytes, int32_t is_device) {
    auto &a = static_cast<BackendInstance *>(host)->accounting_;
    uint64_t &cur = is_device ? a.device_current : a.host_current;
    cur = bytes > cur ? 0 : cur - bytes;
}

// Plugin scopes: recorded while the switch is on. A plugin that ignores the
// switch (ABI 1.0 SDK) calls these anyway; then they return at once.
void BackendInstance::scope_begin_cb(void *host, const char *name) {
    auto *self = static_cast<BackendInstance *>(host);
    if (self->profiling_ && self->scope_sink_) self->scope_sink_->plugin_scope_begin(name ? name : "(null)");
}
void BackendInstance::scope_end_cb(void *host) {
    auto *self = static_cast<BackendInstance *>(host);
    if (self->profiling_ && self->scope_sink_) self->scope_sink_->plugin_scope_end();
}

} // namespace opbench
