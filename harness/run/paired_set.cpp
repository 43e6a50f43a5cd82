#include "run/paired_set.hpp"

#include "writers/result_schema.hpp"

namespace opbench {

void add_pairs(std::vector<nlohmann::json> &records, const PairedTimes &times, PairSide side,
               const std::string &other_name) {
    for (auto &r : records) {
        if (r.value("run_type", "") != "iteration") continue; // Google Benchmark's aggregates: no pair
        const std::size_t block = r["repetition_index"].get<std::size_t>() / 2;
        const long pair = block < times.pair_of_block.size() ? times.pair_of_block[block] : -1;
        if (block < times.left_out.size() && !times.left_out[block].empty())
            r["pair_left_out"] = times.left_out[block]; // "starved" or "throttled": no pair
        if (pair < 0 || std::size_t(pair) >= times.base_times.size()) continue; // a block left out: no pair
        r["pair"] = {{"index", pair},
                     {"role", side == PairSide::base ? "base" : "new"},
                     {"with", run_name_of(other_name)},
                     {"base_time", times.base_times[std::size_t(pair)]},
                     {"new_time", times.new_times[std::size_t(pair)]}};
    }
}

nlohmann::json paired_context(const PairedRunOptions &o, const PluginSet &plugins) {
    return {{"base", o.base},
            {"new", o.next},
            {"base_plugin", plugins.find(o.base)->path},
            {"new_plugin", plugins.find(o.next)->path},
            {"order", "ABBA, BAAB alternately (A = base); a pair is each side's mean over one block"},
            {"pairs_per_case", o.pairs},
            {"seconds_per_repetition", o.half_seconds},
            {"threshold", o.verdict.threshold},
            {"alpha", o.verdict.alpha}};
}

} // namespace opbench
