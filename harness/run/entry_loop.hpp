// The one entry loop, of `opbench run` and `opbench ab`: drives a list of
// entries (op cases x backends, then workload phases x backends;
// entry/entry.hpp) the same way, in groups measured together (a run's are
// single entries; ab's a case's two sides, their repetitions in ABBA order).
// A group is skipped before anything runs (a backend cannot run, it is
// refused, it would not fit), or activated in the host (entry_host.hpp),
// measured one repetition per Google Benchmark iteration in its order, and
// finished; then its result-set entries go to the run log (and journal)
// and their lines to the console. Google Benchmark gets a pass of groups at
// a time (all of them when repetitions are interleaved), so a huge run
// starts at once and a signal is heard between passes; after the first
// Ctrl-C, what is left passes through at once and stays out of the set
// (--resume runs it).
#pragma once

#include "entry/entry.hpp"
#include "measure/bottleneck_rules.hpp"
#include "machine/machine.hpp"
#include "profile/profile_session.hpp"
#include "run/entry_host.hpp"
#include "run/run_console.hpp"
#include "run/run_eta.hpp"
#include "run/run_log.hpp"

#include <benchmark/benchmark.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace opbench {

// The run's options that the entry loop reads (run/runner.hpp's RunOptions
// holds them; the reference and --verify come with the backends').
struct LoopOptions {
    std::vector<std::string> benchmark_args; // passed to Google Benchmark (--benchmark_*)
    bool progress = true;                    // on a terminal only
    bool verbose = false;                    // Google Benchmark's per-repetition lines instead of one per case
    std::optional<uint64_t> mem_limit;       // bytes a case may need at most (--mem-limit)
    // A line per finished entry and the tables after the run (`ab` prints its own rows).
    bool own_console = true;
};

// One step of a group's order: which of its members is measured, in which
// of the host's slots (an `ab` side's pool).
struct GroupStep {
    std::size_t member = 0;
    std::size_t slot = 0;
};

// Entries measured together: every member activated before the first step,
// their repetitions taken in `order`, every member finished after the last.
// A member that fails stops the group: the others are not measured further.
struct EntryGroup {
    std::vector<std::size_t> members; // places in the loop's entries
    std::vector<GroupStep> order;
    std::string label = {}; // on its progress line; "": its first entry's name
};

// What the owner of the groups hears of them (`ab`: the drift canary after
// each block, a case's pairs and verdict, its console row).
class GroupObserver {
public:
    virtual ~GroupObserver() = default;
    // After step `k` of group `g`'s order was measured.
    virtual void step_measured(std::size_t /*g*/, std::size_t /*k*/) {}
    // Group `g` is finished (or skipped) and about to be logged: its
    // entries' statuses may still change.
    virtual void group_finished(std::size_t /*g*/) {}
    // Adds to entry `i`'s result-set entries before they are logged.
    virtual void add_to_records(std::size_t /*i*/, std::vector<nlohmann::json> & /*records*/) {}
    // Group `g`'s entries are in the log.
    virtual void group_logged(std::size_t /*g*/) {}
};

class EntryLoop {
public:
    struct Setup {
        EntryHost &host;
        RunLog &log;
        const LoopOptions &options;
        const MachinePeaks &peaks;
        JobDefaults job_defaults; // the timer's overhead, --verify, the reference store
        std::string reference;    // the backend the console compares each entry with
        // Profiling runs (in process): the case each activation records
        // belongs to the entry activated, and goes onto its records.
        ProfileSession *profile = nullptr;
        // The groups and their order; none: each entry alone, its repetitions in turn.
        std::vector<EntryGroup> groups = {};
        GroupObserver *observer = nullptr;
    };
    EntryLoop(std::vector<std::unique_ptr<Entry>> &entries, Setup setup);

    // Filters, skips, measures and logs every group (kept when the filter
    // keeps one of its entries), then prints what was not measured and the
    // per-backend table.
    void run();

