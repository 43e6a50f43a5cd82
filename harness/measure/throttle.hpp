// Throttling: the GPU's counterpart of a starved CPU repetition (issue 41).
//
// A GPU boosts and power-limits its SM clock, so a repetition run while the
// clock had fallen timed the clock, not the kernel. The plugin reads the SM
// clock over each repetition (opb_backend_api::clock_begin / clock_end: a
// probe kernel's %globaltimer and clock64, or NVML) and states the clock its
// device sustains under load (opb_device_clocks::sustained_mhz).
//
// The rule (docs/measurement.md, "Throttled repetitions"):
//   - a repetition is throttled when its SM clock is below kThrottledClockShare
//     of the sustained clock;
//   - a throttled repetition is measured again, up to kThrottledRetries times
//     (the clock may recover, as a busy CPU may quieten);
//   - an entry leaves out the repetitions still throttled (reason
//     `throttled`, noisy); when every repetition stayed throttled its quality
//     is `throttled`: no rate, no share of a roof, no speed-up.
// Without a clock reading or a sustained clock no repetition is judged.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace opbench {

// nvbench drops samples below 75% of the default clock; the sustained clock
// is already the clock under load (below the boost clock), so a repetition
// 15% under it is a throttle event (power brake, thermal slowdown), not the
// few percent a Hopper's clock drifts between runs.
inline constexpr double kThrottledClockShare = 0.85;
inline constexpr int kThrottledRetries = 2;

// What the device's clock did over one repetition; the fields' "unknown"
// values are those of opb_clock_reading.
struct ClockReading {
    double sm_clock_mhz = 0;    // 0 unknown
    double power_watts = -1;    // < 0 unknown
    double temperature_c = -1000; // < -273 unknown
    std::uint64_t throttle_reasons = 0;
};

struct ThrottleVerdict {
    bool throttled = false;
    double clock_share = -1; // sm_clock / sustained; < 0 unknown
};
[[nodiscard]] ThrottleVerdict judge_throttle(const ClockReading &reading, double sustained_mhz);

// NVML's clock-event reasons (nvml.h's nvmlClocksEventReason* bits) by the
// names result sets write ("sw_power_cap", "hw_thermal_slowdown"; an unknown
// bit as "0x200"), and back (a name not known is left out).
[[nodiscard]] std::vector<std::string> clock_event_reason_names(std::uint64_t mask);
[[nodiscard]] std::uint64_t clock_event_reasons_from_names(const std::vector<std::string> &names);
// For notes: "sw power cap, hw thermal slowdown"; "" for none.
[[nodiscard]] std::string clock_event_reasons_text(std::uint64_t mask);

// The SM clock over a run's repetitions: the device's own drift reading,
// beside the drift canary, which times a loop on the host and so says
// nothing of a device-timed entry's speed (docs/measurement.md, "The drift
// canary on a GPU"). `moved` is (max - min) / max.
struct ClockRange {
    double min_mhz = 0, median_mhz = 0, max_mhz = 0;
    std::size_t readings = 0;
    [[nodiscard]] double moved() const { return max_mhz > 0 ? (max_mhz - min_mhz) / max_mhz : 0; }
};
// Of the readings above 0 MHz (0 or less: no reading); none without one.
[[nodiscard]] std::optional<ClockRange> clock_range(std::span<const double> sm_clock_mhz);
// One line for the consoles, e.g. "the device's SM clock: 1755-1980 MHz over
// 240 repetitions (moved 11%)".
[[nodiscard]] std::string clock_range_text(const ClockRange &r);

} // namespace opbench
