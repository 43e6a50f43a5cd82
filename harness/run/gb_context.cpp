#include "run/gb_context.hpp"

#include <benchmark/benchmark.h>

#include <array>
#include <ctime>
#include <filesystem>

namespace opbench {

nlohmann::json benchmark_context() {
    const benchmark::CPUInfo &cpu = benchmark::CPUInfo::Get();
    const benchmark::SystemInfo &sys = benchmark::SystemInfo::Get();
    // Local time with its offset, as Google Benchmark writes it.
    std::array<char, 64> date{};
    const std::time_t now = std::time(nullptr);
    std::tm local{};
    localtime_r(&now, &local);
    std::strftime(date.data(), date.size(), "%Y-%m-%dT%H:%M:%S%z", &local);
    std::string d = date.data();
    // GCC 12 false positive (PR 105329): -Wrestrict on the memcpy that
    // std::string::insert inlines from char_traits.h; silenced here only.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wrestrict"
#endif
    if (d.size() > 5) d.insert(d.size() - 2, ":"); // +0000 -> +00:00
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
    nlohmann::json caches = nlohmann::json::array();
    for (const auto &c : cpu.caches)
        caches.push_back({{"type", c.type}, {"level", c.level}, {"size", c.size}, {"num_sharing", c.num_sharing}});
    std::error_code ec;
    const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
    return {{"date", d},
            {"host_name", sys.name},
            {"executable", ec ? std::string("opbench") : exe.string()},
            {"num_cpus", cpu.num_cpus},
            {"mhz_per_cpu", static_cast<int>(cpu.cycles_per_second / 1e6)},
            {"cpu_scaling_enabled", cpu.scaling == benchmark::CPUInfo::ENABLED},
            {"caches", caches},
            {"load_avg", cpu.load_avg}};
}

} // namespace opbench
