// The run's "~Ns left": what the entries not finished yet will take.
//
// Entries differ by orders of magnitude (a 64^3 product's repetitions stop at
// min_time; a naive 2048^3 one takes seconds a call), so "elapsed / done x
// left" was off by 7x on the gemm suite (issue 30). Each entry's cost is
// expected from its plan: repetitions x a repetition's time (min_samples
// calls, held between min_time and max_time, at least one call), plus its
// warmup and verification calls, plus a fixed setup. A call's time is its
// work (FLOPs) at the speed its backend showed on the entries finished so
// far (0 until one finished: only the time settings count). Then what the
// finished entries really took scales those expectations, per backend (a
// backend whose repetitions run to max_time costs more than its minimum
// says), or over the whole run for a backend not seen yet.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <vector>

namespace opbench {

// What the plan knows of one entry before it runs.
struct EntryPlan {
    std::string backend;
    int repetitions = 1, warmup = 0, min_samples = 1;
    double min_time = 0, max_time = 0; // seconds per repetition
    double flops = 0;                  // work of one call; 0 unknown
};

class RunEta {
public:
    explicit RunEta(std::vector<EntryPlan> plan);

    // Entry k took `seconds` from its start to the next one's (setup,
    // verification and every repetition); its median call took
    // `call_seconds` (NaN or <= 0: no time, e.g. it failed).
    void finished(std::size_t k, double seconds, double call_seconds);

    // Seconds the entries not finished yet will take; negative (unknown)
    // before any entry finished.
    [[nodiscard]] double seconds_left() const;

    // What entry k is expected to cost from its plan and its backend's
    // speed so far, before the scaling by what finished entries took.
    [[nodiscard]] double expected(std::size_t k) const;

private:
    std::vector<EntryPlan> plan_;
    std::vector<double> took_; // seconds; negative: not finished
    bool any_finished_ = false;
    // Seconds per FLOP of a call, per backend: its last finished entries'.
    std::map<std::string, std::vector<double>> seconds_per_flop_;
};

} // namespace opbench
