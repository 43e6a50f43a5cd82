#include "measure/bottleneck_rules.hpp"

#include "measure/json_member.hpp"
#include "writers/units.hpp"

#include <fmt/format.h>

#include <cmath>

namespace opbench {

std::string gap_bound_text(double kernels_per_call, double gap_share, double gap_seconds_per_call) {
    return fmt::format("gap-bound: the device idles {:.0f}% of the call's device time ({} per call) between its "
                       "{:g} kernels, above the {:.0f}% the rule allows; fuse the steps into one kernel (the fused "
                       "variant), or capture the calls in a CUDA graph to close the launch gaps",
                       100.0 * gap_share, format_seconds(gap_seconds_per_call), kernels_per_call,
                       100.0 * kGapBoundShare);
}

RunFacts run_facts(const nlohmann::json &ctx) {
    RunFacts r;
    if (const nlohmann::json &be = json_member(ctx, "backends"); be.is_object())
        for (const auto &[name, context] : be.items()) r.backends[name] = context;
    const nlohmann::json &overheads = json_member(json_member(ctx, "measurement"), "call_overhead_seconds");
    if (overheads.is_object())
        for (const auto &[name, seconds] : overheads.items())
            if (seconds.is_number()) r.call_overhead_seconds[name] = seconds.get<double>();
    if (const nlohmann::json &peaks = json_member(ctx, "machine_peaks"); peaks.is_object()) {
        try {
            r.machine = peaks.get<MachinePeaks>();
        } catch (const std::exception &) {
            r.machine = MachinePeaks{}; // another schema: no CPU roofs
        }
    }
    return r;
}

EntryFigures entry_figures(const EntryFacts &e, const RunFacts &run, double seconds) {
    EntryFigures f;
    f.op = e.op;
    f.variant = e.variant;
    f.backend = e.backend;
    f.seconds = seconds;
    f.flops = e.flops;
    f.bytes = e.bytes;
    f.allocs = e.allocs_per_call;
    f.alloc_bytes = e.alloc_bytes_per_call;
    f.above_roof_cause = e.above_roof_cause;
    f.device_seconds = e.device_seconds;
    f.host_seconds = e.host_seconds;
    f.wall_seconds = e.wall_seconds;
    const auto be = run.backends.find(e.backend);
    const nlohmann::json &context = be == run.backends.end() ? nlohmann::json() : be->second;
    const nlohmann::json &info = json_member(context, "info");
    f.is_gpu = json_member(json_member(context, "device"), "kind") == "gpu";
    if (const auto o = run.call_overhead_seconds.find(e.backend); o != run.call_overhead_seconds.end())
        f.call_overhead_s = o->second;
    f.threads = f.is_gpu ? 1 : threads_used(e.case_threads, info, run.machine.cores);
    const PeakKind kind = peak_kind(e.dtype);
    // The run's roofline rule (run_backends.cpp): a warm cache keeps the
    // bytes of a call in the smallest level that holds them; a cold one
    // reads them from DRAM.
    const double working_set = e.cold_cache ? 0.0 : f.bytes;
    // A GPU's: the roofs its plugin measured for this op and dtype (issue 41), else those its info reports.
    const auto device = f.is_gpu ? device_peaks(context, RoofKey{e.op, e.dtype, e.variant}, kind) : std::nullopt;
    f.peaks = peaks_for(f.is_gpu, f.threads, run.machine, device, kind, working_set, backend_isa(info));
    return f;
}

Bottleneck disturbed_verdict(const EntrySummary &summary) {
    Bottleneck b;
    b.kind = "disturbed";
    b.severity = "none";
    b.utilisation = 0;
    b.headroom = 0; // nothing to win in the kernel: ranked after every diagnosis
    b.description = summary.verdict() + ": the time measures the machine, not the kernel";
    if (summary.quality == Quality::throttled) {
        b.kind = "throttled";
        b.description = summary.verdict() + ": the time measures the device's clock, not the kernel";
        b.suggestion = "measure it again with the GPU cool and idle, its clocks at their default (nvidia-smi -q -d "
                       "PERFORMANCE names the throttle reason); docs/measurement.md, Throttled repetitions";
        return b;
    }
    b.suggestion = "measure it again with fewer threads waiting for a CPU: --threads 1, --cpus LIST (CPUs of its "
                   "own), a quieter machine, or interleaved repetitions "
                   "(--benchmark_enable_random_interleaving=true); docs/measurement.md";
    return b;
}

std::optional<Bottleneck> entry_bottleneck(const EntrySummary &summary, const EntryFacts &entry,
                                           const RunFacts &run) {
    if (!std::isfinite(summary.median_s)) return std::nullopt;
    if (says_nothing_of_kernel(summary.quality)) return disturbed_verdict(summary);
    return analyse(entry_figures(entry, run, summary.median_s));
}

} // namespace opbench
