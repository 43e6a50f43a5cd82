#include "readers/level_table.hpp"

#include "../parsed_fake_set.hpp"
#include "../metric_text.hpp"
#include "readers/tidy_records.hpp"

#include <gtest/gtest.h>

using namespace opbench;
using namespace opbench::test;

namespace {

// A case on naive at 10 us and on onednn at 2.5 us (4x).
std::pair<FakeCase, FakeCase> naive_and_onednn() {
    FakeCase naive;
    naive.medians = reps(1e-5);
    FakeCase onednn = naive;
    onednn.backend = "onednn";
    onednn.medians = reps(2.5e-6);
    return {naive, onednn};
}
} // namespace

TEST(LevelTable, ByBackendGivesSpeedUpsAgainstTheBaseline) {
    FakeSet s;
    auto [naive, onednn] = naive_and_onednn();
    FakeCase skipped;
    onednn.bound = "compute-bound";
    onednn.pct_compute = 42.0;
    skipped.op = "silu";
    skipped.backend = "onednn";
    skipped.status = "skipped";
    skipped.reason = "not built";
    FakeCase silu_naive = naive;
    silu_naive.op = "silu";
    s.cases = {naive, onednn, silu_naive, skipped};
    const Document d = by_backend({parsed_set(s, "q")}, {});
    ASSERT_EQ(d.tables.size(), 1u);
    const Table &t = d.tables[0];
    // Default layout (fits 100 columns): time and % peak per backend, a
    // speed-up for all but the baseline, one quality column.
    EXPECT_EQ(t.columns,
              (std::vector<std::string>{"case", "naive", "% peak", "onednn", "speed-up", "% peak", "quality"}));
    ASSERT_EQ(t.rows.size(), 2u);
    EXPECT_EQ(t.rows[0][4], "4x");
    EXPECT_EQ(t.rows[0][5], "42% flop");
    EXPECT_EQ(t.rows[0][6], "clean");
    EXPECT_EQ(t.rows[1][3], "skipped"); // no time, no speed-up
    EXPECT_EQ(t.rows[1][4], "-");
    EXPECT_EQ(t.rows[1][6], "clean") << "the naive side's quality; the skipped side has none";
    // --wide: today's columns per backend, and a quality per backend.
    LevelOptions wide;
    wide.wide = true;
    const Document wide_doc = by_backend({parsed_set(s, "q")}, wide);
    const Table &w = wide_doc.tables[0];
    EXPECT_EQ(w.columns[1], "naive time");
    EXPECT_EQ(w.columns[6], "onednn time");
    EXPECT_EQ(w.rows[0][2], "1x");
    EXPECT_EQ(w.rows[0][7], "4x");
    EXPECT_EQ(w.rows[0][8], "42% flop");
    EXPECT_EQ(w.rows[0][9], "compute");
    EXPECT_EQ(w.rows[0][10], "clean");
    EXPECT_EQ(w.rows[1][6], "skipped");
    EXPECT_EQ(w.rows[1][10], "-");
    EXPECT_NEAR(d.data["geomean_speedup"]["onednn"]["speedup"].get<double>(), 4.0, 1e-9);
    bool reason_noted = false;
    for (const auto &n : t.notes)
        if (n.find("not built") != std::string::npos) reason_noted = true;
    EXPECT_TRUE(reason_noted);
}

