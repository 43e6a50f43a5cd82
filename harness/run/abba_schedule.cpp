#include "run/abba_schedule.hpp"

#include <algorithm>

namespace opbench {

std::vector<AbbaStep> abba_schedule(int pairs, int pools) {
    std::vector<AbbaStep> steps;
    constexpr PairSide A = PairSide::base, B = PairSide::next;
    for (int p = 0; p < pairs; ++p) {
        const auto block = std::size_t(p), pool = std::size_t(p % std::max(1, pools));
        const PairSide order[4] = {p % 2 == 0 ? A : B, p % 2 == 0 ? B : A, p % 2 == 0 ? B : A, p % 2 == 0 ? A : B};
        for (PairSide side : order) steps.push_back({side, block, pool});
    }
    return steps;
}

PairedTimes paired_times(std::span<const RepetitionRecord> base, std::span<const RepetitionRecord> next) {
    PairedTimes t;
    const std::size_t blocks = std::min(base.size(), next.size()) / 2;
    for (std::size_t b = 0; b < blocks; ++b) {
        const RepetitionRecord &a1 = base[2 * b], &a2 = base[2 * b + 1], &b1 = next[2 * b], &b2 = next[2 * b + 1];
        const bool starved = a1.starved || a2.starved || b1.starved || b2.starved;
        if (starved || a1.throttled || a2.throttled || b1.throttled || b2.throttled) {
            ++(starved ? t.starved_blocks : t.throttled_blocks);
            t.pair_of_block.push_back(-1);
            t.left_out.emplace_back(starved ? "starved" : "throttled");
            continue;
        }
        t.pair_of_block.push_back(long(t.base_times.size()));
        t.left_out.emplace_back();
        t.base_times.push_back((a1.summary.median + a2.summary.median) / 2);
        t.new_times.push_back((b1.summary.median + b2.summary.median) / 2);
    }
    return t;
}

} // namespace opbench
