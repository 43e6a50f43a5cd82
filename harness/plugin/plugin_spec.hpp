// NAME@VARIANT=PATH, as --plugin and a suite's [defaults] `plugins` write a
// backend instance built from a plugin file (plugin_variant.hpp loads it).
// Text only: no plugin is opened here, so the suite parser may use it.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

namespace opbench {

// A bad --plugin spec or a variant file that cannot be loaded: bad input.
class PluginSpecError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// NAME@VARIANT=PATH, split.
struct PluginVariantSpec {
    std::string backend; // "onednn": the name the plugin's table must carry
    std::string variant; // "base"
    std::string path;
    // Where the spec was written, for errors: "--plugin", or
    // "suite.toml:8:12: plugins" for a suite's [defaults] entry.
    std::string origin = "--plugin";
    [[nodiscard]] std::string instance() const { return backend + "@" + variant; }
};

// Parses NAME@VARIANT=PATH. Throws PluginSpecError saying what is wrong
// and what a valid spec looks like.
[[nodiscard]] PluginVariantSpec parse_plugin_spec(std::string_view text);

// "onednn@base" -> "onednn"; a plain name is its own backend.
[[nodiscard]] std::string variant_backend(std::string_view instance);
// "onednn@base" -> "base"; "" for a plain name.
[[nodiscard]] std::string variant_label(std::string_view instance);

} // namespace opbench
