// The run's "~Ns left": what the entries not finished yet will take.
//
// Entries differ by orders of magnitude (a 64^3 product's repetitions stop at
// min_time; a naive 2048^3 one takes seconds a call), so "elapsed / done x
// left" was off by 7x on the gemm suite (issue 30). An entry's time is two
// parts, each expected from its plan and corrected by what the finished
// entries of its backend really took:
//
// - its repetitions: repetitions x tries x a try's time. A try takes at
//   least min_samples calls and min_time, and ends within a call of
//   max_time; in between, the stopping rule ends it once the noise target
//   is met, which takes a number of samples. So a try is expected to take
//   the calls its backend's finished tries took, clamped to its own plan
//   and most, those whose calls were nearest in length weighing most, plus
//   what a try spends besides its calls (their median). A try that ended as
//   planned only says the target needs no more than its calls: it counts
//   where that bound is near this try's plan. onednn's 0.02-0.03 s calls
//   took 20-50 samples on the gemm suite (Zen 5), so its 0.2-0.5 s calls,
//   planned at 5, run 20-28: a share of the way from plan to max_time
//   carried over from those tries (near 0) said 5. A backend whose
//   repetitions were measured again as starved (a busy machine) is
//   expected to need as many tries, up to starved_retries more;
// - the rest: its warmup and verification calls, and what its backend's
//   finished entries spent besides calls (starting in the worker, preparing
//   inputs, the reference's check, the record): a fixed part (their median)
//   and a part that grows with the data a call moves.
//
// A call's time is its work (FLOPs) at the speed of the finished entry most
// like it: of the same kind (eta_kind: the same op, dtype, variant and
// flags, any sizes), nearest in FLOPs; else, for a kind that differs from a
// seen one in one part (its dtype, say), that kind's speed times what the
// same change did between two other seen kinds; else its backend's median
// (0 until one finished: only the time settings count). Naive's bf16 calls
// are slower per FLOP than its f32 ones, its x W^T ones 2-4x slower than
// its square ones, and a 1 x 4096 x 4096 product (memory-bound) is 20x
// slower per FLOP than a 2048^3 one on onednn: a kind of op and dtype
// alone mixed them. A backend not seen yet takes the run's corrections.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace opbench {

// What the plan knows of one entry before it runs.
struct EntryPlan {
    std::string backend;
    int repetitions = 1, warmup = 0, min_samples = 1;
    double min_time = 0, max_time = 0; // seconds per repetition
    double flops = 0;                  // work of one call; 0 unknown
    // Entries of one kind (eta_kind) run at one speed per FLOP, give or
    // take their size; empty: known by its backend only.
    std::string kind;
    int starved_retries = 0; // a starved repetition is measured again up to this often
    // Worker processes its repetitions are spread over (--isolate process:
    // settings.processes). Each one after the first prepares the case
    // again (its warmup and the batch probe) inside the repetition's time:
    // 5.4 s of a naive 2048^3 entry's 27 s of repetitions.
    int processes = 1;
    double bytes = 0; // data one call moves (its seconds besides calls grow with it); 0 unknown
};

// How a finished entry spent its time.
struct EntryTook {
    double seconds = 0;           // from its start to the next one's
    double measure_seconds = 0;   // of which in its repetitions' sampling
    int tries = 0;                // its repetitions' samplings, re-measures included
    // Its median call as this machine ran it (starved repetitions too: the
    // machine is as busy for the entries left); NaN or <= 0: no time (it
    // failed, was skipped).
    double call_seconds = 0;
    // The calls one of its tries sampled (samples x calls per sample, the
    // mean over its repetitions); 0: not known (its tries' time stands in).
    double calls_per_try = 0;
};

// An entry's kind for its speed: its name without its backend and case
// name, each size (a number above 1) as '#':
// "<op>/B:1/M:#/N:#/K:#/tB:1/bias:1/variant:default/dt:bf16".
[[nodiscard]] std::string eta_kind(std::string_view entry_name);

class RunEta {
public:
    explicit RunEta(std::vector<EntryPlan> plan);

