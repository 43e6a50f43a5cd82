#include "plugin/plugin_variant.hpp"

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
        if (!allow_insecure)
            if (std::string why = plugin_trust_problem(spec.path); !why.empty())
                throw PluginSpecError(fmt::format("{} {}: {}", spec.origin, name, why));
        LoadResult r = load_plugin(spec.path);
        if (r.failure) throw PluginSpecError(fmt::format("{} {}: refused: {}", spec.origin, name,
                                                              r.failure->reason));
        if (r.plugin->api->name != spec.backend)
            throw PluginSpecError(fmt::format("{} {}={}: the file provides backend '{}', not '{}' (name the "
                                              "variant {}@{})",
                                              spec.origin, name, spec.path, r.plugin->api->name, spec.backend,
                                              r.plugin->api->name, spec.variant));
        r.plugin->instance = name;
        plugins.plugins.push_back(std::move(*r.plugin));
    }
}

} // namespace opbench
