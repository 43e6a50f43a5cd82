// The progress line's estimate of the time left (run/run_eta.hpp) on
// synthetic per-entry costs: no clock, no timing.
#include "run/run_eta.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

using namespace opbench;

namespace {

// A gemm-like plan: square matmuls 512^3, 1024^3, 2048^3 in two dtypes on
// naive (1 GFLOP/s: calls of 0.27 s to 17 s, so repetitions run past
// min_time) and onednn (100 GFLOP/s: repetitions run to max_time, the
// noise target unmet), each shape's naive entry then its onednn one, as a
// run orders them. Every entry also spends 0.1 s besides its calls.
struct Synthetic {
    std::vector<EntryPlan> plan;
    std::vector<EntryTook> took; // what each entry "really" takes
};

Synthetic gemm_like() {
    Synthetic s;
    for (double n : {512.0, 1024.0, 2048.0})
        for (int dtype = 0; dtype < 2; ++dtype)
            for (const auto &[backend, flop_per_s] : {std::pair{"naive", 1e9}, std::pair{"onednn", 1e11}}) {
                EntryPlan p{backend, 3, n == 2048 ? 1 : 2, n == 2048 ? 3 : 5, 0.5, 5.0, 2 * n * n * n, dtype ? "mm/bf16" : "mm/f32"};
                const double call = p.flops / flop_per_s * (dtype ? 1.5 : 1.0);
                const double rep = backend == std::string("onednn") ? p.max_time
                                                                     : std::clamp(p.min_samples * call, p.min_time, p.max_time);
                const double measure = p.repetitions * std::max(call, rep);
                s.took.push_back({0.1 + measure + std::max(1, p.warmup) * call, measure, p.repetitions, call});
                s.plan.push_back(p);
            }
    return s;
}

} // namespace

TEST(RunEta, UnknownBeforeAnEntryFinished) {
    RunEta eta({{"naive", 3, 1, 5, 0.1, 1.0, 1e6, ""}});
    EXPECT_LT(eta.seconds_left(), 0);
    eta.finished(0, {1.0, 0.5, 3, 1e-3});
    EXPECT_EQ(eta.seconds_left(), 0);
}

// Equal entries: the estimate is what each took times how many are left,
// however it divides between repetitions and the rest (within 0.1%: the
// plan, 3000 calls a try against the 10,000 they took, weighs as an entry
// with calls 30x longer would).
TEST(RunEta, EqualEntriesGiveTheAverage) {
    RunEta eta(std::vector<EntryPlan>(8, EntryPlan{"naive", 9, 2, 5, 0.03, 0.15, 1e5, ""}));
    eta.finished(0, {2.0, 0.9, 9, 1e-5, 1e4});
    eta.finished(1, {2.0, 0.9, 9, 1e-5, 1e4});
    EXPECT_NEAR(eta.seconds_left(), 6 * 2.0, 6 * 2.0 * 1e-3);
}

// Issue 30: after a quarter of the run, within +-30% of the time really
// left, at every later entry too; the old elapsed/done estimate was not.
TEST(RunEta, HoldsWithinThirtyPercentAfterAQuarterOfAGemmLikeRun) {
    const Synthetic s = gemm_like();
    double total = 0;
    for (const EntryTook &t : s.took) total += t.seconds;
    RunEta eta(s.plan);
    double elapsed = 0;
    bool old_was_off = false;
    for (std::size_t k = 0; k + 1 < s.plan.size(); ++k) {
        eta.finished(k, s.took[k]);
        elapsed += s.took[k].seconds;
        const double actual = total - elapsed;
        const double old = elapsed / double(k + 1) * double(s.plan.size() - k - 1);
        if (elapsed < total / 4) continue;
        EXPECT_NEAR(eta.seconds_left() / actual, 1.0, 0.30) << "after entry " << k << ": " << eta.seconds_left()
                                                             << " s estimated, " << actual << " s left";
        old_was_off = old_was_off || std::abs(old / actual - 1) > 0.30;
    }
    EXPECT_TRUE(old_was_off) << "the synthetic run should be one the per-entry average gets wrong";
}

