#include "measure/throttle.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <utility>

namespace opbench {

ThrottleVerdict judge_throttle(const ClockReading &reading, double sustained_mhz) {
    ThrottleVerdict v;
    if (!(reading.sm_clock_mhz > 0) || !(sustained_mhz > 0)) return v; // nothing to judge by
    v.clock_share = reading.sm_clock_mhz / sustained_mhz;
    v.throttled = v.clock_share < kThrottledClockShare;
    return v;
}

namespace {

// nvml.h; GPU idle (0x1) is left out by the plugins: between the host's
// calls the GPU waits, which limits nothing.
constexpr std::array<std::pair<std::uint64_t, const char *>, 9> kReasons{{
    {0x1, "gpu_idle"},
    {0x2, "applications_clocks_setting"},
    {0x4, "sw_power_cap"},
    {0x8, "hw_slowdown"},
    {0x10, "sync_boost"},
    {0x20, "sw_thermal_slowdown"},
    {0x40, "hw_thermal_slowdown"},
    {0x80, "hw_power_brake_slowdown"},
    {0x100, "display_clock_setting"},
}};

} // namespace

std::vector<std::string> clock_event_reason_names(std::uint64_t mask) {
    std::vector<std::string> out;
    for (int bit = 0; bit < 64; ++bit) {
        const std::uint64_t b = std::uint64_t{1} << bit;
        if (!(mask & b)) continue;
        const auto known = std::find_if(kReasons.begin(), kReasons.end(), [&](const auto &r) { return r.first == b; });
        out.push_back(known != kReasons.end() ? std::string(known->second) : fmt::format("{:#x}", b));
    }
    return out;
}

std::uint64_t clock_event_reasons_from_names(const std::vector<std::string> &names) {
    std::uint64_t mask = 0;
    for (const auto &n : names)
        for (const auto &[bit, name] : kReasons)
            if (n == name) mask |= bit;
    return mask;
}

std::optional<ClockRange> clock_range(std::span<const double> sm_clock_mhz) {
    std::vector<double> read;
    for (double mhz : sm_clock_mhz)
        if (mhz > 0) read.push_back(mhz);
    if (read.empty()) return std::nullopt;
    std::sort(read.begin(), read.end());
    const std::size_t n = read.size();
    ClockRange r;
    r.min_mhz = read.front();
    r.max_mhz = read.back();
    r.median_mhz = n % 2 ? read[n / 2] : (read[n / 2 - 1] + read[n / 2]) / 2;
    r.readings = n;
    return r;
}

std::string clock_range_text(const ClockRange &r) {
    return fmt::format("the device's SM clock: {:.0f}-{:.0f} MHz over {} repetitions (moved {:.0f}%)", r.min_mhz,
                       r.max_mhz, r.readings, r.moved() * 100);
}

std::string clock_event_reasons_text(std::uint64_t mask) {
    std::string out;
    for (std::string n : clock_event_reason_names(mask)) {
        std::replace(n.begin(), n.end(), '_', ' ');
        out += (out.empty() ? "" : ", ") + n;
    }
    return out;
}

} // namespace opbench
