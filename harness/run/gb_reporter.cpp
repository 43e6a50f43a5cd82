#include "run/gb_reporter.hpp"

#include "measure/statistics.hpp"

#include <algorithm>

namespace opbench {

PerCallReporter::PerCallReporter(std::unique_ptr<benchmark::BenchmarkReporter> inner, CaseLookup lookup)
    : inner_(std::move(inner)), lookup_(std::move(lookup)) {}

bool PerCallReporter::ReportContext(const Context &context) {
    // Google Benchmark sets this reporter's streams (the file for JSON).
    inner_->SetOutputStream(&GetOutputStream());
    inner_->SetErrorStream(&GetErrorStream());
    return inner_->ReportContext(context);
}

namespace {

// Google Benchmark computed an aggregate's CPU figure from whole-repetition
// CPU times; recompute it from the per-call CPU times.
void fix_aggregate_cpu(benchmark::BenchmarkReporter::Run &run, const CaseResult &r) {
    std::vector<double> cpu;
    for (const auto &rec : r.repetitions) cpu.push_back(rec.cpu_seconds_per_call);
    if (cpu.empty()) return;
    const SampleSummary s = summarize(cpu);
    double value = 0;
    if (run.aggregate_name == "mean")
        value = s.mean;
    else if (run.aggregate_name == "median")
        value = s.median;
    else if (run.aggregate_name == "stddev")
        value = s.stddev;
    else
        return; // cv is a ratio: Google Benchmark's is kept
    run.cpu_accumulated_time = value * double(run.iterations);
}

} // namespace

void PerCallReporter::ReportRuns(const std::vector<Run> &runs) {
    std::vector<Run> fixed = runs;
    for (auto &run : fixed) {
        if (run.error_occurred) continue;
        const CaseResult *r = lookup_(run.run_name.str());
        if (!r) continue;
        if (run.run_type == Run::RT_Iteration) {
            const auto idx = static_cast<std::size_t>(std::max<int64_t>(run.repetition_index, 0));
            if (idx >= r->repetitions.size()) continue;
            const RepetitionRecord &rec = r->repetitions[idx];
            const double calls = double(rec.summary.n) * rec.calls_per_sample;
            run.iterations = static_cast<benchmark::IterationCount>(calls);
            run.real_accumulated_time = rec.summary.median * calls;
            run.cpu_accumulated_time = rec.cpu_seconds_per_call * calls;
        } else if (run.aggregate_unit == benchmark::kTime) {
            fix_aggregate_cpu(run, *r);
        }
    }
    inner_->ReportRuns(fixed);
}

void PerCallReporter::Finalize() { inner_->Finalize(); }

} // namespace opbench
