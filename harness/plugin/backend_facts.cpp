#include "plugin/backend_facts.hpp"
#include "plugin/device_probe.hpp"

#include "opbench/ops.hpp"

#include <fmt/format.h>

namespace opbench {

nlohmann::json plugin_table_context(const opb_backend_api &api, const std::string &unusable_reason) {
    return {{"name", api.name},
            {"version", api.version ? api.version : ""},
            {"description", api.description ? api.description : ""},
            {"library_versions", api.library_versions ? api.library_versions : ""},
            {"usable", unusable_reason.empty()},
            {"unusable_reason", unusable_reason},
            {"plugin_abi", fmt::format("{}.{}", OPB_ABI_MAJOR(api.abi_version), OPB_ABI_MINOR(api.abi_version))}};
}

nlohmann::json backend_context(const BackendInstance &be, const LoadedPlugin *plugin) {
    const opb_backend_api &api = be.api();
    nlohmann::json j = plugin_table_context(api, be.unusable_reason());
    if (plugin) j["path"] = plugin->path;
    if (be.handle()) {
        opb_device_info dev{};
        dev.struct_size = sizeof dev;
        dev.abi_version = OPB_ABI_VERSION;
        if (api.device_info(be.handle(), &dev) == OPB_OK) {
            dev.name[sizeof dev.name - 1] = '\0';
            j["device"] = {{"kind", dev.kind == OPB_DEVICE_GPU ? "gpu" : "cpu"},
                           {"name", dev.name},
                           {"total_memory", dev.total_memory},
                           {"free_memory", dev.free_memory}};
        }
        if (api.info) {
            nlohmann::json info = nlohmann::json::object();
            api.info(
                be.handle(),
                [](void *user, const char *key, const char *value) {
                    if (key) (*static_cast<nlohmann::json *>(user))[key] = value ? value : "";
                },
                &info);
            j["info"] = std::move(info);
        }
    }
    return j;
}

BackendFacts probe_backend(const BackendSessions &sessions, const std::string &backend,
                           const std::vector<opb_op_desc> &cases,
                           const std::function<void(std::string_view)> &on_phase) {
    BackendFacts f;
    auto opened = sessions.backends.find(backend);
    if (opened != sessions.backends.end()) f.context = backend_context(*opened->second, nullptr);
    if (auto missing = sessions.missing.find(backend); missing != sessions.missing.end()) {
        f.status = CaseStatus::skipped;
        f.reason = missing->second;
        return f;
    }
    const BackendInstance &be = *opened->second;
    // Its device's roofs (ABI 1.5, issue 41): cached per device, measured on a first run.
    add_device_roofs(f.context, be);
    if (on_phase) on_phase(backend_phase::supports);
    for (const opb_op_desc &desc : cases) {
        // A plugin older than the description's fields would misread it: skip
        // with the reason rather than ask it.
        if (std::string gap = plugin_abi_gap(desc, be.api().abi_version); !gap.empty()) {
            f.supports.push_back({CaseStatus::skipped, gap});
            continue;
        }
        const opb_status s = be.api().supports(be.handle(), &desc);
        if (s == OPB_OK)
            f.supports.push_back({CaseStatus::passed, ""});
        else if (s == OPB_ERR_UNSUPPORTED || s == OPB_ERR_UNAVAILABLE)
            f.supports.push_back({CaseStatus::skipped, be.error_text(s)});
        else
            f.supports.push_back({CaseStatus::failed, "supports: " + be.error_text(s)});
    }
    return f;
}

BackendFacts faulted_backend(const opb_backend_api &api, const std::string &backend, const std::string &cause) {
    BackendFacts f;
    f.status = CaseStatus::failed;
    f.reason = fmt::format("{} (backend '{}')", cause, backend);
    f.context = plugin_table_context(api, f.reason);
    return f;
}

} // namespace opbench
