#include "run/paired_set.hpp"

#include "measure/entry_summary.hpp"
#include "writers/result_schema.hpp"

namespace opbench {

namespace {

// The summary as every reader computes it from a set (measure/entry_summary.hpp),
// here from the records themselves.
EntrySummary summary_of(const CaseResult &result, const nlohmann::json &first_iteration,
                        const nlohmann::json &context) {
    std::vector<RepetitionFigures> reps;
    for (const RepetitionRecord &rec : result.repetitions) reps.push_back(repetition_figures(rec));
    return summarize_entry(reps, entry_conditions(first_iteration, context));
}

} // namespace

std::vector<nlohmann::json> paired_entry_records(Entry &entry, const nlohmann::json &context, const RunFacts &facts,
                                                 const PairedTimes &times, PairSide side,
                                                 const std::string &other_name) {
    std::vector<nlohmann::json> records = result_entries(entry);
    if (entry.result.status != CaseStatus::passed) return records;
    entry.result.summary = summary_of(entry.result, records.front(), context);
    const nlohmann::json summary = entry.result.summary->to_json();
    const nlohmann::json metrics = entry_metrics_json(metric_inputs(entry));
    const std::optional<Bottleneck> bottleneck = entry_bottleneck(*entry.result.summary, entry.bottleneck_facts(), facts);
    for (auto &r : records) {
        if (r.value("run_type", "") != "iteration") continue; // Google Benchmark's aggregates have their own
        r["summary"] = summary;
        r["metrics"] = metrics;
        if (bottleneck) r["bottleneck"] = to_json(*bottleneck);
        const std::size_t block = r["repetition_index"].get<std::size_t>() / 2;
        const long pair = block < times.pair_of_block.size() ? times.pair_of_block[block] : -1;
        if (pair < 0 || std::size_t(pair) >= times.base_times.size()) continue; // a starved block: no pair
        r["pair"] = {{"index", pair},
                     {"role", side == PairSide::base ? "base" : "new"},
                     {"with", run_name_of(other_name)},
                     {"base_time", times.base_times[std::size_t(pair)]},
                     {"new_time", times.new_times[std::size_t(pair)]}};
    }
    return records;
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
