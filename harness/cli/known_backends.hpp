// The backend names a command line or suite may use, and the plugins the
// loader refused: shared by `list`, `validate` and `run`.
#pragma once

#include "plugin/plugin_loader.hpp"
#include "plugin/plugin_spec.hpp"

#include <string>
#include <vector>

namespace opbench {

// The design's three (naive, onednn, cuda) plus every plugin found or
// refused by name (a NAME@VARIANT build adds NAME too), so a typo is caught
// while an unbuilt or refused backend is merely skipped (with the loader's
// reason).
[[nodiscard]] std::vector<std::string> known_backends(const PluginSet &plugins);

// The plugin builds a run loads: the suite's [defaults] plugins, then each
// --plugin NAME@VARIANT=PATH, which replaces the suite's build of the same
// instance. Throws PluginSpecError for a malformed --plugin.
[[nodiscard]] std::vector<PluginVariantSpec> plugin_builds(const std::string &suite_path,
                                                           const std::vector<std::string> &command_line);

// One "opbench: refused plugin ..." line on stderr per refused plugin.
void print_refused(const PluginSet &plugins);
// With --allow-insecure-plugins: one warning line per file it let load
// (path and why it would be refused), or one saying none needed it.
void print_insecure_allowed(const PluginSet &plugins);

} // namespace opbench
