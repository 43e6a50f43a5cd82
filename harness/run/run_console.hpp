// What `opbench run` prints while it runs: one aligned line per case x
// backend once its repetitions finish (name, median, +- spread, FLOP/s or
// GB/s, % of peak, bound, speed-up against the reference backend, status),
// and a summary table per backend at the end. Google Benchmark's own
// per-repetition lines only with --verbose. Colour only on a terminal.
#pragma once

#include "machine/machine.hpp"
#include "entry/entry.hpp"
#include "entry/results.hpp"
#include "writers/writer.hpp"

#include <iosfwd>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace opbench {

// The column titles and one entry's cells, aligned by the caller. The
// figures are rows of the metrics table (measure/entry_metrics.hpp), in the
// rows' text and under their labels: median, +- (spread), throughput
// (throughput_metric), % peak (peak_text); `in` is the entry's metric inputs
// (entry/entry.hpp), the same the result set's `metrics` are written from.
[[nodiscard]] std::vector<std::string> run_line_columns(const std::string &reference);
// `reference`: the reference backend's result for the same case, if any.
[[nodiscard]] std::vector<std::string> run_line_cells(const CaseResult &r, const EntryMetricInputs &in,
                                                      const CaseResult *reference);

// Per backend: passed, failed, skipped, timed out, geomean speed-up against
// the reference, median % of peak; the bound counts in a note below, so the
// table fits 100 columns whatever the mix of bounds (backend names up to
// 40 characters). Times, % of peak and bounds are the metrics table's, from
// each result's summary and roofline.
[[nodiscard]] Table backend_summary(const std::vector<CaseResult> &results, const std::string &reference);

// "Not measured (N entries):" and each reason with the entries it covers
// (one backend's reason usually covers many); nothing when there are none.
void print_not_measured(const std::vector<const CaseResult *> &entries, std::ostream &out);

// `text` word-wrapped to the run console's 100 columns: the first line
// indented by `first_indent`, the others by `indent`.
[[nodiscard]] std::string wrapped(const std::string &text, std::size_t indent, std::size_t first_indent);
inline std::string wrapped(const std::string &text, std::size_t indent) { return wrapped(text, indent, indent); }

// Aligned lines per finished entry, under a column header printed with the
// first entry (a suite of workloads only prints none), fitted to 100
// columns: the name, then its figures indented on the line below ending in
// the status word, then the status's reason or the quality's verdict
// wrapped on lines of its own.
class RunConsole {
public:
    RunConsole(std::string reference, bool colour);
    // `reference`: the reference backend's entry for the same case, if any.
    void entry_done(const Entry &e, const CaseResult *reference);
    // The lines entry_done prints for one entry's cells (run_line_cells).
    [[nodiscard]] std::string lines_for(const std::vector<std::string> &cells, CaseStatus status) const;

private:
    std::string reference_;
    bool colour_;
    std::vector<std::size_t> widths_;
    std::string header_; // the column header, until the first line is printed
};

} // namespace opbench
