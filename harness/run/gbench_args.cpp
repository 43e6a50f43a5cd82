#include "run/gbench_args.hpp"

#include <fmt/format.h>

namespace opbench {

std::optional<NameFilter> NameFilter::from_args(const std::vector<std::string> &args) {
    std::optional<NameFilter> f;
    const std::string flag = "--benchmark_filter=";
    for (const auto &a : args)
        if (a.rfind(flag, 0) == 0) f = NameFilter(a.substr(flag.size()));
    return f;
}

bool NameFilter::matches(const std::string &name) const {
    if (pattern_.empty() || pattern_ == "all") return true;
    return std::regex_search(name, regex_) != negated_;
}

NameFilter::NameFilter(std::string pattern) {
    negated_ = !pattern.empty() && pattern[0] == '-';
    pattern_ = negated_ ? pattern.substr(1) : pattern;
    regex_ = std::regex(pattern_, std::regex::extended);
}

std::vector<std::string> gbench_argv(int repetitions, const std::vector<std::string> &user_args,
                                     const std::string &json_out) {
    std::vector<std::string> args = {"opbench", "--benchmark_min_time=0"};
    if (repetitions > 0) args.push_back(fmt::format("--benchmark_repetitions={}", repetitions));
    for (const auto &a : user_args) args.push_back(a);
    if (!json_out.empty()) {
        args.push_back("--benchmark_out=" + json_out);
        args.push_back("--benchmark_out_format=json");
    }
    return args;
}

} // namespace opbench
