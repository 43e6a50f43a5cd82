// Machine characterisation: the peaks' JSON and per-machine cache, roofline
// classification and the CPU context; see machine.hpp. The peak kernels and
// measure_machine() are measure_peaks.cpp's.
#include "machine/machine.hpp"
#include "machine/peak_bounds.hpp"
#include "machine/system_readers.hpp"

#include "files/trust.hpp"

#include "files/atomic_file.hpp"

#include "opbench/plugin.h"

#include <fmt/format.h>

#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cerrno>
#include <climits>
#include <cstdint>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <limits>
#include <memory>
#include <set>
#include <sstream>
#include <stdexcept>
#include <thread>
#include <vector>

#include "opbench/host_cpu.hpp"

namespace opbench {

// --- ThreadPeaks / MachinePeaks ------------------------------------------------------

ThreadPeaks MachinePeaks::at_threads(int threads) const {
    if (threads <= 1 || cores <= 1) return one_thread;
    if (threads >= cores) return all_threads;
    const double t = static_cast<double>(threads - 1) / static_cast<double>(cores - 1);
    auto lerp = [t](double lo, double hi) { return lo + t * (hi - lo); };
    ThreadPeaks p;
    p.threads = threads;
    p.f32_gflops = lerp(one_thread.f32_gflops, all_threads.f32_gflops);
    p.bf16_gflops = lerp(one_thread.bf16_gflops, all_threads.bf16_gflops);
    p.triad_gbps = lerp(one_thread.triad_gbps, all_threads.triad_gbps);
    p.copy_gbps = lerp(one_thread.copy_gbps, all_threads.copy_gbps);
    p.int8_gops = lerp(one_thread.int8_gops, all_threads.int8_gops);
    p.amx_bf16_gflops = lerp(one_thread.amx_bf16_gflops, all_threads.amx_bf16_gflops);
    p.amx_int8_gops = lerp(one_thread.amx_int8_gops, all_threads.amx_int8_gops);
    p.avx2_f32_gflops = lerp(one_thread.avx2_f32_gflops, all_threads.avx2_f32_gflops);
    p.avx2_int8_gops = lerp(one_thread.avx2_int8_gops, all_threads.avx2_int8_gops);
    return p;
}

PeakKind peak_kind(int dtype) {
    if (dtype == OPB_DTYPE_S8) return PeakKind::int8;
    return dtype == OPB_DTYPE_F32 ? PeakKind::f32 : PeakKind::bf16;
}
PeakKind peak_kind(std::string_view dtype_name) {
    if (dtype_name == "s8") return PeakKind::int8;
    return dtype_name == "f32" ? PeakKind::f32 : PeakKind::bf16;
}

std::uint64_t CacheRoof::capacity(int threads, int cores) const {
    // Threads are pinned one per allowed CPU in order, so they fill whole
    // instances of the cache before they reach another one.
    const int used = std::clamp(threads, 1, std::max(1, cores));
    const int instances = (used + sharing_cpus - 1) / sharing_cpus;
    return bytes * static_cast<std::uint64_t>(instances);
}

const CacheRoof *MachinePeaks::roof_for(double working_set_bytes, int threads) const {
    if (!(working_set_bytes > 0)) return nullptr;
    for (const CacheRoof &roof : cache_roofs)
        if (roof.all_threads_gbps > 0 && working_set_bytes <= static_cast<double>(roof.capacity(threads, cores)))
            return &roof;
    return nullptr;
}

double MachinePeaks::roof_gbps(const CacheRoof &roof, int threads) const {
    if (threads <= 1 || cores <= 1) return roof.one_thread_gbps;
    if (threads >= cores) return roof.all_threads_gbps;
    const double t = static_cast<double>(threads - 1) / static_cast<double>(cores - 1);
    return roof.one_thread_gbps + t * (roof.all_threads_gbps - roof.one_thread_gbps);
}

// An int field of a cache file. nlohmann converts a floating-point value to
// int with a plain cast, undefined beyond int's range (found by fuzzing
// tests/fuzz/fuzz_result_set.cpp), so only JSON integers in range are taken.
int int_field(const nlohmann::json &j, const char *key) {
    const nlohmann::json &v = j.at(key);
    if (v.is_number_integer()) {
        const auto n = v.get<std::int64_t>();
        if (v.is_number_unsigned() ? v.get<std::uint64_t>() <= INT_MAX : n >= INT_MIN && n <= INT_MAX)
            return static_cast<int>(n);
    }
    throw std::runtime_error(std::string("machine peaks: '") + key + "' is not an integer in int's range");
}

void to_json(nlohmann::json &j, const MachinePeaks &p) {
    // The version the figures were measured under: a schema-1 reading stays
    // 1 when written again, so it is never taken for one that tried AMX.
    j = {{"schema_version", p.schema_version},
         {"cpu_model", p.cpu_model},
         {"cores", p.cores},
         {"one_thread", p.one_thread},
         {"all_threads", p.all_threads},
         {"fma_isa", p.fma_isa},
         {"has_bf16", p.has_bf16},
         {"int8_isa", p.int8_isa},
         {"amx", p.amx},
         {"notes", p.notes},
         {"measured_at", p.measured_at},
         {"measure_seconds", p.measure_seconds},
         {"method", p.method},
         {"cache_roofs", p.cache_roofs}};
}

void from_json(const nlohmann::json &j, MachinePeaks &p) {
    const int version = int_field(j, "schema_version");
    if (version < kMachinePeaksOldestSchemaVersion || version > kMachinePeaksSchemaVersion)
        throw std::runtime_error("machine peaks schema version " + std::to_string(version) + ", expected " +
                                 std::to_string(kMachinePeaksOldestSchemaVersion) + " to " +
                                 std::to_string(kMachinePeaksSchemaVersion));
    p.schema_version = version;
    j.at("cpu_model").get_to(p.cpu_model);
    p.cores = int_field(j, "cores");
    for (auto [key, peaks] : {std::pair{"one_thread", &p.one_thread}, std::pair{"all_threads", &p.all_threads}}) {
        nlohmann::json figures = j.at(key);
        // ThreadPeaks' own reading (a macro's) takes any number as its thread count.
        (void)int_field(figures, "threads");
        // Optional: caches and result sets from before the int8 peak (0: not measured).
        if (!figures.contains("int8_gops")) figures["int8_gops"] = 0.0;
        // Optional: schema 1 had no AMX peaks (0: not measured).
        for (const char *amx_key : {"amx_bf16_gflops", "amx_int8_gops", "avx2_f32_gflops", "avx2_int8_gops"})
            if (!figures.contains(amx_key)) figures[amx_key] = 0.0;
        figures.get_to(*peaks);
    }
    j.at("fma_isa").get_to(p.fma_isa);
    j.at("has_bf16").get_to(p.has_bf16);
    p.int8_isa = j.contains("int8_isa") ? j.at("int8_isa").get<std::string>() : std::string(); // optional
    p.amx = j.contains("amx") ? j.at("amx").get<std::string>() : std::string();                // schema 2
    j.at("notes").get_to(p.notes);
    j.at("measured_at").get_to(p.measured_at);
    j.at("measure_seconds").get_to(p.measure_seconds);
    j.at("method").get_to(p.method);
    // Optional: machine caches and result sets from before the cache roofs.
    // CacheRoof's macro casts any number to its counts, so they are checked first.
    p.cache_roofs.clear();
    if (j.contains("cache_roofs")) {
        for (const nlohmann::json &roof : j.at("cache_roofs")) {
            if (int_field(roof, "sharing_cpus") < 1) throw std::runtime_error("machine peaks: 'sharing_cpus' < 1");
            if (!roof.at("bytes").is_number_unsigned()) throw std::runtime_error("machine peaks: 'bytes' not a count");
        }
        j.at("cache_roofs").get_to(p.cache_roofs);
    }
}

// --- cache ---------------------------------------------------------------------------

std::filesystem::path machine_cache_dir() {
    auto env = [](const char *name) -> std::string {
        const char *v = std::getenv(name);
        return v ? v : "";
    };
    if (auto d = env("OPBENCH_CACHE_DIR"); !d.empty()) return d;
    if (auto d = env("XDG_CACHE_HOME"); !d.empty()) return std::filesystem::path(d) / "opbench";
    if (auto d = env("HOME"); !d.empty()) return std::filesystem::path(d) / ".cache" / "opbench";
    // No fixed shared path (such as /tmp/opbench-cache): another user could
    // plant files or symlinks there. No cache instead.
    return {};
}

std::string cache_dir_problem(const std::filesystem::path &dir) {
    if (dir.empty()) return "no cache directory: none of OPBENCH_CACHE_DIR, XDG_CACHE_HOME or HOME is set";
    if (std::string why = trust_problem(dir); !why.empty())
        return "cache directory " + dir.string() + " not used: " + why;
    return "";
}

std::filesystem::path machine_cache_path(const std::filesystem::path &dir, const std::string &cpu_model, int cores) {
    char hex[17];
    std::snprintf(hex, sizeof hex, "%016llx",
                  static_cast<unsigned long long>(detail::fnv1a64(cpu_model + "|" + std::to_string(cores))));
    return dir / ("machine-" + std::string(hex) + ".json");
}

std::optional<MachinePeaks> load_machine_peaks(const std::filesystem::path &path) {
    std::ifstream in(path);
    if (!in) return std::nullopt;
    try {
        return nlohmann::json::parse(in).get<MachinePeaks>();
    } catch (const std::exception &) {
        return std::nullopt; // corrupt or another version: the caller re-measures
    }
}

void save_machine_peaks(const MachinePeaks &peaks, const std::filesystem::path &path) {
    write_file_atomically(path.string(), nlohmann::json(peaks).dump(2) + "\n");
}

CachedMachinePeaks load_or_measure(bool remeasure, const std::filesystem::path &dir, const MeasureOptions &options) {
    CachedMachinePeaks r;
    const std::string model = cpu_model_name();
    const int cores = allowed_cpu_count();
    if (std::string why = cache_dir_problem(dir); !why.empty()) {
        r.peaks = measure_machine(options);
        r.warning = why;
        return r;
    }
    r.path = machine_cache_path(dir, model, cores);
    if (!remeasure) {
        // The hash could collide and a file could be copied between machines:
        // trust it only when it names this CPU and core count.
        // A cache from before the cache roofs, the int8 peak or the AMX peaks
        // (schema 1) is measured again.
        if (auto cached = load_machine_peaks(r.path); cached && cached->cpu_model == model && cached->cores == cores &&
                                                      (!cached->cache_roofs.empty() ||
                                                       detail::cache_levels(detail::allowed_cpus()).empty()) &&
                                                      (cached->one_thread.int8_gops > 0 || !*detail::int8_kernel_isa()) &&
                                                      cached->schema_version == kMachinePeaksSchemaVersion) {
            r.remeasured_because = implausible_peaks(*cached);
            if (r.remeasured_because.empty()) {
                r.peaks = *cached;
                r.from_cache = true;
                return r;
            }
        }
    }
    r.peaks = measure_machine(options);
    try {
        save_machine_peaks(r.peaks, r.path);
    } catch (const std::exception &e) {
        r.warning = e.what();
        r.path.clear();
    }
    return r;
}

std::string peaks_origin_line(const CachedMachinePeaks &c) {
    if (c.from_cache) return "";
    std::string line = "opbench: ";
    if (!c.remeasured_because.empty())
        line += fmt::format("the cached machine peaks were not used ({}): ", c.remeasured_because);
    line += fmt::format("measured this machine's peaks for the rooflines in {:.1f} s", c.peaks.measure_seconds);
    if (c.warning.empty()) return line + fmt::format(" (once; cached in {})", c.path.string());
    return line + fmt::format("; not cached ({}), so each run measures them again: set OPBENCH_CACHE_DIR to a "
                              "writable directory to keep them",
                              c.warning);
}

// --- roofline ------------------------------------------------------------------------

namespace {

std::string percent(double pct) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.0f%%", pct);
    return buf;
}

// Roofline::above_roof_cause: the most specific reason known for this entry.
std::string above_roof_cause(const Roofline &r, const MachinePeaks &peaks, PeakKind kind, std::string_view isa) {
    std::vector<std::string> causes;
    const bool amx_isa = isa.find("amx") != std::string_view::npos;
    const std::string ran = isa.empty() ? std::string("the backend names no ISA")
                                        : "the backend ran " + std::string(isa);
    if (r.pct_peak_compute > 100) {
        const std::string head = percent(r.pct_peak_compute) + " of the " + r.compute_roof + " roof: ";
        if (amx_isa && kind != PeakKind::f32 && r.compute_roof.rfind("AMX", 0) != 0)
            causes.push_back(head + ran + " (AMX tiles), whose peak is not measured here (" +
                             (peaks.amx.empty() ? std::string("figures from before the AMX peaks: run opbench "
                                                              "machine --refresh")
                                                : peaks.amx) +
                             ")");
        else if (r.compute_roof.rfind("AMX", 0) == 0)
            causes.push_back(head + "faster than the tile loop's best (" + ran +
                             "): the case does fewer multiply-adds than its model counts (zero or skipped blocks)");
        else
            causes.push_back(head + ran + ": it does fewer FLOPs than its model counts, or uses instructions "
                                          "faster than that roof's kernel");
    }
    if (r.pct_peak_bandwidth > 100)
        causes.push_back(percent(r.pct_peak_bandwidth) + " of the " + r.bandwidth_roof +
                         " triad roof: its data sits in a faster level than its size suggests (reuse across calls), "
                         "or it moves fewer bytes than its model counts");
    std::string out;
    for (const std::string &c : causes) out += (out.empty() ? "" : "; ") + c;
    return out;
}

} // namespace

