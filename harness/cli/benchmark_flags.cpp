#include "cli/benchmark_flags.hpp"

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <regex>
#include <string_view>

namespace opbench {

namespace {

// Google Benchmark flags that opbench takes over, and what to use instead.
struct Replaced {
    std::string_view flag;
    std::string_view instead;
};
constexpr Replaced kReplaced[] = {
    {"out", "opbench writes the result set itself: use --out FILE (or --no-out)"},
    {"out_format", "result sets are Google Benchmark JSON with opbench's fields: use --out FILE"},
    {"format", "the console shows Google Benchmark's table and the result set (--out) is the JSON; use --out FILE"},
    {"list_tests", "cases are registered as they run; `opbench validate SUITE` checks a suite and counts its cases"},
    {"report_aggregates_only", "result sets keep every repetition; compare.py computes the aggregates"},
    {"display_aggregates_only", "the console shows every repetition; compare.py computes the aggregates"},
    {"min_warmup_time", "opbench warms up by count: use --warmup N"},
    {"time_unit", "the console shows microseconds; result sets carry seconds per call in their stats"},
    {"perf_counters", "not supported by opbench's own sampling loop"},
};

constexpr std::string_view kPassThrough[] = {"filter", "enable_random_interleaving", "color", "counters_tabular",
                                             "context"};

std::string shown_flag(std::string_view s) {
    constexpr std::size_t kMax = 40;
    return s.size() <= kMax ? std::string(s) : std::string(s.substr(0, kMax)) + "...";
}

[[noreturn]] void refuse_flag(const std::string &arg, std::string_view why) {
    throw BenchmarkFlagError(fmt::format("'{}': {}", shown_flag(arg), why));
}

bool is_bool_text(std::string_view v) {
    for (std::string_view t : {"true", "false", "1", "0", "yes", "no", "t", "f", "y", "n", "on", "off"})
        if (v == t) return true;
    return false;
}

} // namespace

BenchmarkFlags sort_benchmark_flags(const std::vector<std::string> &args) {
    BenchmarkFlags out;
    const std::string prefix = "--benchmark_";
    for (const auto &arg : args) {
        if (arg.rfind(prefix, 0) != 0) refuse_flag(arg, "not a Google Benchmark flag");
        const std::string_view body = std::string_view(arg).substr(prefix.size());
        const std::size_t eq = body.find('=');
        const std::string_view name = body.substr(0, eq);
        // Not an optional<string_view>: GCC 12 at -O1 warns it may be read
        // uninitialized (a false positive, -Wmaybe-uninitialized).
        const bool has_value = eq != std::string_view::npos;
        const std::string_view value = has_value ? body.substr(eq + 1) : std::string_view();

        if (name == "min_time") {
            // Google Benchmark 1.7 takes plain seconds; newer ones also "0.5s".
            std::string_view v = value;
            if (!v.empty() && v.back() == 's') v.remove_suffix(1);
            double seconds = 0;
            auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), seconds);
            if (v.empty() || ec != std::errc() || end != v.data() + v.size() || !std::isfinite(seconds) ||
                !(seconds > 0))
                refuse_flag(arg, "--benchmark_min_time=SECONDS takes a number of seconds > 0 (it sets --min-time)");
            out.min_time = seconds;
            continue;
        }
        if (name == "repetitions") {
            std::string_view v = value;
            int n = 0;
            auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
            if (v.empty() || ec != std::errc() || end != v.data() + v.size() || n < 1)
                refuse_flag(arg, "--benchmark_repetitions=N takes a positive integer (it sets --repetitions)");
            out.repetitions = n;
            continue;
        }
        bool passed = false;
        for (std::string_view p : kPassThrough) {
            if (name != p) continue;
            if (name == "enable_random_interleaving") {
                if (has_value && !is_bool_text(value)) refuse_flag(arg, "takes true or false");
            } else if (!has_value) {
                refuse_flag(arg, fmt::format("write --benchmark_{}=VALUE", name));
            }
            if (name == "filter") {
                std::string pattern(value);
                if (!pattern.empty() && pattern[0] == '-') pattern.erase(0, 1);
                try {
                    (void)std::regex(pattern, std::regex::extended);
                } catch (const std::regex_error &e) {
                    refuse_flag(arg, fmt::format("not a valid extended regular expression ({})", e.what()));
                }
            }
            out.pass_through.push_back(arg);
            passed = true;
        }
        if (passed) continue;
        for (const auto &r : kReplaced)
            if (name == r.flag) refuse_flag(arg, fmt::format("not supported by opbench run: {}", r.instead));
        refuse_flag(arg, "unknown or unsupported Google Benchmark flag (opbench run accepts --benchmark_filter, "
                         "--benchmark_enable_random_interleaving, --benchmark_color, --benchmark_counters_tabular, "
                         "--benchmark_context, --benchmark_min_time, --benchmark_repetitions)");
    }
    return out;
}

} // namespace opbench
