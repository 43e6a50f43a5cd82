#include "measure/canary.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <stdexcept>
#include <vector>

namespace opbench {

namespace {

// Sizes chosen for ~0.3-0.5 ms per kernel on a 2020s core: long enough
// for the clock, short enough to run between every pair block.
constexpr int kFmaLanes = 64;        // independent chains: the loop is throughput-bound
constexpr int kFmaSteps = 20000;     // 1.28 M FMAs
constexpr std::size_t kCopyBytes = 256 * 1024; // in L2 on most cores
constexpr int kCopyRounds = 16;

double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

double time_fma() {
    float acc[kFmaLanes];
    for (int i = 0; i < kFmaLanes; ++i) acc[i] = 1.0f + float(i) * 1e-3f;
    const float mul = 0.999999f, add = 1e-6f;
    const double t0 = now();
    for (int s = 0; s < kFmaSteps; ++s) {
        for (int i = 0; i < kFmaLanes; ++i) acc[i] = acc[i] * mul + add;
        asm volatile("" : : "r"(acc) : "memory"); // each step is done, none folded away
    }
    const double t1 = now();
    float sum = 0;
    for (float a : acc) sum += a;
    asm volatile("" : : "r"(sum));
    return t1 - t0;
}

double time_copy() {
    static std::vector<char> from(kCopyBytes, 1), to(kCopyBytes);
    const double t0 = now();
    for (int r = 0; r < kCopyRounds; ++r) {
        std::memcpy(to.data(), from.data(), kCopyBytes);
        asm volatile("" : : "r"(to.data()) : "memory");
    }
    return now() - t0;
}

double best_of(double (*kernel)()) {
    double best = kernel();
    for (int i = 1; i < kCanaryTries; ++i) best = std::min(best, kernel());
    return best;
}

} // namespace

CanaryReading measure_canary() {
    CanaryReading r;
    r.fma_seconds = best_of(time_fma);
    r.copy_seconds = best_of(time_copy);
    return r;
}

CanarySeries::CanarySeries() : start_(now()) {}

const CanaryReading &CanarySeries::read() {
    CanaryReading r = measure_canary();
    r.at_seconds = now() - start_;
    readings_.push_back(r);
    return readings_.back();
}

double canary_median_seconds(std::span<const CanaryReading> readings) {
    if (readings.empty()) return 0;
    std::vector<double> s;
    for (const auto &r : readings) s.push_back(r.seconds());
    std::sort(s.begin(), s.end());
    const std::size_t n = s.size();
    return n % 2 ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
}

double canary_drift(std::span<const CanaryReading> readings) {
    if (readings.size() < 2) return 0;
    auto [lo, hi] = std::minmax_element(readings.begin(), readings.end(),
                                        [](const auto &a, const auto &b) { return a.seconds() < b.seconds(); });
    const double median = canary_median_seconds(readings);
    return median > 0 ? (hi->seconds() - lo->seconds()) / median : 0;
}

nlohmann::json canary_json(std::span<const CanaryReading> readings) {
    nlohmann::json list = nlohmann::json::array();
    for (const auto &r : readings) list.push_back({{"at", r.at_seconds}, {"fma", r.fma_seconds}, {"copy", r.copy_seconds}});
    return {{"kernel", "f32 FMA loop (64 lanes x 20000 steps) + 256 KiB memcpy x 16, best of 3 each"},
            {"readings", std::move(list)}};
}

std::vector<CanaryReading> canary_from_json(const nlohmann::json &canary) {
    if (!canary.is_object() || !canary.contains("readings") || !canary["readings"].is_array())
        throw std::invalid_argument("canary: expected an object with a `readings` array");
    std::vector<CanaryReading> out;
    for (const auto &r : canary["readings"]) {
        if (!r.is_object()) throw std::invalid_argument("canary: a reading is not an object");
        for (const char *k : {"at", "fma", "copy"})
            if (!r.contains(k) || !r[k].is_number() || r[k].get<double>() < 0)
                throw std::invalid_argument(std::string("canary: a reading's `") + k + "` is not a non-negative number");
        out.push_back({r["at"].get<double>(), r["fma"].get<double>(), r["copy"].get<double>()});
    }
    return out;
}

} // namespace opbench
