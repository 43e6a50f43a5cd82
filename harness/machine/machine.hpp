// Machine characterisation (issue 5, "Machine characterisation and
// rooflines"): what this CPU can do at best, measured with real kernels, and
// where a measured case sits against it.
//
//   cpu_context()       what the machine is (model, ISA, cores, memory, LLC,
//                       frequency scaling, kernel, load) for result contexts;
//   measure_machine()   peak f32 / bf16 FMA throughput and STREAM triad / copy
//                       bandwidth on 1 thread and on all allowed cores;
//   load_or_measure()   the same, cached per machine on disk;
//   classify()          a case's % of peak and its roofline bound.
//
// The kernels are compiled with per-function target attributes and chosen by
// cpuid at run time, so the build needs no -march flag.
#pragma once

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace opbench {

// Version of the JSON written by to_json(MachinePeaks) and the cache file.
// 2 added the AMX tile peaks (issue 28). Version 1 still reads (result sets
// carry it; the AMX figures are then 0), but a version-1 cache file is
// measured again, since it never tried AMX.
inline constexpr int kMachinePeaksSchemaVersion = 2;
inline constexpr int kMachinePeaksOldestSchemaVersion = 1;

// Peaks at one thread count. Rates are per second for the whole group of
// threads. 0 means "not measured" (see MachinePeaks::notes).
struct ThreadPeaks {
    int threads = 0;
    double f32_gflops = 0;  // fused multiply-add, 2 flops per lane
    double bf16_gflops = 0; // AVX512-BF16 vdpbf16ps, 2 flops per bf16 pair; 0 without the ISA
    double triad_gbps = 0;  // a[i] = b[i] + s * c[i], doubles, 24 bytes per element
    double copy_gbps = 0;   // a[i] = b[i], doubles, 16 bytes per element
    // u8 x s8 multiply-accumulate into s32, 2 ops per MAC (MachinePeaks::int8_isa
    // says how); 0 when not measured (no kernel, or caches and sets from before it).
    double int8_gops = 0;
    // AMX tile peaks (issue 28): TDPBF16PS (16x16x32 bf16 pairs into f32,
    // 16384 flops per instruction) and TDPBSSD (16x16x64 s8 x s8 into s32,
    // 32768 ops). 0 when not measured: no AMX, or the kernel refused the tile
    // state (MachinePeaks::amx says why), or a cache / set from before them.
    double amx_bf16_gflops = 0;
    double amx_int8_gops = 0;
    // The AVX2 kernels' peaks on a CPU that also has AVX-512 (the roofs of a
    // backend held to AVX2, e.g. ONEDNN_MAX_CPU_ISA=AVX2); on an AVX2-only
    // CPU the same as f32_gflops / int8_gops; 0 before schema 2.
    double avx2_f32_gflops = 0;
    double avx2_int8_gops = 0;
};

// The triad bandwidth of one cache level: what a working set that fits the
// level reaches (Intel Advisor's cache-aware roofline). `bytes` is one
// instance of the cache; `sharing_cpus` of the allowed CPUs share one
// instance (a private L1/L2: 1, or 2 with SMT; an L3: often all).
struct CacheRoof {
    std::string level; // "L1d", "L2", "L3"
    std::uint64_t bytes = 0;
    int sharing_cpus = 1;
    double one_thread_gbps = 0;
    double all_threads_gbps = 0;

    // Bytes of this level that `threads` threads (one per CPU) can hold.
    [[nodiscard]] std::uint64_t capacity(int threads, int cores) const;
};

struct MachinePeaks {
    std::string cpu_model;
    int cores = 0;              // logical CPUs this process may run on (the "all cores" count)
    ThreadPeaks one_thread;     // threads == 1
    ThreadPeaks all_threads;    // threads == cores
    std::string fma_isa;        // kernel used for f32: "avx512f", "avx2+fma" or "scalar"
    bool has_bf16 = false;      // AVX512-BF16 present and measured
    std::string int8_isa;       // int8 kernel: "avx512_vnni" (vpdpbusd), "avx2" (vpmaddubsw); "" none
    // "measured" when the AMX peaks were measured, else why not (the CPU has
    // no AMX, the OS does not enable its state, the kernel refused it); ""
    // in caches and result sets from before schema 2.
    std::string amx;
    int schema_version = kMachinePeaksSchemaVersion; // as read (from_json) or written
    std::string notes;          // e.g. why bf16 is 0
    std::string measured_at;    // UTC, ISO 8601
    double measure_seconds = 0; // wall time measure_machine() took
    std::string method;         // short description of the kernels and rules
    // Faster roofs than DRAM's (one_thread/all_threads triad_gbps), smallest
    // level first; empty when sysfs names no cache or (older caches and
    // result sets) they were not measured.
    std::vector<CacheRoof> cache_roofs;

    // Peaks for `threads` threads: one_thread for threads <= 1, all_threads for
    // threads >= cores, linear interpolation between them otherwise.
    [[nodiscard]] ThreadPeaks at_threads(int threads) const;
    // The smallest cache level whose capacity at `threads` holds
    // `working_set_bytes`; nullptr for DRAM (none holds it, or 0 bytes: unknown).
    [[nodiscard]] const CacheRoof *roof_for(double working_set_bytes, int threads) const;
    // A roof's triad GB/s at `threads`, interpolated as at_threads() does.
    [[nodiscard]] double roof_gbps(const CacheRoof &roof, int threads) const;
};

// Every figure required; MachinePeaks' reading supplies the int8_gops that
// caches and result sets from before it lack.
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(ThreadPeaks, threads, f32_gflops, bf16_gflops, triad_gbps, copy_gbps, int8_gops,
                                   amx_bf16_gflops, amx_int8_gops, avx2_f32_gflops, avx2_int8_gops)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(CacheRoof, level, bytes, sharing_cpus, one_thread_gbps, all_threads_gbps)
// By hand: adds "schema_version", which is no member, and checks the
// integers and optional fields of older files before the macros read them
// (one of the 6 hand-written conversions left; harness/README.md). from_json throws
// nlohmann::json::exception for a missing or mistyped field and
// std::runtime_error for another schema version or an int field that is no
// integer in int's range (nlohmann's own cast of 1e300 to int is undefined).
void to_json(nlohmann::json &j, const MachinePeaks &p);
void from_json(const nlohmann::json &j, MachinePeaks &p);

// Knobs for measure_machine(); the defaults take ~2-4 s on 2 cores.
struct MeasureOptions {
    // Time spent on each figure (kernel x thread count), split into trials.
    double seconds_per_figure = 0.25;
    // Compute trials are short so that even on a loaded machine some of them run
    // with every thread on its CPU at once; the best trial is the figure.
    double compute_trial_seconds = 0.002;
    int min_trials = 5;
    // Bytes per bandwidth array; 0 = 4x the last-level cache, at least 64 MiB,
    // at most 512 MiB (STREAM's rule is >= 4x the LLC). One trial is one pass.
    std::size_t bandwidth_array_bytes = 0;
};

// Runs the kernels. Threads are std::threads pinned one per CPU of the
// process's affinity mask; each figure is the best of its trials.
[[nodiscard]] MachinePeaks measure_machine(const MeasureOptions &options = {});

// --- AMX ----------------------------------------------------------------------

// Whether this process may run AMX tile instructions. Linux gives a process
// the (8 KiB) tile data state only on request, so this asks for it:
// CPUID.(7,0):EDX AMX-TILE/AMX-BF16/AMX-INT8, then XCR0 bits 17-18 (the OS
// saves tile state), then arch_prctl(ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA).
// Any tile instruction without that grant kills the process with SIGILL, so
// nothing AMX runs unless `usable`.
struct AmxSupport {
    bool bf16 = false;   // TDPBF16PS may run
    bool int8 = false;   // TDPBSSD may run
    bool usable = false; // the CPU has AMX-TILE and the kernel granted tile data
    std::string problem; // why not usable: "" when usable
};
// Asked once per process (the grant is per process); later calls return the first answer.
[[nodiscard]] const AmxSupport &amx_support();

// --- cache ------------------------------------------------------------------

// $OPBENCH_CACHE_DIR, else $XDG_CACHE_HOME/opbench, else $HOME/.cache/opbench;
// empty (no cache) when none is set.
[[nodiscard]] std::filesystem::path machine_cache_dir();
// "" when `dir` may hold opbench's caches; else why not: no directory, or one
// that fails the trust rule (files/trust.hpp: a symlink others could redirect,
// an owner or writer other than root and you). Caches are then neither read
// nor written.
[[nodiscard]] std::string cache_dir_problem(const std::filesystem::path &dir);
// <dir>/machine-<16 hex digits of FNV-1a of "cpu_model|cores">.json
[[nodiscard]] std::filesystem::path machine_cache_path(const std::filesystem::path &dir, const std::string &cpu_model,
                                                       int cores);
// The cached peaks at `path`, or nullopt when the file is missing, unreadable,
// not valid JSON or of another schema version.
[[nodiscard]] std::optional<MachinePeaks> load_machine_peaks(const std::filesystem::path &path);
// Writes atomically (a temporary file in the same directory, then rename), so a
// reader never sees half a file. Creates the directory. Throws
// std::runtime_error naming the path on failure.
void save_machine_peaks(const MachinePeaks &peaks, const std::filesystem::path &path);

struct CachedMachinePeaks {
    MachinePeaks peaks;
    std::filesystem::path path; // cache file read or written; empty when none could be
    bool from_cache = false;
    std::string warning; // non-empty when the cache could not be written: why
    // A cache was found but its figures could not be this CPU's
    // (implausible_peaks): why they were measured again.
    std::string remeasured_because;
};
// The cached figures for this machine (same CPU model and core count) unless
// `remeasure`; otherwise measures and writes the cache. A failed write is
// reported in `warning`, not thrown: the figures are still good.
[[nodiscard]] CachedMachinePeaks load_or_measure(bool remeasure = false,
                                                 const std::filesystem::path &dir = machine_cache_dir(),
                                                 const MeasureOptions &options = {});
// What a command says of where its peaks came from, in one line (no newline):
// "" for a trusted cache; "measured ... in 2.1 s (once; cached in PATH)"; or,
// when the cache could not be written, that they were measured and are
// measured again each run, why, and how to keep them. A cache measured again
// because its figures were implausible says so first.
[[nodiscard]] std::string peaks_origin_line(const CachedMachinePeaks &c);

// --- roofline ---------------------------------------------------------------

enum class PeakKind { f32, bf16, int8 };

// The compute roof a description's dtype is measured against: bf16 and f16 the
// bf16 peak, s8 (int8 weights) the int8 peak, f32 the f32 one.
[[nodiscard]] PeakKind peak_kind(int dtype);
[[nodiscard]] PeakKind peak_kind(std::string_view dtype_name);

// What every view says when it shows a % of peak above 100 (issue 17:
// never one without a note).
inline constexpr std::string_view kAboveRoofNote =
    "% peak above 100%: faster than the measured roof (a best-of-trials triad or FMA loop per level): the case "
    "moves fewer bytes or does fewer FLOPs than its model counts, or its data sits in a faster level than its size "
    "suggests";

// The compute roof an entry is judged against (issue 28): the peak of the
// instructions its backend really ran, by name.
struct ComputeRoof {
    double gflops = 0;  // 0: none measured
    std::string name;   // "AMX-BF16", "AMX-INT8", "AVX512-BF16", "AVX512-VNNI", "AVX-512 FMA", "AVX2 FMA", ...
};

// The roof for `kind` at `threads`, following `isa`, the instruction set the
// backend reports it ran (oneDNN's effective ISA: "avx512_core_amx",
// "avx512_core_bf16", "avx2", ...; "" when the backend names none, then the
// machine's best non-AMX roof for the dtype, as before issue 28):
//   bf16  AMX-BF16 where the ISA has AMX and its peak was measured, else
//         AVX512-BF16 where the ISA allows it, else the f32 roof;
//   int8  AMX-INT8 likewise, else AVX512-VNNI, else the AVX2 int8 kernel;
//   f32   AVX-512 FMA, or AVX2 FMA where the ISA stops at AVX2.
[[nodiscard]] ComputeRoof compute_roof(const MachinePeaks &peaks, int threads, PeakKind kind,
                                       std::string_view isa = {});

// The device roof that judged a GPU entry (issue 41): the roof of the unit
// and dtype that ran it, as its plugin measured it (machine/device_roofs.hpp),
// and the entry's share of it. The result set's `roofline.device_roof`.
struct DeviceRoofJudgement {
    std::string roof;        // its label: "tensor bf16", "tensor tf32", "simt f32", "dram"; "" none measured
    std::string unit, dtype; // "tensor", "bf16"; dtype "" for dram
    double measured = 0;     // per second: FLOP (s8: ops) or bytes
    double datasheet = 0;    // the vendor's figure, same unit; 0 unknown
    double sm_clock_mhz = 0; // the clock it was measured at
    std::string method;      // how the plugin measured it
    double share = NAN;      // the entry's rate / measured; NaN without a roof
    std::string cause;       // why share > 1 ("" at most 1)
    std::string missing;     // why no roof judged it ("" one did)
};

struct Roofline {
    double pct_peak_compute = 0;     // 100 * achieved FLOP/s / peak FLOP/s
    double pct_peak_bandwidth = 0;   // 100 * achieved bytes/s / the bandwidth roof's triad bytes/s
    double arithmetic_intensity = 0; // flops / bytes (+inf when bytes == 0)
    double ridge_point = 0;          // peak FLOP/s / peak bytes/s at that thread count
    std::string bound;               // "compute-bound", "memory-bound", "overhead-bound" or "unknown"
    std::string bandwidth_roof = "DRAM"; // the level whose roof pct_peak_bandwidth is of: "L1d", "L2", "L3", "DRAM"
    std::string compute_roof;            // the roof pct_peak_compute is of (ComputeRoof::name); "" unknown
    // True when the backend's ISA chose another roof than the dtype alone
    // would (AMX tiles, or a backend held to AVX2): the views then name it,
    // as they name a cache level's bandwidth roof.
    bool compute_roof_by_isa = false;
    // Where a % of peak is above 100, why, for this entry (issue 28: every
    // view names it): which roof, which ISA the backend ran, and what is
    // known to be faster than that roof. "" when both are at most 100.
    std::string above_roof_cause;
    // A GPU entry on a device with measured roofs: the one that judged it
    // (pct_peak_compute and pct_peak_bandwidth are then of the device's
    // compute roof for the entry and of its DRAM bandwidth). nullopt on a CPU,
    // and on a device whose plugin measures no roofs (ABI 1.4).
    std::optional<DeviceRoofJudgement> device_roof;
};

// The rule, in order:
//   "unknown"        seconds_per_call is not a positive finite number, or the
//                    peaks for that thread count are missing (0);
//   "overhead-bound" fixed_cost_seconds > 0 and seconds_per_call <
//                    5 * fixed_cost_seconds (the call is mostly fixed cost:
//                    timer, dispatch, synchronisation), or flops == bytes == 0;
//   "compute-bound"  arithmetic intensity >= the ridge point;
//   "memory-bound"   otherwise.
// Peaks are at_threads(threads); bandwidth is the triad figure of the
// smallest cache level that holds `working_set_bytes` (roof_for), else
// DRAM's; 0 (unknown, or a cold-cache measurement) means DRAM. The compute
// peak is compute_roof(peaks, threads, kind, isa).
[[nodiscard]] Roofline classify(double flops, double bytes, double seconds_per_call, const MachinePeaks &peaks,
                                int threads, double fixed_cost_seconds, PeakKind kind = PeakKind::f32,
                                double working_set_bytes = 0, std::string_view isa = {});

// --- context ----------------------------------------------------------------

// What the machine is, for result contexts; every field present, "unknown"
// (or null for numbers) where the system does not say:
//   cpu_model, isa {avx2, fma, avx512f, avx512_bf16, avx512_fp16, amx_tile,
//   amx_bf16, amx_int8: bool}, logical_cores, allowed_cores, physical_cores,
//   memory_total_bytes, llc_bytes, frequency_governor, cpu_scaling_enabled
//   (true / false / null: governor other than "performance", as Google
//   Benchmark decides), turbo_boost (true / false / "unknown"), kernel,
//   load_average [1, 5, 15 min].
[[nodiscard]] nlohmann::json cpu_context();

// Size of the largest cache level in bytes from sysfs; 0 when unknown.
[[nodiscard]] std::uint64_t llc_bytes();
// "model name" from /proc/cpuinfo; "unknown" when absent.
[[nodiscard]] std::string cpu_model_name();
// Number of CPUs in this process's affinity mask (>= 1).
[[nodiscard]] int allowed_cpu_count();

} // namespace opbench
