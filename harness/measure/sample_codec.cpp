#include "measure/sample_codec.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <iterator>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>

namespace opbench {

double steady_tick_seconds() {
    using period = std::chrono::steady_clock::period;
    return static_cast<double>(period::num) / static_cast<double>(period::den);
}

nlohmann::json encode_sample_histogram(const std::vector<double> &per_call_seconds, int calls_per_sample,
                                       double tick_seconds, std::size_t max_bins) {
    const int calls = std::max(1, calls_per_sample);
    std::vector<std::int64_t> totals; // each sample's total in clock ticks
    for (double s : per_call_seconds) {
        // Rounding recovers the clock's whole ticks: the recipe's double
        // subtraction and division add at most a fraction of a tick.
        const double ticks = std::round(s * calls / tick_seconds);
        totals.push_back(std::isfinite(ticks) && ticks > 0 ? static_cast<std::int64_t>(ticks) : 0);
    }
    // A faster CPU takes more samples, with more distinct totals: the unit
    // doubles until at most max_bins remain, so a set's size does not grow
    // with the CPU's speed. tick_seconds says the unit; readers decode as
    // before, each sample to within half a unit.
    std::int64_t unit = 1;
    std::map<std::int64_t, std::int64_t> counts; // sorted by total, in units
    for (;;) {
        counts.clear();
        for (std::int64_t t : totals) ++counts[(t + unit / 2) / unit];
        if (counts.size() <= std::max<std::size_t>(1, max_bins) || unit > (std::int64_t(1) << 40)) break;
        unit *= 2;
    }
    std::string steps, how_many;
    std::int64_t previous = 0;
    for (const auto &[ticks, n] : counts) {
        fmt::format_to(std::back_inserter(steps), "{}{}", steps.empty() ? "" : " ", ticks - previous);
        fmt::format_to(std::back_inserter(how_many), "{}{}", how_many.empty() ? "" : " ", n);
        previous = ticks;
    }
    return {{"tick_seconds", tick_seconds * double(unit)}, {"ticks", std::move(steps)}, {"counts", std::move(how_many)}};
}

namespace {

// "12 0 3": whole numbers >= 0 separated by single spaces.
std::vector<std::int64_t> whole_numbers(const nlohmann::json &v, const char *member) {
    if (!v.is_string())
        throw SampleHistogramError(fmt::format("{}: expected a string of whole numbers separated by spaces, got {}",
                                               member, v.dump().substr(0, 40)));
    const std::string &text = v.get_ref<const std::string &>();
    std::vector<std::int64_t> out;
    const char *p = text.data(), *end = p + text.size();
    while (p < end) {
        std::int64_t x = 0;
        const auto [next, ec] = std::from_chars(p, end, x);
        if (ec != std::errc() || x < 0 || (next < end && *next != ' '))
            throw SampleHistogramError(fmt::format("{}: item {} ('{}'): expected a whole number >= 0", member,
                                                   out.size(), std::string(p, std::find(p, end, ' ')).substr(0, 24)));
        out.push_back(x);
        p = next < end ? next + 1 : next;
    }
    return out;
}

} // namespace

std::vector<double> decode_sample_histogram(const nlohmann::json &h, int calls_per_sample) {
    if (!h.is_object()) throw SampleHistogramError("expected an object with tick_seconds, ticks and counts");
    const auto tick = h.find("tick_seconds");
    if (tick == h.end() || !tick->is_number() || !(tick->get<double>() > 0) || !std::isfinite(tick->get<double>()))
        throw SampleHistogramError("tick_seconds: expected a finite number > 0");
    const auto ticks = h.find("ticks"), counts = h.find("counts");
    if (ticks == h.end() || counts == h.end()) throw SampleHistogramError("expected members ticks and counts");
    const std::vector<std::int64_t> steps = whole_numbers(*ticks, "ticks"), ns = whole_numbers(*counts, "counts");
    if (steps.size() != ns.size())
        throw SampleHistogramError(
            fmt::format("ticks and counts: expected as many counts as ticks ({} and {})", steps.size(), ns.size()));
    const double per_tick = tick->get<double>() / std::max(1, calls_per_sample);
    std::vector<double> out;
    std::int64_t at = 0;
    for (std::size_t i = 0; i < steps.size(); ++i) {
        const std::int64_t n = ns[i];
        if (n < 1) throw SampleHistogramError(fmt::format("counts: item {}: expected a count >= 1, got 0", i));
        // A set's samples number in the millions at most; more is not a set opbench wrote.
        if (n > (std::int64_t{1} << 32) || out.size() + static_cast<std::size_t>(n) > (std::size_t{1} << 32))
            throw SampleHistogramError(fmt::format("counts: item {}: {} samples is more than a result set holds", i, n));
        if (steps[i] > std::numeric_limits<std::int64_t>::max() - at)
            throw SampleHistogramError(fmt::format("ticks: item {}: the total overflows", i));
        at += steps[i];
        out.insert(out.end(), static_cast<std::size_t>(n), static_cast<double>(at) * per_tick);
    }
    return out;
}

} // namespace opbench