// A backend with no time in any row (cuda where no GPU is: every case
// skipped) gets no columns in the default table, only a header line and its
// reason; --wide and the JSON keep it.
TEST(LevelTable, ABackendThatTimedNothingIsNotGivenColumns) {
    FakeSet s;
    const auto [naive, onednn] = naive_and_onednn();
    FakeCase cuda = naive;
    cuda.backend = "cuda";
    cuda.status = "skipped";
    cuda.reason = "no CUDA driver";
    FakeCase silu_naive = naive, silu_cuda = cuda;
    silu_naive.op = silu_cuda.op = "silu";
    s.cases = {naive, onednn, cuda, silu_naive, silu_cuda};
    const Document d = by_backend({parsed_set(s, "q")}, {});
    const Table &t = d.tables.at(0);
    EXPECT_EQ(t.columns,
              (std::vector<std::string>{"case", "naive", "% peak", "onednn", "speed-up", "% peak", "quality"}));
    for (const auto &row : t.rows) EXPECT_EQ(row.size(), t.columns.size());
    EXPECT_NE(t.title.find("not shown, no case timed (reasons below; --wide shows them): cuda"), std::string::npos)
        << t.title;
    bool reason_noted = false;
    for (const auto &n : t.notes) reason_noted = reason_noted || n.find("no CUDA driver") != std::string::npos;
    EXPECT_TRUE(reason_noted);
    EXPECT_EQ(d.data["rows"][0]["levels"]["cuda"]["status"], "skipped") << "the JSON keeps every backend";
    LevelOptions wide;
    wide.wide = true;
    EXPECT_EQ(by_backend({parsed_set(s, "q")}, wide).tables.at(0).columns.size(), 16u) << "--wide: 3 backends x 5";
    // One timed case is enough to keep the columns.
    s.cases[2].status = "passed";
    s.cases[2].reason.clear();
    EXPECT_EQ(by_backend({parsed_set(s, "q")}, {}).tables.at(0).columns.size(), 10u);
}

TEST(LevelTable, BackendsFromSeveralSetsShareRows) {
    FakeSet a, b;
    FakeCase n;
    n.medians = reps(1e-5);
    FakeCase o = n;
    o.backend = "onednn";
    o.medians = reps(5e-6);
    a.cases = {n};
    b.cases = {o};
    const Document d = by_backend({parsed_set(a, "a"), parsed_set(b, "b")}, {});
    ASSERT_EQ(d.tables[0].rows.size(), 1u);
    EXPECT_EQ(d.tables[0].rows[0][4], "2x");
}

TEST(LevelTable, UnknownBaselineIsRefused) {
    FakeSet s;
    s.cases = {FakeCase{}};
    LevelOptions o;
    o.baseline = "cuda";
    EXPECT_THROW((void)by_backend({parsed_set(s, "q")}, o), std::invalid_argument);
}

TEST(LevelTable, ByMachineShowsEachMachinesOwnPeaks) {
    FakeSet a, b;
    FakeCase c;
    c.medians = reps(1e-5);
    c.pct_bandwidth = 10;
    a.cases = {c};
    b.cpu_model = "Intel Xeon";
    b.cores = 56;
    c.medians = reps(2e-6);
    c.pct_bandwidth = 20;
    b.cases = {c};
    FakeCase cuda = c;
    cuda.backend = "cuda";
    cuda.status = "skipped";
    cuda.reason = "no CUDA driver";
    a.cases.push_back(cuda);
    b.cases.push_back(cuda);
    const Document d = by_machine({parsed_set(a, "epyc"), parsed_set(b, "xeon")}, {});
    ASSERT_EQ(d.tables.size(), 2u);
    EXPECT_EQ(d.tables[0].rows.size(), 2u); // one row of peaks per machine
    // Default (fits 100 columns): case, backend, then per set time and
    // % peak, and a speed-up against the first; a row no set timed is left
    // out and counted in the header.
    const Table &t = d.tables[1];
    EXPECT_EQ(t.columns, (std::vector<std::string>{"case", "backend", "epyc", "% peak", "xeon", "% peak", "vs first"}));
    ASSERT_EQ(t.rows.size(), 1u) << "cuda's row, timed in no set, is not shown";
    EXPECT_EQ(t.rows[0][1], "naive");
    EXPECT_EQ(t.rows[0][3], "10% bw");
    EXPECT_EQ(t.rows[0][5], "20% bw");
    EXPECT_EQ(t.rows[0][6], "5x");
    EXPECT_NE(t.title.find("not shown, timed in no set (reasons below; --wide shows them): 1 entry of cuda"),
              std::string::npos)
        << t.title;
    EXPECT_EQ(d.data["rows"].size(), 2u) << "the JSON keeps every row";
    // --wide: the full name, and time, throughput, % peak, bound, vs first per set.
    LevelOptions wide;
    wide.wide = true;
    const Table w = by_machine({parsed_set(a, "epyc"), parsed_set(b, "xeon")}, wide).tables.at(1);
    ASSERT_EQ(w.rows.size(), 2u);
    EXPECT_EQ(w.rows[0][3], "10% bw");
    EXPECT_EQ(w.rows[0][8], "20% bw");
    EXPECT_EQ(w.rows[0][10], "5x");
}

