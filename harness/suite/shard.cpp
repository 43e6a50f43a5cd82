#include "suite/shard.hpp"

#include <fmt/format.h>

#include <stdexcept>

namespace opbench {

Shard parse_shard(const std::string &text) {
    Shard s;
    std::size_t used_i = 0, used_n = 0;
    const auto slash = text.find('/');
    try {
        if (slash == std::string::npos) throw std::invalid_argument("no slash");
        s.index = std::stoi(text.substr(0, slash), &used_i);
        s.count = std::stoi(text.substr(slash + 1), &used_n);
    } catch (const std::exception &) {
        used_i = 0;
    }
    if (used_i == 0 || used_i != slash || slash + 1 + used_n != text.size() || s.count < 1 || s.index < 1 ||
        s.index > s.count)
        throw std::invalid_argument(
            fmt::format("--shard '{}': expected i/n with 1 <= i <= n, e.g. --shard 1/4 .. --shard 4/4", text));
    return s;
}

std::vector<Case> shard_cases(const std::vector<Case> &cases, const Shard &s) {
    std::vector<Case> out;
    for (std::size_t k = 0; k < cases.size(); ++k)
        if (static_cast<int>(k % static_cast<std::size_t>(s.count)) == s.index - 1) out.push_back(cases[k]);
    if (out.empty())
        throw std::invalid_argument(fmt::format("--shard {}/{}: the suite has {} cases, so this shard would be empty",
                                                s.index, s.count, cases.size()));
    return out;
}

void shard_suite(Suite &suite, const Shard &s) {
    const std::size_t n = static_cast<std::size_t>(s.count), mine = static_cast<std::size_t>(s.index - 1);
    const std::size_t total = suite.cases.size() + suite.workloads.size();
    std::vector<Case> cases;
    std::vector<WorkloadCase> workloads;
    for (std::size_t k = 0; k < suite.cases.size(); ++k)
        if (k % n == mine) cases.push_back(suite.cases[k]);
    for (std::size_t w = 0; w < suite.workloads.size(); ++w)
        if ((suite.cases.size() + w) % n == mine) workloads.push_back(suite.workloads[w]);
    if (cases.empty() && workloads.empty())
        throw std::invalid_argument(fmt::format("--shard {}/{}: the suite has {} cases and workloads, so this shard "
                                                "would be empty (at most {} shards)",
                                                s.index, s.count, total, total));
    suite.cases = std::move(cases);
    suite.workloads = std::move(workloads);
}

} // namespace opbench