ComputeRoof compute_roof(const MachinePeaks &peaks, int threads, PeakKind kind, std::string_view isa) {
    const ThreadPeaks p = peaks.at_threads(threads);
    const bool named = !isa.empty() && isa != "all" && isa != "unknown";
    // oneDNN's names: avx512_core_amx has AMX tiles; avx512_core_bf16 and
    // above vdpbf16ps; avx512_core_vnni and above vpdpbusd; avx2, avx2_vnni,
    // avx and sse41 no AVX-512 at all.
    const bool amx = named && isa.find("amx") != std::string_view::npos;
    const bool avx512 = !named || isa.rfind("avx512", 0) == 0;
    const bool avx512_bf16 = !named || amx || isa.find("bf16") != std::string_view::npos;
    const bool avx512_vnni = !named || (avx512 && isa != "avx512_core");
    auto f32_roof = [&]() -> ComputeRoof {
        if (!avx512 && p.avx2_f32_gflops > 0) return {p.avx2_f32_gflops, "AVX2 FMA"};
        return {p.f32_gflops, peaks.fma_isa == "avx512f"    ? "AVX-512 FMA"
                              : peaks.fma_isa == "avx2+fma" ? "AVX2 FMA"
                                                            : "scalar FMA"};
    };
    switch (kind) {
    case PeakKind::bf16:
        if (amx && p.amx_bf16_gflops > 0) return {p.amx_bf16_gflops, "AMX-BF16"};
        if (avx512_bf16 && p.bf16_gflops > 0) return {p.bf16_gflops, "AVX512-BF16"};
        return f32_roof(); // no bf16 instructions: the products are f32 FMAs
    case PeakKind::int8:
        if (amx && p.amx_int8_gops > 0) return {p.amx_int8_gops, "AMX-INT8"};
        if (avx512_vnni && p.int8_gops > 0)
            return {p.int8_gops, peaks.int8_isa == "avx512_vnni" ? "AVX512-VNNI" : "AVX2 int8"};
        if (p.avx2_int8_gops > 0) return {p.avx2_int8_gops, "AVX2 int8"};
        if (p.int8_gops > 0) return {p.int8_gops, peaks.int8_isa == "avx512_vnni" ? "AVX512-VNNI" : "AVX2 int8"};
        return f32_roof();
    case PeakKind::f32: break;
    }
    return f32_roof();
}