// Issue 17: no % of peak above 100 without a note saying how it can be.
TEST(LevelTable, APercentAboveTheRoofComesWithANote) {
    FakeSet s;
    FakeCase naive, onednn;
    naive.medians = reps(1e-5);
    onednn = naive;
    onednn.backend = "onednn";
    onednn.bound = "compute-bound";
    onednn.pct_compute = 42.0;
    s.cases = {naive, onednn};
    auto has_note = [](const Table &t) {
        for (const auto &n : t.notes)
            if (n.rfind("% peak above 100%", 0) == 0) return true;
        return false;
    };
    EXPECT_FALSE(has_note(by_backend({parsed_set(s, "q")}, {}).tables[0]));
    s.cases[1].pct_compute = 130.0;
    const Document d = by_backend({parsed_set(s, "q")}, {});
    EXPECT_EQ(d.tables[0].rows[0][5], "130% flop");
    EXPECT_TRUE(has_note(d.tables[0]));
}

// Issue 28, a fixture AMX machine: a bf16 entry judged against the AMX-BF16
// roof shows it by name; one still above its roof gets its own cause in the
// notes, not the generic one.
TEST(LevelTable, AmxRoofsAreNamedAndEachEntryAboveItsRoofSaysWhy) {
    FakeSet s;
    FakeCase naive, amx, over;
    naive.medians = reps(1e-5);
    naive.dtype = "bf16";
    amx = naive;
    amx.backend = "onednn";
    amx.bound = "compute-bound";
    amx.pct_compute = 28.0;
    amx.compute_roof = "AMX-BF16";
    over = naive;
    over.name = "other";
    over.backend = "onednn";
    over.bound = "compute-bound";
    over.pct_compute = 250.0;
    over.above_roof_cause = "250% of the AVX512-BF16 roof: the backend ran avx512_core_amx (AMX tiles), whose peak "
                            "is not measured here (not measured: the kernel refused AMX tile data)";
    naive.name = amx.name;
    FakeCase naive_other = naive;
    naive_other.name = "other";
    s.cases = {naive, amx, naive_other, over};
    const Document d = by_backend({parsed_set(s, "q")}, {});
    const Table &t = d.tables[0];
    bool amx_cell = false, cause = false, generic = false;
    for (const auto &row : t.rows)
        for (const auto &cell : row) amx_cell = amx_cell || cell == "28% AMX-BF16 flop";
    for (const auto &n : t.notes) {
        cause = cause || (n.find("% peak above 100% for ") == 0 && n.find("[onednn]: 250% of the AVX512-BF16 roof") !=
                                                                         std::string::npos &&
                          n.find("refused AMX tile data") != std::string::npos);
        generic = generic || n == above_roof_note();
    }
    EXPECT_TRUE(amx_cell);
    EXPECT_TRUE(cause);
    EXPECT_FALSE(generic); // the entry's own cause replaces the generic note
}

