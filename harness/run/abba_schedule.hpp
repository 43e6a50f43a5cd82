// The order in which `opbench ab` measures a case's repetitions, and the
// pairs read back from the repetition records that order produced.
//
// Blocks of four repetitions, ABBA then BAAB, and so on (A = base, B =
// new): a linear drift within a block adds the same to both sides, so it
// cancels in the block's pair (mean of the two A times, mean of the two B
// times). Block p runs in worker pool p % pools (paired_sides.hpp).
#pragma once

#include "measure/records.hpp"

#include <cstddef>
#include <span>
#include <string>
#include <vector>

namespace opbench {

enum class PairSide { base, next };

// One repetition of the schedule: which side, in which block and pool.
struct AbbaStep {
    PairSide side = PairSide::base;
    std::size_t block = 0;
    std::size_t pool = 0;
};

// Every repetition of a case, in the order they are measured: 4 x `pairs`
// steps. Block p holds repetitions 2p and 2p+1 of each side.
[[nodiscard]] std::vector<AbbaStep> abba_schedule(int pairs, int pools);

// The pairs of one case, from each side's repetition records in schedule
// order.
struct PairedTimes {
    std::vector<double> base_times, new_times; // per pair, seconds per call
    std::vector<long> pair_of_block;           // each whole block's pair index; -1: a block left out, no pair
    std::vector<std::string> left_out;         // per whole block: "" (paired), "starved" or "throttled"
    std::size_t starved_blocks = 0;            // a repetition stayed starved (measure/starvation.hpp)
    std::size_t throttled_blocks = 0;          // none starved, one stayed throttled (measure/throttle.hpp)
    // Whole blocks (both sides' two repetitions): fewer than the pairs asked means interrupted.
    [[nodiscard]] std::size_t blocks() const { return pair_of_block.size(); }
};

// A block's pair is each side's mean of its two repetition medians; a block
// with a starved repetition timed the machine and gives none, nor does one
// with a throttled repetition (it timed the device's fallen clock); a last
// block lacking a repetition (interrupted) is not counted.
[[nodiscard]] PairedTimes paired_times(std::span<const RepetitionRecord> base, std::span<const RepetitionRecord> next);

} // namespace opbench
