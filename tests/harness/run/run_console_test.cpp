// The run console (harness/run/run_console.hpp): an entry's line, its
// figures taken from the metrics table (measure/entry_metrics.hpp) for the
// entry's metric inputs, the lines' fit to 100 columns, the per-backend table
// and the "Not measured" list.
#include "run/run_console.hpp"

#include "../metric_text.hpp"
#include "entry/entry.hpp"
#include "opbench/ops.hpp"
#include "writers/table_writers.hpp"

#include <gtest/gtest.h>

#include <fmt/format.h>

#include <algorithm>
#include <sstream>

using namespace opbench;
using opbench::test::table_text;

namespace {

Case matmul_case() {
    Case c;
    c.desc = make_desc(OPB_OP_MATMUL, OPB_DTYPE_F32);
    c.desc.p.matmul = {1, 64, 64, 64, 0, 0, 0, 0, 0.0f, 0, 0};
    return c;
}

Roofline compute_bound(double pct) {
    Roofline rl;
    rl.bound = "compute-bound";
    rl.pct_peak_compute = pct;
    rl.pct_peak_bandwidth = 1;
    return rl;
}

// A passed entry with its one summary (as the run sets it before the
// console line) and a roofline. `timed_out` repetitions reached max_time
// before their noise target; no noise target asked, so the summary is clean.
CaseResult measured(const Case &c, const std::string &backend, std::vector<double> medians, int timed_out = 0,
                    const Roofline &roofline = compute_bound(10.0)) {
    CaseResult r;
    r.source = &c;
    r.backend = backend;
    r.name = "matmul/B:1/M:64/N:64/K:64/dt:f32/be:" + backend;
    r.is_reference = backend == "naive";
    std::vector<RepetitionFigures> figures;
    for (double m : medians) {
        RepetitionRecord rec;
        rec.summary.median = m;
        rec.summary.n = 10;
        rec.timed_out = timed_out-- > 0;
        rec.target_met = !rec.timed_out; // it reached max_time before its target
        r.repetitions.push_back(rec);
        figures.push_back(repetition_figures(rec));
    }
    if (!medians.empty()) r.summary = summarize_entry(figures, EntryConditions{});
    r.roofline = roofline;
    return r;
}

CallWork work_of(const Case &c) { return {op_flops(c.desc), op_bytes(c.desc), 0, 0}; }

} // namespace

TEST(RunConsole, OneLineHasEveryFigure) {
    const Case c = matmul_case(); // 2 * 64^3 = 524288 FLOP
    const CaseResult naive = measured(c, "naive", {4e-5, 4e-5, 4e-5});
    const CaseResult onednn = measured(c, "onednn", {2e-6, 2.1e-6, 2e-6}, 1, compute_bound(39.0));
    const auto cells = run_line_cells(onednn, metric_inputs(onednn, work_of(c)), &naive);
    ASSERT_EQ(cells.size(), run_line_columns("naive").size());
    EXPECT_EQ(cells[0], onednn.name);
    EXPECT_EQ(cells[1], "2 us");
    EXPECT_EQ(cells[2], "2.5%");
    EXPECT_EQ(cells[3], "262 GFLOP/s");
    EXPECT_EQ(cells[4], "39% flop");
    EXPECT_EQ(cells[5], "compute");
    EXPECT_EQ(cells[6], "20x");
    // The summary's verdict, word for word what compare and the report say.
    EXPECT_EQ(cells[7], "passed, noisy: 1 of 3 repetitions missed their noise target");
    EXPECT_EQ(run_line_cells(naive, metric_inputs(naive, work_of(c)), nullptr)[6], "ref");
    CaseResult failed = onednn;
    failed.status = CaseStatus::failed;
    failed.reason = "nmse 0.3";
    failed.repetitions.clear();
    failed.summary.reset();
    const auto failed_cells = run_line_cells(failed, metric_inputs(failed, work_of(c)), &naive);
    EXPECT_EQ(failed_cells.back(), "failed: nmse 0.3");
    EXPECT_EQ(failed_cells[1], "-") << "no time, no figure";
}

