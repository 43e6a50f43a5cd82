// Bottleneck analysis; see bottleneck.hpp and docs/bottlenecks.md.
#include "machine/bottleneck.hpp"
#include "writers/units.hpp"

#include "opbench/ops.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>

namespace opbench {

namespace {

// A positive number from an info value (plugins report strings), or 0.
double positive(const nlohmann::json &info, const char *key) {
    if (!info.is_object() || !info.contains(key)) return 0;
    const auto &v = info[key];
    double x = 0;
    if (v.is_number())
        x = v.get<double>();
    else if (v.is_string()) {
        const std::string s = v.get<std::string>();
        char *end = nullptr;
        x = std::strtod(s.c_str(), &end);
        if (end == s.c_str()) x = 0;
    }
    return std::isfinite(x) && x > 0 ? x : 0;
}

std::string whole_percent(double share) { return fmt::format("{:.0f}%", 100.0 * share); }
std::string pct1(double share) {
    return share < 0.1 ? fmt::format("{:.1f}%", 100.0 * share) : fmt::format("{:.0f}%", 100.0 * share);
}

std::string duration(double s) {
    if (s < 1e-6) return fmt::format("{:.0f} ns", s * 1e9);
    if (s < 1e-3) return fmt::format("{:.3g} us", s * 1e6);
    if (s < 1) return fmt::format("{:.3g} ms", s * 1e3);
    return fmt::format("{:.3g} s", s);
}

std::string severity_of_roof(double u, const BottleneckThresholds &t) {
    return u < t.roof_high_below ? "high" : u < t.roof_medium_below ? "medium" : "low";
}

// What helps a memory-bound op that already streams near the roof: move
// fewer bytes. The op table says how, for the variant or the op.
std::string fewer_bytes(const EntryFigures &e) {
    if (const auto op = op_from_name(e.op)) {
        const OpInfo &row = *op_info(*op);
        if (const auto v = variant_from_name(*op, e.variant); v && row.variants[std::size_t(*v)].fewer_bytes)
            return row.variants[std::size_t(*v)].fewer_bytes;
        if (row.fewer_bytes) return row.fewer_bytes;
    }
    return "reuse data while it is in cache (blocking) or use a smaller dtype (bf16 halves the bytes)";
}

} // namespace

int threads_used(int case_threads, const nlohmann::json &backend_info, int machine_cores) {
    if (const double fixed = positive(backend_info, "threads"); fixed >= 1) return int(fixed);
    if (case_threads > 0) return case_threads;
    if (const double def = positive(backend_info, "default_threads"); def >= 1) return int(def);
    return std::max(1, machine_cores);
}

std::optional<RoofPeaks> device_peaks_from_info(const nlohmann::json &backend_info, PeakKind kind) {
    double gflops = positive(backend_info, "peak_f32_gflops");
    if (kind == PeakKind::bf16)
        if (const double bf16 = positive(backend_info, "peak_bf16_gflops"); bf16 > 0) gflops = bf16;
    if (kind == PeakKind::int8)
        if (const double int8 = positive(backend_info, "peak_int8_gops"); int8 > 0) gflops = int8;
    const double gbps = positive(backend_info, "peak_bandwidth_gbps");
    if (gflops <= 0 || gbps <= 0) return std::nullopt;
    std::string source = "device peaks the backend reports";
    if (backend_info.is_object() && backend_info.contains("peak_source") && backend_info["peak_source"].is_string())
        source = fmt::format("device: {}", backend_info["peak_source"].get<std::string>());
    return RoofPeaks{gflops * 1e9, gbps * 1e9, source};
}

std::string backend_isa(const nlohmann::json &backend_info) {
    if (!backend_info.is_object()) return {};
    for (const char *key : {"onednn_isa", "cpu_isa"})
        if (backend_info.contains(key) && backend_info[key].is_string()) return backend_info[key].get<std::string>();
    return {};
}

std::optional<RoofPeaks> peaks_for(bool is_gpu, int threads, const MachinePeaks &machine,
                                   const std::optional<RoofPeaks> &device, PeakKind kind, double working_set_bytes,
                                   std::string_view isa) {
    if (is_gpu) return device; // a GPU is judged against its own roofs or none
    const ThreadPeaks p = machine.at_threads(threads);
    const ComputeRoof compute = compute_roof(machine, threads, kind, isa);
    const double gflops = compute.gflops;
    if (!(gflops > 0) || !(p.triad_gbps > 0)) return std::nullopt;
    const int n = std::max(1, threads);
    RoofPeaks peaks{gflops * 1e9, p.triad_gbps * 1e9, fmt::format("CPU, {} thread{}", n, n == 1 ? "" : "s")};
    // Named where the backend's ISA chose another roof than the dtype alone
    // would (AMX tiles, a backend held to AVX2), as a cache level is.
    if (!isa.empty() && compute.name != compute_roof(machine, threads, kind).name) peaks.source += ", " + compute.name;
    // classify()'s rule: the level's roof, never below DRAM's.
    if (const CacheRoof *roof = machine.roof_for(working_set_bytes, threads)) {
        peaks.bytes_per_s = std::max(peaks.bytes_per_s, machine.roof_gbps(*roof, threads) * 1e9);
        peaks.bandwidth_roof = roof->level;
        peaks.source += ", " + roof->level;
    }
    return peaks;
}

std::optional<DeviceRoofs> context_device_roofs(const nlohmann::json &backend) {
    if (!backend.is_object() || !backend.contains("device_roofs") || !backend["device_roofs"].is_object())
        return std::nullopt;
    try {
        return backend["device_roofs"].get<DeviceRoofs>();
    } catch (const std::exception &) {
        return std::nullopt; // another schema, or damaged: judged as without them
    }
}

std::optional<RoofPeaks> device_peaks(const nlohmann::json &backend, const RoofKey &key, PeakKind kind) {
    const auto roofs = context_device_roofs(backend);
    if (!roofs) {
        const nlohmann::json info = backend.is_object() && backend.contains("info") ? backend["info"] : nlohmann::json();
        return device_peaks_from_info(info, kind);
    }
    const EntryRoofs e = entry_roofs(*roofs, key.op, key.dtype, key.tf32());
    if (!e.compute || !e.bandwidth) // no roofline, and why: analyse()'s no_roofline_verdict says so
        return RoofPeaks{0, 0,
                         fmt::format("its device's plugin ({}) measured no {} roof", roofs->backend,
                                     !e.bandwidth         ? std::string("dram")
                                     : key.dtype != "f32" ? fmt::format("tensor {}", key.dtype)
                                     : key.tf32()         ? std::string("tensor tf32")
                                                          : std::string("simt f32"))};
    return RoofPeaks{e.compute->measured, e.bandwidth->measured,
                     fmt::format("device roofs measured by {}: {}, dram", roofs->backend, e.compute->label())};
}

namespace {

// Why a device without measured roofs is judged as it is (issue 41: said
// plainly where its entries are shown).
std::string without_device_roofs(const nlohmann::json &backend) {
    if (backend.contains("device_roofs_error") && backend["device_roofs_error"].is_string())
        return fmt::format("its plugin's roof measurement failed ({})", backend["device_roofs_error"].get<std::string>());
    const std::string abi = backend.value("plugin_abi", std::string("?"));
    return fmt::format("its plugin (ABI {}) measures no device roofs (ABI 1.5's measure_roofs)", abi);
}

// A GPU entry against the peaks its backend reports in its info (a plugin
// that measures no roofs): as before issue 41, said plainly.
Roofline reported_peaks_roofline(double flops, double bytes, double seconds_per_call, const nlohmann::json &backend,
                                 double fixed_cost_seconds, PeakKind kind) {
    const nlohmann::json info = backend.contains("info") ? backend["info"] : nlohmann::json();
    const auto dev = device_peaks_from_info(info, kind);
    if (!dev) {
        Roofline r;
        r.bound = "unknown"; // CPU peaks say nothing about a GPU
        return r;
    }
    // The device as a one-"thread" machine: classify() then reads its roofs.
    MachinePeaks device;
    device.cores = 1;
    device.one_thread = {1, dev->flops_per_s / 1e9, dev->flops_per_s / 1e9, dev->bytes_per_s / 1e9,
                         dev->bytes_per_s / 1e9};
    device.all_threads = device.one_thread;
    Roofline r = classify(flops, bytes, seconds_per_call, device, 1, fixed_cost_seconds, kind);
    if (r.bound == "unknown") return r;
    // The device's own roof, not a CPU kernel's: a bf16 / int8 case is
    // judged against the FP32 peak where the backend reports no peak of
    // its dtype (the cuda backend reports FP32 lanes only), and tensor
    // cores exceed that roof many times (H100, 2026-11-26: 951%).
    const char *dtype_key = kind == PeakKind::bf16 ? "peak_bf16_gflops" : kind == PeakKind::int8 ? "peak_int8_gops" : "";
    const bool own_dtype = kind == PeakKind::f32 || positive(info, dtype_key) > 0;
    r.compute_roof = own_dtype ? "device" : "device FP32";
    r.above_roof_cause.clear();
    if (r.pct_peak_compute > 100)
        r.above_roof_cause =
            own_dtype ? fmt::format("{:.0f}% of the device's reported peak ({}): faster than the backend says "
                                    "the device can go; its peak or the case's FLOP count is off",
                                    r.pct_peak_compute, dev->source)
                      : fmt::format("{:.0f}% of the device's FP32 peak ({}): the backend reports no {} peak "
                                    "({}), and {} runs on tensor cores, many times faster than FP32 lanes; {}",
                                    r.pct_peak_compute, dev->source, kind == PeakKind::bf16 ? "bf16" : "int8",
                                    dtype_key, kind == PeakKind::bf16 ? "bf16" : "int8",
                                    without_device_roofs(backend));
    if (r.pct_peak_bandwidth > 100)
        r.above_roof_cause += fmt::format("{}{:.0f}% of the device's memory bandwidth: its data stays in the "
                                          "GPU's caches between calls",
                                          r.above_roof_cause.empty() ? "" : "; ", r.pct_peak_bandwidth);
    return r;
}

} // namespace

Roofline roofline_for(double flops, double bytes, double seconds_per_call, const nlohmann::json &backend,
                      int case_threads, const MachinePeaks &machine, double fixed_cost_seconds, PeakKind kind,
                      double working_set_bytes, const RoofKey &key) {
    const nlohmann::json info = backend.is_object() && backend.contains("info") ? backend["info"] : nlohmann::json();
    const bool gpu = backend.is_object() && backend.contains("device") && backend["device"].is_object() &&
                     backend["device"].value("kind", "") == "gpu";
    if (gpu) {
        // Each entry against the roof of the unit and dtype that ran it,
        // where the plugin measured its device's roofs (issue 41).
        if (const auto roofs = context_device_roofs(backend))
            return device_roofline(*roofs, key.op, key.dtype, key.tf32(), flops, bytes, seconds_per_call,
                                   fixed_cost_seconds);
        return reported_peaks_roofline(flops, bytes, seconds_per_call, backend, fixed_cost_seconds, kind);
    }
    return classify(flops, bytes, seconds_per_call, machine, threads_used(case_threads, info, machine.cores),
                    fixed_cost_seconds, kind, working_set_bytes, backend_isa(info));
}

namespace {

// 1. Overhead: the call is mostly the backend's fixed cost.
std::optional<Bottleneck> overhead_verdict(const EntryFigures &e, const BottleneckThresholds &t, double s) {
    Bottleneck b;
    if (e.call_overhead_s > 0 && s < t.overhead_factor * e.call_overhead_s) {
        const double share = std::min(1.0, e.call_overhead_s / s);
        b.kind = "overhead";
        b.utilisation = 1.0 - share;
        b.headroom = share;
        b.severity = share >= t.overhead_high ? "high" : "medium";
        // A fixed cost measured at or above this call's time (a 1x1 add on a
        // noisy machine can take longer than a small op) is not a share of it.
        b.description = e.call_overhead_s >= s
                            ? fmt::format("{} per call, no more than {}'s fixed cost per call ({}, the smallest "
                                          "op's time): the call is all overhead, too little work per call",
                                          duration(s), e.backend, duration(e.call_overhead_s))
                            : fmt::format("{} per call, of which about {} ({}) is {}'s fixed cost per call "
                                          "(the smallest op's time): too little work per call",
                                          duration(s), duration(e.call_overhead_s), whole_percent(share), e.backend);
        b.suggestion = e.is_gpu ? "give each call more work (a larger batch or sequence), fuse small ops, "
                                  "or capture the calls in a CUDA graph"
                                : "give each call more work (a larger batch, several rows or heads per "
                                  "call) or fuse small ops, so the fixed cost is paid once for more work";
        return b;
    }
    return std::nullopt;
}

// 2. Launch-bound: the host takes at least as long to issue a call as the
// device takes to run it, so the device waits for the host however the kernel improves.
std::optional<Bottleneck> launch_verdict(const EntryFigures &e) {
    if (!e.is_gpu || !e.host_seconds || !e.device_seconds || !(*e.device_seconds > 0)) return std::nullopt;
    if (*e.host_seconds < *e.device_seconds) return std::nullopt;
    Bottleneck b;
    b.kind = "launch-bound";
    b.utilisation = std::min(1.0, *e.device_seconds / *e.host_seconds);
    b.headroom = std::clamp(1.0 - *e.device_seconds / std::max(e.seconds, *e.host_seconds), 0.0, 1.0);
    b.severity = *e.host_seconds >= 2 * *e.device_seconds ? "high" : "medium";
    b.description = fmt::format("the host spends {} issuing each call, the device {} running it: the launch, "
                                "not the kernel, sets the pace",
                                duration(*e.host_seconds), duration(*e.device_seconds));
    b.suggestion = "fuse it with its neighbours, batch more work into one call, or capture the calls in a "
                   "CUDA graph";
    return b;
}

// 3. Sync-bound: the device timer shows the device idle for most of the call.
// The call is the host's wall time where it was recorded beside the device
// timer (whose time is then the median itself).
std::optional<Bottleneck> sync_verdict(const EntryFigures &e, const BottleneckThresholds &t, double median) {
    Bottleneck b;
    const double s = e.wall_seconds && *e.wall_seconds > 0 ? *e.wall_seconds : median;
    if (e.is_gpu && e.device_seconds && *e.device_seconds > 0) {
        const double busy = std::min(1.0, *e.device_seconds / s);
        if (busy < t.device_busy_min) {
            b.kind = "sync-bound";
            b.utilisation = busy;
            b.headroom = 1.0 - busy;
            b.severity = busy < 0.25 ? "high" : "medium";
            b.description = fmt::format("the device is busy {} of the {} call ({}); the rest is launch, "
                                        "transfer and synchronisation on the host",
                                        whole_percent(busy), duration(s), duration(*e.device_seconds));
            b.suggestion = "submit more work between synchronisations (several ops or iterations per "
                           "sync, CUDA graphs) and keep host round trips out of the loop";
            return b;
        }
    }
    return std::nullopt;
}

// 3. Allocation churn: heap allocations in the timed call, at an estimated cost.
// Not for a device-timed entry: the host's allocations are not in its device
// time, and a host too slow to keep up is what launch-bound says.
std::optional<Bottleneck> allocation_verdict(const EntryFigures &e, const BottleneckThresholds &t, double s) {
    Bottleneck b;
    if (e.is_gpu && e.device_seconds) return std::nullopt;
    if (e.allocs >= 1) {
        const double bw = e.peaks ? e.peaks->bytes_per_s : 10e9;
        const double estimate = e.allocs * t.alloc_seconds_each + e.alloc_bytes / bw;
        const double share = std::min(1.0, estimate / s);
        if (share >= t.alloc_share_min) {
            b.kind = "allocation-churn";
            b.utilisation = 1.0 - share;
            b.headroom = share;
            b.severity = share >= t.alloc_share_high ? "high" : "medium";
            b.description = fmt::format("{:.3g} heap allocations ({}) per call, an estimated {} of its {}", e.allocs,
                                        format_bytes(e.alloc_bytes), whole_percent(share), duration(s));
            b.suggestion = "allocate in prepare (the plan's workspace) and reuse the buffers across calls";
            return b;
        }
    }
    return std::nullopt;
}

// 4a. No roofline without the peaks of the machine or the device.
std::optional<Bottleneck> no_roofline_verdict(const EntryFigures &e) {
    Bottleneck b;
    if (!e.peaks || !(e.peaks->flops_per_s > 0) || !(e.peaks->bytes_per_s > 0)) {
        b.kind = "unknown";
        b.severity = "none";
        b.description = e.is_gpu && e.peaks ? fmt::format("no roofline: {}, and CPU peaks do not apply to it",
                                                          e.peaks->source)
                        : e.is_gpu ? "no roofline: the GPU backend reports no device peaks, and CPU peaks "
                                     "do not apply to it"
                                   : "no roofline: the machine's peaks are not known";
        b.suggestion = e.is_gpu ? "measure the device's roofs (ABI 1.5's measure_roofs, `opbench machine`), or "
                                  "report peak_f32_gflops and peak_bandwidth_gbps in the backend's info"
                                : "run `opbench machine` to measure the peaks";
        return b;
    }
    return std::nullopt;
}

// 4b. The roofline, against the roofs for the threads or the device actually used.
Bottleneck roofline_verdict(const EntryFigures &e, const BottleneckThresholds &t, double s) {
    Bottleneck b;
    const RoofPeaks &p = *e.peaks;
    const double ai = e.bytes > 0 ? e.flops / e.bytes : std::numeric_limits<double>::infinity();
    const double ridge = p.flops_per_s / p.bytes_per_s;
    const bool memory_side = ai < ridge;
    const double u_bw = e.bytes / s / p.bytes_per_s, u_fl = e.flops / s / p.flops_per_s;
    // Utilisation of the roof at this intensity: the binding one.
    const double u = std::clamp(memory_side ? u_bw : u_fl, 0.0, 1.0);
    b.utilisation = u;
    b.headroom = 1.0 - u;
    const std::string roofs =
        fmt::format("{}: {:.3g} GFLOP/s, {:.3g} GB/s", p.source, p.flops_per_s / 1e9, p.bytes_per_s / 1e9);
    if (u < t.unoptimised_below) {
        b.kind = "unoptimised";
        b.severity = "high";
        b.description = fmt::format("{} of the {} roof it is bound by ({} of peak bandwidth, {} of peak "
                                    "FLOP/s; {}): far below both roofs",
                                    pct1(u), memory_side ? "bandwidth" : "compute", pct1(u_bw), pct1(u_fl), roofs);
        b.suggestion = e.backend == "naive" ? "the naive backend is the scalar reference: use an optimised backend "
                                              "(onednn, cuda) for this op"
                                            : "vectorise the inner loop, block for the caches and use every thread "
                                              "the case allows; check which implementation the library picked";
        return b;
    }
    b.severity = severity_of_roof(u, t);
    if (memory_side) {
        b.kind = "memory-bound";
        b.description = fmt::format("{} of peak bandwidth at {:.3g} FLOP/byte, below the ridge at {:.3g} "
                                    "({})",
                                    whole_percent(u), ai, ridge, roofs);
        // Faster than its level's roof (DRAM's for a cold cache or a working
        // set no cache holds): the data sits in a faster level.
        if (u_bw > 1.0)
            b.description += p.bandwidth_roof == "DRAM"
                                 ? fmt::format(": {:.3g} GB/s, faster than memory, so its data stays in cache",
                                               e.bytes / s / 1e9)
                                 : fmt::format(": {:.3g} GB/s, faster than the {} roof, so its data stays in a "
                                               "faster level",
                                               e.bytes / s / 1e9, p.bandwidth_roof);
        b.suggestion = u >= t.roof_medium_below
                           ? fmt::format("near the bandwidth roof: only moving fewer bytes helps; {}", fewer_bytes(e))
                       : e.threads == 1
                           ? fmt::format("stream the data contiguously with wide (SIMD) loads; it runs on one "
                                         "thread, and more threads raise this roof; then {}",
                                         fewer_bytes(e))
                           : fmt::format("stream the data contiguously with wide (SIMD) loads, split evenly "
                                         "over the {} threads; then {}",
                                         e.threads, fewer_bytes(e));
    } else {
        b.kind = "compute-bound";
        b.description = fmt::format("{} of peak FLOP/s at {:.3g} FLOP/byte, above the ridge at {:.3g} ({})", whole_percent(u), ai,
                                    ridge, roofs);
        // Faster than the roof: the run's entry-specific cause (issue 28).
        if (u_fl > 1.0)
            b.description += !e.above_roof_cause.empty()
                                 ? ": " + e.above_roof_cause
                                 : fmt::format(": {:.3g} GFLOP/s, faster than that roof", e.flops / s / 1e9);
        b.suggestion = u >= t.roof_medium_below
                           ? "near the compute roof: fewer FLOPs (a smaller dtype on matrix units: bf16, "
                             "AMX / tensor cores) or more threads are what is left"
                       : e.backend == "naive"
                           ? "the naive backend is the scalar reference: use an optimised backend (onednn, cuda) "
                             "for this op"
                           : "check which implementation the library dispatched (ONEDNN_VERBOSE=1 / the profiler) "
                             "and the layout, dtype and threads it was given; a kernel of your own needs register "
                             "blocking, FMA-wide vectors and every thread the case allows";
    }
    return b;
}

} // namespace

Bottleneck analyse(const EntryFigures &e, const BottleneckThresholds &t) {
    if (!(e.seconds > 0) || !std::isfinite(e.seconds)) {
        Bottleneck b;
        b.kind = "unknown";
        b.severity = "none";
        b.description = "no time was measured";
        b.suggestion = "none";
        return b;
    }
    const double s = e.seconds;
    // The rules in order; the first that applies gives the verdict.
    if (auto b = overhead_verdict(e, t, s)) return *b;
    if (auto b = launch_verdict(e)) return *b;
    if (auto b = sync_verdict(e, t, s)) return *b;
    if (auto b = allocation_verdict(e, t, s)) return *b;
    if (auto b = no_roofline_verdict(e)) return *b;
    return roofline_verdict(e, t, s);
}

nlohmann::json to_json(const Bottleneck &b) {
    return {{"kind", b.kind},         {"severity", b.severity},       {"utilisation", b.utilisation},
            {"headroom", b.headroom}, {"description", b.description}, {"suggestion", b.suggestion}};
}

} // namespace opbench
