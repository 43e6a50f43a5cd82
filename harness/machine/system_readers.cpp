// The system readers of system_readers.hpp.
#include "machine/system_readers.hpp"

#include "opbench/host_cpu.hpp"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <ctime>
#include <sstream>
#include <utility>

namespace opbench::detail {

std::set<std::string> cpuinfo_flags() {
    std::istringstream words(host::cpuinfo_field("flags"));
    std::set<std::string> flags;
    for (std::string w; words >> w;) flags.insert(w);
    return flags;
}

std::vector<int> allowed_cpus() {
    cpu_set_t set;
    CPU_ZERO(&set);
    std::vector<int> cpus;
    if (sched_getaffinity(0, sizeof(set), &set) == 0) {
        for (int c = 0; c < CPU_SETSIZE; ++c)
            if (CPU_ISSET(c, &set)) cpus.push_back(c);
    }
    if (cpus.empty()) cpus.push_back(0);
    return cpus;
}

std::uint64_t fnv1a64(const std::string &s) {
    std::uint64_t h = 0xcbf29ce484222325ull;
    for (unsigned char c : s) {
        h ^= c;
        h *= 0x100000001b3ull;
    }
    return h;
}

std::string utc_now_iso8601() {
    const std::time_t t = std::time(nullptr);
    std::tm tm{};
    gmtime_r(&t, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return buf;
}

int cpus_in_list(const std::string &list, const std::vector<int> &allowed) {
    int count = 0;
    std::stringstream ranges(list);
    for (std::string range; std::getline(ranges, range, ',');) {
        const auto dash = range.find('-');
        const int lo = std::atoi(range.c_str());
        const int hi = dash == std::string::npos ? lo : std::atoi(range.c_str() + dash + 1);
        for (int cpu : allowed) count += cpu >= lo && cpu <= hi;
    }
    return count;
}

namespace {

// L1d and L2 as sysconf reads them from CPUID, each shared by the CPUs of
// one core (`sharing`).
std::vector<CacheRoof> core_cache_levels_from_cpuid(int sharing) {
    std::vector<CacheRoof> roofs;
    for (const auto &[level, key] : {std::pair{"L1d", _SC_LEVEL1_DCACHE_SIZE}, std::pair{"L2", _SC_LEVEL2_CACHE_SIZE}}) {
        const long bytes = ::sysconf(key);
        if (bytes <= 0) continue;
        CacheRoof roof;
        roof.level = level;
        roof.bytes = static_cast<std::uint64_t>(bytes);
        roof.sharing_cpus = sharing;
        roofs.push_back(std::move(roof));
    }
    return roofs;
}

} // namespace

std::vector<CacheRoof> cache_levels(const std::vector<int> &allowed) {
    return cache_levels("/sys/devices/system/cpu/cpu0/cache", "/sys/devices/system/cpu/cpu0/topology/core_cpus_list",
                        allowed);
}

std::vector<CacheRoof> cache_levels(const std::filesystem::path &dir, const std::filesystem::path &core_cpus,
                                    const std::vector<int> &allowed) {
    std::vector<std::pair<int, CacheRoof>> found;
    std::error_code ec;
    for (const auto &entry : std::filesystem::directory_iterator(dir, ec)) {
        if (entry.path().filename().string().rfind("index", 0) != 0) continue;
        const std::string type = host::first_line(entry.path() / "type");
        if (type != "Data" && type != "Unified") continue;
        const int level = std::atoi(host::first_line(entry.path() / "level").c_str());
        CacheRoof roof;
        roof.level = "L" + std::to_string(level) + (type == "Data" ? "d" : "");
        roof.bytes = host::parse_cache_size(host::first_line(entry.path() / "size"));
        roof.sharing_cpus = std::max(1, cpus_in_list(host::first_line(entry.path() / "shared_cpu_list"), allowed));
        if (level > 0 && roof.bytes > 0) found.emplace_back(level, roof);
    }
    std::sort(found.begin(), found.end(), [](const auto &x, const auto &y) { return x.first < y.first; });
    std::vector<CacheRoof> roofs;
    for (auto &[level, roof] : found) roofs.push_back(std::move(roof));
    if (roofs.empty()) // sysfs shows no cache: CPUID's, a core's own
        roofs = core_cache_levels_from_cpuid(std::max(1, cpus_in_list(host::first_line(core_cpus), allowed)));
    return roofs;
}

const char *int8_kernel_isa() {
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vnni")) return "avx512_vnni";
    if (__builtin_cpu_supports("avx2")) return "avx2";
    return "";
}

} // namespace opbench::detail
