#include "readers/archive.hpp"

#include "readers/compact_table.hpp"

#include "files/atomic_file.hpp"
#include "readers/set_summaries.hpp"
#include "readers/tidy_records.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <exception>
#include <fcntl.h>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <unordered_map>
#include <sys/file.h>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

namespace fs = std::filesystem;

namespace opbench {

namespace {

// Directory- and file-name-safe: letters, digits, '.', '_', '-'.
std::string safe_name(const std::string &s, const char *fallback) {
    std::string out;
    for (char c : s) out += std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-' ? c : '_';
    while (!out.empty() && out.front() == '.') out.erase(out.begin()); // no hidden names, no ".."
    return out.empty() ? fallback : out;
}

nlohmann::json to_json(const ArchiveEntry &e) {
    nlohmann::json j = {{"path", e.path},
            {"machine_id", e.machine_id},
            {"suite", e.suite},
            {"suite_sha256", e.suite_sha256},
            {"build_type", e.build_type},
            {"commit", e.commit},
            {"timestamp", e.timestamp},
            {"host_name", e.host_name},
            {"cpu_model", e.cpu_model},
            {"cases", e.cases}};
    if (!e.summaries.empty()) j["summaries"] = e.summaries;
    if (!e.commit_under_test.empty()) j["commit_under_test"] = e.commit_under_test;
    return j;
}

// A row's path: relative to the archive and inside it (no absolute path, no
// ".." component, no empty or NUL-bearing name), so a crafted index cannot
// make history or --baseline-from open a file outside the archive.
std::string confined_path(const std::string &p) {
    if (p.empty()) return "it is empty";
    if (p.find('\0') != std::string::npos) return "it holds a NUL character";
    const fs::path path(p);
    if (path.is_absolute() || p.front() == '/') return "it is absolute";
    if (path.has_root_name() || path.has_root_directory()) return "it has a root";
    for (const auto &part : path)
        if (part == "..") return "it has a '..' component";
    return "";
}

ArchiveEntry from_json(const nlohmann::json &j, const std::string &at, const std::string &index) {
    const auto bad = [&](const std::string &field, const std::string &expected, const nlohmann::json &got) {
        return ArchiveError(
            fmt::format("{}: {}{}: expected {}, got {} (results/README.md, \"Archive\")", index, at, field, expected,
                        got.dump(-1, ' ', true, nlohmann::json::error_handler_t::replace).substr(0, 200)));
    };
    if (!j.is_object()) throw bad("", "an object with a `path`", j);
    ArchiveEntry e;
    auto p = j.find("path");
    if (p == j.end() || !p->is_string())
        throw bad(".path", "a path relative to the archive", p == j.end() ? nlohmann::json() : *p);
    e.path = p->get<std::string>();
    if (const std::string why = confined_path(e.path); !why.empty())
        throw bad(".path", fmt::format("a path inside the archive ({})", why), *p);
    if (auto s = j.find("summaries"); s != j.end()) {
        if (!s->is_string()) throw bad(".summaries", "a path relative to the archive", *s);
        e.summaries = s->get<std::string>();
        if (const std::string why = confined_path(e.summaries); !why.empty())
            throw bad(".summaries", fmt::format("a path inside the archive ({})", why), *s);
    }
    const auto str = [&](const char *key, std::string &out) {
        auto it = j.find(key);
        if (it == j.end()) return;
        if (!it->is_string()) throw bad(std::string(".") + key, "a string", *it);
        out = it->get<std::string>();
    };
    str("machine_id", e.machine_id);
    str("suite", e.suite);
    str("suite_sha256", e.suite_sha256);
    str("build_type", e.build_type);
    str("commit", e.commit);
    str("timestamp", e.timestamp);
    str("host_name", e.host_name);
    str("cpu_model", e.cpu_model);
    str("commit_under_test", e.commit_under_test);
    if (auto it = j.find("cases"); it != j.end()) {
        if (!it->is_number_unsigned() && !(it->is_number_integer() && it->get<std::int64_t>() >= 0))
            throw bad(".cases", "a whole number >= 0", *it);
        e.cases = it->get<std::size_t>();
    }
    return e;
}

std::string read_text(const fs::path &p) {
    try {
        return read_reader_input(p.string());
    } catch (const ResultSetError &e) {
        throw ArchiveError(e.what());
    }
}

std::vector<ArchiveEntry> read_index(const fs::path &dir) {
    const fs::path index = dir / "index.json";
    std::error_code ec;
    if (!fs::exists(index, ec)) return {};
    return parse_archive_index(read_text(index), index.string());
}

// An exclusive lock on DIR/.index.lock for a read-modify-write of the index.
class IndexLock {
public:
    explicit IndexLock(const fs::path &dir) {
        const fs::path p = dir / ".index.lock";
        fd_ = ::open(p.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
        if (fd_ < 0) throw ArchiveError(fmt::format("{}: cannot open ({})", p.string(), std::strerror(errno)));
        if (::flock(fd_, LOCK_EX) != 0) {
            ::close(fd_);
            throw ArchiveError(fmt::format("{}: cannot lock ({})", p.string(), std::strerror(errno)));
        }
    }
    ~IndexLock() { ::close(fd_); } // closing releases the lock
    IndexLock(const IndexLock &) = delete;
    IndexLock &operator=(const IndexLock &) = delete;

private:
    int fd_ = -1;
};

void write_index(const fs::path &dir, const std::vector<ArchiveEntry> &entries) {
    nlohmann::json index = {{"schema_version", kArchiveIndexVersion}, {"sets", nlohmann::json::array()}};
    for (const auto &x : entries) index["sets"].push_back(to_json(x));
    write_file_atomically((dir / "index.json").string(), index.dump(2) + "\n");
}

// Why DIR/REL is not a regular file inside the archive, or "": every
// component below DIR must be a real directory (lstat, so a symlink cannot
// lead out of the archive) and the last a regular file.
std::string unconfined(const fs::path &dir, const std::string &rel) {
    const fs::path norm = fs::path(rel).lexically_normal();
    fs::path at = dir;
    for (auto it = norm.begin(); it != norm.end(); ++it) {
        at /= *it;
        struct stat st {};
        if (::lstat(at.c_str(), &st) != 0) return std::string("missing (") + std::strerror(errno) + ")";
        const bool last = std::next(it) == norm.end();
        if (S_ISLNK(st.st_mode)) return fmt::format("{} is a symbolic link", at.string());
        if (!last && !S_ISDIR(st.st_mode)) return fmt::format("{} is not a directory", at.string());
        if (last && !S_ISREG(st.st_mode)) return "not a regular file";
    }
    return "";
}

// Why prune must not delete DIR/REL, or "": the archive's own files and a
// file a kept row names (duplicate rows) are never deleted.
std::string undeletable(const fs::path &dir, const std::string &rel, const std::vector<ArchiveEntry> &kept) {
    const fs::path norm = fs::path(rel).lexically_normal();
    if (norm == "index.json" || norm == ".index.lock" || norm == "." || norm.empty())
        return "it is the archive's own file";
    for (const ArchiveEntry &k : kept)
        if (fs::path(k.path).lexically_normal() == norm ||
            (!k.summaries.empty() && fs::path(k.summaries).lexically_normal() == norm))
            return "a kept row names it too";
    return unconfined(dir, rel);
}

} // namespace

// DIR/REL for a reader, refused where it is not a regular file inside the
// archive (a row that is a symlink to a file outside was read).
std::string confined_file(const fs::path &dir, const std::string &rel) {
    if (const std::string why = unconfined(dir, rel); !why.empty())
        throw ArchiveError(fmt::format("{}: archive row {}: not read: {} (a row names a regular file inside the "
                                       "archive; results/README.md, \"Archive\")",
                                       dir.string(), rel, why));
    return (dir / rel).string();
}

namespace {

// Deletes one file of a pruned row, or says in result.refused why not.
void remove_row_file(const fs::path &dir, const std::string &rel, const std::vector<ArchiveEntry> &kept,
                     PruneResult &result) {
    if (const std::string why = undeletable(dir, rel, kept); !why.empty()) {
        result.refused.push_back(fmt::format("{}: not removed: {}", rel, why));
        return;
    }
    std::error_code ec;
    const fs::path p = dir / rel;
    const std::uintmax_t size = fs::file_size(p, ec);
    if (fs::remove(p, ec) && !ec) {
        result.bytes_freed += size;
        result.removed_files.push_back(rel);
    } else
        result.refused.push_back(fmt::format("{}: not removed: {}", rel, ec ? ec.message() : "gone already"));
}

} // namespace

std::string archive_file_name(const ResultSet &set) {
    // 2026-11-22T14:50:51Z -> 20261122T145051Z
    std::string t;
    for (char c : set.timestamp())
        if (c != '-' && c != ':') t += c;
    return fmt::format("{}-{}.json", safe_name(t, "unknown-time"), safe_name(set.commit(), "unknown-commit"));
}

namespace {
// Names the archive keeps and history prints: at most 1 KiB, no control
// characters (a 100,000-character backend name crashed history's regex).
void check_archived_name(const std::string &path, const std::string &field, const std::string &value) {
    constexpr std::size_t kMaxName = 1024;
    if (value.size() > kMaxName)
        throw ArchiveError(fmt::format("{}: {} is {} bytes long; the archive takes names of at most {} bytes", path,
                                       field, value.size(), kMaxName));
    for (unsigned char c : value)
        if (c < 0x20 || c == 0x7f)
            throw ArchiveError(fmt::format("{}: {} holds control character 0x{:02x}; the archive takes printable "
                                           "names",
                                           path, field, c));
}

void check_archived_names(const ResultSet &set) {
    check_archived_name(set.path, "the machine id", set.machine_id());
    check_archived_name(set.path, "the suite name", set.suite_name());
    for (std::size_t i = 0; i < set.cases.size(); ++i) {
        check_archived_name(set.path, fmt::format("case {} ('{}')'s backend", i, set.cases[i].name.substr(0, 80)),
                            set.cases[i].backend);
        check_archived_name(set.path, fmt::format("case {}'s name", i), set.cases[i].name);
    }
}
} // namespace

ArchiveEntry archive_store(const fs::path &dir, const ResultSet &set) {
    check_archived_names(set);
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec) throw ArchiveError(fmt::format("{}: cannot create the archive directory ({})", dir.string(), ec.message()));
    ArchiveEntry e;
    e.machine_id = set.machine_id();
    e.suite = set.suite_name();
    e.suite_sha256 = set.suite_sha256();
    e.build_type = set.build_type();
    e.commit = set.commit();
    e.commit_under_test = set.commit_under_test();
    e.timestamp = set.timestamp();
    e.host_name = set.host_name();
    e.cpu_model = set.cpu_model();
    e.cases = set.cases.size();
    const std::string text = read_text(set.path);
    const std::string summaries = set_summaries_bytes(set);