    // Reached by this run (not filtered out, not finished before a --resume).
    [[nodiscard]] bool ran(std::size_t i) const { return ran_[i]; }
    // Finished by this run (reached, and not abandoned by an interrupt).
    [[nodiscard]] bool finished_here(std::size_t i) const { return ran_[i] && !interrupted_[i]; }
    // The names the filter keeps: what the set must hold to be complete.
    [[nodiscard]] const std::vector<std::string> &wanted() const { return wanted_; }
    // The entry the host holds active (the first of its group; SIZE_MAX:
    // none): exit() in plugin code is charged to it.
    [[nodiscard]] std::size_t active() const {
        return active_ == SIZE_MAX ? SIZE_MAX : groups_[active_].members.front();
    }
    // Fails the active group's entries with `reason` and logs them (the exit guard).
    void fail_active(const std::string &reason);

private:
    std::optional<MeasureFailure> skip_before_running(std::size_t i) const;
    bool skip_group(std::size_t g);
    void stop_group(std::size_t g, std::size_t failed);
    [[nodiscard]] bool group_failed(std::size_t g) const;
    void set_interrupted(std::size_t g);
    void run_pass(const std::vector<std::size_t> &pass);
    void bench(benchmark::State &state, std::size_t g);
    bool measure_step(benchmark::State &state, std::size_t g, std::size_t k);
    void activate(std::size_t g);
    void finish_active();
    void judge_finished(std::size_t i);
    void take_profiled_case(std::size_t i);
    void say_launch_fallback(const std::string &backend, const std::string &why);
    void group_done(std::size_t g, bool shown = true);
    void entry_done(std::size_t i, bool shown = true);
    void make_eta(const std::vector<std::size_t> &to_measure);
    void show_progress(std::size_t g);
    void refresh_progress(std::size_t g);
    void print_progress_line(std::size_t g, const std::string &eta, const std::string &suffix);
    std::string eta_text(std::size_t g);
    [[nodiscard]] EntryTook took_so_far(std::size_t g, double seconds) const;
    double seconds_left(std::chrono::steady_clock::time_point now);
    void report_after_run() const;
    const Entry *reference_of(const Entry &e) const;
    [[nodiscard]] EntrySummary summary_of(const Entry &e) const;

    std::vector<std::unique_ptr<Entry>> &entries_;
    Setup setup_;
    std::vector<EntryGroup> &groups_ = setup_.groups;
    std::vector<std::size_t> measured_; // steps of its order each group had
    std::vector<bool> group_done_;     // logged (or abandoned): hears no more
    std::vector<std::string> wanted_;  // names the filter keeps, finished before a --resume or not
    std::vector<bool> ran_;            // reached (not filtered out, not finished before a --resume)
    std::vector<bool> interrupted_;    // abandoned by an interrupt: not in the result set
    std::vector<bool> held_;           // activated in the host and not yet finished
    std::set<std::string> launch_fallbacks_said_; // backend + reason, each said once
    std::vector<std::size_t> planned_; // the groups this run measures, in order
    std::vector<std::size_t> not_measured_;
    // Each GPU backend's device memory as its probe saw it (the device fit check).
    std::map<std::string, DeviceMemory> gpu_memory_;
    std::size_t active_ = SIZE_MAX; // the group the host holds
    std::size_t profile_mark_ = 0;          // the profile's cases before the last activation
    std::vector<std::size_t> profile_case_; // each entry's case in the profile (SIZE_MAX: none)
    std::unique_ptr<RunConsole> console_;
    nlohmann::json context_; // the set's context: what an entry's summary is judged against
    RunFacts run_facts_;     // what the bottleneck rules read of the run (measure/bottleneck_rules.hpp)
    std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();
    // The progress line's estimate (run/run_eta.hpp) over the groups that
    // are measured: each one's place in it, the one shown last and its start.
    std::unique_ptr<RunEta> eta_;
    std::map<std::size_t, std::size_t> eta_index_;
    std::size_t eta_last_ = SIZE_MAX;
    std::chrono::steady_clock::time_point eta_last_start_;
    std::chrono::steady_clock::time_point progress_printed_; // the last progress line's
    double eta_made_ = -1; // the last estimate (negative: none), and when it was made
    std::chrono::steady_clock::time_point eta_made_at_;
};

} // namespace opbench
