// Google Benchmark's side of a run: the argv opbench hands it, and its
// --benchmark_filter applied to cases that are never registered.
#pragma once

#include <optional>
#include <regex>
#include <string>
#include <vector>

namespace opbench {

// Google Benchmark's --benchmark_filter, applied to cases that are never
// registered (skipped before running) so the filter means the same for them:
// an extended regex searched in the name; a leading '-' negates it.
class NameFilter {
public:
    // The last --benchmark_filter= in `args`, if any.
    [[nodiscard]] static std::optional<NameFilter> from_args(const std::vector<std::string> &args);
    [[nodiscard]] bool matches(const std::string &name) const;

private:
    explicit NameFilter(std::string pattern);
    std::string pattern_;
    bool negated_ = false;
    std::regex regex_;
};

// The argv for benchmark::Initialize: min_time 0 (each repetition is one
// iteration holding opbench's own sampling), the global repetitions, the
// user's --benchmark_* flags, and the JSON file when `json_out` is not empty.
[[nodiscard]] std::vector<std::string> gbench_argv(int repetitions, const std::vector<std::string> &user_args,
                                                   const std::string &json_out);

} // namespace opbench
