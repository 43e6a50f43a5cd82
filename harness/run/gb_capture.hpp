// Google Benchmark's JSON, captured piece by piece while the run goes, with
// no file: its own JSONReporter writes into memory, and each piece is handed
// on as parsed JSON the moment Google Benchmark reports it. So every finished
// benchmark can be journaled at once, and a result set written at any moment
// (an interrupted run) holds exactly what finished.
#pragma once

#include <benchmark/benchmark.h>
#include <nlohmann/json.hpp>

#include <functional>
#include <sstream>
#include <vector>

namespace opbench {

class JsonCapture : public benchmark::BenchmarkReporter {
public:
    // `context`: Google Benchmark's "context" object (once, before any run).
    // `runs`: every entry of one benchmark (its repetitions, then their
    // aggregates), as they appear in the "benchmarks" array. Google Benchmark
    // reports the two in separate calls; they are handed on together when the
    // next benchmark's entries arrive, on flush(), or at Finalize.
    using ContextFn = std::function<void(nlohmann::json context)>;
    using RunsFn = std::function<void(std::vector<nlohmann::json> entries)>;
    JsonCapture(ContextFn context, RunsFn runs);

    bool ReportContext(const Context &context) override;
    void ReportRuns(const std::vector<Run> &runs) override;
    void Finalize() override;
    // Hands on the entries held so far (call when the next benchmark starts,
    // so one benchmark's entries never wait for the next one's).
    void flush();
    // Bytes of Google Benchmark's text held: only what the last report wrote
    // (tests check that nothing accumulates over a run).
    [[nodiscard]] std::size_t buffered_bytes() const { return text_.str().size(); }

private:
    std::string take_new_text();
    std::string pending_name_;
    std::vector<nlohmann::json> pending_;

    benchmark::JSONReporter json_;
    std::ostringstream text_; // what json_ wrote since take_new_text last emptied it
    ContextFn on_context_;
    RunsFn on_runs_;
};

// Google Benchmark takes one display reporter (a file reporter requires
// --benchmark_out): this one passes every call on to each of several.
class TeeReporter : public benchmark::BenchmarkReporter {
public:
    explicit TeeReporter(std::vector<benchmark::BenchmarkReporter *> reporters) : reporters_(std::move(reporters)) {}
    bool ReportContext(const Context &context) override;
    void ReportRuns(const std::vector<Run> &runs) override;
    void Finalize() override;

private:
    std::vector<benchmark::BenchmarkReporter *> reporters_;
};

// Passes on the runs `keep` accepts (the console leaves out the cases an
// interrupt abandoned: Google Benchmark still "runs" each of them once).
class FilterReporter : public benchmark::BenchmarkReporter {
public:
    FilterReporter(benchmark::BenchmarkReporter &inner, std::function<bool(const Run &)> keep)
        : inner_(inner), keep_(std::move(keep)) {}
    bool ReportContext(const Context &context) override { return inner_.ReportContext(context); }
    void ReportRuns(const std::vector<Run> &runs) override;
    void Finalize() override { inner_.Finalize(); }

private:
    benchmark::BenchmarkReporter &inner_;
    std::function<bool(const Run &)> keep_;
};

} // namespace opbench
