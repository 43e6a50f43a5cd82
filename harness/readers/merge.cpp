#include "readers/merge.hpp"

#include "suite/shard.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sys/file.h>
#include <unistd.h>

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

// --- files that are not result sets yet ---------------------------------------

// True when a live run holds the journal at `path`: a run holds its flock
// from the journal's first line to its end (run/journal.cpp, which readers/
// does not include).
bool journal_held(const std::string &path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) return false;
    const bool held = ::flock(fd, LOCK_SH | LOCK_NB) != 0 && errno == EWOULDBLOCK;
    ::close(fd);
    return held;
}

// What a run's journal says of its set: whether a run holds it, its shard,
// how many case x backend entries it has finished.
struct JournalFacts {
    bool exists = false;
    bool live = false;
    std::optional<Shard> shard;
    std::size_t entries = 0;
};

// "--shard i/n" or "--shard=i/n" among a journal header's args.
std::optional<Shard> shard_in_args(const nlohmann::json &args) {
    if (!args.is_array()) return std::nullopt;
    for (std::size_t i = 0; i < args.size(); ++i) {
        const std::string a = args[i].is_string() ? args[i].get<std::string>() : "";
        std::string text;
        if (a.rfind("--shard=", 0) == 0) text = a.substr(8);
        else if (a == "--shard" && i + 1 < args.size() && args[i + 1].is_string())
            text = args[i + 1].get<std::string>();
        else continue;
        try {
            return parse_shard(text);
        } catch (const std::invalid_argument &) { return std::nullopt; }
    }
    return std::nullopt;
}

// A regular file only (never a FIFO or device: reading would block or not
// end); a journal over 256 MiB is not counted.
JournalFacts journal_facts(const std::string &journal) {
    JournalFacts f;
    std::error_code ec;
    if (!std::filesystem::is_regular_file(journal, ec)) return f;
    f.exists = true;
    f.live = journal_held(journal);
    std::ifstream in(journal);
    if (std::filesystem::file_size(journal, ec) > (std::uintmax_t{256} << 20)) return f;
    std::string line;
    for (bool header = true; std::getline(in, line); header = false) {
        const auto j = nlohmann::json::parse(line, nullptr, false);
        if (!j.is_object()) continue;
        if (header) f.shard = shard_in_args(j.value("args", nlohmann::json()));
        else if (j.contains("case")) ++f.entries;
    }
    return f;
}

// "1 entry", "4 entries".
std::string entries_text(std::size_t n) { return fmt::format("{} entr{}", n, n == 1 ? "y" : "ies"); }

// What merge says of a file that is not a result set, after its label: what
// it is, then (indented) what to do.
std::string unread_state(const std::string &path, bool exists, const JournalFacts &j) {
    if (j.live)
        return fmt::format("is incomplete: still running (a run holds its journal, {} so far)\n"
                           "    wait for it to end, then merge again",
                           entries_text(j.entries));
    if (j.exists)
        return fmt::format("is incomplete: its run stopped before writing it (killed, or its node lost)\n"
                           "    its journal holds {}: finish it with `opbench run --resume {}`, then merge again",
                           entries_text(j.entries), path);
    if (!exists)
        return "does not exist: a shard not run yet, or one whose run failed\n"
               "    run it (or give the path its run wrote), then merge again";
    return "is empty and has no journal: a run starting (or killed before its first case)\n"
           "    wait for it, or run that shard again, then merge again";
}

std::string unread_label(const UnreadShard &u) {
    if (u.shard) return fmt::format("shard {}/{} ({})", u.shard->index, u.shard->count, u.path);
    return u.path;
}

// A set written by an interrupted run, or by one resumed and still going.
std::string incomplete_line(const ResultSet &s) {
    const JournalFacts j = journal_facts(s.path + ".journal"); // where the run put it, beside --out
    if (j.live)
        return fmt::format("{} is incomplete: still running, resumed (a run holds its journal, {} so far)\n"
                           "    wait for it to end, then merge again",
                           label(s), entries_text(j.entries));
    return fmt::format("{} is incomplete: its run was interrupted (\"complete\": false, {} entries)\n"
                       "    finish it with `opbench run --resume {}`, then merge again",
                       label(s), s.raw["benchmarks"].size(), s.path);
}

// --- the split ---------------------------------------------------------------------

// One input of a merge, set or not, for the split's checks.
struct Part {
    std::string path;
    std::optional<Shard> shard;
};

std::vector<Part> parts_of(const std::vector<ResultSet> &sets, const std::vector<UnreadShard> &unread) {
    std::vector<Part> parts;
    for (const auto &s : sets) parts.push_back({s.path, shard_of(s)});
    for (const auto &u : unread)
        if (u.shard) parts.push_back({u.path, u.shard});
    return parts;
}

// The suite path and --benchmark_filter the first set ran, for the advice
// that runs a missing shard ("SUITE" when no set says).
std::string rerun_advice(const std::vector<ResultSet> &sets, const std::string &first_missing) {
    std::string suite = "SUITE", filter;
    const nlohmann::json none;
    const nlohmann::json &ob = sets.empty() ? none : sets.front().opbench();
    if (const auto it = ob.find("suite"); ob.is_object() && it != ob.end() && it->is_object())
        if (const auto p = it->find("path"); p != it->end() && p->is_string()) suite = p->get<std::string>();
    if (const auto m = ob.find("measurement"); ob.is_object() && m != ob.end() && m->is_object())
        if (const auto a = m->find("benchmark_args"); a != m->end() && a->is_array())
            for (const auto &arg : *a)
                if (arg.is_string() && arg.get<std::string>().rfind("--benchmark_filter=", 0) == 0)
                    filter = arg.get<std::string>();
    std::string advice = fmt::format("\n    run it with the other shards' options: `opbench run {} --shard {} --out "
                                     "...`",
                                     suite, first_missing);
    if (!filter.empty())
        advice += fmt::format("\n    (if {} leaves it no case, split the suite into fewer shards)", filter);
    return advice;
}

