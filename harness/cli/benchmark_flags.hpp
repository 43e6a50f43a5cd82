// The --benchmark_* arguments opbench run accepts. Google Benchmark parses
// its flags itself and ignores what opbench overrides (its output file and
// format), so a flag opbench cannot honour is refused here, with what to use
// instead, rather than dropped in silence.
#pragma once

#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace opbench {

// A --benchmark_* argument that opbench refuses; what() says what to use.
class BenchmarkFlagError : public std::invalid_argument {
public:
    using std::invalid_argument::invalid_argument;
};

struct BenchmarkFlags {
    // --benchmark_min_time / --benchmark_repetitions: opbench's own settings
    // (each repetition is one adaptive measurement by opbench).
    std::optional<double> min_time;
    std::optional<int> repetitions;
    std::vector<std::string> pass_through; // handed to Google Benchmark as given
};

// Sorts `args` (each beginning with --benchmark_) into the above. Accepted:
// filter, enable_random_interleaving, color, counters_tabular, context,
// min_time, repetitions. Throws BenchmarkFlagError for any other flag, a
// value flag without "=VALUE", a bad value or an invalid filter regex.
[[nodiscard]] BenchmarkFlags sort_benchmark_flags(const std::vector<std::string> &args);

} // namespace opbench
