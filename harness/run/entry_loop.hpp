// The one entry loop of `opbench run`: drives a list of entries (op cases x
// backends, then workload phases x backends; entry/entry.hpp) the same way.
// Each is skipped before anything runs (its backend cannot run, it is
// refused, it would not fit), or activated in the case host, measured one
// repetition per Google Benchmark iteration, and finished; then its
// result-set entries go to the run log (and journal) and its line to the
// console. Google Benchmark gets a pass of entries at a time (all of them
// when repetitions are interleaved), so a huge run starts at once and a
// signal is heard between passes; after the first Ctrl-C, what is left
// passes through at once and stays out of the set (--resume runs it).
#pragma once

#include "entry/entry.hpp"
#include "measure/bottleneck_rules.hpp"
#include "machine/machine.hpp"
#include "profile/profile_session.hpp"
#include "run/run_backends.hpp"
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
};

class EntryLoop {
public:
    struct Setup {
        RunBackends &backends; // its options(): the reference, --verify
        RunLog &log;
        const LoopOptions &options;
        const MachinePeaks &peaks;
        double timer_overhead = 0;
        // Profiling runs (in process): the case each activation records
        // belongs to the entry activated, and goes onto its records.
        ProfileSession *profile = nullptr;
    };
    EntryLoop(std::vector<std::unique_ptr<Entry>> &entries, Setup setup);

    // Filters, skips, measures and logs every entry, then prints what was
    // not measured, the per-backend table and the workloads' figures.
    void run();

    // Reached by this run (not filtered out, not finished before a --resume).
    [[nodiscard]] bool ran(std::size_t i) const { return ran_[i]; }
    // Finished by this run (reached, and not abandoned by an interrupt).
    [[nodiscard]] bool finished_here(std::size_t i) const { return ran_[i] && !interrupted_[i]; }
    // The names the filter keeps: what the set must hold to be complete.
    [[nodiscard]] const std::vector<std::string> &wanted() const { return wanted_; }
    // The entry the host holds active (SIZE_MAX: none): exit() in plugin
    // code is charged to it.
    [[nodiscard]] std::size_t active() const { return active_; }
    // Fails the active entry with `reason` and logs it (the exit guard).
    void fail_active(const std::string &reason);

private:
    std::optional<MeasureFailure> skip_before_running(std::size_t i) const;
    void run_pass(const std::vector<std::size_t> &pass);
    void bench(benchmark::State &state, std::size_t i);
    void activate(std::size_t i);
    void finish_active();
    void take_profiled_case(std::size_t i);
    void entry_done(std::size_t i, bool shown = true);
    void show_progress(std::size_t i);
    void refresh_progress(std::size_t i);
    void print_progress_line(std::size_t i, const std::string &eta, const std::string &suffix);
    std::string eta_text(std::size_t i);
    double seconds_left(std::chrono::steady_clock::time_point now);
    void report_after_run() const;
    const Entry *reference_of(const Entry &e) const;
    [[nodiscard]] EntrySummary summary_of(const Entry &e) const;

    std::vector<std::unique_ptr<Entry>> &entries_;
    Setup setup_;
    std::vector<int> measured_;        // Google Benchmark iterations each entry had
    std::vector<std::string> wanted_;  // names the filter keeps, finished before a --resume or not
    std::vector<bool> ran_;            // reached (not filtered out, not finished before a --resume)
    std::vector<bool> interrupted_;    // abandoned by an interrupt: not in the result set
    std::vector<std::size_t> planned_; // the entries this run measures, in order
    std::vector<std::size_t> not_measured_;
    std::size_t active_ = SIZE_MAX;
    std::size_t profile_mark_ = 0;         // the profile's cases before the last activation
    std::vector<std::size_t> profile_case_; // each entry's case in the profile (SIZE_MAX: none)
    std::unique_ptr<RunConsole> console_;
    nlohmann::json context_; // the set's context: what an entry's summary is judged against
    RunFacts run_facts_;     // what the bottleneck rules read of the run (measure/bottleneck_rules.hpp)
    std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();
    // The progress line's estimate (run/run_eta.hpp) over the entries that
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