Roofline classify(double flops, double bytes, double seconds_per_call, const MachinePeaks &peaks, int threads,
                  double fixed_cost_seconds, PeakKind kind, double working_set_bytes, std::string_view isa) {
    Roofline r;
    r.bound = "unknown";
    if (!(seconds_per_call > 0) || !std::isfinite(seconds_per_call) || !(flops >= 0) || !(bytes >= 0)) return r;
    const ThreadPeaks p = peaks.at_threads(threads);
    const ComputeRoof roof = compute_roof(peaks, threads, kind, isa);
    const double peak_gflops = roof.gflops;
    if (!(peak_gflops > 0) || !(p.triad_gbps > 0)) return r;
    r.compute_roof = roof.name;
    r.compute_roof_by_isa = !isa.empty() && roof.name != compute_roof(peaks, threads, kind).name;
    double bw_gbps = p.triad_gbps;
    if (const CacheRoof *roof = peaks.roof_for(working_set_bytes, threads)) {
        r.bandwidth_roof = roof->level;
        bw_gbps = std::max(bw_gbps, peaks.roof_gbps(*roof, threads)); // never below DRAM's
    }
    const double peak_flops = peak_gflops * 1e9, peak_bw = bw_gbps * 1e9;
    r.pct_peak_compute = 100.0 * flops / seconds_per_call / peak_flops;
    r.pct_peak_bandwidth = 100.0 * bytes / seconds_per_call / peak_bw;
    r.arithmetic_intensity = bytes > 0 ? flops / bytes : std::numeric_limits<double>::infinity();
    r.ridge_point = peak_flops / peak_bw;
    r.above_roof_cause = above_roof_cause(r, peaks, kind, isa);
    const bool nothing_to_do = flops == 0 && bytes == 0;
    if (nothing_to_do || (fixed_cost_seconds > 0 && seconds_per_call < 5 * fixed_cost_seconds))
        r.bound = "overhead-bound";
    else
        r.bound = r.arithmetic_intensity >= r.ridge_point ? "compute-bound" : "memory-bound";
    return r;
}

