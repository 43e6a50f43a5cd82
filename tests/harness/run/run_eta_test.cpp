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
// min_time) and onednn (100 GFLOP/s: repetitions stop at min_time), each
// shape's naive entry then its onednn one, as a run orders them.
struct Synthetic {
    std::vector<EntryPlan> plan;
    std::vector<double> cost; // what each entry "really" takes, seconds
};

Synthetic gemm_like() {
    Synthetic s;
    for (double n : {512.0, 1024.0, 2048.0})
        for (int dtype = 0; dtype < 2; ++dtype)
            for (const auto &[backend, flop_per_s] : {std::pair{"naive", 1e9}, std::pair{"onednn", 1e11}}) {
                EntryPlan p{backend, 3, n == 2048 ? 1 : 2, n == 2048 ? 3 : 5, 0.5, 5.0, 2 * n * n * n};
                const double call = p.flops / flop_per_s * (dtype ? 1.5 : 1.0);
                // Repetitions run to max_time when the noise target is missed
                // (onednn here): 5 s, not min_time's 0.5 s.
                const double rep = backend == std::string("onednn") ? p.max_time
                                                                     : std::clamp(p.min_samples * call, p.min_time, p.max_time);
                s.cost.push_back(0.1 + p.repetitions * std::max(call, rep) + (p.warmup + 1) * call);
                s.plan.push_back(p);
            }
    return s;
}

double call_of(const Synthetic &s, std::size_t k) {
    return s.plan[k].flops / (s.plan[k].backend == "naive" ? 1e9 : 1e11) * ((k / 2) % 2 ? 1.5 : 1.0);
}

} // namespace

TEST(RunEta, UnknownBeforeAnEntryFinished) {
    RunEta eta({{"naive", 3, 1, 5, 0.1, 1.0, 1e6}});
    EXPECT_LT(eta.seconds_left(), 0);
    eta.finished(0, 1.0, 1e-3);
    EXPECT_EQ(eta.seconds_left(), 0);
}

// Equal entries: the estimate is what each took times how many are left.
TEST(RunEta, EqualEntriesGiveTheAverage) {
    RunEta eta(std::vector<EntryPlan>(8, EntryPlan{"naive", 9, 2, 5, 0.03, 0.15, 1e5}));
    eta.finished(0, 2.0, 1e-5);
    eta.finished(1, 2.0, 1e-5);
    EXPECT_NEAR(eta.seconds_left(), 6 * 2.0, 1e-9);
}

// Issue 30: after a quarter of the run, within +-30% of the time really
// left, at every later entry too; the old elapsed/done estimate was not.
TEST(RunEta, HoldsWithinThirtyPercentAfterAQuarterOfAGemmLikeRun) {
    const Synthetic s = gemm_like();
    double total = 0;
    for (double c : s.cost) total += c;
    RunEta eta(s.plan);
    double elapsed = 0;
    bool old_was_off = false;
    for (std::size_t k = 0; k + 1 < s.plan.size(); ++k) {
        eta.finished(k, s.cost[k], call_of(s, k));
        elapsed += s.cost[k];
        const double actual = total - elapsed;
        const double old = elapsed / double(k + 1) * double(s.plan.size() - k - 1);
        if (elapsed < total / 4) continue;
        EXPECT_NEAR(eta.seconds_left() / actual, 1.0, 0.30) << "after entry " << k << ": " << eta.seconds_left()
                                                             << " s estimated, " << actual << " s left";
        old_was_off = old_was_off || std::abs(old / actual - 1) > 0.30;
    }
    EXPECT_TRUE(old_was_off) << "the synthetic run should be one the per-entry average gets wrong";
}

// A backend with no finished entry yet is scaled as the run so far is.
TEST(RunEta, AnUnseenBackendTakesTheRunsScale) {
    RunEta eta({{"naive", 1, 0, 1, 1.0, 1.0, 0}, {"onednn", 1, 0, 1, 1.0, 1.0, 0}});
    eta.finished(0, 2 * eta.expected(0), NAN);
    EXPECT_NEAR(eta.seconds_left(), 2 * eta.expected(1), 1e-9);
}

// The work of a call counts once its backend's speed is known: a case with
// 8x the FLOPs whose calls outlast min_time is expected to cost more.
TEST(RunEta, WorkPerCallCountsOnceTheBackendsSpeedIsKnown) {
    RunEta eta({{"naive", 3, 1, 5, 0.1, 10.0, 1e9}, {"naive", 3, 1, 5, 0.1, 10.0, 8e9}});
    const double before = eta.expected(1);
    eta.finished(0, 20.0, 1.0); // 1 ns per FLOP
    EXPECT_GT(eta.expected(1), 10 * before);
    EXPECT_NEAR(eta.expected(1), 0.02 + 3 * 10.0 + 2 * 8.0, 1e-6); // repetitions held at max_time
}