// Issue 16: the console shows the metrics table's figures, not its own. For
// one entry, each figure cell equals the table's row for the same inputs in
// the row's text, and the figure columns carry the rows' labels; a memory-
// bound entry of a cache level shows byte_per_s and its bandwidth share.
TEST(RunConsole, FiguresAreTheMetricsTablesRows) {
    const Case c = matmul_case();
    const CaseResult naive = measured(c, "naive", {4e-5, 4.4e-5, 4.2e-5});
    Roofline memory = compute_bound(3.0);
    memory.bound = "memory-bound";
    memory.pct_peak_bandwidth = 61.0;
    memory.bandwidth_roof = "L2";
    for (const Roofline &rl : {compute_bound(39.0), memory}) {
        const CaseResult onednn = measured(c, "onednn", {2e-6, 2.3e-6, 2.1e-6}, 0, rl);
        const EntryMetricInputs in = metric_inputs(onednn, work_of(c));
        const auto cells = run_line_cells(onednn, in, &naive);
        EXPECT_EQ(cells[1], table_text("median_s", in));
        EXPECT_EQ(cells[2], table_text("spread", in));
        const bool memory_bound = rl.bound == "memory-bound";
        EXPECT_EQ(cells[3], table_text(memory_bound ? "byte_per_s" : "flop_per_s", in));
        EXPECT_EQ(cells[4], memory_bound ? table_text("pct_peak_bandwidth", in) + " L2 bw"
                                         : table_text("pct_peak_compute", in) + " flop");
        EXPECT_EQ(cells[6], fmt::format("{:.3g}x", 4.2e-5 / entry_metric_values(in)[0])) << "median_s is row 0";
    }
    const auto columns = run_line_columns("naive");
    EXPECT_EQ(columns[1], metric("median_s").label);
    EXPECT_EQ(columns[2], metric("spread").label);
}

// Issue 17: the run's lines fit 100 columns. A name takes a line of its own
// with the figures indented below; the status word closes the figures and
// its reason (or the quality's verdict) wraps on lines of its own.
TEST(RunConsole, LinesFitAHundredColumns) {
    const std::vector<std::string> cells = {
        "matmul/B:1/M:32/N:96/K:64/tB:1/bias:1/variant:default/dt:f32/be:onednn/case:matmul.linear",
        "5.05 us",
        ">999%",
        "78.5 GFLOP/s",
        "117% bw",
        "overhead",
        "29x",
        "passed, disturbed: bimodal: 6 repetitions near 4.11 us, 3 near 22.1 ms; 1 of 9 repetitions at whole "
        "milliseconds (24 ms) for work that ran in 3.92 us: threads waited for a scheduler slice; 2 threads on "
        "0.0 free CPUs (load 5.53 on 2): --threads 1 or --cpus"};
    const RunConsole console("naive", false);
    const std::string text = console.lines_for(cells, CaseStatus::passed);
    std::size_t lines = 0;
    for (std::size_t begin = 0, end; (end = text.find('\n', begin)) != std::string::npos; begin = end + 1) {
        EXPECT_LE(end - begin, 100u) << text;
        ++lines;
    }
    EXPECT_GE(lines, 4u) << text;
    EXPECT_EQ(text.rfind(cells[0] + "\n", 0), 0u) << "the name first, on its own line:\n" << text;
    EXPECT_NE(text.find("29x  passed, disturbed\n"), std::string::npos) << text;
    EXPECT_NE(text.find("--threads 1 or --cpus"), std::string::npos) << "the verdict is kept whole:\n" << text;

    // A failure's reason goes below its figures the same way.
    std::vector<std::string> failed = cells;
    failed.back() = "failed: nmse 0.3";
    const std::string f = console.lines_for(failed, CaseStatus::failed);
    EXPECT_NE(f.find("29x  failed\n      nmse 0.3\n"), std::string::npos) << f;
}

TEST(RunConsole, SummaryPerBackend) {
    const Case c = matmul_case();
    CaseResult skipped;
    skipped.source = &c;
    skipped.backend = "cuda";
    skipped.status = CaseStatus::skipped;
    CaseResult starved = measured(c, "onednn", {16e-3});
    starved.status = CaseStatus::starved;
    starved.reason = "every repetition starved";
    const std::vector<CaseResult> results{measured(c, "naive", {4e-5}), measured(c, "onednn", {1e-5}), skipped,
                                          starved};
    const Table t = backend_summary(results, "naive");
    ASSERT_EQ(t.rows.size(), 3u);
    EXPECT_EQ(t.rows[0][0], "naive");
    EXPECT_EQ(t.columns[4], "starved");
    EXPECT_EQ(t.rows[1][1], "1"); // onednn: one passed
    EXPECT_EQ(t.rows[1][4], "1");      // and one starved, in no speed-up:
    EXPECT_EQ(t.rows[1][6], "4x");     // the geomean is the passed entry's alone
    EXPECT_EQ(t.rows[1][7], "10%");
    EXPECT_EQ(t.rows[2][3], "1"); // cuda skipped
    EXPECT_EQ(t.rows[2][6], "-");
    EXPECT_NE(std::find(t.notes.begin(), t.notes.end(), "bound (cases) of naive: compute 1"), t.notes.end());
    EXPECT_NE(std::find(t.notes.begin(), t.notes.end(), "bound (cases) of onednn: compute 1"), t.notes.end());
}

