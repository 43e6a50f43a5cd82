#include "run/run_environment.hpp"

#include "build_config.hpp"
#include "machine/machine.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <sched.h>
#include <stdexcept>
#include <unistd.h>

namespace opbench {

namespace {

// "0-3,6": a sorted CPU list in taskset's range syntax.
std::string cpu_ranges(std::vector<int> cpus) {
    std::sort(cpus.begin(), cpus.end());
    std::string out;
    for (std::size_t i = 0; i < cpus.size();) {
        std::size_t j = i;
        while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) ++j;
        if (!out.empty()) out += ",";
        out += j == i ? std::to_string(cpus[i]) : fmt::format("{}-{}", cpus[i], cpus[j]);
        i = j + 1;
    }
    return out;
}

} // namespace

void pin_process_to_cpus(const std::vector<int> &cpus) {
    if (cpus.empty()) return;
    // Only CPUs this process may run on now: the kernel would silently drop
    // the others and the result set would record CPUs that never ran a case.
    cpu_set_t allowed;
    CPU_ZERO(&allowed);
    if (sched_getaffinity(0, sizeof allowed, &allowed) != 0)
        throw std::runtime_error(fmt::format("cannot read the CPUs opbench may use: {}", std::strerror(errno)));
    std::vector<int> absent, allowed_list;
    for (int c = 0; c < CPU_SETSIZE; ++c)
        if (CPU_ISSET(c, &allowed)) allowed_list.push_back(c);
    cpu_set_t set;
    CPU_ZERO(&set);
    for (int c : cpus) {
        if (c < 0 || c >= CPU_SETSIZE || !CPU_ISSET(c, &allowed)) {
            absent.push_back(c);
            continue;
        }
        CPU_SET(c, &set);
    }
    if (!absent.empty())
        throw std::runtime_error(fmt::format("CPUs {} are not on this machine or not allowed to opbench "
                                             "(it may use {})",
                                             cpu_ranges(absent), cpu_ranges(allowed_list)));
    if (sched_setaffinity(0, sizeof set, &set) != 0)
        throw std::runtime_error(fmt::format("cannot pin to CPUs {}: {} (allowed: see `taskset -p {}`)",
                                             fmt::join(cpus, ","), std::strerror(errno), ::getpid()));
}

std::vector<std::string> measurement_warnings() {
    std::vector<std::string> w;
    const std::string build_type = OPBENCH_BUILD_TYPE;
    if (build_type != "release" && build_type != "plain")
        w.push_back("opbench was built as '" + build_type +
                    "': harness overhead may be higher "
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
                                    "timings will be noisy; fewer threads wait less for a CPU (--threads 1), "
                                    "--cpus keeps the run to CPUs of its own, and interleaved repetitions "
                                    "(--benchmark_enable_random_interleaving=true) spread a busy spell over "
                                    "many cases",
                                    load, cores));
    }
    return w;
}

} // namespace opbench
