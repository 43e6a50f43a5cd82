#include "cli/known_backends.hpp"

#include <iostream>
#include <set>

namespace opbench {

std::vector<std::string> known_backends(const PluginSet &plugins) {
    std::set<std::string> names = {"naive", "onednn", "cuda"};
    for (const auto &n : plugins.names_with_refused()) names.insert(n);
    return {names.begin(), names.end()};
}

void print_refused(const PluginSet &plugins) {
    for (const auto &f : plugins.failures) std::cerr << "opbench: refused plugin " << f.reason << "\n";
}

} // namespace opbench
