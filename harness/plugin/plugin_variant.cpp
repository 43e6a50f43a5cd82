#include "plugin/plugin_variant.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <filesystem>

namespace opbench {

namespace {

constexpr std::string_view kSpecShape = "NAME@VARIANT=PATH, e.g. onednn@base=old/opbench-backend-onednn.so";

// Backend and variant names: letters, digits, '_', '-' (they go into
// benchmark names, file names and worker command lines).
bool valid_name(std::string_view s) {
    return !s.empty() && std::all_of(s.begin(), s.end(), [](unsigned char c) {
        return std::isalnum(c) != 0 || c == '_' || c == '-';
    });
}

} // namespace

PluginVariantSpec parse_plugin_spec(std::string_view text) {
    const std::size_t eq = text.find('=');
    const std::size_t at = text.find('@');
    if (eq == std::string_view::npos || at == std::string_view::npos || at > eq)
        throw PluginSpecError(fmt::format("--plugin '{}': expected {}", text, kSpecShape));
    PluginVariantSpec spec{std::string(text.substr(0, at)), std::string(text.substr(at + 1, eq - at - 1)),
                           std::string(text.substr(eq + 1))};
    if (!valid_name(spec.backend))
        throw PluginSpecError(fmt::format("--plugin '{}': backend name '{}' is not letters, digits, '_' or '-' "
                                          "(expected {})",
                                          text, spec.backend, kSpecShape));
    if (!valid_name(spec.variant))
        throw PluginSpecError(fmt::format("--plugin '{}': variant '{}' is not letters, digits, '_' or '-' "
                                          "(expected {})",
                                          text, spec.variant, kSpecShape));
    if (spec.path.empty()) throw PluginSpecError(fmt::format("--plugin '{}': no file after '=' ({})", text, kSpecShape));
    return spec;
}

std::string variant_backend(std::string_view instance) {
    return std::string(instance.substr(0, instance.find('@')));
}

std::string variant_label(std::string_view instance) {
    const std::size_t at = instance.find('@');
    return at == std::string_view::npos ? std::string() : std::string(instance.substr(at + 1));
}

void add_plugin_variants(PluginSet &plugins, const std::vector<PluginVariantSpec> &specs, bool allow_insecure) {
    for (const PluginVariantSpec &spec : specs) {
        const std::string name = spec.instance();
        if (plugins.find(name))
            throw PluginSpecError(fmt::format("--plugin {}: '{}' is given twice; each variant names one file", name,
                                              name));
        std::error_code ec;
        if (!std::filesystem::is_regular_file(spec.path, ec))
            throw PluginSpecError(fmt::format("--plugin {}={}: no such plugin file", name, spec.path));
        if (!allow_insecure)
            if (std::string why = plugin_trust_problem(spec.path); !why.empty())
                throw PluginSpecError(fmt::format("--plugin {}: {}", name, why));
        LoadResult r = load_plugin(spec.path);
        if (r.failure) throw PluginSpecError(fmt::format("--plugin {}: refused: {}", name, r.failure->reason));
        if (r.plugin->api->name != spec.backend)
            throw PluginSpecError(fmt::format("--plugin {}={}: the file provides backend '{}', not '{}' (name the "
                                              "variant {}@{})",
                                              name, spec.path, r.plugin->api->name, spec.backend,
                                              r.plugin->api->name, spec.variant));
        r.plugin->instance = name;
        plugins.plugins.push_back(std::move(*r.plugin));
    }
}

} // namespace opbench
