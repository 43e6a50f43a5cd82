#include "plugin/backend_sessions.hpp"

#include <fmt/format.h>

namespace opbench {

BackendInstance *BackendSessions::usable(const std::string &name) const {
    if (missing.count(name)) return nullptr;
    auto it = backends.find(name);
    return it == backends.end() ? nullptr : it->second.get();
}

BackendSessions open_backend_sessions(const PluginSet &plugins, const std::vector<std::string> &wanted,
                                      const std::string &reference,
                                      const std::function<void(std::string_view)> &on_phase) {
    BackendSessions s;
    for (const auto &name : wanted) {
        const LoadedPlugin *p = plugins.find(name);
        if (!p) {
            s.missing[name] = plugins.why_unavailable(name); // refused by the loader (with its reason), or absent
            continue;
        }
        auto inst = std::make_unique<BackendInstance>(*p, on_phase);
        if (!inst->usable())
            s.missing[name] = fmt::format("backend '{}' is not usable here: {}", name, inst->unusable_reason());
        s.backends[name] = std::move(inst);
    }
    if (const LoadedPlugin *ref = plugins.find(reference)) {
        std::function<void(std::string_view)> on_reference_phase;
        if (on_phase) on_reference_phase = [&](std::string_view p) { on_phase(fmt::format("reference {}", p)); };
        s.reference = std::make_unique<BackendInstance>(*ref, on_reference_phase);
        if (!s.reference->usable()) {
            s.reference_missing = s.reference->unusable_reason();
            s.reference.reset();
        }
    } else {
        s.reference_missing = fmt::format("reference backend '{}' is not loaded", reference);
    }
    return s;
}

} // namespace opbench
