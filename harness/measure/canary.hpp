// The drift canary: a fixed reference kernel that the harness itself
// measures (no plugin), so its time says how fast the machine is right now.
// A short FMA loop (the cores' arithmetic) and a short copy (the caches'
// bandwidth) take the same work every time: when the same code takes 2x
// longer, the machine (a neighbour's load, the clock, the host) moved, not
// the code. A paired run (run/ab_run.hpp) reads it between its pair blocks
// and records the series; any runner can call measure_canary() between
// repetitions. About 1 ms per reading.
#pragma once

#include <nlohmann/json.hpp>

#include <span>
#include <vector>

namespace opbench {

struct CanaryReading {
    double at_seconds = 0;   // since the series began
    double fma_seconds = 0;  // the FMA loop: best of a few tries
    double copy_seconds = 0; // the copy: best of a few tries
    // One number for the machine's speed: the sum (both take about the same time).
    [[nodiscard]] double seconds() const { return fma_seconds + copy_seconds; }
};

// Times the kernels once now (best of kCanaryTries each, so one preemption
// does not count as drift). `at_seconds` is left 0: CanarySeries sets it.
[[nodiscard]] CanaryReading measure_canary();
inline constexpr int kCanaryTries = 3;

// The readings over one run, with their times.
class CanarySeries {
public:
    CanarySeries();
    // Measures now and keeps the reading.
    const CanaryReading &read();
    [[nodiscard]] const std::vector<CanaryReading> &readings() const { return readings_; }

private:
    double start_;
    std::vector<CanaryReading> readings_;
};

// How far the machine's speed moved over the series: (slowest - fastest) /
// median of the readings' seconds(); 0 with fewer than two.
[[nodiscard]] double canary_drift(std::span<const CanaryReading> readings);
// The median of the readings' seconds(): the run's machine speed, by which
// --normalize canary divides a set's times. 0 with none.
[[nodiscard]] double canary_median_seconds(std::span<const CanaryReading> readings);

// As a result set holds it: context.opbench.canary =
//   {"kernel": "...", "readings": [{"at": s, "fma": s, "copy": s}, ...]}
[[nodiscard]] nlohmann::json canary_json(std::span<const CanaryReading> readings);
// The readings of such an object; throws std::invalid_argument when malformed.
[[nodiscard]] std::vector<CanaryReading> canary_from_json(const nlohmann::json &canary);

} // namespace opbench
