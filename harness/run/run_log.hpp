// What a result set is made of, recorded as the run goes: Google Benchmark's
// context, opbench's context, and each finished case x backend with its
// result-set entries (already carrying opbench's fields). Mirrored line by
// line into the journal (journal.hpp) when there is one, so that
//   - the result set can be written at any moment, complete or not (an
//     interrupted run: "complete": false in context.opbench);
//   - a second Ctrl-C writes it from here without touching the runner;
//   - `opbench run --resume` rebuilds the log from the journal and runs only
//     the cases it does not hold.
// Thread-safe: the signal watcher reads it while the runner adds to it.
#pragma once

#include "run/journal.hpp"

#include <nlohmann/json.hpp>

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace opbench {

class RunLog {
public:
    // A log for a new run. With `journal_path`, a journal is started there
    // with `header` (what the run is: suite, options) as its first line.
    RunLog(nlohmann::json header, std::optional<std::string> journal_path);
    // A log continuing the journal at `journal_path` (--resume): everything
    // it holds is restored, and later records are appended to it.
    [[nodiscard]] static std::unique_ptr<RunLog> resume(const std::string &journal_path);

    [[nodiscard]] const nlohmann::json &header() const { return header_; }
    [[nodiscard]] std::optional<std::string> journal_path() const;

    // Google Benchmark's "context" object, and context.opbench. Recorded
    // again by a resumed run (the later one wins).
    void set_gb_context(nlohmann::json context);
    void set_opbench_context(nlohmann::json context);

    // A finished case x backend: `index` is its place in the run's planned
    // order (entries are written in that order), `status` passed | failed |
    // skipped, `entries` its result-set entries.
    void add_case(std::size_t index, const std::string &name, const std::string &status,
                  std::vector<nlohmann::json> entries);
    [[nodiscard]] bool has_case(const std::string &name) const;
    // A finished case x backend as logged: its status and result-set entries.
    struct LoggedCase {
        std::string status;
        std::vector<nlohmann::json> entries;
    };
    [[nodiscard]] std::optional<LoggedCase> logged_case(const std::string &name) const;
    // Resumed: forgets each finished case the journal carries that is not one
    // of `planned` (the run's case x backend names), or whose entries are not
    // its own (a name outside "<case>/"), time negatively, or are fewer than
    // the repetitions they record; those cases are measured again. Returns
    // one "case: why" per case forgotten (issue 32).
    std::vector<std::string> forget_unplanned(const std::vector<std::string> &planned);
    // Those of `wanted` (case x backend names) the log holds no entry of: a
    // set lacking any is not complete, whatever else happened (issue 32).
    [[nodiscard]] std::vector<std::string> without_entries(const std::vector<std::string> &wanted) const;
    // Cases by status ("passed" -> 3, ...).
    [[nodiscard]] std::map<std::string, int> counts() const;
    // How many times this run was resumed.
    [[nodiscard]] int resumptions() const;

    // The set's "context": Google Benchmark's with context.opbench.
    [[nodiscard]] nlohmann::json context() const;

    // The result set: {"context": gb + {"opbench": ... "complete": complete},
    // "benchmarks": [...]}. An incomplete one also names the journal
    // (context.opbench.journal) that --resume continues from.
    [[nodiscard]] nlohmann::json result_set(bool complete) const;

    // The result set is complete and written: the journal goes.
    void finish();

private:
    RunLog() = default;
    void record(const nlohmann::json &line); // into the journal, under the lock
    void apply(const nlohmann::json &line);  // into memory, under the lock

    struct FinishedCase {
        std::size_t index;
        std::string name, status;
        std::vector<nlohmann::json> entries;
    };
    mutable std::mutex mutex_;
    nlohmann::json header_;
    std::unique_ptr<Journal> journal_;
    nlohmann::json gb_context_ = nlohmann::json::object();
    nlohmann::json opbench_context_ = nlohmann::json::object();
    std::vector<FinishedCase> cases_;
    std::map<std::string, std::size_t> by_name_;
    std::vector<std::string> resumed_at_;
};

struct Suite;

// The run's options that its log reads (run/runner.hpp's RunOptions holds them).
struct LogOptions {
    std::string out_path; // result set; empty: none written (nor a journal)
    // The run's own arguments (after `run`, without --out and --resume),
    // kept in the journal so that --resume can run the same command again.
    std::vector<std::string> command_args;
    std::string resume_journal; // continue this journal (--resume) instead of starting one
    // The command that ran ("run" or "ab"), in the journal's header: which
    // command's --resume finishes it (journal.hpp resume_command_of).
    std::string command = "run";
};

// The log of a run: a new one whose journal (beside options.out_path, when
// there is one) starts with what the run is (suite and its SHA-256, cwd,
// out, args: enough for --resume to run the same command again), or the one
// options.resume_journal continues. Throws JournalError when the suite
// changed since the interrupted run.
[[nodiscard]] std::unique_ptr<RunLog> open_run_log(const Suite &suite, const LogOptions &options);

// The journal that `opbench run --resume FILE` continues: FILE itself when
// it is a journal, else the one an incomplete result set names
// (context.opbench.journal). Throws JournalError saying why there is none
// (a complete result set, a missing journal, a file that is neither).
[[nodiscard]] std::string journal_to_resume(const std::string &file);

} // namespace opbench
