#include "run/run_environment.hpp"

#include "build_config.hpp"
#include "machine/machine.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include <cerrno>
#include <cstring>
#include <sched.h>
#include <stdexcept>
#include <unistd.h>

namespace opbench {

void pin_process_to_cpus(const std::vector<int> &cpus) {
    if (cpus.empty()) return;
    cpu_set_t set;
    CPU_ZERO(&set);
    for (int c : cpus) {
        if (c < 0 || c >= CPU_SETSIZE) throw std::runtime_error(fmt::format("CPU {} is out of range", c));
        CPU_SET(c, &set);
    }
    if (sched_setaffinity(0, sizeof set, &set) != 0)
        throw std::runtime_error(fmt::format("cannot pin to CPUs {}: {} (allowed: see `taskset -p {}`)",
                                             fmt::join(cpus, ","), std::strerror(errno), ::getpid()));
}

std::vector<std::string> measurement_warnings() {
    std::vector<std::string> w;
    const std::string build_type = OPBENCH_BUILD_TYPE;
    if (build_type != "release" && build_type != "plain")
        w.push_back("opbench was built as '" + build_type + "': harness overhead may be higher "
                    "(meson setup --buildtype=release)");
    const nlohmann::json cpu = cpu_context();
    if (cpu.value("cpu_scaling_enabled", nlohmann::json(nullptr)) == nlohmann::json(true))
        w.push_back("CPU frequency scaling is enabled (governor '" +
                    cpu.value("frequency_governor", std::string("unknown")) + "'): timings may vary");
    if (cpu.contains("load_average") && cpu["load_average"].is_array() && !cpu["load_average"].empty() &&
        cpu["load_average"][0].is_number()) {
        const double load = cpu["load_average"][0].get<double>();
        const int cores = allowed_cpu_count();
        if (load > 0.5 * cores)
            w.push_back(fmt::format("the machine is loaded (1-minute load average {:.2f} on {} cores): "
                                    "timings will be noisy",
                                    load, cores));
    }
    return w;
}

} // namespace opbench
