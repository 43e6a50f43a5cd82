// Facts about the host CPU that the harness and CPU backends both report:
// one reader each, shared, so every part of opbench says the same thing.
// Header-only C++17; Linux (/proc, /sys); absent files give empty / 0.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

namespace opbench::host {

// The value of the first "key<tab>: value" line of /proc/cpuinfo (the first
// CPU's); empty when absent.
inline std::string cpuinfo_field(const std::string &wanted) {
    std::ifstream in("/proc/cpuinfo");
    std::string line;
    while (std::getline(in, line)) {
        const auto colon = line.find(':');
        if (colon == std::string::npos) continue;
        std::string key = line.substr(0, colon);
        while (!key.empty() && (key.back() == ' ' || key.back() == '\t')) key.pop_back();
        if (key != wanted) continue;
        const auto start = line.find_first_not_of(" \t", colon + 1);
        return start == std::string::npos ? std::string() : line.substr(start);
    }
    return {};
}

// "model name" of the first CPU in /proc/cpuinfo; empty when absent.
inline std::string cpu_model_name() { return cpuinfo_field("model name"); }

// sysfs cache sizes look like "32K", "1024K", "32768K" or "2M"; 0 when unreadable.
inline std::uint64_t parse_cache_size(const std::string &s) {
    if (s.empty()) return 0;
    char *end = nullptr;
    const unsigned long long v = std::strtoull(s.c_str(), &end, 10);
    if (end == s.c_str()) return 0;
    switch (*end) {
    case 'K': return std::uint64_t(v) << 10;
    case 'M': return std::uint64_t(v) << 20;
    case 'G': return std::uint64_t(v) << 30;
    default: return v;
    }
}

// The first line of a (sysfs) file, without trailing spaces; empty when unreadable.
inline std::string first_line(const std::filesystem::path &p) {
    std::ifstream in(p);
    std::string line;
    if (!in || !std::getline(in, line)) return {};
    while (!line.empty() && (line.back() == '\n' || line.back() == ' ')) line.pop_back();
    return line;
}

// Size of CPU 0's last-level cache: the data or unified cache of the highest
// level (the largest at that level); 0 when sysfs does not say.
inline std::uint64_t
last_level_cache_bytes(const std::filesystem::path &cache_dir = "/sys/devices/system/cpu/cpu0/cache") {
    std::uint64_t best_size = 0;
    int best_level = -1;
    std::error_code ec;
    for (const auto &entry : std::filesystem::directory_iterator(cache_dir, ec)) {
        if (entry.path().filename().string().rfind("index", 0) != 0) continue;
        if (first_line(entry.path() / "type") == "Instruction") continue;
        const int level = std::atoi(first_line(entry.path() / "level").c_str());
        const std::uint64_t size = parse_cache_size(first_line(entry.path() / "size"));
        if (level > best_level || (level == best_level && size > best_size)) {
            best_level = level;
            best_size = size;
        }
    }
    return best_size;
}

} // namespace opbench::host
