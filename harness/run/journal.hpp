// The run journal: every finished case appended, one JSON line each, and
// fsynced before the next case starts, in a file beside the result set
// (<out>.journal). A run that is interrupted, or killed, keeps what finished;
// `opbench run --resume` (`opbench ab --resume` for an `ab` run's journal,
// whose header says "command": "ab") reads the journal and runs only the rest. The
// journal is removed once the complete result set has been written.
//
// Format (JSON lines):
//   line 1   {"opbench_journal": 1, ...header}   what the run is (suite, options, context)
//   then     one object per finished case x backend (the runner's plain case data)
// A torn last line (the process died while appending) is ignored on reading.
#pragma once

#include <nlohmann/json.hpp>

#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

namespace opbench {

inline constexpr int kJournalVersion = 1;

// A journal that cannot be created, appended to or read; the message names
// the file (and line) and what is wrong.
struct JournalError : std::runtime_error {
    explicit JournalError(const std::string &what, bool write_failed = false)
        : std::runtime_error(what), write_failed_(write_failed) {}
    // A write or sync that failed (a full disk): the environment's fault,
    // exit 3, not bad input.
    [[nodiscard]] bool during_run() const { return write_failed_; }

private:
    bool write_failed_;
};

// Where the journal of a result set at `out_path` lives.
[[nodiscard]] std::string journal_path_for(const std::string &out_path);

class Journal {
public:
    // Starts a journal at `path` with `header` as its first line. Refuses a
    // file that already exists (another run's journal, or one to resume).
    // Both create and reopen hold an exclusive flock on it until the journal
    // is closed: a second run can tell a live run's journal from an
    // interrupted one's (journal_is_live), and never resumes a live one.
    [[nodiscard]] static Journal create(const std::string &path, const nlohmann::json &header);
    // Continues the journal at `path` (for --resume): appends after its last
    // complete line; a torn last line is cut off first.
    [[nodiscard]] static Journal reopen(const std::string &path);

    Journal(Journal &&other) noexcept;
    Journal &operator=(Journal &&) = delete;
    Journal(const Journal &) = delete;
    ~Journal(); // closes the file; it stays on disk

    // Appends one entry as a line and fsyncs it. Thread-safe.
    void append(const nlohmann::json &entry);
    // The result set is complete: the journal is no longer needed.
    void remove();

    [[nodiscard]] const std::string &path() const { return path_; }

private:
    Journal(std::string path, int fd) : path_(std::move(path)), fd_(fd) {}
    std::string path_;
    int fd_ = -1;
    std::mutex mutex_;
};

struct JournalContents {
    nlohmann::json header;               // the first line, without "opbench_journal"
    std::vector<nlohmann::json> entries; // finished cases and context lines that passed validation, in order
    bool torn_tail = false;              // the last line was incomplete and was ignored
    // Lines dropped because they fail validation, as "path:line: why": their
    // cases are not finished, so a resumed run measures them again.
    std::vector<std::string> dropped;
};

// Reads a journal. Throws JournalError ("path:line: ...") for a file that is
// not a journal or of another version (its first line). A later line that is
// not a valid record (not JSON, a case line without its name, status or
// entries) is dropped and named in `dropped`, never trusted.
[[nodiscard]] JournalContents read_journal(const std::string &path);

// True when a run still going holds the journal at `path` (Journal::create and
// reopen lock it for the run's life): it is not an interrupted run's.
[[nodiscard]] bool journal_is_live(const std::string &path);

// The command that finishes the run whose journal is at `path`: "opbench ab
// --resume" for an `ab` run's (its header's "command"), else "opbench run
// --resume" (a run's, or a journal that cannot be read).
[[nodiscard]] std::string resume_command_of(const std::string &path);

// True when `path` starts like a journal (to tell it from a result set).
[[nodiscard]] bool looks_like_journal(const std::string &path);

} // namespace opbench
