// harness/readers/analyze.{hpp,cpp}: reading a result set (entries grouped per case
// x backend, failed ones left out), verdicts computed from the figures or
// taken from the run, ranking by time x headroom, attention's component
// breakdown, and the command's exit status on bad input.
#include "readers/analyze.hpp"
#include "writers/result_schema.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace opbench {
namespace {

nlohmann::json context() {
    MachinePeaks m;
    m.cores = 2;
    m.one_thread = {1, 100.0, 200.0, 20.0, 25.0};
    m.all_threads = {2, 200.0, 400.0, 30.0, 35.0};
    return {{"schema_version", kResultSchemaVersion}, // analyze reads only what every reader reads (issue 44)
            {"machine_peaks", m},
            {"measurement", {{"call_overhead_seconds", {{"naive", 1e-7}, {"onednn", 2e-6}}}}},
            {"backends",
             {{"naive", {{"device", {{"kind", "cpu"}}}, {"info", {{"threads", "1"}}}}},
              {"onednn", {{"device", {{"kind", "cpu"}}}, {"info", {{"default_threads", "2"}}}}}}}};
}

nlohmann::json entry(const std::string &name, const std::string &op, const std::string &backend, double median,
                     double flops, double bytes) {
    return {{"name", name + "/manual_time"},
            {"run_name", name + "/manual_time"},
            {"run_type", "iteration"},
            {"op", op},
            {"backend", backend},
            {"dtype", "f32"},
            {"variant", "default"},
            {"status", "passed"},
            {"flops", flops},
            {"bytes", bytes},
            {"settings", {{"threads", 0}}},
            {"memory", {{"allocs_per_call", 0.0}, {"alloc_bytes_per_call", 0.0}}},
            {"stats", {{"median", median}, {"device_time_per_call", nullptr}}}};
}

// qk 4 s, mask 1 s, softmax 3 s, pv 1.5 s under an `attention` scope of 10 s.
nlohmann::json attention_profile() {
    auto node = [](const char *scope, const char *path, const char *parent, double total, double self) {
        return nlohmann::json{
            {"scope", scope},   {"path", path}, {"parent", parent ? nlohmann::json(parent) : nlohmann::json()},
            {"kind", "plugin"}, {"calls", 1},   {"total_s", total},
            {"self_s", self}};
    };
    return {node("sample", "sample", nullptr, 10.5, 0.5),
            node("attention", "sample/attention", "sample", 10.0, 0.5),
            node("qk", "sample/attention/qk", "sample/attention", 4.0, 4.0),
            node("mask", "sample/attention/mask", "sample/attention", 1.0, 1.0),
            node("softmax", "sample/attention/softmax", "sample/attention", 3.0, 3.0),
            node("pv", "sample/attention/pv", "sample/attention", 1.5, 1.5)};
}

nlohmann::json result_set() {
    nlohmann::json set = {{"context", {{"opbench", context()}}}, {"benchmarks", nlohmann::json::array()}};
    auto &b = set["benchmarks"];
    // A big add on naive (1 thread): 3 repetitions, median of medians 1 ms: 12 GB/s of 20.
    for (double m : {1.2e-3, 1e-3, 0.9e-3}) b.push_back(entry("add/big/be:naive", "add", "naive", m, 1e6, 12e6));
    b.push_back({{"name", "add/big/be:naive_median"},
                 {"run_name", "add/big/be:naive/manual_time"},
                 {"run_type", "aggregate"},
                 {"real_time", 5.0},
                 {"time_unit", "s"}});
    // A tiny add on onednn: 3 us against a 2 us fixed cost.
    b.push_back(entry("add/tiny/be:onednn", "add", "onednn", 3e-6, 1e3, 12e3));
    // Attention with a profile and a verdict written by the run.
    nlohmann::json att = entry("attention/x/be:naive", "attention", "naive", 0.5, 1e9, 1e6);
    att["variant"] = "composed";
    att["profile"] = attention_profile();
    att["bottleneck"] = {{"kind", "unoptimised"},         {"severity", "high"},
                         {"utilisation", 0.02},           {"headroom", 0.98},
                         {"description", "from the run"}, {"suggestion", "use onednn"}};
    b.push_back(att);
    // A failed case is not analysed.
    nlohmann::json failed = entry("softmax/bad/be:naive", "softmax", "naive", 1.0, 1, 1);
    failed["status"] = "failed";
    failed["error_occurred"] = true;
    b.push_back(failed);
    return set;
}

TEST(Analyze, GroupsRepetitionsRanksAndLeavesFailedOut) {
    const auto entries = analyse_result_set(result_set(), "set.json");
    ASSERT_EQ(entries.size(), 3u);
    // Impact: attention 0.5 x 0.98, add 1 ms x 0.4 headroom... largest first.
    EXPECT_EQ(entries[0].name, "attention/x/be:naive");
    EXPECT_EQ(entries[1].name, "add/big/be:naive");
    EXPECT_EQ(entries[2].name, "add/tiny/be:onednn");
    EXPECT_DOUBLE_EQ(entries[1].seconds, 1e-3); // median of 1.2, 1.0, 0.9 ms; the aggregate is ignored
}

TEST(Analyze, VerdictsFromFiguresAndFromTheRun) {
    const auto entries = analyse_result_set(result_set(), "set.json");
    EXPECT_TRUE(entries[0].from_run);
    EXPECT_EQ(entries[0].bottleneck.description, "from the run");
    EXPECT_FALSE(entries[1].from_run);
    EXPECT_EQ(entries[1].bottleneck.kind, "memory-bound");
    EXPECT_NEAR(entries[1].bottleneck.utilisation, 0.6, 1e-9); // naive: judged against 1 thread
    EXPECT_NE(entries[1].bottleneck.description.find("CPU, 1 thread"), std::string::npos);
    EXPECT_EQ(entries[2].bottleneck.kind, "overhead");
}

TEST(Analyze, FiguresFromEntryUseTheBackendsThreadsAndOverhead) {
    const nlohmann::json ctx = context();
    const EntryFigures f = figures_from_entry(entry("a", "add", "onednn", 1e-3, 1, 1), ctx, 1e-3);
    EXPECT_EQ(f.threads, 2);
    EXPECT_DOUBLE_EQ(f.call_overhead_s, 2e-6);
    ASSERT_TRUE(f.peaks);
    EXPECT_DOUBLE_EQ(f.peaks->bytes_per_s, 30e9);
    EXPECT_FALSE(f.is_gpu);
}

// Issue 17: analyze judges a warm-cache CPU case against the roof of the
// cache level its bytes per call fit (the run's `roofline` rule), not DRAM's,
// so a small in-cache add at its L2 roof is told it is near that roof rather
// than "faster than memory"; a cold-cache case still reads DRAM's roof.
TEST(Analyze, WarmSmallCaseIsJudgedAgainstItsCacheLevelsRoof) {
    nlohmann::json ctx = context();
    MachinePeaks m = ctx["machine_peaks"].get<MachinePeaks>();
    m.cache_roofs = {{"L1d", 32768, 1, 200.0, 350.0}, {"L2", 1 << 20, 1, 100.0, 180.0}};
    ctx["machine_peaks"] = m;
    // 48 KB per call (more than L1d, less than L2) in 0.6 us: 82 GB/s on one
    // thread, 82% of L2's 100 GB/s and 4.1x DRAM's 20 GB/s.
    nlohmann::json warm = entry("add/small/be:naive", "add", "naive", 0.6e-6, 12288, 49152);
    warm["settings"]["cache"] = "warm";
    const EntryFigures f = figures_from_entry(warm, ctx, 0.6e-6);
    ASSERT_TRUE(f.peaks);
    EXPECT_EQ(f.peaks->bandwidth_roof, "L2");
    EXPECT_DOUBLE_EQ(f.peaks->bytes_per_s, 100e9);
    const Bottleneck b = analyse(f);
    EXPECT_EQ(b.kind, "memory-bound");
    EXPECT_NEAR(b.utilisation, 0.8192, 1e-9);
    EXPECT_EQ(b.severity, "low");
    EXPECT_NE(b.description.find("CPU, 1 thread, L2"), std::string::npos) << b.description;
    EXPECT_EQ(b.description.find("faster than memory"), std::string::npos) << b.description;

    // The same case measured with a cold cache: DRAM's roof, and it beats it.
    nlohmann::json cold = warm;
    cold["settings"]["cache"] = "cold";
    const EntryFigures fc = figures_from_entry(cold, ctx, 0.6e-6);
    ASSERT_TRUE(fc.peaks);
    EXPECT_EQ(fc.peaks->bandwidth_roof, "DRAM");
    EXPECT_DOUBLE_EQ(fc.peaks->bytes_per_s, 20e9);
    EXPECT_NE(analyse(fc).description.find("faster than memory"), std::string::npos);

    // Through the whole set, as `opbench analyze` reads it.
    nlohmann::json set = {{"context", {{"opbench", ctx}}}, {"benchmarks", {warm}}};
    const auto entries = analyse_result_set(set, "set.json");
    ASSERT_EQ(entries.size(), 1u);
    EXPECT_EQ(entries[0].bottleneck.kind, "memory-bound");
    EXPECT_NE(entries[0].bottleneck.description.find("L2"), std::string::npos);
}

TEST(Analyze, AttentionBreakdownSharesAddUpWithTheParentsSelfTime) {
    const auto c = component_breakdown(attention_profile(), variant_components("attention", "composed"));
    ASSERT_TRUE(c);
    EXPECT_EQ(c->parent, "sample/attention");
    ASSERT_EQ(c->shares.size(), 4u);
    EXPECT_EQ(c->shares[0].first, "qk");
    EXPECT_DOUBLE_EQ(c->shares[0].second, 0.4);
    EXPECT_EQ(c->dominant, "qk");
    double sum = c->other;
    for (const auto &[name, share] : c->shares) sum += share;
    EXPECT_NEAR(sum, 1.0, 1e-12);
    EXPECT_FALSE(component_breakdown(nlohmann::json::array(), variant_components("attention", "composed")));
    EXPECT_FALSE(component_breakdown(nlohmann::json::object(), variant_components("attention", "composed")));
}

TEST(Analyze, TablesNameKindSeveritySuggestionAndComponents) {
    const auto tables = analysis_tables(analyse_result_set(result_set(), "set.json"), 10);
    ASSERT_EQ(tables.size(), 2u);
    EXPECT_EQ(tables[0].rows.size(), 3u);
    // Default (100 columns): the backend in its own column, no severity column.
    EXPECT_EQ(tables[0].rows[1][2], "naive");
    EXPECT_EQ(tables[0].rows[1][3], "memory-bound");
    const auto wide = analysis_tables(analyse_result_set(result_set(), "set.json"), 10, true);
    EXPECT_EQ(wide[0].rows[1][2], "memory-bound");
    EXPECT_EQ(wide[0].rows[1][3], "low"); // 60% of the roof: the low band starts there
    EXPECT_EQ(tables[1].rows[0][2].rfind("unoptimised (high)", 0), 0u) << "the details keep the severity";
    bool components = false;
    for (const auto &row : tables[1].rows)
        if (row[1] == "components") {
            components = true;
            EXPECT_NE(row[2].find("qk 40.0%"), std::string::npos) << row[2];
            EXPECT_NE(row[2].find("dominant: qk"), std::string::npos) << row[2];
        }
    EXPECT_TRUE(components);
}

// Which scopes are components comes from the op table: composed attention
// names four, fused none, and an op the table does not know none.
TEST(Analyze, ComponentsAreTheScopesTheOpTableNames) {
    const auto composed = variant_components("attention", "composed");
    ASSERT_EQ(composed.size(), 4u);
    EXPECT_STREQ(composed[0], "qk");
    EXPECT_STREQ(composed[3], "pv");
    EXPECT_TRUE(variant_components("attention", "fused").empty());
    EXPECT_TRUE(variant_components("no-such-op", "").empty());
    EXPECT_FALSE(component_breakdown(attention_profile(), variant_components("attention", "fused")));
}

// A decoder workload entry: its layer's components (decoder.components, from
// the component spans) with the unscoped rest and the dominant one.
TEST(Analyze, DecoderEntriesShowTheirLayerComponents) {
    nlohmann::json set = result_set();
    nlohmann::json dec = entry("decoder/w/phase:decode/be:naive", "decoder", "naive", 2e-3, 1e6, 1e6);
    dec["decoder"] = nlohmann::json::object();
    dec["decoder"]["components"] =
        nlohmann::json::array({{{"component", "qkv"}, {"share", 0.3}}, {{"component", "mlp_in"}, {"share", 0.6}}});
    dec["decoder"]["components_unscoped_share"] = 0.1;
    set["benchmarks"].push_back(dec);
    const auto entries = analyse_result_set(set, "set.json");
    std::size_t i = 0;
    while (i < entries.size() && entries[i].op != "decoder") ++i;
    ASSERT_LT(i, entries.size());
    ASSERT_TRUE(entries[i].layer);
    EXPECT_EQ(entries[i].layer->dominant, "mlp_in");
    EXPECT_DOUBLE_EQ(entries[i].layer->other, 0.1);
    for (const auto &e : entries) {
        if (e.op != "decoder") {
            EXPECT_FALSE(e.layer) << e.name;
        }
    }
    bool layer_row = false;
    const auto tables = analysis_tables(entries, 10);
    for (const auto &row : tables[1].rows)
        if (row[1] == "layer") {
            layer_row = true;
            EXPECT_EQ(row[2], "qkv 30.0%, mlp_in 60.0%, unscoped 10.0% (of the steps' time); dominant: mlp_in");
        }
    EXPECT_TRUE(layer_row);
}

TEST(Analyze, BadInputExits2WithTheReason) {
    std::ostringstream out, err;
    EXPECT_EQ(cmd_analyze("/nonexistent/set.json", 5, out, err), 2);
    EXPECT_NE(err.str().find("/nonexistent/set.json: cannot open (No such file"), std::string::npos) << err.str();

    const auto dir = std::filesystem::temp_directory_path();
    const auto not_json = dir / "opbench-analyze-test-not-json.json";
    std::ofstream(not_json) << "{ nope";
    err.str("");
    EXPECT_EQ(cmd_analyze(not_json.string(), 5, out, err), 2);
    EXPECT_NE(err.str().find("not valid JSON"), std::string::npos) << err.str();

    const auto no_set = dir / "opbench-analyze-test-no-set.json";
    std::ofstream(no_set) << "{\"a\": 1}";
    err.str("");
    EXPECT_EQ(cmd_analyze(no_set.string(), 5, out, err), 2);
    EXPECT_NE(err.str().find("not a result set"), std::string::npos);

    const auto good = dir / "opbench-analyze-test-good.json";
    std::ofstream(good) << result_set().dump();
    out.str("");
    EXPECT_EQ(cmd_analyze(good.string(), 5, out, err), 0) << err.str();
    EXPECT_NE(out.str().find("#1 attention/x [naive]"), std::string::npos) << out.str();
    out.str("");
    EXPECT_EQ(cmd_analyze(good.string(), 5, out, err, "console", true), 0) << err.str(); // --wide: the full names
    EXPECT_NE(out.str().find("#1 attention/x/be:naive"), std::string::npos) << out.str();
    EXPECT_NE(out.str().find("suggestion:"), std::string::npos);
    for (const auto &p : {not_json, no_set, good}) std::filesystem::remove(p);
}

// --format: each writer gets the same document; the json one holds the
// ranked entries as data, the table ones the ranking and details tables.
TEST(Analyze, EveryFormatIsWrittenByItsWriter) {
    const auto good = std::filesystem::temp_directory_path() / "opbench-analyze-test-formats.json";
    std::ofstream(good) << result_set().dump();
    std::ostringstream out, err;
    ASSERT_EQ(cmd_analyze(good.string(), 2, out, err, "json"), 0) << err.str();
    const auto j = nlohmann::json::parse(out.str());
    EXPECT_EQ(j["result_set"], good.string());
    ASSERT_EQ(j["entries"].size(), 2u); // --top 2 of the measured ones
    EXPECT_GT(j["measured"].get<std::size_t>(), 2u);
    EXPECT_EQ(j["entries"][0]["rank"], 1);
    EXPECT_EQ(j["entries"][0]["name"], "attention/x/be:naive");
    EXPECT_FALSE(j["entries"][0]["bottleneck"]["suggestion"].get<std::string>().empty());
    EXPECT_GE(j["entries"][0]["could_save_seconds"].get<double>(), j["entries"][1]["could_save_seconds"].get<double>());

    out.str("");
    ASSERT_EQ(cmd_analyze(good.string(), 2, out, err, "csv"), 0) << err.str();
    EXPECT_EQ(
        out.str().rfind("#,case x backend,kind,severity,utilisation,time/call,could save,quality\r\n1,attention/x/be:naive,", 0),
        0u)
        << out.str();
    out.str("");
    ASSERT_EQ(cmd_analyze(good.string(), 2, out, err, "markdown"), 0) << err.str();
    EXPECT_NE(out.str().find("| # | case x backend | kind | severity |"), std::string::npos) << out.str();
    EXPECT_NE(out.str().find("| 1 | suggestion |"), std::string::npos) << out.str();

    err.str("");
    EXPECT_EQ(cmd_analyze(good.string(), 2, out, err, "yaml"), 2);
    EXPECT_NE(err.str().find("--format yaml: unknown (choose: json,"), std::string::npos) << err.str();
    err.str("");
    EXPECT_EQ(cmd_analyze(good.string(), 2, out, err, "chrome-trace"), 2);
    EXPECT_NE(err.str().find("use the json format"), std::string::npos) << err.str();
    std::filesystem::remove(good);
}

} // namespace
} // namespace opbench

namespace opbench {
namespace {

TEST(AddBottlenecks, EveryMeasuredEntryOfACaseGetsTheSameVerdict) {
    nlohmann::json set = result_set();
    set["benchmarks"][5].erase("bottleneck"); // the attention entry: computed like the others now
    add_bottlenecks(set);
    int with = 0;
    for (const auto &e : set["benchmarks"]) {
        if (e.value("run_type", "") == "aggregate" || e.value("status", "") == "failed") {
            EXPECT_FALSE(e.contains("bottleneck")) << e.dump();
            continue;
        }
        ASSERT_TRUE(e.contains("bottleneck")) << e.dump();
        for (const char *k : {"kind", "severity", "utilisation", "headroom", "description", "suggestion"})
            EXPECT_TRUE(e["bottleneck"].contains(k)) << k;
        ++with;
    }
    EXPECT_EQ(with, 5);
    EXPECT_EQ(set["benchmarks"][0]["bottleneck"], set["benchmarks"][2]["bottleneck"]);
    EXPECT_EQ(set["benchmarks"][0]["bottleneck"]["kind"], "memory-bound");
    // analyze then reads the run's verdicts.
    EXPECT_TRUE(analyse_result_set(set, "s").front().from_run);
}

} // namespace
} // namespace opbench
