// An entry: one measured thing of a run, a case x backend or a workload
// phase x backend. The entry loop (run/entry_loop.cpp) drives one list of
// them the same way: skip it before anything runs, or activate it in the case host
// (isolate/case_host.hpp: a worker process, or this one; it hands the host
// a job through isolate/case_job.hpp), measure its
// repetitions, finish it; then its records become its result-set entries
// (result_entries below) and its console line. What differs between the two
// kinds (the job the host runs, the work per call, the fields) is here.
#pragma once

#include "entry/results.hpp"
#include "isolate/case_job.hpp"
#include "measure/bottleneck_rules.hpp"
#include "measure/entry_metrics.hpp"
#include "measure/memory_estimate.hpp"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace opbench {

// The work one call does, for the roofline at the entry's median.
struct CallWork {
    double flops = 0, bytes = 0;
    int dtype = 0;   // opb_dtype: which peak (f32 or bf16)
    int threads = 0; // resolved
};

// What every job of a run shares.
struct JobDefaults {
    double timer_overhead = 0;
    VerifyMode verify = VerifyMode::fast;
    std::string reference_store_dir, reference_store_key;
};

class Entry {
public:
    virtual ~Entry() = default;

    [[nodiscard]] const std::string &name() const { return result.name; }
    [[nodiscard]] const std::string &backend() const { return result.backend; }
    [[nodiscard]] virtual const MeasureSettings &settings() const = 0;
    // Google Benchmark's time unit for its entries: "us" for an op case, "ms" for a workload.
    [[nodiscard]] virtual const char *time_unit() const = 0;

    // What it would need in memory, on its backend and for the reference
    // (with the verify mode's reference run), for the --mem-limit check.
    [[nodiscard]] virtual MemoryEstimate memory_need(VerifyMode verify) const = 0;
    // What it would hold in its backend's device memory when that device is
    // not the host (a GPU: the entry loop compares it with the device's free
    // memory before anything runs); none when not estimated (op cases).
    [[nodiscard]] virtual std::optional<DeviceMemoryNeed> device_memory_need() const { return std::nullopt; }
    // What the host activates.
    [[nodiscard]] virtual CaseJob job(const JobDefaults &defaults) const = 0;
    // Records what activation and finishing gave.
    virtual void activated(const Activation &a);
    virtual void finished(const FinishRecord &f);
    // The work of one call, for its roofline.
    [[nodiscard]] virtual CallWork call_work() const = 0;
    // The fields every result-set entry of it carries (results/README.md).
    [[nodiscard]] virtual nlohmann::json fields() const = 0;
    // What it is, as the bottleneck rules read it: op, variant, dtype, flops
    // and bytes per call (the same values fields() writes).
    [[nodiscard]] virtual EntryFacts identity_facts() const = 0;
    // Everything the bottleneck rules read of it, from its records: the
    // above, its backend, settings, memory, roofline, first repetition's
    // device time (measure/bottleneck_rules.hpp).
    [[nodiscard]] EntryFacts bottleneck_facts() const;
    // A repetition's Google Benchmark counters and label.
    [[nodiscard]] virtual nlohmann::json counters(const RepetitionRecord &rec) const = 0;
    [[nodiscard]] virtual std::string label(const RepetitionRecord &rec) const = 0;

    // The op case it measures, when it is a case x backend; nullptr for a
    // workload phase. The loop asks this and casts nothing (issue 29).
    [[nodiscard]] virtual const Case *op_case() const { return nullptr; }
    // Its place among its backend's op cases in the probe (the supports()
    // answer that is its own), set when the probe's list is made; none: it
    // was not in the probe (a workload phase).
    [[nodiscard]] std::optional<std::size_t> probe_place() const { return probe_place_; }
    void set_probe_place(std::size_t place) { probe_place_ = place; }

    // The median of its repetitions' medians; none before one was measured.
    [[nodiscard]] std::optional<double> median_seconds() const;

    CaseResult result; // what was measured: status, repetitions, memory, roofline ...

private:
    std::optional<std::size_t> probe_place_;
};

// The noise of one repetition as the label says it ("noise 0.42%", and
// ", max_time reached" when it stopped there).
[[nodiscard]] std::string noise_label(const RepetitionRecord &rec);

// The entry's result-set entries, in Google Benchmark's form so compare.py
// reads them: one per repetition (run_type "iteration": real_time the median
// per call, iterations the calls measured, cpu_time per call), then the
// aggregates over repetitions (mean, median, stddev, cv) when there are two
// or more; each carries the entry's fields, and an iteration its `stats`.
// One entry with error_occurred for a failed or skipped one (no times).
[[nodiscard]] std::vector<nlohmann::json> result_entries(const Entry &entry);

// What the entry's metrics (measure/entry_metrics.hpp) are computed from, once
// its summary is set: the summary, its samples, its work per call, its roofline.
// The result set's `metrics` and the run console both read these.
[[nodiscard]] EntryMetricInputs metric_inputs(const Entry &entry);
// The same from a result and a call's work (a default CallWork: no work known,
// so no rate; the time and % of peak still are).
[[nodiscard]] EntryMetricInputs metric_inputs(const CaseResult &result, const CallWork &work);

} // namespace opbench
