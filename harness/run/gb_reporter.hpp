// Google Benchmark reporters that show each repetition per call (not `opbench
// report`, which is readers/report_html).
#pragma once

#include "entry/results.hpp"

#include <benchmark/benchmark.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace opbench {

// The CaseResult of a Google Benchmark run name, or nullptr.
using CaseLookup = std::function<const CaseResult *(const std::string &name)>;

// Google Benchmark measures each repetition as a single iteration whose time
// is the median per-call time of its samples (manual time). This reporter
// restores the per-call view before anything is printed or written: the
// iteration count becomes the number of calls measured and the CPU time the
// process CPU time per call. Aggregates' CPU figures are recomputed from the
// per-call CPU times. Everything else goes to the wrapped reporter unchanged.
class PerCallReporter : public benchmark::BenchmarkReporter {
public:
    PerCallReporter(std::unique_ptr<benchmark::BenchmarkReporter> inner, CaseLookup lookup);

    bool ReportContext(const Context &context) override;
    void ReportRuns(const std::vector<Run> &runs) override;
    void Finalize() override;

private:
    std::unique_ptr<benchmark::BenchmarkReporter> inner_;
    CaseLookup lookup_;
};

} // namespace opbench