    IndexLock lock(dir);
    std::vector<ArchiveEntry> entries = read_index(dir);
    const fs::path rel_dir = fs::path(safe_name(e.machine_id, "unknown-machine")) / safe_name(e.suite, "unnamed-suite");
    std::string file = archive_file_name(set);
    // Two sets from one second and one commit (shards): keep both.
    for (int n = 2; fs::exists(dir / rel_dir / file, ec); ++n)
        file = fmt::format("{}-{}.json", archive_file_name(set).substr(0, archive_file_name(set).size() - 5), n);
    e.path = (rel_dir / file).string();
    e.summaries = set_summaries_file_name(e.path);
    try {
        write_file_atomically((dir / e.path).string(), text);
        write_file_atomically((dir / e.summaries).string(), summaries);
        entries.push_back(e);
        std::stable_sort(entries.begin(), entries.end(),
                         [](const ArchiveEntry &a, const ArchiveEntry &b) { return a.timestamp < b.timestamp; });
        write_index(dir, entries);
    } catch (const std::runtime_error &err) {
        throw ArchiveError(err.what());
    }
    return e;
}

PruneResult archive_prune(const fs::path &dir, std::size_t keep) {
    if (keep < 1) throw ArchiveError("--keep: give 1 or more (the newest sets of each machine, suite and build type)");
    std::error_code ec;
    if (!fs::is_regular_file(dir / "index.json", ec))
        throw ArchiveError(fmt::format("{}: not an archive (no index.json; `opbench archive DIR SETS` makes one)",
                                       dir.string()));
    IndexLock lock(dir);
    const std::vector<ArchiveEntry> entries = read_index(dir); // oldest first
    // Newest first per group, so the first `keep` of each group stay.
    // A row repeating a newer row's file is dropped from the index first, so
    // it neither counts towards `keep` nor gets that file deleted.
    std::map<std::string, std::size_t> seen;
    std::set<fs::path> files;
    std::vector<int> stays(entries.size(), 0); // 1 stays, 0 goes, -1 duplicate row
    for (std::size_t i = entries.size(); i-- > 0;) {
        const ArchiveEntry &e = entries[i];
        if (!files.insert(fs::path(e.path).lexically_normal()).second) {
            stays[i] = -1;
            continue;
        }
        stays[i] = ++seen[e.machine_id + "\n" + e.suite + "\n" + e.build_type] <= keep ? 1 : 0;
    }
    PruneResult result;
    std::vector<ArchiveEntry> kept;
    for (std::size_t i = 0; i < entries.size(); ++i) {
        if (stays[i] == 1)
            kept.push_back(entries[i]);
        else if (stays[i] == 0)
            result.removed.push_back(entries[i]);
        else
            result.refused.push_back(fmt::format("{}: duplicate index row dropped; its file stays", entries[i].path));
    }
    // The index first: a crash between the two leaves unlisted files (harmless)
    // rather than rows whose files are gone.
    try {
        write_index(dir, kept);
    } catch (const std::runtime_error &err) {
        throw ArchiveError(err.what());
    }
    for (const ArchiveEntry &e : result.removed) {
        remove_row_file(dir, e.path, kept, result);
        if (!e.summaries.empty()) remove_row_file(dir, e.summaries, kept, result);
    }
    result.kept = kept.size();
    return result;
}

std::vector<ArchiveEntry> parse_archive_index(const std::string &text, const std::string &index) {
    nlohmann::json j;
    try {
        j = parse_reader_json(text, index);
    } catch (const ResultSetError &e) {
        throw ArchiveError(fmt::format("{} (not a valid archive index)", e.what()));
    }
    if (!j.is_object())
        throw ArchiveError(fmt::format("{}: not an archive index: expected an object with `schema_version` {} and a "
                                       "`sets` array (results/README.md, \"Archive\")",
                                       index, kArchiveIndexVersion));
    auto version = j.find("schema_version");
    if (version == j.end() || !version->is_number_integer() || version->get<std::int64_t>() != kArchiveIndexVersion ||
        !j.contains("sets") || !j["sets"].is_array())
        throw ArchiveError(fmt::format("{}: archive index schema {} (this opbench reads {}, with a `sets` array)",
                                       index, version == j.end() ? std::string("missing") : version->dump(),
                                       kArchiveIndexVersion));
    std::vector<ArchiveEntry> out;
    const auto &sets = j["sets"];
    for (std::size_t i = 0; i < sets.size(); ++i) out.push_back(from_json(sets[i], fmt::format("sets[{}]", i), index));
    std::stable_sort(out.begin(), out.end(),
                     [](const ArchiveEntry &a, const ArchiveEntry &b) { return a.timestamp < b.timestamp; });
    return out;
}

std::vector<ArchiveEntry> archive_entries(const fs::path &dir) { return read_index(dir); }

std::optional<ArchiveEntry> archive_latest(const fs::path &dir, const std::string &machine_id, const std::string &suite,
                                           const std::string &build_type, const std::string &not_after,
                                           const std::string &itself) {
    std::vector<ArchiveEntry> all = archive_matching(dir, machine_id, suite, build_type, not_after, itself);
    if (all.empty()) return std::nullopt;
    return all.back();
}

std::vector<ArchiveEntry> archive_matching(const fs::path &dir, const std::string &machine_id, const std::string &suite,
                                           const std::string &build_type, const std::string &not_after,
                                           const std::string &itself) {
    std::vector<ArchiveEntry> out;
    std::optional<std::string> itself_text;
    for (const auto &e : read_index(dir)) { // oldest first
        if (e.machine_id != machine_id || e.suite != suite || e.build_type != build_type) continue;
        if (!not_after.empty() && e.timestamp > not_after) continue;
        // Timestamps have whole seconds: a set of the same second may be the
        // new set itself, archived already.
        if (!itself.empty() && e.timestamp == not_after) {
            if (!itself_text) itself_text = read_text(itself);
            std::error_code ec;
            if (fs::exists(dir / e.path, ec) && read_text(confined_file(dir, e.path)) == *itself_text) continue;
        }
        out.push_back(e);
    }
    return out;
}

namespace {
// The trend's width at most, so --last 1000 still fits 100 columns: beyond
// it each bar stands for a group of consecutive runs (runs_per_bar).
constexpr std::size_t kTrendBars = 10; // the default --last: a bar per run

std::size_t runs_per_bar(std::size_t runs) { return (runs + kTrendBars - 1) / kTrendBars; }

// Each group's median of its runs' times (NaN: none has one).
std::vector<double> grouped_medians(const std::vector<double> &medians) {
    const std::size_t per_bar = std::max<std::size_t>(1, runs_per_bar(medians.size()));
    if (per_bar == 1) return medians;
    std::vector<double> out;
    for (std::size_t begin = 0; begin < medians.size(); begin += per_bar) {
        std::vector<double> group;
        for (std::size_t i = begin; i < std::min(medians.size(), begin + per_bar); ++i)
            if (std::isfinite(medians[i])) group.push_back(medians[i]);
        std::sort(group.begin(), group.end());
        const std::size_t n = group.size();
        out.push_back(n == 0 ? NAN : n % 2 ? group[n / 2] : (group[n / 2 - 1] + group[n / 2]) / 2);
    }
    return out;
}

// One character per run (per group of runs beyond kTrendBars), the median's
// place between the series' lowest (▁) and highest (█) on a log scale; · for
// a run without a time.
std::string trend(const std::vector<double> &run_medians) {
    const std::vector<double> medians = grouped_medians(run_medians);
    static const char *const kBars[] = {"▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"};
    double lo = INFINITY, hi = 0;
    for (double m : medians)
        if (std::isfinite(m) && m > 0) {
            lo = std::min(lo, m);
            hi = std::max(hi, m);
        }
    std::string out;
    for (double m : medians) {
        if (!(std::isfinite(m) && m > 0)) {
            out += "·";
            continue;
        }
        const double place = hi > lo ? std::log(m / lo) / std::log(hi / lo) : 0.0;
        out += kBars[std::clamp(static_cast<int>(place * 7.0 + 0.5), 0, 7)];
    }
    return out;
}
// The runs history shows: the suite's on one machine (the newest run's
// unless --machine), the last --last of them, oldest first.
struct HistoryRuns {
    std::vector<ArchiveEntry> runs;
    std::string machine;
    std::vector<std::string> machines; // every machine with a run of the suite
    std::vector<std::string> notes;
};

HistoryRuns history_runs(const fs::path &dir, const HistoryOptions &o) {
    std::vector<ArchiveEntry> of_suite;
    std::vector<std::string> suites;
    for (const auto &e : read_index(dir)) {
        if (e.suite == o.suite) of_suite.push_back(e);
        if (std::find(suites.begin(), suites.end(), e.suite) == suites.end()) suites.push_back(e.suite);
    }
    if (of_suite.empty())
        throw ArchiveError(fmt::format("{}: no archived run of suite '{}' (the archive has: {})", dir.string(), o.suite,
                                       suites.empty() ? "nothing" : fmt::format("{}", fmt::join(suites, ", "))));
    HistoryRuns h;
    h.machine = o.machine_id.empty() ? of_suite.back().machine_id : o.machine_id;
    for (const auto &e : of_suite) {
        if (e.machine_id == h.machine) h.runs.push_back(e);
        if (std::find(h.machines.begin(), h.machines.end(), e.machine_id) == h.machines.end())
            h.machines.push_back(e.machine_id);
    }
    if (h.runs.empty())
        throw ArchiveError(fmt::format("{}: no run of suite '{}' on machine '{}' (machines: {})", dir.string(), o.suite,
                                       h.machine, fmt::join(h.machines, ", ")));
    order_by_commit(h.runs, h.notes);
    if (h.runs.size() > o.last) h.runs.erase(h.runs.begin(), h.runs.end() - static_cast<std::ptrdiff_t>(o.last));
    return h;
}

// One run's set as history needs it: from its entry summaries (a few KB),
// else (archived before they were written, or their file is gone) from the
// set itself, whose parse takes ~0.2 s.
ResultSet run_without_samples(const fs::path &dir, const ArchiveEntry &run) {
    std::error_code ec;
    if (!run.summaries.empty() && fs::exists(fs::symlink_status(dir / run.summaries, ec))) {
        try {
            return read_set_summaries(confined_file(dir, run.summaries), (dir / run.path).string());
        } catch (const ResultSetError &e) {
            throw ArchiveError(e.what());
        }
    }
    return read_result_set(confined_file(dir, run.path));
}

std::string label_with_backend(const CaseRecord &c) { return c.label() + " [" + c.backend + "]"; }

// Whether --case matches an entry, and its key and label, worked out once
// per entry name: the same entries recur in every run, and a regex search
// per entry and run was a fifth of history's time over 1,000 runs.
class CaseMatcher {
public:
    struct Match {
        bool matches = false;
        std::string key, label;
    };
    // No --case matches everything without a regex: std::regex recurses per
    // character and a 100,000-character label overflowed the stack.
    explicit CaseMatcher(const std::string &regex) : all_(regex.empty()) {
        if (!all_) re_ = std::regex(regex, std::regex::ECMAScript);
    }
    // Thread-safe (runs are read in parallel); a Match stays where it is.
    const Match &operator()(const CaseRecord &c) {
        const std::lock_guard<std::mutex> lock(mutex_);
        auto [it, inserted] = seen_.try_emplace(c.name + '\n' + c.backend);
        if (inserted) {
            it->second.label = label_with_backend(c);
            it->second.matches = all_ || std::regex_search(it->second.label, re_);
            it->second.key = c.match_key();
        }
        return it->second;
    }

private:
    bool all_;
    std::regex re_;
    std::mutex mutex_;
    std::unordered_map<std::string, Match> seen_;
};

// One run as history keeps it: each matching entry's time, in the set's
// order, and the set itself (without samples) only where the CSV records
// need it: dropping it as soon as it is read keeps --last 1000 small.
struct RunTimes {
    std::vector<std::pair<const CaseMatcher::Match *, ValidTimes>> cases;
    std::optional<ResultSet> set;
};

RunTimes times_of_run(const fs::path &dir, const ArchiveEntry &run, CaseMatcher &match,
                      bool keep_set) {
    RunTimes out;
    ResultSet set = run_without_samples(dir, run);
    for (const auto &c : set.cases)
        if (const CaseMatcher::Match &m = match(c); m.matches)
            out.cases.emplace_back(&m, valid_times(c));
    if (keep_set) {
        set.raw = nullptr;
        for (auto &c : set.cases)
            for (auto &rep : c.repetitions) std::vector<double>().swap(rep.sample_times);
        out.set = std::move(set);
    }
    return out;
}

// Every run's times, oldest first. Reading and parsing is most of history's
// time and each run's file is its own, so up to kReadThreads threads read
// them. On the loaded 2-vCPU machine of docs/ci.md's figures this gained
// nothing measurable (its other CPU was busy): the gain is for free CPUs.
std::vector<RunTimes> times_of_runs(const fs::path &dir, const std::vector<ArchiveEntry> &runs, CaseMatcher &match, bool keep_sets) {
    constexpr unsigned kReadThreads = 4;
    std::vector<RunTimes> out(runs.size());
    std::vector<std::exception_ptr> failed(runs.size());
    std::atomic<std::size_t> next{0};
    const auto read_some = [&] {
        for (std::size_t i; (i = next.fetch_add(1)) < runs.size();) try {
                out[i] = times_of_run(dir, runs[i], match, keep_sets);
            } catch (...) {
                failed[i] = std::current_exception();
            }
    };
    const unsigned threads = std::clamp(std::thread::hardware_concurrency(), 1u, kReadThreads);
    std::vector<std::thread> readers;
    for (unsigned t = 1; t < threads && t < runs.size(); ++t) readers.emplace_back(read_some);
    read_some();
    for (auto &t : readers) t.join();
    for (const auto &e : failed) // the oldest run's error, as reading in order would give
        if (e) std::rethrow_exception(e);
    return out;
}

// Each case's times, one per run ("absent" where a run lacks it), in order
// of first appearance.
struct CaseSeries {
    std::vector<std::string> order;
    std::map<std::string, std::string> labels;            // "case [backend]"
    std::map<std::string, std::vector<ValidTimes>> times; // key -> one per run
};

CaseSeries case_series(std::vector<RunTimes> &runs) {
    CaseSeries s;
    for (std::size_t i = 0; i < runs.size(); ++i)
        for (auto &[m, times] : runs[i].cases) {
            const std::string &k = m->key;
            if (!s.labels.count(k)) {
                s.order.push_back(k);
                s.labels[k] = m->label;
                s.times[k].resize(runs.size());
                for (auto &v : s.times[k]) v.status = "absent";
            }
            s.times[k][i] = std::move(times);
        }
    return s;
}

// Reasons every case's newest summary gives (they go to the header once).
std::set<std::string> newest_common_reasons(CaseSeries &s) {
    std::vector<const EntrySummary *> newest;
    for (const auto &k : s.order)
        for (auto it = s.times[k].rbegin(); it != s.times[k].rend(); ++it)
            if (it->status == "ok") {
                newest.push_back(&it->summary);
                break;
            }
    return common_reasons(newest);
}

// Default: the first and last median, their ratio, a trend of one character
// per run and the newest run's quality, so ten runs fit 100 columns; the
// runs are listed in the header. --wide: a column per run.
void lay_out_history_table(Table &t, const std::vector<ArchiveEntry> &runs, const SharedSegments &names,
                           const std::set<std::string> &common, bool wide) {
    t.columns = {"case [backend]"};
    if (wide) {
        for (const auto &r : runs)
            t.columns.push_back(fmt::format("{} {}", r.timestamp.substr(0, 19), run_commit(r).substr(0, 12)));
        t.columns.push_back("last / first");
        return;
    }
    t.columns.insert(t.columns.end(), {"first", "last", "last/first", "trend", "last quality"});
    std::vector<std::string> header;
    if (!names.shared.empty()) header.push_back(fmt::format("every case: {}", fmt::join(names.shared, " ")));
    const auto run_name = [](const ArchiveEntry &r) {
        return fmt::format("{} {}", r.timestamp.substr(0, 16), run_commit(r).substr(0, 7));
    };
    std::vector<std::string> run_names;
    for (const auto &r : runs) run_names.push_back(run_name(r));
    if (runs.size() <= kTrendBars) // else the first and the last; --wide or --format json list them all
        header.push_back(fmt::format("runs (trend left to right): {}", fmt::join(run_names, ", ")));
    else
        header.push_back(fmt::format("runs (trend left to right, a bar per {} runs: their median): {} from {} to {}",
                                     runs_per_bar(runs.size()), runs.size(), run_names.front(), run_names.back()));
    if (!common.empty()) header.push_back(common_reasons_line(common));
    t.title = title_with_header(t.title, header);
}

// One case's row (`row` holds its name already) and its JSON entry.
nlohmann::json add_history_row(std::vector<std::string> &row, const std::string &label,
                               const std::vector<ValidTimes> &times, const std::set<std::string> &common,
                               Footnotes &footnotes, bool wide) {
    nlohmann::json cj = {
        {"case", label}, {"median_seconds", nlohmann::json::array()}, {"quality", nlohmann::json::array()}};
    double first = NAN, last = NAN;
    bool first_throttled = false, last_throttled = false; // no ratio of a throttled run (issue 41)
    const EntrySummary *last_summary = nullptr;
    std::vector<double> medians;
    for (const auto &v : times) {
        cj["quality"].push_back(v.summary.repetitions > 0 ? nlohmann::json(std::string(v.summary.flag()))
                                                          : nlohmann::json(nullptr));
        const bool ok = v.status == "ok";
        if (wide) row.push_back(ok ? format_seconds(v.median) : v.status);
        medians.push_back(ok ? v.median : NAN);
        cj["median_seconds"].push_back(ok ? nlohmann::json(v.median) : nlohmann::json(nullptr));
        if (!ok) continue;
        if (!std::isfinite(first)) first_throttled = gives_no_rate(v.summary.quality);
        if (!std::isfinite(first)) first = v.median;
        last = v.median;
        last_throttled = gives_no_rate(v.summary.quality);
        last_summary = &v.summary;
    }
    // The newest run without a time (starved, failed, skipped) gives no
    // ratio: an earlier run's time in "last" would read as no change.
    const bool newest_timed = !times.empty() && times.back().status == "ok";
    // Three decimals, or three significant digits under 0.01 (a 12 ms -> 5 us drop is not "0.000").
    const double r = last / first;
    const std::string ratio = !std::isfinite(first) || first_throttled || last_throttled || !newest_timed ? "-"
                              : r < 0.01            ? fmt::format("{:.3g}", r)
                                                    : fmt::format("{:.3f}", r);
    if (wide) {
        row.push_back(ratio);
        return cj;
    }
    std::string quality = last_summary ? std::string(last_summary->flag()) : "-";
    if (last_summary)
        if (auto v = verdict_beyond(*last_summary, common); !v.empty()) quality += " " + footnotes.mark(v);
    const std::string last_cell = !newest_timed && !times.empty() ? times.back().status
                                  : std::isfinite(last)            ? format_seconds(last)
                                                                   : "-";
    row.insert(row.end(), {std::isfinite(first) ? format_seconds(first) : "-", last_cell, ratio, trend(medians),
                           quality});
    return cj;
}
} // namespace

const std::string &run_commit(const ArchiveEntry &run) {
    return run.commit_under_test.empty() ? run.commit : run.commit_under_test;
}

void order_by_commit(std::vector<ArchiveEntry> &runs, std::vector<std::string> &notes) {
    std::map<std::string, std::size_t> first; // commit under test -> place of its first run
    std::vector<std::size_t> key(runs.size());
    std::string last_commit;
    std::vector<std::string> again;
    for (std::size_t i = 0; i < runs.size(); ++i) {
        const std::string &c = runs[i].commit_under_test;
        auto [it, inserted] = first.try_emplace(c, i);
        key[i] = c.empty() ? i : it->second;
        if (!c.empty() && !inserted && c != last_commit && again.size() < 5) again.push_back(c.substr(0, 12));
        if (!c.empty()) last_commit = c;
    }
    std::vector<std::size_t> order(runs.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return key[a] < key[b]; });
    std::vector<ArchiveEntry> sorted;
    for (std::size_t i : order) sorted.push_back(std::move(runs[i]));
    runs = std::move(sorted);
    if (!again.empty())
        notes.push_back(fmt::format("Commits measured again after a later one ({}): each run stands with its "
                                    "commit's first run (runs are in commit order, then time).",
                                    fmt::join(again, ", ")));
}