// Issue 17: the per-backend table fits 100 columns whatever the mix of
// bounds (four kinds on each backend grew the old bound column to 44
// characters) and with long backend names; the counts are all still there.
TEST(RunConsole, SummaryPerBackendFitsAHundredColumnsWithEveryKindOfBound) {
    const Case c = matmul_case();
    const std::vector<std::string> backends = {"naive", "onednn_experimental_avx512_bf16_tuned", "cuda_tensor_cores_sm90"};
    const std::vector<std::string> bounds = {"memory-bound", "compute-bound", "overhead-bound", "unknown",
                                             "memory-bound"};
    std::vector<CaseResult> results;
    for (const auto &b : backends)
        for (const auto &bound : bounds) {
            Roofline rl = compute_bound(1234.5);
            rl.bound = bound;
            results.push_back(measured(c, b, {b == "naive" ? 4e-5 : 1.234e-6}, 1, rl));
        }
    const Table t = backend_summary(results, "naive");
    Document d;
    d.tables.push_back(t);
    const std::string out = write_console(d);
    std::size_t lines = 0;
    for (std::size_t begin = 0, end; (end = out.find('\n', begin)) != std::string::npos; begin = end + 1, ++lines)
        EXPECT_LE(out.substr(begin, end - begin).size(), 100u) << out;
    EXPECT_GE(lines, 7u) << out;
    for (const auto &b : backends)
        EXPECT_NE(std::find(t.notes.begin(), t.notes.end(),
                            "bound (cases) of " + b + ": memory 2, compute 1, overhead 1, unknown 1"),
                  t.notes.end())
            << out;
    EXPECT_NE(out.find("32.4x"), std::string::npos) << "the speed-up is still shown:\n" << out;
}

// The load warning and every wrapped detail fit 100 columns, words whole:
// the first line at its own indent, the rest at theirs.
TEST(RunConsole, WrapsToAHundredColumnsWithAHangingIndent) {
    std::string text = "***WARNING***";
    for (int i = 0; i < 40; ++i) text += " word" + std::to_string(i);
    const std::string out = wrapped(text, 4, 0);
    EXPECT_EQ(out.rfind("***WARNING*** word0 ", 0), 0u) << out;
    std::size_t lines = 0;
    for (std::size_t begin = 0, end; (end = out.find('\n', begin)) != std::string::npos; begin = end + 1, ++lines) {
        EXPECT_LE(end - begin, 100u) << out;
        if (lines > 0) {
            EXPECT_EQ(out.substr(begin, 5), "    w") << out;
        }
    }
    EXPECT_GE(lines, 3u);
    EXPECT_NE(out.find("word39\n"), std::string::npos) << "nothing lost at the end";
    EXPECT_EQ(wrapped("", 4, 0), "");
}

// "Not measured" after the run: a long reason wraps under its status, and a
// name longer than the console breaks after a '/' (both were one line of
// 190-230 columns on the quick suite).
TEST(RunConsole, NotMeasuredFits100Columns) {
    const Case c = matmul_case();
    CaseResult r = measured(c, "cuda", {});
    r.status = CaseStatus::skipped;
    r.name = "attention/B:1/H:4/KVH:2/Sq:1/Skv:96/D:32/causal:1/variant:composed/dt:f32/be:cuda/case:attention.gqa";
    r.reason = "backend 'cuda' is not usable here: no CUDA driver: the runtime found no installed driver "
               "(libcuda.so.1); cudaGetDeviceCount: cudaErrorInsufficientDriver: CUDA driver version is "
               "insufficient for CUDA runtime version";
    std::ostringstream out;
    print_not_measured({&r}, out);
    const std::string text = out.str();
    std::istringstream lines(text);
    int count = 0;
    for (std::string l; std::getline(lines, l); ++count) EXPECT_LE(l.size(), 100u) << l;
    EXPECT_GE(count, 6) << text; // blank, title, 3 reason lines, 2 name lines
    EXPECT_NE(text.find("  skipped: backend 'cuda'"), std::string::npos) << text;
}
