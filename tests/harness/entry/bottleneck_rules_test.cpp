// measure/bottleneck_rules.cpp applied two ways (issue 29): the run's way, on
// an entry's typed records (Entry::bottleneck_facts, the summary from its
// repetition records), and analyze's way, on the same entry's result-set
// entries read back from text (readers/analyze.cpp entry_facts,
// summarize_entry_json). Each scenario must give the same summary and the
// same verdict, field for field; a fact one side reads differently (memory,
// device time, roofline cause, threads, cache) shows up as a difference.
#include "entry/op_case_entry.hpp"
#include "measure/bottleneck_rules.hpp"
#include "readers/analyze.hpp"

#include "opbench/ops.hpp"

#include <gtest/gtest.h>

using namespace opbench;

namespace {

Case small_matmul(CacheState cache, int threads) {
    Case c;
    c.desc = make_desc(OPB_OP_MATMUL, OPB_DTYPE_F32);
    c.desc.p.matmul = {1, 64, 64, 64, 0, 0, 0, 0, 0.0f, 0, 0};
    c.desc.threads = threads > 0 ? threads : 2;
    c.settings.cache = cache;
    c.settings.threads = threads;
    c.settings.noise = 0.02;
    return c;
}

RunFacts run() {
    RunFacts r;
    r.machine.cores = 2;
    r.machine.one_thread = {1, 100.0, 200.0, 20.0, 25.0};
    r.machine.all_threads = {2, 200.0, 400.0, 30.0, 35.0};
    r.backends["onednn"] = {{"device", {{"kind", "cpu"}}}, {"info", {{"default_threads", "2"}}}};
    r.call_overhead_seconds["onednn"] = 2e-6;
    return r;
}

// The set's context as the run writes it (run/result_set.cpp) from the same facts.
nlohmann::json set_context(const RunFacts &r) {
    nlohmann::json backends = nlohmann::json::object();
    for (const auto &[name, context] : r.backends) backends[name] = context;
    return {{"num_cpus", 2},
            {"opbench",
             {{"machine_peaks", r.machine},
              {"backends", backends},
              {"machine", {{"allowed_cores", 2}, {"load_average", {0.5, 0.5, 0.5}}}},
              {"measurement", {{"call_overhead_seconds", r.call_overhead_seconds}}}}}};
}

void add_repetitions(OpCaseEntry &e, std::initializer_list<double> medians, double device_seconds) {
    for (double m : medians) {
        RepetitionRecord rec;
        rec.summary.n = 40;
        rec.summary.median = m;
        rec.summary.min = m * 0.9;
        rec.summary.noise = 0.01;
        rec.target_met = true;
        rec.device_seconds_per_call = device_seconds;
        e.result.repetitions.push_back(rec);
    }
}

// Both ways on one entry: the verdicts (and summaries) must be equal.
void expect_same_verdict(OpCaseEntry &e, const char *expected_kind) {
    const RunFacts facts = run();
    const nlohmann::json context = set_context(facts);
    // The run's way: records only.
    std::vector<RepetitionFigures> reps;
    for (const auto &rec : e.result.repetitions) reps.push_back(repetition_figures(rec));
    const EntrySummary summary = summarize_entry(
        reps, entry_conditions(e.settings().noise, e.call_work().threads, e.backend(), context));
    const std::optional<Bottleneck> verdict = entry_bottleneck(summary, e.bottleneck_facts(), facts);
    ASSERT_TRUE(verdict);
    EXPECT_EQ(verdict->kind, expected_kind);
    // The reader's way: the entry's result-set entries, read back from text.
    nlohmann::json set = {{"context", context}, {"benchmarks", nlohmann::json::array()}};
    for (const auto &j : result_entries(e)) set["benchmarks"].push_back(nlohmann::json::parse(j.dump()));
    set = nlohmann::json::parse(set.dump());
    const std::vector<AnalyzedEntry> read = analyse_result_set(set, "test.json");
    ASSERT_EQ(read.size(), 1u);
    EXPECT_FALSE(read[0].from_run) << "no verdict in the set: analyze computed its own";
    EXPECT_EQ(read[0].summary.to_json(), summary.to_json());
    EXPECT_EQ(to_json(read[0].bottleneck), to_json(*verdict));
    add_bottlenecks(set);
    EXPECT_EQ(set["benchmarks"][0]["bottleneck"], to_json(*verdict));
}

TEST(BottleneckRules, RecordsAndTheirResultSetGiveTheSameRooflineVerdict) {
    const Case c = small_matmul(CacheState::warm, 0);
    OpCaseEntry e(c, 0, "onednn", "naive");
    add_repetitions(e, {40e-6, 41e-6, 42e-6}, -1);
    expect_same_verdict(e, "unoptimised");
}

TEST(BottleneckRules, ColdCacheOneThreadAndAllocationChurnReadTheSameBothWays) {
    const Case c = small_matmul(CacheState::cold, 1);
    OpCaseEntry e(c, 0, "onednn", "naive");
    add_repetitions(e, {10e-6, 10.2e-6, 10.1e-6}, -1);
    e.result.memory.allocs_per_call = 40; // 4 us of malloc in a 10 us call
    e.result.memory.alloc_bytes_per_call = 1 << 20;
    expect_same_verdict(e, "allocation-churn");
}

TEST(BottleneckRules, DeviceTimeOfTheFirstRepetitionReadsTheSameBothWays) {
    Case c = small_matmul(CacheState::warm, 0);
    OpCaseEntry e(c, 0, "onednn", "naive");
    add_repetitions(e, {40e-6, 41e-6, 42e-6}, 1e-6);
    EXPECT_EQ(e.bottleneck_facts().device_seconds, 1e-6);
    expect_same_verdict(e, "unoptimised");
}

TEST(BottleneckRules, ADisturbedEntryGetsTheRemedyBothWays) {
    const Case c = small_matmul(CacheState::warm, 0);
    OpCaseEntry e(c, 0, "onednn", "naive");
    add_repetitions(e, {40e-6, 41e-6, 400e-6, 410e-6}, -1); // two populations: bimodal
    expect_same_verdict(e, "disturbed");
}

} // namespace