HistorySeries archive_series(const fs::path &dir, const HistoryOptions &o) {
    HistoryRuns h = history_runs(dir, o);
    CaseMatcher match(o.case_regex);
    std::vector<RunTimes> runs = times_of_runs(dir, h.runs, match, false);
    CaseSeries s = case_series(runs);
    HistorySeries out{std::move(h.runs), std::move(h.machine), std::move(h.machines), std::move(h.notes), {}};
    for (const auto &k : s.order) out.cases.push_back({s.labels[k], std::move(s.times[k])});
    return out;
}

Document archive_history(const fs::path &dir, const HistoryOptions &o) {
    const HistoryRuns h = history_runs(dir, o);
    CaseMatcher match(o.case_regex); // a bad regex throws before any set is read
    std::vector<RunTimes> runs = times_of_runs(dir, h.runs, match, o.records);
    CaseSeries s = case_series(runs);

    Table t;
    t.title = fmt::format("History of suite '{}' on {} ({} runs, oldest first)", o.suite, h.machine, h.runs.size());
    std::vector<std::string> row_labels; // without the " [backend]", which stays in each row
    for (const auto &k : s.order) row_labels.push_back(s.labels[k].substr(0, s.labels[k].rfind(" [")));
    const SharedSegments names = split_shared_segments(row_labels);
    const std::set<std::string> common = newest_common_reasons(s);
    lay_out_history_table(t, h.runs, names, common, o.wide);
    nlohmann::json data = {{"suite", o.suite},
                           {"machine_id", h.machine},
                           {"runs", nlohmann::json::array()},
                           {"cases", nlohmann::json::array()}};
    for (const auto &r : h.runs) data["runs"].push_back(to_json(r));
    Footnotes footnotes;
    for (std::size_t ri = 0; ri < s.order.size(); ++ri) {
        const std::string &label = s.labels[s.order[ri]];
        std::vector<std::string> row{o.wide ? label : names.rows[ri] + label.substr(label.rfind(" ["))};
        data["cases"].push_back(add_history_row(row, label, s.times[s.order[ri]], common, footnotes, o.wide));
        t.rows.push_back(std::move(row));
    }
    if (!o.wide) {
        t.notes.push_back("trend: each run's median from the case's lowest (▁) to highest (█); · no time");
        add_legend(t, names);
    }
    footnotes.add_to(t);
    t.notes.insert(t.notes.end(), h.notes.begin(), h.notes.end());
    if (h.machines.size() > 1)
        t.notes.push_back(fmt::format("The archive holds this suite on {} machines ({}); --machine picks one.",
                                      h.machines.size(), fmt::join(h.machines, ", ")));
    Document doc;
    doc.tables.push_back(std::move(t));
    doc.data = std::move(data);
    // One row per case and run, oldest run first (what --format csv writes).
    if (o.records) {
        std::vector<ResultSet> sets;
        for (auto &r : runs) sets.push_back(std::move(*r.set));
        doc.records = entry_records(sets, [&](const CaseRecord &c) { return match(c).matches; });
    }
    return doc;
}

} // namespace opbench
