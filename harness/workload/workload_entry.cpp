#include "workload/workload_entry.hpp"

#include "workload/decoder.hpp"

#include "measure/statistics.hpp"

#include "opbench/ops.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <ostream>

namespace opbench::workload {

std::string workload_benchmark_name(const WorkloadCase &w, Phase phase, const std::string &backend) {
    std::string n = fmt::format("{}/{}/phase:{}/dt:{}", w.kind, w.name, phase_name(phase), dtype_name(w.decoder.dtype));
    if (w.settings.threads > 0) n += fmt::format("/thr:{}", w.settings.threads);
    if (w.settings.cache != CacheState::warm) n += "/cache:" + std::string(cache_state_name(w.settings.cache));
    if (w.settings.launch != LaunchMode::single) n += "/launch:" + std::string(launch_mode_name(w.settings.launch));
    return n + "/be:" + backend;
}

WorkloadEntry::WorkloadEntry(const WorkloadCase &w, Phase phase, const std::string &backend,
                             const std::string &reference)
    : workload_(w), phase_(phase) {
    result.backend = backend;
    result.name = workload_benchmark_name(w, phase, backend);
    result.is_reference = backend == reference;
    result.nmse_threshold = decoder_tolerance(w.decoder).max_nmse;
}

// The backend's copy of weights, KV cache and activations, and the
// reference's beside it (a workload is always checked layer by layer).
MemoryEstimate WorkloadEntry::memory_need(VerifyMode) const {
    const DecoderMemory m = estimate_decoder_memory(workload_.decoder);
    MemoryEstimate need;
    need.tensors = m.weights + m.kv_cache;
    need.workspace = m.activations;
    need.reference = result.is_reference ? 0 : m.total();
    return need;
}

std::optional<DeviceMemoryNeed> WorkloadEntry::device_memory_need() const {
    return estimate_decoder_device_memory(workload_.decoder);
}

CaseJob WorkloadEntry::job(const JobDefaults &d) const {
    CaseJob job;
    job.name = result.name;
    job.backend = result.backend;
    job.settings = workload_.settings;
    job.nmse_threshold = result.nmse_threshold;
    job.timer_overhead = d.timer_overhead;
    job.verify = d.verify;
    job.detail = WorkloadJob{workload_.kind, workload_.name, workload_.decoder, phase_};
    job.one_process = true; // its layer check and whole-model figures belong to the process that prepared it
    return job;
}

void WorkloadEntry::activated(const Activation &a) {
    Entry::activated(a);
    if (!a.detail.is_null()) activation_ = a.detail.get<WorkloadActivation>();
}

void WorkloadEntry::finished(const FinishRecord &f) {
    Entry::finished(f);
    if (f.detail.is_null() || result.status != CaseStatus::passed) return;
    const WorkloadTail tail = f.detail.get<WorkloadTail>();
    if (!tail.failure.empty()) {
        result.status = CaseStatus::failed;
        result.reason = tail.failure;
        return;
    }
    figures_ = workload_figures(result.repetitions, activation_, tail, workload_.decoder, result.memory);
}

CallWork WorkloadEntry::call_work() const {
    return CallWork{activation_.flops_per_call, activation_.bytes_per_call, workload_.decoder.dtype,
                    workload_.decoder.threads};
}

EntryFacts WorkloadEntry::identity_facts() const {
    EntryFacts f;
    f.op = workload_.kind;
    f.variant = variant_name(OPB_OP_ATTENTION, workload_.decoder.attention_variant);
    f.dtype = dtype_name(workload_.decoder.dtype);
    f.flops = activation_.flops_per_call;
    f.bytes = activation_.bytes_per_call;
    return f;
}

nlohmann::json WorkloadEntry::fields() const {
    const DecoderConfig &c = workload_.decoder;
    nlohmann::json j;
    j["op"] = workload_.kind;
    j["backend"] = result.backend;
    j["dtype"] = dtype_name(c.dtype);
    j["variant"] = variant_name(OPB_OP_ATTENTION, c.attention_variant);
    j["case"] = workload_.name;
    j["phase"] = phase_name(phase_);
    j["params"] = decoder_shape_json(c);
    j["params"]["tokens_per_call"] = activation_.tokens_per_call;
    j["workload"] = {{"kind", workload_.kind},
                     {"name", workload_.name},
                     {"norm", norm_name(c.norm)},
                     {"mlp", mlp_name(c.mlp)},
                     {"gelu", variant_name(OPB_OP_GELU, c.gelu_variant)},
                     {"bias", c.bias},
                     {"attention", variant_name(OPB_OP_ATTENTION, c.attention_variant)},
                     {"seed", c.seed}};
    j["flops"] = activation_.flops_per_call;
    j["bytes"] = activation_.bytes_per_call;
    j["arithmetic_intensity"] =
        activation_.bytes_per_call > 0 ? activation_.flops_per_call / activation_.bytes_per_call : 0.0;
    const nlohmann::json measurement = measurement_fields(result, workload_.settings, c.threads, workload_.where);
    for (const auto &[k, v] : measurement.items()) j[k] = v;
    j["nmse_where"] =
        activation_.check_where.empty() ? nlohmann::json(nullptr) : nlohmann::json(activation_.check_where);
    j["decoder"] = figures_ ? figures_json(*figures_) : nlohmann::json(nullptr);
    return j;
}

nlohmann::json WorkloadEntry::counters(const RepetitionRecord &rec) const {
    const double t = rec.throttled ? 0.0 : rec.summary.median; // throttled: no rate (issue 41)
    auto rate = [t](double per_call) { return t > 0 ? per_call / t : 0.0; };
    return {{"tokens/s", rate(double(activation_.tokens_per_call))},
            {"FLOP/s", rate(activation_.flops_per_call)},
            {"bytes/s", rate(activation_.bytes_per_call)},
            {"samples", double(rec.summary.n)}};
}

std::string WorkloadEntry::label(const RepetitionRecord &rec) const {
    std::vector<double> ms;
    const double per_unit = double(std::max<int64_t>(1, activation_.tokens_per_unit));
    for (double u : rec.unit_seconds) ms.push_back(u * 1e3 / per_unit);
    std::sort(ms.begin(), ms.end());
    const double p50 = ms.empty() ? 0.0 : percentile_sorted(ms, 0.5);
    return noise_label(rec) + fmt::format(", {:.3g} ms/token p50", p50);
}

// Two lines an entry, so that the table fits 100 columns: the entry's name
// (with its dtype: one workload may come at several), then its figures.
void report_workload_figures(const std::vector<const WorkloadEntry *> &entries, std::ostream &out) {
    std::vector<const WorkloadEntry *> shown;
    for (const WorkloadEntry *e : entries)
        if (e->figures() && e->result.status == CaseStatus::passed) shown.push_back(e);
    if (shown.empty()) return;
    out << "\nWorkloads (tokens/s at the median call; ms per token over every unit timed; memory/token =\n"
           "  (peak - weights) / context tokens; components: shares of the steps' time from their spans, the\n"
           "  run's recorded samples when it profiles (not in tokens/s), else scoped calls after the timed\n"
           "  ones; unscoped: step time in no component):\n";
    out << "  workload / phase / backend dtype\n";
    out << fmt::format("  {:>10} {:>8} {:>8} {:>9} {:>10} {:>9} {:>10} {:>8}  {}\n", "tokens/s", "ms p50", "ms p99",
                       "peak MiB", "mem/token", "KV/token", "allocs/tok", "unscoped", "largest component");
    for (const WorkloadEntry *e : shown) {
        const DecoderFigures &f = *e->figures();
        std::string top = "-";
        double best = -1;
        for (const auto &c : f.components)
            if (c.share > best) best = c.share, top = fmt::format("{} {:.0f}%", c.component, 100 * c.share);
        out << fmt::format("  {} / {} / {} {}\n", e->source().name, phase_name(e->phase()), e->backend(),
                           dtype_name(e->source().decoder.dtype));
        // A throttled entry: no tokens/s (issue 41), the word instead.
        const bool throttled = e->result.summary && gives_no_rate(e->result.summary->quality);
        const std::string tokens = throttled ? "throttled" : fmt::format("{:.4g}", f.tokens_per_second);
        out << fmt::format("  {:>10} {:>8.4g} {:>8.4g} {:>9.1f} {:>8.1f}Ki {:>8}B {:>10.4g} {:>7.1f}%  {}\n",
                           tokens, f.ms_per_token_p50, f.ms_per_token_p99,
                           double(f.peak_bytes) / (1024.0 * 1024.0), f.memory_per_token_bytes / 1024.0,
                           f.kv_cache_bytes_per_token, f.allocs_per_token, 100 * f.unscoped_share, top);
    }
}

} // namespace opbench::workload
