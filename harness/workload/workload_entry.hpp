// A workload phase x backend as an entry (entry/entry.hpp): many plugin
// calls (a decoder's prefill, or its decode loop) measured as one unit by the
// same recipe as an op case, checked layer by layer against the reference
// backend, in the backend's worker like an op case (the case host runs it
// through workload_session.hpp). Its result-set entries carry the
// whole-model figures (results/README.md, "Workload entries").
#pragma once

#include "workload/decoder_work.hpp"
#include "workload/workload_job.hpp"

#include "entry/entry.hpp"

#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

namespace opbench::workload {

// "decoder/<name>/phase:<p>/dt:<dtype>/[thr:<n>/][cache:cold/]be:<backend>"
[[nodiscard]] std::string workload_benchmark_name(const WorkloadCase &w, Phase phase, const std::string &backend);

class WorkloadEntry final : public Entry {
public:
    // `w` outlives the entry.
    WorkloadEntry(const WorkloadCase &w, Phase phase, const std::string &backend, const std::string &reference);

    [[nodiscard]] const WorkloadCase &source() const { return workload_; }
    [[nodiscard]] Phase phase() const { return phase_; }
    [[nodiscard]] const MeasureSettings &settings() const override { return workload_.settings; }
    [[nodiscard]] const char *time_unit() const override { return "ms"; }
    [[nodiscard]] MemoryEstimate memory_need(VerifyMode verify) const override;
    // On a GPU backend: weights, KV cache, activations and attention
    // workspace (estimate_decoder_device_memory); the reference runs on the host.
    [[nodiscard]] std::optional<DeviceMemoryNeed> device_memory_need() const override;
    [[nodiscard]] CaseJob job(const JobDefaults &defaults) const override;
    void activated(const Activation &a) override;
    void finished(const FinishRecord &f) override;
    [[nodiscard]] CallWork call_work() const override;
    [[nodiscard]] nlohmann::json fields() const override;
    [[nodiscard]] EntryFacts identity_facts() const override;
    [[nodiscard]] nlohmann::json counters(const RepetitionRecord &rec) const override;
    [[nodiscard]] std::string label(const RepetitionRecord &rec) const override;

    // The whole-model figures, once finished (passed entries only).
    [[nodiscard]] const std::optional<DecoderFigures> &figures() const { return figures_; }

private:
    const WorkloadCase &workload_;
    Phase phase_;
    WorkloadActivation activation_;
    std::optional<DecoderFigures> figures_;
};

// The whole-model figures of every measured workload entry, one line each (console).
void report_workload_figures(const std::vector<const WorkloadEntry *> &entries, std::ostream &out);

} // namespace opbench::workload
