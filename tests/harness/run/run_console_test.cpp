#include "run/run_console.hpp"

#include "opbench/ops.hpp"

#include <gtest/gtest.h>

using namespace opbench;

namespace {

Case matmul_case() {
    Case c;
    c.desc = make_desc(OPB_OP_MATMUL, OPB_DTYPE_F32);
    c.desc.p.matmul = {1, 64, 64, 64, 0, 0, 0};
    return c;
}

CaseResult measured(const Case &c, const std::string &backend, std::vector<double> medians, int timed_out = 0) {
    CaseResult r;
    r.source = &c;
    r.backend = backend;
    r.name = "matmul/B:1/M:64/N:64/K:64/dt:f32/be:" + backend;
    r.is_reference = backend == "naive";
    for (double m : medians) {
        RepetitionRecord rec;
        rec.summary.median = m;
        rec.summary.n = 10;
        rec.timed_out = timed_out-- > 0;
        r.repetitions.push_back(rec);
    }
    return r;
}

Roofline compute_bound(double pct) {
    Roofline rl;
    rl.bound = "compute-bound";
    rl.pct_peak_compute = pct;
    rl.pct_peak_bandwidth = 1;
    return rl;
}

} // namespace

TEST(RunConsole, CaseTimeIsTheMedianOfMediansWithItsSpread) {
    const Case c = matmul_case();
    const auto t = case_time(measured(c, "naive", {1e-5, 1.2e-5, 1.1e-5}, 1));
    ASSERT_TRUE(t);
    EXPECT_DOUBLE_EQ(t->median, 1.1e-5);
    EXPECT_NEAR(t->spread, 0.1e-5 / 1.1e-5, 1e-12);
    EXPECT_EQ(t->timed_out, 1u);
    CaseResult skipped;
    skipped.status = CaseStatus::skipped;
    EXPECT_FALSE(case_time(skipped));
}

TEST(RunConsole, OneLineHasEveryFigure) {
    const Case c = matmul_case(); // 2 * 64^3 = 524288 FLOP
    const CaseResult naive = measured(c, "naive", {4e-5, 4e-5, 4e-5});
    const CaseResult onednn = measured(c, "onednn", {2e-6, 2.1e-6, 2e-6}, 1);
    const auto cells = run_line_cells(onednn, compute_bound(39.0), &naive);
    ASSERT_EQ(cells.size(), run_line_columns("naive").size());
    EXPECT_EQ(cells[0], onednn.name);
    EXPECT_EQ(cells[1], "2 us");
    EXPECT_EQ(cells[2], "2.5%");
    EXPECT_EQ(cells[3], "262 GFLOP/s");
    EXPECT_EQ(cells[4], "39% flop");
    EXPECT_EQ(cells[5], "compute");
    EXPECT_EQ(cells[6], "20x");
    EXPECT_EQ(cells[7], "passed (1/3 repetitions missed the noise target)");
    EXPECT_EQ(run_line_cells(naive, compute_bound(2.0), nullptr)[6], "ref");
    CaseResult failed = onednn;
    failed.status = CaseStatus::failed;
    failed.reason = "nmse 0.3";
    failed.repetitions.clear();
    EXPECT_EQ(run_line_cells(failed, std::nullopt, &naive).back(), "failed: nmse 0.3");
}

TEST(RunConsole, SummaryPerBackend) {
    const Case c = matmul_case();
    CaseResult skipped;
    skipped.source = &c;
    skipped.backend = "cuda";
    skipped.status = CaseStatus::skipped;
    const std::vector<CaseResult> results{measured(c, "naive", {4e-5}), measured(c, "onednn", {1e-5}), skipped};
    const Table t = backend_summary(results, "naive", [](const CaseResult &) { return compute_bound(10.0); });
    ASSERT_EQ(t.rows.size(), 3u);
    EXPECT_EQ(t.rows[0][0], "naive");
    EXPECT_EQ(t.rows[1][5], "4x");
    EXPECT_EQ(t.rows[1][6], "10%");
    EXPECT_EQ(t.rows[1][7], "compute 1");
    EXPECT_EQ(t.rows[2][3], "1"); // cuda skipped
    EXPECT_EQ(t.rows[2][5], "-");
}
