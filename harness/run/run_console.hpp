// What `opbench run` prints while it runs: one aligned line per case x
// backend once its repetitions finish (name, median, +- spread, FLOP/s or
// GB/s, % of peak, bound, speed-up against the reference backend, status),
// and a summary table per backend at the end. Google Benchmark's own
// per-repetition lines only with --verbose. Colour only on a terminal. The
// result set is written by another reporter and does not change.
#pragma once

#include "machine/machine.hpp"
#include "entry/results.hpp"
#include "writers/writer.hpp"

#include <benchmark/benchmark.h>

#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace opbench {

struct RunConsoleHooks {
    // The CaseResult of a benchmark name (without "/manual_time"), or nullptr.
    std::function<const CaseResult *(const std::string &name)> lookup;
    // Its roofline at the median of its repetitions' medians.
    std::function<std::optional<Roofline>(const CaseResult &)> roofline;
    // The reference backend's result for the same case (nullptr: none, or it is the reference).
    std::function<const CaseResult *(const CaseResult &)> reference_of;
};

// The median of the repetitions' medians, and how far they spread
// ((max - min) / 2 / median; one repetition: its CI half-width).
struct CaseTime {
    double median = 0, spread = 0;
    std::size_t timed_out = 0;
};
[[nodiscard]] std::optional<CaseTime> case_time(const CaseResult &r);

// The column titles and one case's cells, aligned by the caller.
[[nodiscard]] std::vector<std::string> run_line_columns(const std::string &reference);
[[nodiscard]] std::vector<std::string> run_line_cells(const CaseResult &r, const std::optional<Roofline> &roofline,
                                                      const CaseResult *reference);

// Per backend: passed, failed, skipped, timed out, geomean speed-up against
// the reference, median % of peak, bound counts.
[[nodiscard]] Table backend_summary(const std::vector<CaseResult> &results, const std::string &reference,
                                    const std::function<std::optional<Roofline>(const CaseResult &)> &roofline);

class RunConsoleReporter : public benchmark::BenchmarkReporter {
public:
    // `names`: every benchmark name of the run, for the column width.
    RunConsoleReporter(RunConsoleHooks hooks, const std::vector<std::string> &names, std::string reference,
                       bool colour);

    bool ReportContext(const Context &context) override;
    void ReportRuns(const std::vector<Run> &runs) override;
    void Finalize() override {}

private:
    RunConsoleHooks hooks_;
    std::string reference_;
    bool colour_;
    std::vector<std::size_t> widths_;
    std::set<std::string> printed_;
    std::string header_; // the column header, until the first line is printed
};

} // namespace opbench