// --- context -------------------------------------------------------------------------

std::uint64_t llc_bytes() { return host::last_level_cache_bytes(); }

std::string cpu_model_name() {
    std::string m = host::cpu_model_name();
    return m.empty() ? "unknown" : m;
}

int allowed_cpu_count() { return static_cast<int>(detail::allowed_cpus().size()); }

nlohmann::json cpu_context() {
    using nlohmann::json;
    json j;
    j["cpu_model"] = cpu_model_name();

    const auto flags = detail::cpuinfo_flags();
    json isa = json::object();
    for (const char *f : {"avx2", "fma", "avx512f", "avx512_bf16", "avx512_fp16", "amx_tile", "amx_bf16", "amx_int8"})
        isa[f] = flags.count(f) > 0;
    j["isa"] = isa;

    // Logical CPUs and physical cores from /proc/cpuinfo's (physical id, core id)
    // pairs; a VM may omit them, then physical_cores is null.
    int logical = 0;
    std::set<std::pair<std::string, std::string>> physical;
    {
        std::ifstream in("/proc/cpuinfo");
        std::string line, phys_id;
        while (std::getline(in, line)) {
            const auto colon = line.find(':');
            if (colon == std::string::npos) continue;
            std::string key = line.substr(0, colon);
            while (!key.empty() && (key.back() == ' ' || key.back() == '\t')) key.pop_back();
            std::string value = line.substr(colon + 1);
            value.erase(0, value.find_first_not_of(' '));
            if (key == "processor") ++logical;
            if (key == "physical id") phys_id = value;
            if (key == "core id") physical.insert({phys_id, value});
        }
    }
    if (logical == 0) logical = static_cast<int>(std::thread::hardware_concurrency());
    j["logical_cores"] = logical;
    j["allowed_cores"] = allowed_cpu_count();
    j["physical_cores"] = physical.empty() ? json(nullptr) : json(physical.size());

    std::uint64_t mem_kib = 0;
    {
        std::ifstream in("/proc/meminfo");
        std::string key;
        while (in >> key) {
            if (key == "MemTotal:") {
                in >> mem_kib;
                break;
            }
            in.ignore(std::numeric_limits<std::streamsize>::max(), '\n');
        }
    }
    j["memory_total_bytes"] = mem_kib ? json(mem_kib * 1024) : json(nullptr);
    const std::uint64_t llc = llc_bytes();
    j["llc_bytes"] = llc ? json(llc) : json(nullptr);

    // Google Benchmark's rule: scaling is on unless the governor is
    // "performance". No cpufreq directory (common in VMs) means we cannot tell.
    const std::string governor = host::first_line("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor");
    j["frequency_governor"] = governor.empty() ? "unknown" : governor;
    j["cpu_scaling_enabled"] = governor.empty() ? json(nullptr) : json(governor != "performance");
    const std::string boost = host::first_line("/sys/devices/system/cpu/cpufreq/boost");
    const std::string no_turbo = host::first_line("/sys/devices/system/cpu/intel_pstate/no_turbo");
    j["turbo_boost"] = !boost.empty()      ? json(boost == "1")
                       : !no_turbo.empty() ? json(no_turbo == "0")
                                           : json("unknown");

    utsname u{};
    if (uname(&u) == 0)
        j["kernel"] = std::string(u.sysname) + " " + u.release + " " + u.version + " " + u.machine;
    else
        j["kernel"] = "unknown";

    double load[3];
    if (getloadavg(load, 3) == 3)
        j["load_average"] = {load[0], load[1], load[2]};
    else
        j["load_average"] = nullptr;
    return j;
}

} // namespace opbench