// A backend with no finished entry yet is corrected as the run so far is.
TEST(RunEta, AnUnseenBackendTakesTheRunsCorrections) {
    RunEta eta({{"naive", 1, 0, 1, 1.0, 10.0, 0, ""}, {"onednn", 1, 0, 1, 1.0, 10.0, 0, ""}});
    eta.finished(0, {2.5, 2.0, 1, NAN}); // no call time: its repetitions' scale is unknown
    EXPECT_NEAR(eta.seconds_left(), 0.5 + 1.0, 1e-9);
    RunEta timed({{"naive", 1, 0, 1, 1.0, 10.0, 0, ""}, {"onednn", 1, 0, 1, 1.0, 10.0, 0, ""}});
    timed.finished(0, {2.5, 2.0, 1, 1e-3}); // repetitions took 2x min_time
    EXPECT_NEAR(timed.seconds_left(), 0.5 + 2.0, 1e-9);
}

// The work of a call counts once its backend's speed is known: a case with
// 8x the FLOPs whose calls outlast min_time is expected to cost more.
TEST(RunEta, WorkPerCallCountsOnceTheBackendsSpeedIsKnown) {
    RunEta eta({{"naive", 3, 1, 5, 0.1, 10.0, 1e9, ""}, {"naive", 3, 1, 5, 0.1, 10.0, 8e9, ""}});
    const double before = eta.planned_measure(1);
    eta.finished(0, {16.5, 15.0, 3, 1.0}); // 1 ns per FLOP; 0.5 s besides its calls
    EXPECT_GT(eta.planned_measure(1), 10 * before);
    // 8 s calls end a try with the second (16 s), the one reaching max_time.
    EXPECT_NEAR(eta.planned_measure(1), 3 * 16.0, 1e-6);
    // Besides its repetitions: its one call before sampling (warmup 1: the
    // verified call; the first sample chooses the batch).
    EXPECT_NEAR(eta.seconds_left(), 0.5 + 8.0 + 3 * 16.0, 1e-6);
}

namespace {
// How much an entry weighs whose calls are `ratio` times as long (or short):
// 1/(1 + ln ratio)^4. The plan weighs as one 30x apart.
double weight(double ratio) { return 1 / std::pow(1 + std::log(ratio), 4); }
} // namespace

// Tries that ran to max_time (the noise target unmet) say that tries of
// calls 8x longer will too, but never past max_time: their calls, clamped
// to what max_time holds, against the plan as one far-off entry.
TEST(RunEta, RepetitionsScaleUpToMaxTimeAndNoFurther) {
    RunEta eta({{"onednn", 3, 0, 5, 0.5, 5.0, 1e9, "mm"}, {"onednn", 3, 0, 5, 0.5, 5.0, 8e9, "mm"}});
    eta.finished(0, {30.0, 30.0, 3, 1e-3, 1e4}); // 10,000 calls a try: 20x its 500-call plan
    // 8e9 FLOPs: calls of 8 ms, a plan of 63 calls (0.5 s), and max_time
    // ends each try with the 625th call (5 s): 20x would be 30 s.
    EXPECT_NEAR(eta.most_measure(1), 3 * 5.0, 1e-9);
    const double calls = (weight(30) * 63 + weight(8) * 625) / (weight(30) + weight(8));
    EXPECT_GT(calls, 500);
    EXPECT_NEAR(eta.seconds_left(), 8e-3 + 3 * calls * 8e-3, 1e-6);
    // A starved repetition may be measured again (twice here): an entry
    // whose every repetition took three tries is expected to again, and the
    // most is three tries of max_time each.
    RunEta retried({{"onednn", 3, 0, 5, 0.5, 5.0, 1e9, "mm", 2}, {"onednn", 3, 0, 5, 0.5, 5.0, 8e9, "mm", 2}});
    retried.finished(0, {30.0, 30.0, 9, 1e-3, 1e4 / 3}); // each repetition measured 3 times, 3333 calls a try
    EXPECT_NEAR(retried.most_measure(1), 3 * 3 * 5.0, 1e-9);
    // Entry 0's tries took 3333 calls, between their plan and their most:
    // the target needs that many, more than entry 1's 625 can hold.
    EXPECT_NEAR(retried.seconds_left(), 8e-3 + 3 * 3 * calls * 8e-3, 1e-6);
}

