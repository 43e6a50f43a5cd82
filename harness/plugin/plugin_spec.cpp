#include "plugin/plugin_spec.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

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

} // namespace opbench
