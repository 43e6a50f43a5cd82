// The result set's top-level "context" in Google Benchmark's form (date,
// host_name, executable, num_cpus, mhz_per_cpu, cpu_scaling_enabled, caches,
// load_avg), made from Google Benchmark's own CPU and
// system facts: compare.py and older readers find it where they always did.
#pragma once

#include <nlohmann/json.hpp>

namespace opbench {

[[nodiscard]] nlohmann::json benchmark_context();

} // namespace opbench