// Issue 16: compare --by shows the metrics table's figures, not its own. Each
// time, throughput and % peak cell equals the table's row in the row's text
// for the inputs the tidy CSV reads from the same record; a memory-bound case
// shows byte_per_s and its cache level's bandwidth share, a compute-bound one
// flop_per_s and its compute share.
TEST(LevelTable, FiguresAreTheMetricsTablesRows) {
    FakeSet s;
    FakeCase memory; // add: 4096 FLOP, 49152 bytes a call
    memory.medians = reps(3.1e-6);
    memory.pct_bandwidth = 61.0;
    memory.bandwidth_roof = "L2";
    FakeCase compute = memory;
    compute.op = "silu";
    compute.bound = "compute-bound";
    compute.pct_compute = 39.0;
    compute.medians = reps(7.3e-6);
    s.cases = {memory, compute};
    const ResultSet set = parsed_set(s, "q");
    LevelOptions wide; // by machine shows the throughput under --wide
    wide.wide = true;
    const Table machine = by_machine({set}, wide).tables.at(1);
    const Table backend = by_backend({set}, {}).tables.at(0);
    ASSERT_EQ(machine.rows.size(), 2u);
    ASSERT_EQ(backend.rows.size(), 2u);
    for (std::size_t i = 0; i < 2; ++i) {
        const CaseRecord &c = set.cases[i];
        const EntryMetricInputs in = metric_inputs(c, valid_times(c));
        const bool memory_bound = i == 0;
        const std::string peak = memory_bound ? table_text("pct_peak_bandwidth", in) + " L2 bw"
                                              : table_text("pct_peak_compute", in) + " flop";
        // by machine: case, time, throughput, % peak, bound, vs first.
        EXPECT_EQ(machine.rows[i][1], table_text("median_s", in));
        EXPECT_EQ(machine.rows[i][2], table_text(memory_bound ? "byte_per_s" : "flop_per_s", in));
        EXPECT_EQ(machine.rows[i][3], peak);
        // by backend (one backend, the baseline): case, time, % peak.
        EXPECT_EQ(backend.rows[i][1], table_text("median_s", in));
        EXPECT_EQ(backend.rows[i][2], peak);
    }
    // And what that is, so a formatter that broke both would still fail here.
    EXPECT_EQ(machine.rows[0][1], "3.1 us");
    EXPECT_EQ(machine.rows[0][2], "15.9 GB/s"); // 49152 B / 3.1 us
    EXPECT_EQ(machine.rows[0][3], "61% L2 bw");
    EXPECT_EQ(machine.rows[1][2], "0.561 GFLOP/s"); // 4096 FLOP / 7.3 us
    EXPECT_EQ(machine.rows[1][3], "39% flop");
}

TEST(LevelTable, PercentOfPeakFollowsTheBound) {
    CaseRecord c;
    c.roofline = {{"bound", "memory-bound"}, {"pct_peak_compute", 1.0}, {"pct_peak_bandwidth", 61.0}};
    EXPECT_EQ(percent_of_peak(c), "61% bw");
    c.roofline["bandwidth_roof"] = "L2"; // the working set fit L2: its roof, named
    EXPECT_EQ(percent_of_peak(c), "61% L2 bw");
    c.roofline["bandwidth_roof"] = "DRAM";
    EXPECT_EQ(percent_of_peak(c), "61% bw");
    c.roofline["bound"] = "overhead-bound";
    c.roofline["pct_peak_compute"] = 3.0;
    c.roofline["pct_peak_bandwidth"] = 0.5;
    EXPECT_EQ(percent_of_peak(c), "3% flop");
    c.roofline = nullptr;
    EXPECT_EQ(percent_of_peak(c), "-");
}

// Two builds of one backend (--plugin naive@base=... --plugin naive@new=...):
// one row per case, and the default baseline `naive` means its first build.
TEST(LevelTable, BuildsOfOneBackendShareRowsAgainstTheFirstBuild) {
    FakeSet s;
    FakeCase base;
    base.backend = "naive@base";
    base.medians = reps(1e-5);
    FakeCase next = base;
    next.backend = "naive@new";
    next.medians = reps(1.25e-5);
    s.cases = {base, next};
    LevelOptions wide;
    wide.wide = true; // every column: time, speed-up, % peak, bound, quality per build
    const Document d = by_backend({parsed_set(s, "ab")}, wide);
    const Table &t = d.tables[0];
    ASSERT_EQ(t.rows.size(), 1u);
    EXPECT_EQ(t.columns[1], "naive@base time");
    EXPECT_EQ(t.columns[6], "naive@new time");
    EXPECT_EQ(t.rows[0][7], "0.8x");
    EXPECT_EQ(d.data["baseline"], "naive@base");
}

