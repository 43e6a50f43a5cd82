// The backend instances of one run: one per backend the cases name, and a
// separate instance of the reference backend (its memory never counts).
#pragma once

#include "plugin/plugin_loader.hpp"

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace opbench {

struct BackendSessions {
    std::map<std::string, std::unique_ptr<BackendInstance>> backends; // opened, usable or not
    std::map<std::string, std::string> missing;                       // name -> why it cannot run cases
    std::unique_ptr<BackendInstance> reference;                       // null when it cannot run
    std::string reference_missing;                                    // why not

    // The instance of `name` when it can run cases, else nullptr (see missing).
    [[nodiscard]] BackendInstance *usable(const std::string &name) const;
};

// Opens every backend in `wanted` (in order) and the reference backend.
// `on_phase`, when set, hears each plugin call begin: "create", "probe" for
// the wanted backends, "reference create", "reference probe" for the
// reference's own instance (a worker's crash report then names it).
[[nodiscard]] BackendSessions open_backend_sessions(const PluginSet &plugins, const std::vector<std::string> &wanted,
                                                    const std::string &reference,
                                                    const std::function<void(std::string_view)> &on_phase = nullptr);

} // namespace opbench