// A call of unknown length (no FLOPs): its tries run as many times their
// plan as its backend's did.
TEST(RunEta, ATryOfUnknownCallsRunsAsFarPastItsPlanAsItsBackendsDid) {
    RunEta eta({{"naive", 1, 0, 1, 1.0, 10.0, 0, ""}, {"naive", 1, 0, 1, 1.0, 10.0, 0, ""}});
    eta.finished(0, {2.5, 2.0, 1, 1e-3, 2000}); // 2000 calls of 1 ms: twice its plan of 1000; 0.5 s besides
    EXPECT_NEAR(eta.seconds_left(), 0.5 + 2 * 1.0, 1e-9);
}

// A call is expected at the speed of its own kind (op and dtype), nearest in
// FLOPs: a bf16 entry after f32 and bf16 ones takes the bf16 speed, not the
// backend's median; a kind not seen yet takes the backend's median.
TEST(RunEta, ACallTakesTheSpeedOfItsKindNearestInSize) {
    RunEta eta({{"naive", 1, 0, 1, 0, 100, 1e9, "mm/f32"},
                {"naive", 1, 0, 1, 0, 100, 1e9, "mm/bf16"},
                {"naive", 1, 0, 1, 0, 100, 8e9, "mm/f32"},
                {"naive", 1, 0, 1, 0, 100, 8e9, "mm/bf16"},
                {"naive", 1, 0, 1, 0, 100, 16e9, "other"}});
    eta.finished(0, {2.0, 1.0, 1, 1.0});    // 1 ns per FLOP
    eta.finished(1, {4.0, 2.0, 1, 2.0});    // bf16: 2 ns per FLOP
    eta.finished(2, {20.0, 10.0, 1, 10.0}); // f32 at 8e9: 1.25 ns per FLOP (a slower size)
    EXPECT_NEAR(eta.planned_measure(3), 16.0, 1e-6);
    EXPECT_NEAR(eta.planned_measure(4), 20.0, 1e-6);
}

// A long entry in progress: once a repetition of it finished, the rest of it
// is its own pace x its repetitions left, and its kind's next size is judged
// by its speed, not by the smaller size that finished before it (naive runs
// 2048^3 three times slower per FLOP than 1024^3 here).
TEST(RunEta, AnEntryInProgressCountsAtItsOwnPace) {
    const double small = 2 * 1024.0 * 1024 * 1024, large = 8 * small, larger = 8 * large;
    RunEta eta({{"naive", 3, 0, 1, 0.1, 100, small, "mm/f32"},
                {"naive", 3, 0, 1, 0.1, 100, large, "mm/f32"},
                {"naive", 3, 0, 1, 0.1, 100, larger, "mm/f32"}});
    // Told the first one's progress before any finished: its rest is known.
    RunEta alone({{"naive", 3, 0, 1, 0.1, 100, small, "mm/f32"}});
    EXPECT_LT(alone.seconds_left(), 0);
    alone.in_progress(0, {1.5, 1.0, 1, 1.0}, 1);
    EXPECT_NEAR(alone.seconds_left(), 2 * 1.0, 1e-9);
    eta.finished(0, {3.0, 3.0, 3, 1.0}); // 1 s a call
    // Each entry not started: 3 repetitions of a call, and 1 call besides
    // (the verified one: warmup 0 makes it the only call before sampling).
    const double before = eta.seconds_left(); // both left at the small one's speed: 8 and 64 s a call
    EXPECT_NEAR(before, 4 * 8.0 + 4 * 64.0, 1e-6);
    // The large one runs at 24 s a call: one repetition in 24 s.
    eta.in_progress(1, {25.0, 24.0, 1, 24.0}, 1);
    EXPECT_NEAR(eta.seconds_left(), 2 * 24.0 + 4 * 8 * 24.0, 1e-6);
    // Finished, it no longer counts as in progress: its record holds.
    eta.finished(1, {73.0, 72.0, 3, 24.0});
    EXPECT_NEAR(eta.seconds_left(), 4 * 8 * 24.0, 1e-6);
    // Told nothing done: no change.
    eta.in_progress(2, {1.0, 0.0, 0, 0.0}, 0);
    EXPECT_NEAR(eta.seconds_left(), 4 * 8 * 24.0, 1e-6);
}