// A decoder at its levels (readers/workload_levels): one row per workload and
// level, naive first, then each backend's dtypes from f32 to s8; tokens/s is
// tokens per call over the one summary's median, the speed-up against naive f32.
TEST(LevelTable, WorkloadLevelsLineUpBackendsAndDtypesAsOneTable) {
    FakeSet s;
    auto entry = [](const std::string &backend, const std::string &dtype, const std::string &phase, double median) {
        FakeCase c;
        c.op = "decoder";
        c.name = "llama";
        c.variant = "composed";
        c.backend = backend;
        c.dtype = dtype;
        c.phase = phase;
        c.params = {{"hidden", 64}, {"tokens_per_call", phase == "prefill" ? 16 : 4}};
        c.medians = reps(median);
        return c;
    };
    // Listed out of level order: the table sorts them.
    s.cases = {entry("onednn", "s8", "prefill", 0.01), entry("naive", "f32", "prefill", 1.0),
               entry("onednn", "f32", "prefill", 0.1), entry("onednn", "bf16", "prefill", 0.05),
               entry("naive", "f32", "decode", 2.0),   entry("onednn", "f32", "decode", 0.5)};
    FakeCase op_case; // an op case is not a workload level
    s.cases.push_back(op_case);
    const Document d = by_backend({parsed_set(s, "q")}, {});
    ASSERT_EQ(d.tables.size(), 2u);
    const Table &t = d.tables[1];
    EXPECT_NE(t.title.find("speed-up against naive f32"), std::string::npos) << t.title;
    EXPECT_EQ(t.columns,
              (std::vector<std::string>{"workload", "level", "prefill tok/s", "speed-up", "decode tok/s", "speed-up"}));
    ASSERT_EQ(t.rows.size(), 4u);
    EXPECT_EQ(t.rows[0], (std::vector<std::string>{"llama", "naive f32", "16", "1x", "2", "1x"}));
    EXPECT_EQ(t.rows[1], (std::vector<std::string>{"", "onednn f32", "160", "10x", "8", "4x"}));
    EXPECT_EQ(t.rows[2], (std::vector<std::string>{"", "onednn bf16", "320", "20x", "-", "-"}));
    EXPECT_EQ(t.rows[3], (std::vector<std::string>{"", "onednn s8", "1600", "100x", "-", "-"}));
    const auto &rows = d.data.at("workload_levels");
    ASSERT_EQ(rows.size(), 4u);
    EXPECT_DOUBLE_EQ(rows[3]["phases"]["prefill"]["tokens_per_second"].get<double>(), 1600.0);
    EXPECT_DOUBLE_EQ(rows[3]["phases"]["prefill"]["speedup"].get<double>(), 100.0);
    // Sets without workload entries keep their one table.
    FakeSet ops;
    ops.cases = {op_case};
    EXPECT_EQ(by_backend({parsed_set(ops, "o")}, {}).tables.size(), 1u);
}

// One workload measured at two thread counts: two rows, each naming its
// threads, never one cell overwritten by the other.
TEST(LevelTable, WorkloadLevelsKeepEachSettingOnItsOwnRow) {
    FakeSet s;
    for (int threads : {1, 2}) {
        FakeCase c;
        c.op = "decoder";
        c.name = "llama";
        c.variant = "composed";
        c.phase = "decode";
        c.threads = threads;
        c.params = {{"hidden", 64}, {"tokens_per_call", 4}};
        c.medians = reps(threads == 1 ? 2.0 : 1.0);
        s.cases.push_back(c);
    }
    const Document d = by_backend({parsed_set(s, "q")}, {});
    ASSERT_EQ(d.tables.size(), 2u);
    const Table &t = d.tables[1];
    ASSERT_EQ(t.rows.size(), 2u);
    EXPECT_EQ(t.rows[0][0], "llama composed thr:1");
    EXPECT_EQ(t.rows[0][2], "2");
    EXPECT_EQ(t.rows[1][0], "llama composed thr:2");
    EXPECT_EQ(t.rows[1][2], "4");
}
