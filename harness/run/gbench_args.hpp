// Google Benchmark's side of a run: the argv opbench hands it, and the
// --benchmark_filter opbench applies itself, to the names users see.
#pragma once

#include <optional>
#include <regex>
#include <string>
#include <vector>

namespace opbench {

// --benchmark_filter as opbench applies it to entry names before anything
// runs (Google Benchmark then runs every entry it is handed): an extended
// regex searched in the name; a leading '-' negates it.
class NameFilter {
public:
    // The last --benchmark_filter= in `args`, if any.
    [[nodiscard]] static std::optional<NameFilter> from_args(const std::vector<std::string> &args);
    [[nodiscard]] bool matches(const std::string &name) const;
    // An entry named `name` (as the console shows it): the pattern is searched
    // in the name, and in its run name (writers/result_schema.hpp: the form
    // of result sets and older filters), so "be:naive$" and a filter
    // written against the run names both select naive's entries.
    [[nodiscard]] bool matches_entry(const std::string &name) const;
    [[nodiscard]] const std::string &pattern() const { return pattern_; }

private:
    explicit NameFilter(std::string pattern);
    std::string pattern_;
    bool negated_ = false;
    std::regex regex_;
};

// The argv for benchmark::Initialize: the user's --benchmark_* flags without
// --benchmark_filter (applied by opbench) and without repetitions (each entry
// registers its own).
[[nodiscard]] std::vector<std::string> gbench_argv(const std::vector<std::string> &user_args);

// Whether the flags ask for interleaved repetitions
// (--benchmark_enable_random_interleaving=true).
[[nodiscard]] bool interleaved(const std::vector<std::string> &user_args);

} // namespace opbench
