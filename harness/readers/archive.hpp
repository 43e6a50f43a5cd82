// An archive of result sets on disk, for history and baselines:
//   DIR/<machine id>/<suite>/<UTC time>-<commit>.json   the sets, byte for byte
//   DIR/<machine id>/<suite>/<UTC time>-<commit>.summaries.cbor
//                                                      their entry summaries (readers/set_summaries.hpp)
//   DIR/index.json                                     one row per set
// Storing copies the set and rewrites the index atomically (under a lock,
// so concurrent CI jobs on one file system do not lose each other's rows).
#pragma once

#include "readers/result_set_reader.hpp"
#include "writers/writer.hpp"

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace opbench {

inline constexpr int kArchiveIndexVersion = 1;

// One archived set as the index lists it.
struct ArchiveEntry {
    std::string path; // relative to the archive directory
    // The set's entry summaries, relative to the archive; empty for a set
    // archived before they were written (history then reads the set).
    std::string summaries;
    std::string machine_id, suite, suite_sha256, build_type, commit, timestamp, host_name, cpu_model;
    std::string commit_under_test; // the set's code_under_test.commit; empty: none recorded (index key omitted)
    std::size_t cases = 0;
};

class ArchiveError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// Store `set` (read from set.path) under `dir`; returns the stored entry.
// Throws ArchiveError (unreadable index, file system errors).
ArchiveEntry archive_store(const std::filesystem::path &dir, const ResultSet &set);

// The index, oldest first (by timestamp). A directory without index.json
// is an empty archive; a corrupt index throws ArchiveError.
[[nodiscard]] std::vector<ArchiveEntry> archive_entries(const std::filesystem::path &dir);

// The index from its text (`index` names it in errors), checked: an object
// with schema_version 1 and a `sets` array of rows whose `path` is a string
// relative to the archive without ".." (anything else throws ArchiveError
// naming the row, e.g. "sets[2].path"); the other fields strings, `cases` a
// count. Oldest first.
[[nodiscard]] std::vector<ArchiveEntry> parse_archive_index(const std::string &text, const std::string &index);

// The newest archived set with this machine id, suite and build type
// measured no later than `not_after` (an ISO 8601 UTC timestamp; empty: any)
// that is not the set `itself` (a path: an archived copy with the same bytes
// is skipped, so a set already archived never becomes its own baseline).
[[nodiscard]] std::optional<ArchiveEntry>
archive_latest(const std::filesystem::path &dir, const std::string &machine_id, const std::string &suite,
               const std::string &build_type, const std::string &not_after = "", const std::string &itself = "");

// Every archived set archive_latest() chooses from, oldest first (the last
// is archive_latest's): the same machine, suite and build type.
[[nodiscard]] std::vector<ArchiveEntry>
archive_matching(const std::filesystem::path &dir, const std::string &machine_id, const std::string &suite,
                 const std::string &build_type, const std::string &not_after = "", const std::string &itself = "");

// What archive_prune() did.
// DIR/REL, where REL (an index row's path) is a regular file inside the
// archive reached without a symbolic link; else an ArchiveError saying why.
[[nodiscard]] std::string confined_file(const std::filesystem::path &dir, const std::string &rel);

struct PruneResult {
    std::vector<ArchiveEntry> removed; // oldest first
    // Files prune left in place, each with why (outside the archive through a
    // symlink, the index, a kept row's file, not a regular file).
    std::vector<std::string> refused;
    std::vector<std::string> removed_files; // relative to the archive, each deleted
    std::size_t kept = 0;
    std::uintmax_t bytes_freed = 0;
};

// Keep the newest `keep` sets (keep >= 1) of each machine, suite and build
// type (the sets a baseline and history choose from) and delete the older
// ones' files and index rows, under the index lock. A row whose file is
// already gone is dropped too. Throws ArchiveError.
PruneResult archive_prune(const std::filesystem::path &dir, std::size_t keep);

// The file name a set gets: "<UTC time>-<commit>.json", e.g.
// "20261122T145051Z-cf5d3abd267e.json".
[[nodiscard]] std::string archive_file_name(const ResultSet &set);

struct HistoryOptions {
    std::string suite;
    std::string case_regex; // ECMAScript, searched in the case's label and backend; empty: all
    std::string machine_id; // empty: the machine of the newest set of the suite
    std::size_t last = 10;  // at most this many runs, the newest
    bool wide = false; // one column per run (date, commit); default: first, last, trend, fitted to 100 columns
    bool records = true; // the Document's tidy records (--format csv); 66,000 rows over 1,000 quick runs
};

// Each case's median time across the archived runs of one suite on one
// machine, oldest run first. Reads each run's entry summaries, or the set
// itself where the archive has none (archived by an older opbench). Throws ArchiveError when there is nothing to
// show (no such suite, no such machine) and std::regex_error for a bad regex.
[[nodiscard]] Document archive_history(const std::filesystem::path &dir, const HistoryOptions &options);

// The runs history shows, and each matching case's time in each (history's
// reading, without the table): for change points (readers/change_history.hpp).
struct CaseHistory {
    std::string label;              // "case [backend]"
    std::vector<ValidTimes> times; // one per run; status "absent" where a run lacks the case
};
struct HistorySeries {
    std::vector<ArchiveEntry> runs; // in commit order (order_by_commit), the last --last
    std::string machine;
    std::vector<std::string> machines; // every machine with a run of the suite
    std::vector<std::string> notes;    // how the runs were ordered, what was left out
    std::vector<CaseHistory> cases;    // in order of first appearance
};
// Throws as archive_history() does.
[[nodiscard]] HistorySeries archive_series(const std::filesystem::path &dir, const HistoryOptions &options);

// Runs (oldest first by time) in commit order: the runs of a commit under
// test (ArchiveEntry::commit_under_test) stand together where that commit
// first appears; a run without one stays at its time. A commit measured
// again after another one (a re-run, or commits archived out of order) is
// said in `notes`.
void order_by_commit(std::vector<ArchiveEntry> &runs, std::vector<std::string> &notes);

// The commit a run is known by: its commit under test, else opbench's.
[[nodiscard]] const std::string &run_commit(const ArchiveEntry &run);

} // namespace opbench