// Under --isolate process, each process after the first prepares the case
// again inside its repetitions' time (its warmup; the batch is the first
// process's, so no probe call): counted for the entries left, and not taken
// for repetitions running long.
TEST(RunEta, EachFurtherProcessPreparesTheCaseAgain) {
    EntryPlan p{"naive", 3, 1, 3, 0.5, 5.0, 1e9, "mm/f32", 0, 3};
    RunEta eta({p, p});
    // 1 s calls, 3 a repetition (3 s, as planned), and 2 further processes
    // at 1 warmup call each: 11 s of repetitions.
    eta.finished(0, {14.0, 11.0, 3, 1.0});
    EXPECT_NEAR(eta.move_calls(1), 2 * 1 * 1.0, 1e-9);
    EXPECT_NEAR(eta.seconds_left(), 3 * 1.0 + 2 * 1.0 + 3 * 3.0, 1e-6);
}

// In progress over three processes: the rest is the repetitions left at the
// pace of the sampling so far, plus the moves still to come.
TEST(RunEta, AnEntryInProgressStillHasItsMovesToCome) {
    EntryPlan p{"naive", 3, 1, 2, 0.5, 5.0, 1e9, "mm/f32", 0, 3};
    RunEta eta({p, p});
    eta.finished(0, {11.0, 8.0, 3, 1.0}); // 2 calls a repetition, 2 moves of 1 warmup call
    // Entry 1 runs at 2 s a call: its first repetition took 4 s, two moves
    // (2 s each) and two repetitions (4 s each) are left.
    eta.in_progress(1, {8.0, 4.0, 1, 2.0}, 1);
    EXPECT_NEAR(eta.seconds_left(), 2 * 2.0 + 2 * 4.0, 1e-6);
    // After the second (a move and a repetition: 6 s more): one of each.
    eta.in_progress(1, {14.0, 10.0, 2, 2.0}, 2);
    EXPECT_NEAR(eta.seconds_left(), 2.0 + 4.0, 1e-6);
}

// A try is expected to take the calls the tries of entries with calls of a
// like length took: the 0.1 s entry, whose tries ran to max_time, speaks
// for the 0.3 s one, not the 1 ms entries (one 800 calls, one as planned at
// 500: at most 500, which says nothing of a plan of 5). (A share of the way
// from plan to max_time carried from the small entries, 0.07 and 0, would
// have said the plan.)
TEST(RunEta, ATryTakesTheCallsOfEntriesWithCallsOfALikeLength) {
    const EntryPlan small{"onednn", 1, 1, 5, 0.5, 5.0, 1e8, "mm/f32"}, medium{"onednn", 1, 1, 5, 0.5, 5.0, 1e10, "mm/f32"},
        large{"onednn", 1, 1, 5, 0.5, 5.0, 3e10, "mm/f32"};
    RunEta eta({small, small, medium, large});
    // Each spends 0.1 s besides its one call outside the repetitions.
    eta.finished(0, {0.901, 0.8, 1, 1e-3, 800}); // 800 calls: past its plan of 500
    eta.finished(1, {0.601, 0.5, 1, 1e-3, 500}); // as planned
    eta.finished(2, {5.2, 5.0, 1, 0.1, 50});     // 50 calls of 0.1 s: to max_time
    // The large one: 0.3 s calls, a plan of 5 calls (1.5 s), at most 17
    // (5.1 s). The medium entry (3x shorter calls) and the first small one
    // (300x) say 17, the plan 5.
    const double calls = (weight(30) * 5 + (weight(3) + weight(300)) * 17) / (weight(30) + weight(3) + weight(300));
    EXPECT_GT(calls, 15);
    const double besides = 0.3 + 0.1; // the verified call (warmup 1); the median overhead
    EXPECT_NEAR(eta.seconds_left(), besides + calls * 0.3, 1e-6);
}

// Tries of short calls that ended as planned say nothing of a long call's
// tries: its plan stands (else their 500 calls, clamped to its 17, would
// pull it up).
TEST(RunEta, TriesEndedAsPlannedSayNothingOfAMuchSmallerPlan) {
    const EntryPlan small{"onednn", 1, 1, 5, 0.5, 5.0, 1e8, "mm/f32"}, large{"onednn", 1, 1, 5, 0.5, 5.0, 3e10, "mm/f32"};
    RunEta eta({small, small, small, small, large});
    for (std::size_t k = 0; k < 4; ++k) eta.finished(k, {0.601, 0.5, 1, 1e-3, 500});
    EXPECT_NEAR(eta.seconds_left(), 0.3 + 0.1 + 5 * 0.3, 1e-6);
}

