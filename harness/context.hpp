// The context of a result set: what makes its numbers comparable with
// another's (build, backends, machine, suite, measurement settings).
#pragma once

#include "plugin_loader.hpp"
#include "suite.hpp"

#include <nlohmann/json.hpp>

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace opbench {

// opbench version, git commit, build type, compiler, options, backends built.
[[nodiscard]] nlohmann::json build_context();

// What a plugin's table says about it (name, versions, ABI), with its
// usability: no call into the plugin. The context of a backend that could
// not be opened (its worker crashed in create).
[[nodiscard]] nlohmann::json plugin_table_context(const opb_backend_api &api, const std::string &unusable_reason);

// One backend instance: identity, library versions, usability, device, and
// the facts the plugin reports through its optional `info` entry.
[[nodiscard]] nlohmann::json backend_context(const BackendInstance &be, const LoadedPlugin *plugin);

// The whole `context.opbench` object of a result set. `backends`: each
// opened backend's context (backend_context, made where it runs).
[[nodiscard]] nlohmann::json opbench_context(
    const Suite &suite, const std::vector<Case> &effective_cases,
    const std::map<std::string, nlohmann::json> &backends,
    const std::map<std::string, std::string> &unavailable, const std::string &reference_backend,
    const std::vector<std::string> &benchmark_args, double timer_overhead_seconds);

} // namespace opbench
