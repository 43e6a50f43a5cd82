#include "run/gbench_args.hpp"

#include "writers/result_schema.hpp"

namespace opbench {

namespace {

bool starts_with(const std::string &s, const std::string &prefix) { return s.rfind(prefix, 0) == 0; }

} // namespace

std::optional<NameFilter> NameFilter::from_args(const std::vector<std::string> &args) {
    std::optional<NameFilter> f;
    const std::string flag = "--benchmark_filter=";
    for (const auto &a : args)
        if (starts_with(a, flag)) f = NameFilter(a.substr(flag.size()));
    return f;
}

bool NameFilter::matches(const std::string &name) const {
    if (pattern_.empty() || pattern_ == "all") return true;
    return std::regex_search(name, regex_) != negated_;
}

bool NameFilter::matches_entry(const std::string &name) const {
    if (pattern_.empty() || pattern_ == "all") return true;
    const bool found = std::regex_search(name, regex_) || std::regex_search(run_name_of(name), regex_);
    return found != negated_;
}

NameFilter::NameFilter(std::string pattern) {
    negated_ = !pattern.empty() && pattern[0] == '-';
    pattern_ = negated_ ? pattern.substr(1) : pattern;
    regex_ = std::regex(pattern_, std::regex::extended);
}

std::vector<std::string> gbench_argv(const std::vector<std::string> &user_args) {
    std::vector<std::string> args = {"opbench"};
    for (const auto &a : user_args)
        if (!starts_with(a, "--benchmark_filter=") && !starts_with(a, "--benchmark_repetitions=")) args.push_back(a);
    return args;
}

bool interleaved(const std::vector<std::string> &user_args) {
    bool on = false;
    for (const auto &a : user_args)
        if (starts_with(a, "--benchmark_enable_random_interleaving"))
            on = a == "--benchmark_enable_random_interleaving" || a == "--benchmark_enable_random_interleaving=true" ||
                 a == "--benchmark_enable_random_interleaving=1";
    return on;
}

} // namespace opbench
