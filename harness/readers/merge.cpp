#include "readers/merge.hpp"

#include "suite/shard.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <map>
#include <optional>

namespace opbench {

namespace {

std::optional<Shard> shard_of(const ResultSet &s) {
    const auto it = s.opbench().find("shard");
    if (it == s.opbench().end() || !it->is_object()) return std::nullopt;
    return Shard{it->value("index", 0), it->value("count", 0)};
}

// "shard 2/3 (path)" for a shard, the path for a whole run: errors name the
// shard, which is what a job array's logs and task ids are numbered by.
std::string label(const ResultSet &s) {
    if (const auto sh = shard_of(s)) return fmt::format("shard {}/{} ({})", sh->index, sh->count, s.path);
    return s.path;
}

// A set written when its run was interrupted (SIGTERM from scancel or a
// lost node, Ctrl-C) says "complete": false; sets older than that field are
// complete.
bool complete(const ResultSet &s) {
    const auto it = s.opbench().find("complete");
    return it == s.opbench().end() || !it->is_boolean() || it->get<bool>();
}

// The parts must be one whole split: every set a shard of the same count,
// each index once, none missing, each run to its end. A merge of what a
// job array left after a shard failed would otherwise look like a complete
// suite with cases quietly absent.
void check_shards(const std::vector<ResultSet> &sets) {
    for (const auto &s : sets)
        if (!complete(s))
            throw MergeError(fmt::format("{} is incomplete: its run was interrupted (\"complete\": false, {} "
                                         "entries); finish it with `opbench run --resume {}`, then merge again",
                                         label(s), s.raw["benchmarks"].size(), s.path));
    const ResultSet *first_shard = nullptr;
    for (const auto &s : sets)
        if (shard_of(s)) {
            first_shard = &s;
            break;
        }
    if (!first_shard) return; // whole runs of disjoint cases: the overlap check below is what applies
    const int count = shard_of(*first_shard)->count;
    std::map<int, const ResultSet *> by_index;
    for (const auto &s : sets) {
        const auto sh = shard_of(s);
        if (!sh)
            throw MergeError(fmt::format("{} is a whole run but {} is {}: merge the shards of one split only",
                                         s.path, first_shard->path, label(*first_shard)));
        if (sh->count != count)
            throw MergeError(fmt::format("{} is {} of {} shards but {} is of {}: merge the shards of one split only",
                                         s.path, fmt::format("shard {}/{}", sh->index, sh->count), sh->count,
                                         first_shard->path, count));
        auto [it, inserted] = by_index.emplace(sh->index, &s);
        if (!inserted)
            throw MergeError(fmt::format("{} and {} are both shard {}/{}: give each shard once", it->second->path,
                                         s.path, sh->index, count));
    }
    std::vector<std::string> missing, given;
    for (int i = 1; i <= count; ++i)
        if (by_index.count(i) == 0) missing.push_back(fmt::format("{}/{}", i, count));
    if (missing.empty()) return;
    for (const auto &[i, s] : by_index) given.push_back(fmt::format("{}/{} {}", i, count, s->path));
    throw MergeError(fmt::format("shard{} {} missing (given: {}): merge every shard of the split; a shard that "
                                 "failed or never ran is run again with `opbench run SUITE --shard {} --out ...`",
                                 missing.size() > 1 ? "s" : "", fmt::join(missing, ", "),
                                 fmt::join(given, ", "), missing.front()));
}

// Facts kept per backend: each part knows only the backends it ran (a cuda
// run and a naive run of one suite, merged). Taking the first part's alone
// lost the others' info, and with it the threads each backend uses (the
// naive entries of such a merge were graded "16 threads on 15 free CPUs").
void add_backend_facts(nlohmann::json &merged_opbench, const ResultSet &part) {
    const auto add_missing = [](nlohmann::json &into, const nlohmann::json &from) {
        if (!from.is_object()) return;
        if (!into.is_object()) into = nlohmann::json::object();
        for (const auto &[backend, facts] : from.items())
            if (!into.contains(backend)) into[backend] = facts;
    };
    const nlohmann::json &ob = part.opbench();
    if (const auto it = ob.find("backends"); it != ob.end()) add_missing(merged_opbench["backends"], *it);
    if (const auto m = ob.find("measurement"); m != ob.end() && m->is_object())
        if (const auto it = m->find("call_overhead_seconds"); it != m->end())
            add_missing(merged_opbench["measurement"]["call_overhead_seconds"], *it);
}

} // namespace

nlohmann::json merge_result_sets(const std::vector<ResultSet> &sets, const MergeOptions &o) {
    if (sets.empty()) throw MergeError("merge needs at least one result set");
    check_shards(sets);
    // One set is a merge only when it is the whole split (shard 1/1).
    if (sets.size() < 2 && !shard_of(sets[0]))
        throw MergeError("merge needs at least two result sets (or every shard of one split)");
    const ResultSet &first = sets[0];
    for (const auto &s : sets) {
        if (s.suite_name() != first.suite_name())
            throw MergeError(fmt::format("{} is suite '{}' but {} is suite '{}': only shards of one suite merge",
                                         label(s), s.suite_name(), label(first), first.suite_name()));
        if (s.suite_sha256() != first.suite_sha256())
            throw MergeError(fmt::format("{} and {} ran different versions of suite '{}' (sha256 {} vs {}): "
                                         "re-run the shards from one suite file",
                                         label(first), label(s), s.suite_name(), first.suite_sha256().substr(0, 12),
                                         s.suite_sha256().substr(0, 12)));
        if (!o.allow_mixed_machines && s.machine_id() != first.machine_id())
            throw MergeError(fmt::format("{} was measured on machine {} but {} on {}: a merged set has one context; "
                                         "run each node type as its own split (`--constraint`) and put them side "
                                         "by side with `opbench compare --by machine`, or pass "
                                         "--allow-mixed-machines",
                                         label(s), s.machine_id(), label(first), first.machine_id()));
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
    for (const auto &s : sets) add_backend_facts(ob, s);
    ob["merged_from"] = std::move(parts);
    ob.erase("shard"); // the merged set is the whole of what its parts ran
    return merged;
}

} // namespace opbench
