// The context of a result set: what makes its numbers comparable with
// another's (build, backends, machine, suite, measurement settings).
#pragma once

#include "suite/suite.hpp"

#include <nlohmann/json.hpp>

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace opbench {

// opbench version, git commit, build type, compiler, options, backends built.
[[nodiscard]] nlohmann::json build_context();

// The whole `context.opbench` object of a result set. `backends`: each
// opened backend's context (backend_context in plugin/backend_facts.hpp, made where it runs).
[[nodiscard]] nlohmann::json opbench_context(const Suite &suite, const std::vector<Case> &effective_cases,
                                             const std::map<std::string, nlohmann::json> &backends,
                                             const std::map<std::string, std::string> &unavailable,
                                             const std::string &reference_backend,
                                             const std::vector<std::string> &benchmark_args,
                                             double timer_overhead_seconds);

} // namespace opbench
