#include "plugin/plugin_variant.hpp"

#include "files/trust.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <filesystem>

namespace opbench {

void add_plugin_variants(PluginSet &plugins, const std::vector<PluginVariantSpec> &specs, bool allow_insecure) {
    for (const PluginVariantSpec &spec : specs) {
        const std::string name = spec.instance();
        if (plugins.find(name))
            throw PluginSpecError(fmt::format("{} {}: '{}' is given twice; each variant names one file",
                                              spec.origin, name, name));
        std::error_code ec;
        if (!std::filesystem::is_regular_file(spec.path, ec))
            throw PluginSpecError(fmt::format("{} {}={}: no such plugin file", spec.origin, name, spec.path));
        const std::string untrusted = trust_problem(spec.path);
        if (!untrusted.empty() && !allow_insecure)
            throw PluginSpecError(fmt::format("{} {}: {}", spec.origin, name, plugin_trust_problem(spec.path)));
        LoadResult r = load_plugin(spec.path);
        if (r.failure) throw PluginSpecError(fmt::format("{} {}: refused: {}", spec.origin, name,
                                                              r.failure->reason));
        if (r.plugin->api->name != spec.backend)
            throw PluginSpecError(fmt::format("{} {}={}: the file provides backend '{}', not '{}' (name the "
                                              "variant {}@{})",
                                              spec.origin, name, spec.path, r.plugin->api->name, spec.backend,
                                              r.plugin->api->name, spec.variant));
        if (!untrusted.empty()) plugins.insecure_loaded.push_back(fmt::format("{}: {}", spec.path, untrusted));
        r.plugin->instance = name;
        plugins.plugins.push_back(std::move(*r.plugin));
    }
}

} // namespace opbench
