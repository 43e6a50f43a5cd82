#include "readers/merge.hpp"

#include <fmt/format.h>

#include <map>

namespace opbench {

nlohmann::json merge_result_sets(const std::vector<ResultSet> &sets, const MergeOptions &o) {
    if (sets.size() < 2) throw MergeError("merge needs at least two result sets");
    const ResultSet &first = sets[0];
    for (const auto &s : sets) {
        if (s.suite_name() != first.suite_name())
            throw MergeError(fmt::format("{} is suite '{}' but {} is suite '{}': only shards of one suite merge",
                                         s.path, s.suite_name(), first.path, first.suite_name()));
        if (s.suite_sha256() != first.suite_sha256())
            throw MergeError(fmt::format("{} and {} ran different versions of suite '{}' (sha256 {} vs {}): "
                                         "re-run the shards from one suite file",
                                         first.path, s.path, s.suite_name(), first.suite_sha256().substr(0, 12),
                                         s.suite_sha256().substr(0, 12)));
        if (!o.allow_mixed_machines && s.machine_id() != first.machine_id())
            throw MergeError(fmt::format("{} was measured on machine {} but {} on {}: a merged set has one context; "
                                         "put machines side by side with `opbench compare --by machine`, or "
                                         "pass --allow-mixed-machines",
                                         s.path, s.machine_id(), first.path, first.machine_id()));
    }
    nlohmann::json merged = first.raw;
    merged["benchmarks"] = nlohmann::json::array();
    nlohmann::json parts = nlohmann::json::array();
    std::map<std::string, std::string> owner; // case name -> set path
    for (const auto &s : sets) {
        for (const auto &c : s.cases) {
            auto [it, inserted] = owner.emplace(c.name, s.path);
            if (!inserted)
                throw MergeError(
                    fmt::format("case {} is in both {} and {}: shards must not overlap", c.name, it->second, s.path));
        }
        for (const auto &e : s.raw["benchmarks"]) merged["benchmarks"].push_back(e);
        parts.push_back({{"path", s.path},
                         {"host_name", s.host_name()},
                         {"machine_id", s.machine_id()},
                         {"timestamp", s.timestamp()},
                         {"commit", s.commit()},
                         {"cases", s.cases.size()},
                         {"shard", s.opbench().value("shard", nlohmann::json())}});
    }
    auto &ob = merged["context"]["opbench"];
    ob["merged_from"] = std::move(parts);
    ob.erase("shard"); // the merged set is the whole of what its parts ran
    return merged;
}

} // namespace opbench
