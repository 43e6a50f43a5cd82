// Two builds of one backend in one run: `--plugin onednn@base=old/opbench-backend-onednn.so`
// names a backend instance by its plugin file. The instance's name,
// "onednn@base", says it is a variant of `onednn`, so readers pair it with
// the other variants of the same backend (compare --by backend, paired A/B).
// A variant goes through the same trust and ABI checks as a discovered
// plugin (plugin_trust_problem, load_plugin) and runs in its own workers:
// its name keys make_worker_host's backend -> file map.
#pragma once

#include "plugin/plugin_loader.hpp"
#include "plugin/plugin_spec.hpp"

#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace opbench {

// Loads each spec's file into `plugins` under its instance name, after the
// trust check (unless allow_insecure) and the ABI handshake. Throws
// PluginSpecError for a refused file, a file that provides another backend
// than the spec names, or an instance name given twice.
void add_plugin_variants(PluginSet &plugins, const std::vector<PluginVariantSpec> &specs, bool allow_insecure);

} // namespace opbench