    void finished(std::size_t k, const EntryTook &took);
    // Entry k, still running, after `repetitions_done` of its repetitions
    // (`so_far`: since its start): the rest of its repetitions are expected
    // at their own pace so far, and its calls' speed stands for its kind's
    // until it finishes (a 2048^3 product runs slower per FLOP than the
    // 1024^3 one its first estimate came from).
    void in_progress(std::size_t k, const EntryTook &so_far, int repetitions_done);

    // Seconds the entries not finished yet will take; negative (unknown)
    // before any entry finished or told its progress.
    [[nodiscard]] double seconds_left() const;

    // Entry k's repetitions as its plan has them at the speed known so far:
    // the least they take, and the most (every repetition to max_time, and
    // measured again as often as a starved one may be).
    [[nodiscard]] double planned_measure(std::size_t k) const;
    [[nodiscard]] double most_measure(std::size_t k) const;
    // One try of one of its repetitions: the least and the most.
    [[nodiscard]] double planned_try(std::size_t k) const;
    [[nodiscard]] double most_try(std::size_t k) const;
    // Its calls outside the repetitions: the verified call, warmup and the
    // batch probe.
    [[nodiscard]] double other_calls(std::size_t k) const;
    // Its calls inside the repetitions' time that are not samples: each
    // further process's warmup and batch probe.
    [[nodiscard]] double move_calls(std::size_t k) const;

private:
    struct Speed {
        double flops, seconds_per_flop;
    };
    // How many calls a finished entry's tries sampled, and what that says of
    // the calls the noise target needs: exactly as many (the tries ended
    // between their plan and their most), at most (they ended as planned:
    // the target was met by then), or at least (they ran to max_time).
    struct TryCalls {
        enum class Bound { exact, at_most, at_least };
        double call = 0, calls = 0, planned = 1;
        Bound bound = Bound::exact;
    };
    // What finished entries of one backend (or of the whole run) took,
    // against what their plans said.
    struct Corrections {
        std::vector<TryCalls> tries_calls;
        std::vector<double> try_overheads; // each entry's seconds a try besides its calls
        double tries = 0, repetitions = 0;
        std::vector<std::pair<double, double>> overheads; // each entry's bytes, and seconds besides calls
        // The calls a try of calls this long samples, between `least` and
        // `most`, as the tries of entries with calls of a like length say,
        // and the plan itself as one more entry.
        [[nodiscard]] double calls_per_try(double call, double least, double most) const;
        [[nodiscard]] double tries_per_repetition() const { return repetitions > 0 ? tries / repetitions : 1.0; }
        // Its tries' calls against their plan (the median; 1: none known).
        [[nodiscard]] double past_plan() const;
        // An entry's seconds besides calls, for one that moves `bytes` a call.
        [[nodiscard]] double overhead(double bytes) const;
    };

    [[nodiscard]] double call_seconds(const EntryPlan &p) const;
    [[nodiscard]] double analogous_seconds_per_flop(const EntryPlan &p) const;
    // A try's calls of `call` seconds: as planned (min_samples and
    // min_time), and at most (to max_time).
    [[nodiscard]] static double planned_calls(const EntryPlan &p, double call);
    [[nodiscard]] static double most_calls(const EntryPlan &p, double call);
    [[nodiscard]] static double nearest_speed(const std::vector<Speed> &speeds, double flops);
    [[nodiscard]] double current_left() const;
    [[nodiscard]] double estimate(std::size_t k, const Corrections &c) const;

    std::vector<EntryPlan> plan_;
    std::vector<EntryTook> took_;
    std::vector<bool> finished_;
    bool any_finished_ = false;
    // A call's seconds per FLOP: per backend (its last finished entries'),
    // and per backend and kind.
    std::map<std::string, std::vector<Speed>> by_backend_, by_kind_;
    // Each unseen kind's speed by analogy (0: none), since the last finished entry.
    mutable std::map<std::string, double> analogy_cache_;
    // The entry in progress (SIZE_MAX: none told), as in_progress told it.
    std::size_t current_ = SIZE_MAX;
    EntryTook current_took_;
    int current_done_ = 0;
};

} // namespace opbench
