// The backend names a command line or suite may use, and the plugins the
// loader refused: shared by `list`, `validate` and `run`.
#pragma once

#include "plugin/plugin_loader.hpp"

#include <string>
#include <vector>

namespace opbench {

// The design's three (naive, onednn, cuda) plus every plugin found or
// refused by name, so a typo is caught while an unbuilt or refused backend
// is merely skipped (with the loader's reason).
[[nodiscard]] std::vector<std::string> known_backends(const PluginSet &plugins);

// One "opbench: refused plugin ..." line on stderr per refused plugin.
void print_refused(const PluginSet &plugins);

} // namespace opbench