// A kind not seen yet that differs from a seen one in one part takes that
// kind's speed times what the same change did to two other seen kinds:
// naive's first bf16 x W^T product, after its f32 ones, runs as much slower
// as its bf16 square products ran than its f32 ones (1.5x here), not at the
// backend's median (4x too fast: its x W^T products are 4x slower per FLOP).
TEST(RunEta, AnUnseenKindTakesASeenKindsSpeedTimesWhatTheSameChangeDidElsewhere) {
    const std::string square = "matmul/B:1/M:#/N:#/K:#/variant:default/dt:",
                      linear = "matmul/B:1/M:#/N:#/K:#/tB:1/bias:1/variant:default/dt:";
    RunEta eta({{"naive", 1, 0, 1, 0, 100, 1e9, square + "f32"},
                {"naive", 1, 0, 1, 0, 100, 1e9, square + "bf16"},
                {"naive", 1, 0, 1, 0, 100, 2e9, linear + "f32"},
                {"naive", 1, 0, 1, 0, 100, 2e9, linear + "bf16"}});
    eta.finished(0, {1.0, 1.0, 1, 1.0});  // 1 ns per FLOP
    eta.finished(1, {1.5, 1.5, 1, 1.5});  // bf16: 1.5x
    eta.finished(2, {8.0, 8.0, 1, 8.0});  // x W^T: 4 ns per FLOP
    EXPECT_NEAR(eta.planned_measure(3), 2e9 * 4e-9 * 1.5, 1e-6);
    EXPECT_EQ(eta_kind("matmul/B:1/M:2048/N:2304/K:768/tB:1/bias:1/variant:default/dt:bf16/be:naive/case:l"),
              linear + "bf16");
}

// Seconds besides calls grow with the data a call moves: a fixed part (the
// smaller entries') and, per byte, what the larger ones spent above it.
TEST(RunEta, SecondsBesidesCallsGrowWithTheData) {
    std::vector<EntryPlan> plan;
    for (double bytes : {1e3, 1e3, 1e8, 1e8, 4e8}) plan.push_back({"onednn", 1, 0, 1, 0, 100, 1e9, "mm", 0, 1, bytes});
    RunEta eta(plan);
    // Calls of 1 ms, one a try; 3 calls besides the repetitions.
    eta.finished(0, {0.104, 0.001, 1, 1e-3, 1});       // 0.1 s besides calls
    eta.finished(1, {0.104, 0.001, 1, 1e-3, 1});
    eta.finished(2, {1.104, 0.001, 1, 1e-3, 1});       // 1.1 s: 1 s for 1e8 bytes
    eta.finished(3, {1.104, 0.001, 1, 1e-3, 1});
    EXPECT_NEAR(eta.seconds_left(), 0.1 + 4e8 * 1e-8 + 3e-3 + 1e-3, 1e-6);
}

// An entry's kind for its speed keeps its op, flags, variant and dtype and
// leaves out its sizes, backend and case name: naive's x W^T products are
// not timed by its square ones, nor a 1-row product by a 2048-row one.
TEST(RunEta, AKindIsTheNameWithoutSizesBackendOrCaseName) {
    EXPECT_EQ(eta_kind("matmul/B:1/M:2048/N:4096/K:4096/tB:1/bias:1/variant:default/dt:bf16/be:naive/case:linear.4096x4096"),
              "matmul/B:1/M:#/N:#/K:#/tB:1/bias:1/variant:default/dt:bf16");
    EXPECT_EQ(eta_kind("matmul/B:1/M:1/N:4096/K:4096/tB:1/variant:default/dt:f32/be:onednn/case:linear.decode"),
              "matmul/B:1/M:1/N:#/K:#/tB:1/variant:default/dt:f32");
    EXPECT_NE(eta_kind("matmul/B:1/M:512/N:512/K:512/variant:default/dt:f32/be:naive/case:square"),
              eta_kind("matmul/B:1/M:2048/N:768/K:3072/tB:1/bias:1/variant:default/dt:f32/be:naive/case:linear.3072x768"));
    EXPECT_EQ(eta_kind("rope/B:1/H:4/KVH:2/S:16/D:32/theta:10000/variant:half_split/dt:f32/be:naive"),
              "rope/B:1/H:#/KVH:#/S:#/D:#/theta:#/variant:half_split/dt:f32");
    EXPECT_EQ(eta_kind("add/R:0/C:10/dt:f32/be:x"), "add/R:0/C:#/dt:f32");
}
