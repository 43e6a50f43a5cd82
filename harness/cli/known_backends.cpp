#include "cli/known_backends.hpp"

#include "cli/printable.hpp"
#include "suite/suite.hpp"

#include <algorithm>
#include <iostream>
#include <set>

namespace opbench {

std::vector<std::string> known_backends(const PluginSet &plugins) {
    std::set<std::string> names = {"naive", "onednn", "cuda"};
    // A build's base name too (mybe for mybe@base): a suite names the backend,
    // and a plugin that exists only as --plugin builds is still known.
    for (const auto &n : plugins.names_with_refused()) {
        names.insert(n);
        names.insert(variant_backend(n));
    }
    return {names.begin(), names.end()};
}

std::vector<PluginVariantSpec> plugin_builds(const std::string &suite_path,
                                             const std::vector<std::string> &command_line) {
    std::vector<PluginVariantSpec> from_suite = suite_plugin_builds(suite_path), specs;
    for (const auto &text : command_line) specs.push_back(parse_plugin_spec(text));
    // A build the command line names again is its; one it names twice stays
    // twice, for add_plugin_variants to refuse.
    std::erase_if(from_suite, [&](const PluginVariantSpec &s) {
        return std::any_of(specs.begin(), specs.end(), [&](const auto &c) { return c.instance() == s.instance(); });
    });
    specs.insert(specs.begin(), from_suite.begin(), from_suite.end());
    return specs;
}

void print_refused(const PluginSet &plugins) {
    for (const auto &f : plugins.failures) std::cerr << "opbench: refused plugin " << printable(f.reason) << "\n";
}

void print_insecure_allowed(const PluginSet &plugins) {
    if (!plugins.allow_insecure) return;
    if (plugins.insecure_loaded.empty())
        std::cerr << "opbench: warning: --allow-insecure-plugins given; no plugin file loaded needed it\n";
    for (const std::string &file : plugins.insecure_loaded)
        std::cerr << "opbench: warning: --allow-insecure-plugins loaded " << printable(file)
                  << "; anyone who can change it can change the code this run measures\n";
}

} // namespace opbench