// The parts must be one whole split: every set a shard of the same count,
// each index once. Throws for a whole run among shards, a count that
// differs, an index given twice; returns the line naming the indexes no
// part holds ("" when none).
std::string check_split(const std::vector<ResultSet> &sets, const std::vector<UnreadShard> &unread) {
    const std::vector<Part> parts = parts_of(sets, unread);
    const Part *first = nullptr;
    for (const auto &p : parts)
        if (p.shard) {
            first = &p;
            break;
        }
    if (!first) return ""; // whole runs of disjoint cases: the overlap check applies
    const int count = first->shard->count;
    const std::string first_label = fmt::format("shard {}/{} ({})", first->shard->index, count, first->path);
    std::map<int, const Part *> by_index;
    for (const auto &p : parts) {
        if (!p.shard)
            throw MergeError(fmt::format("{} is a whole run but {} is {}: merge the shards of one split only", p.path,
                                         first->path, first_label));
        if (p.shard->count != count)
            throw MergeError(fmt::format("{} is shard {}/{} of {} shards but {} is of {}: merge the shards of one "
                                         "split only",
                                         p.path, p.shard->index, p.shard->count, p.shard->count, first->path, count));
        auto [it, inserted] = by_index.emplace(p.shard->index, &p);
        if (!inserted)
            throw MergeError(fmt::format("{} and {} are both shard {}/{}: give each shard once", it->second->path,
                                         p.path, p.shard->index, count));
    }
    std::vector<std::string> missing, given;
    for (int i = 1; i <= count; ++i)
        if (by_index.count(i) == 0) missing.push_back(fmt::format("{}/{}", i, count));
    if (missing.empty()) return "";
    for (const auto &[i, p] : by_index) given.push_back(fmt::format("{}/{} {}", i, count, p->path));
    if (given.size() > 4) { // a merge of 100 shards: the first few
        const std::size_t more = given.size() - 3;
        given.resize(3);
        given.back() += fmt::format(" and {} more", more);
    }
    return fmt::format("shard{} {} missing (given: {}): merge every shard of the split{}",
                       missing.size() > 1 ? "s" : "", fmt::join(missing, ", "), fmt::join(given, ", "),
                       rerun_advice(sets, missing.front()));
}

// Every shard that is not ready, in one message, a line each: a merge
// started early names the running shard, the stopped one and the missing
// ones at once, not the first it met.
void check_shards(const std::vector<ResultSet> &sets, const std::vector<UnreadShard> &unread) {
    constexpr int kNoIndex = 1 << 29, kMissing = 1 << 30; // after the shards named by index
    std::vector<std::pair<int, std::string>> not_ready; // (shard index, lines), by index
    for (const auto &u : unread)
        not_ready.emplace_back(u.shard ? u.shard->index : kNoIndex, fmt::format("{} {}", unread_label(u), u.state));
    for (const auto &s : sets)
        if (!complete(s)) not_ready.emplace_back(shard_of(s) ? shard_of(s)->index : kNoIndex, incomplete_line(s));
    const std::string missing = check_split(sets, unread);
    if (!missing.empty()) not_ready.emplace_back(kMissing, missing);
    if (not_ready.empty()) return;
    if (not_ready.size() == 1) throw MergeError(not_ready.front().second);
    std::stable_sort(not_ready.begin(), not_ready.end(),
                     [](const auto &a, const auto &b) { return a.first < b.first; });
    std::string text = "not every shard is ready to merge:";
    for (const auto &[index, lines] : not_ready) text += "\n  " + lines;
    throw MergeError(text);
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

MergeInputs read_merge_inputs(const std::vector<std::string> &paths) {
    MergeInputs in;
    for (const auto &p : paths) {
        std::error_code ec;
        const auto st = std::filesystem::status(p, ec);
        const bool exists = std::filesystem::exists(st);
        const bool empty = std::filesystem::is_regular_file(st) && std::filesystem::file_size(p, ec) == 0;
        const JournalFacts j = journal_facts(p + ".journal");
        if (exists && !empty) {
            try {
                in.sets.push_back(read_result_set(p));
                continue;
            } catch (const ResultSetError &) {
                if (!j.exists) throw; // a broken file, not a run's reservation
            }
        }
        in.unread.push_back({p, j.shard, unread_state(p, exists, j)});
    }
    return in;
}

nlohmann::json merge_result_sets(const MergeInputs &in, const MergeOptions &o) {
    if (in.sets.empty() && in.unread.empty()) throw MergeError("merge needs at least one result set");
    check_shards(in.sets, in.unread);
    return merge_result_sets(in.sets, o);
}

nlohmann::json merge_result_sets(const std::vector<ResultSet> &sets, const MergeOptions &o) {
    if (sets.empty()) throw MergeError("merge needs at least one result set");
    check_shards(sets, {});
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
