#include "run/context.hpp"

#include "build_config.hpp"
#include "machine/machine.hpp"
#include "writers/result_schema.hpp"
#include "measure/stack_offset.hpp"
#include "run/git_commit.hpp"

#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <chrono>
#include <ctime>

namespace opbench {

nlohmann::json build_context() {
    return {{"opbench_version", OPBENCH_VERSION},
            {"git_commit", git_commit()},
            {"build_type", OPBENCH_BUILD_TYPE},
            {"compiler", OPBENCH_COMPILER},
            {"options", OPBENCH_BUILD_OPTIONS},
            {"backends_built", OPBENCH_BUILT_BACKENDS},
            {"plugin_abi", fmt::format("{}.{}", OPB_ABI_VERSION_MAJOR, OPB_ABI_VERSION_MINOR)}};
}

nlohmann::json opbench_context(const Suite &suite, const std::vector<Case> &cases,
                               const std::map<std::string, nlohmann::json> &backends,
                               const std::map<std::string, std::string> &unavailable,
                               const std::string &reference_backend, const std::vector<std::string> &benchmark_args,
                               double timer_overhead_seconds) {
    nlohmann::json j;
    j["schema_version"] = kResultSchemaVersion;
    char stamp[64];
    std::time_t now = std::time(nullptr);
    std::strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
    j["timestamp"] = stamp;
    j["build"] = build_context();
    j["machine"] = cpu_context();
    j["suite"] = {{"name", suite.name},
                  {"description", suite.description},
                  {"path", suite.path},
                  {"sha256", suite.content_hash},
                  {"cases", cases.size()}};
    nlohmann::json be = nlohmann::json::object();
    for (const auto &[name, context] : backends) be[name] = context;
    for (const auto &[name, why] : unavailable)
        if (!be.contains(name)) be[name] = {{"name", name}, {"usable", false}, {"unusable_reason", why}};
    j["backends"] = std::move(be);
    j["measurement"] = {{"reference_backend", reference_backend},
                        {"timer", "std::chrono::steady_clock around execute + synchronize"},
                        {"timer_overhead_seconds", timer_overhead_seconds},
                        // Each repetition samples at its own stack offset (stack_offset.hpp).
                        {"stack_offset", fmt::format("random per repetition: {}..{} bytes in steps of {}",
                                                     kStackOffsetStep, kStackOffsetSpan, kStackOffsetStep)},
                        {"benchmark_args", benchmark_args}};
    return j;
}

} // namespace opbench
