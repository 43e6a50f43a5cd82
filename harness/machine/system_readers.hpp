// What the machine code reads of the system beyond opbench/host_cpu.hpp's
// readers: /proc/cpuinfo's flags, the CPUs this process may run on and
// sysfs's cache levels, with two small helpers. Shared
// by the peak measurement (measure_peaks.cpp) and the cache and context
// (machine.cpp); not part of the machine API (machine.hpp).
#pragma once

#include "machine/machine.hpp"

#include <cstdint>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

namespace opbench::detail {

[[nodiscard]] std::set<std::string> cpuinfo_flags();
// The CPUs this process may run on (its affinity mask), ascending.
[[nodiscard]] std::vector<int> allowed_cpus();
// FNV-1a, 64 bit: stable across runs and compilers (std::hash is neither).
[[nodiscard]] std::uint64_t fnv1a64(const std::string &s);
[[nodiscard]] std::string utc_now_iso8601();
// The CPUs of a sysfs list such as "0-3,8" that are also in `allowed`.
[[nodiscard]] int cpus_in_list(const std::string &list, const std::vector<int> &allowed);
// CPU 0's data and unified caches from sysfs, smallest level first. Where
// sysfs shows none (some VMs), the C library's reading of CPUID
// (sysconf) gives L1d and L2, a core's own; no L3: a hypervisor's CPUID can
// give the whole host's (508 MB on this project's Zen 5 guest), and its
// sharing is unknown.
[[nodiscard]] std::vector<CacheRoof> cache_levels(const std::vector<int> &allowed);
// The same, reading `cache_dir` (sysfs's cpu0/cache) and `core_cpus`
// (cpu0's topology/core_cpus_list, the CPUs sharing a core's caches): a
// test points them at a fixture.
[[nodiscard]] std::vector<CacheRoof> cache_levels(const std::filesystem::path &cache_dir,
                                                  const std::filesystem::path &core_cpus,
                                                  const std::vector<int> &allowed);
// The int8 kernel this CPU runs: "avx512_vnni" where present, else "avx2"
// (AVX2's three-instruction MAC); "" without AVX2.
[[nodiscard]] const char *int8_kernel_isa();

} // namespace opbench::detail
