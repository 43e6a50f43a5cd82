// Tests for harness/machine/ (machine.cpp, measure_peaks.cpp): the measured peaks' structure and ranges
// (never a time), JSON and cache round trips, roofline classification on
// synthetic peaks, and the CPU context's fields.
#include "machine/machine.hpp"
#include "machine/peak_bounds.hpp"
#include "machine/system_readers.hpp"

#include "opbench/plugin.h"
#include "../result_set_fixture.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <regex>
#include <string>
#include <vector>

namespace opbench {
namespace {

namespace fs = std::filesystem;

// A fresh directory under the system temp dir, removed at scope exit.
using test::TempDir; // a fresh directory, removed with what is in it

// Cheaper than the defaults: about a second instead of several.
MeasureOptions quick_options() {
    MeasureOptions o;
    o.seconds_per_figure = 0.1;
    o.bandwidth_array_bytes = std::size_t{32} << 20;
    return o;
}

MachinePeaks synthetic_peaks() {
    MachinePeaks m;
    m.cpu_model = "Synthetic CPU";
    m.cores = 4;
    m.one_thread = {1, 100.0, 400.0, 10.0, 12.0, 800.0};   // ridge 10 flop/byte (f32), 80 (int8)
    m.all_threads = {4, 400.0, 1600.0, 20.0, 24.0, 3200.0}; // ridge 20 flop/byte (f32)
    m.fma_isa = "avx512f";
    m.has_bf16 = true;
    m.int8_isa = "avx512_vnni";
    m.notes = "n";
    m.measured_at = "2024-01-01T00:00:00Z";
    m.measure_seconds = 1.5;
    m.method = "m";
    // A private 32 KiB L1d and 1 MiB L2 per CPU, a 32 MiB L3 for all four.
    m.cache_roofs = {{"L1d", 32 << 10, 1, 200.0, 800.0}, {"L2", 1 << 20, 1, 100.0, 400.0},
                     {"L3", 32 << 20, 4, 50.0, 150.0}};
    return m;
}

class MeasuredPeaks : public ::testing::Test {
protected:
    static void SetUpTestSuite() { peaks_ = new MachinePeaks(measure_machine(quick_options())); }
    static void TearDownTestSuite() {
        delete peaks_;
        peaks_ = nullptr;
    }
    static MachinePeaks *peaks_;
};
MachinePeaks *MeasuredPeaks::peaks_ = nullptr;

TEST_F(MeasuredPeaks, DescribeThisMachine) {
    const MachinePeaks &m = *peaks_;
    EXPECT_EQ(m.cpu_model, cpu_model_name());
    EXPECT_EQ(m.cores, allowed_cpu_count());
    EXPECT_EQ(m.one_thread.threads, 1);
    EXPECT_EQ(m.all_threads.threads, m.cores);
    EXPECT_FALSE(m.method.empty());
    EXPECT_TRUE(std::regex_match(m.measured_at, std::regex(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)"))) << m.measured_at;
    const std::string expected_isa = __builtin_cpu_supports("avx512f")                                   ? "avx512f"
                                     : (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) ? "avx2+fma"
                                                                                                         : "scalar";
    EXPECT_EQ(m.fma_isa, expected_isa);
}

TEST_F(MeasuredPeaks, ComputePeaksArePositiveAndScaleWithCores) {
    const MachinePeaks &m = *peaks_;
    EXPECT_GT(m.one_thread.f32_gflops, 0.0);
    // Unit sanity: no single core does 2 TFLOP/s of f32 FMA.
    EXPECT_LT(m.one_thread.f32_gflops, 2000.0);
    EXPECT_GE(m.all_threads.f32_gflops, 0.8 * m.one_thread.f32_gflops);
}

TEST_F(MeasuredPeaks, Bf16MeasuredExactlyWhenTheIsaHasIt) {
    const MachinePeaks &m = *peaks_;
    const bool isa = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bf16");
    EXPECT_EQ(m.has_bf16, isa);
    if (isa) {
        EXPECT_GT(m.one_thread.bf16_gflops, 0.0);
        EXPECT_GT(m.all_threads.bf16_gflops, 0.0);
    } else {
        EXPECT_EQ(m.one_thread.bf16_gflops, 0.0);
        EXPECT_NE(m.notes.find("bf16"), std::string::npos);
    }
}

TEST_F(MeasuredPeaks, Int8MeasuredWithTheKernelTheCpuHas) {
    const MachinePeaks &m = *peaks_;
    const bool vnni = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vnni");
    EXPECT_EQ(m.int8_isa, vnni ? "avx512_vnni" : __builtin_cpu_supports("avx2") ? "avx2" : "");
    if (!m.int8_isa.empty()) {
        EXPECT_GT(m.one_thread.int8_gops, 0.0);
        EXPECT_GT(m.all_threads.int8_gops, 0.0);
        // Unit sanity: ops per second in billions, not ops per second.
        EXPECT_LT(m.one_thread.int8_gops, 20000.0);
    } else {
        EXPECT_EQ(m.one_thread.int8_gops, 0.0);
        EXPECT_NE(m.notes.find("int8 not measured"), std::string::npos);
    }
}

// AMX is measured exactly when the kernel granted tile data; otherwise the
// figures are 0 and `amx` says why (this CI's KVM guests hide AMX).
TEST_F(MeasuredPeaks, AmxMeasuredExactlyWhenGranted) {
    const MachinePeaks &m = *peaks_;
    const AmxSupport &amx = amx_support();
    EXPECT_EQ(&amx, &amx_support()); // asked once per process
    if (amx.usable) {
        EXPECT_EQ(m.amx, "measured");
        EXPECT_EQ(m.all_threads.amx_bf16_gflops > 0, amx.bf16);
        EXPECT_EQ(m.all_threads.amx_int8_gops > 0, amx.int8);
        EXPECT_NE(m.method.find("tdpbf16ps"), std::string::npos);
    } else {
        EXPECT_FALSE(amx.problem.empty());
        EXPECT_EQ(m.amx, "not measured: " + amx.problem);
        EXPECT_EQ(m.one_thread.amx_bf16_gflops, 0.0);
        EXPECT_EQ(m.all_threads.amx_int8_gops, 0.0);
    }
    // Linux lists amx_tile only where the CPU has it and the OS enabled its state.
    std::ifstream cpuinfo("/proc/cpuinfo");
    const std::string text((std::istreambuf_iterator<char>(cpuinfo)), std::istreambuf_iterator<char>());
    if (text.find(" amx_tile") == std::string::npos) {
        EXPECT_FALSE(amx.usable);
    }
}

TEST_F(MeasuredPeaks, BandwidthPeaksArePositiveAndPlausible) {
    const MachinePeaks &m = *peaks_;
    for (const ThreadPeaks &p : {m.one_thread, m.all_threads}) {
        EXPECT_GT(p.triad_gbps, 0.0);
        EXPECT_GT(p.copy_gbps, 0.0);
        EXPECT_LT(p.triad_gbps, 10000.0); // GB/s, not bytes/s
    }
    // Issue 17: a roof per cache level sysfs names, each measured, smallest first.
    if (llc_bytes() > 0) {
        ASSERT_FALSE(m.cache_roofs.empty());
        for (std::size_t i = 0; i < m.cache_roofs.size(); ++i) {
            const CacheRoof &r = m.cache_roofs[i];
            EXPECT_GT(r.one_thread_gbps, 0.0) << r.level;
            EXPECT_GT(r.all_threads_gbps, 0.0) << r.level;
            EXPECT_LT(r.one_thread_gbps, 100000.0) << r.level;
            if (i > 0) {
                EXPECT_GE(r.bytes, m.cache_roofs[i - 1].bytes) << r.level;
            }
        }
        EXPECT_EQ(m.cache_roofs.back().bytes, llc_bytes());
    }
}

// The cache levels come from sysfs's cpu0/cache (data and unified, smallest
// first, shared by the allowed CPUs of shared_cpu_list); where it shows none,
// as on this project's Zen 5 KVM guest, from the C library's CPUID reading:
// L1d and L2 shared by the core's CPUs, and no L3 (a guest's CPUID gave 508
// MB). Without the fallback, every entry there was judged against DRAM
// (naive add 32x128 at 212% of its roof).
TEST(CacheLevels, ReadSysfsAndFallBackToCpuidWhereItShowsNone) {
    namespace fs = std::filesystem;
    const fs::path dir = fs::temp_directory_path() / ("opbench-cache-levels-" + std::to_string(::getpid()));
    fs::remove_all(dir);
    auto write = [&](const fs::path &file, const std::string &text) {
        fs::create_directories(file.parent_path());
        std::ofstream(file) << text << "\n";
    };
    auto index = [&](int i, const std::string &type, int level, const std::string &size, const std::string &shared) {
        const fs::path at = dir / "cache" / ("index" + std::to_string(i));
        write(at / "type", type);
        write(at / "level", std::to_string(level));
        write(at / "size", size);
        write(at / "shared_cpu_list", shared);
    };
    index(3, "Unified", 3, "32768K", "0-15");
    index(0, "Data", 1, "48K", "0,8");
    index(1, "Instruction", 1, "32K", "0,8");
    index(2, "Unified", 2, "1024K", "0,8");
    write(dir / "core_cpus_list", "0-1");
    const std::vector<int> allowed = {0, 1, 2, 3};
    const auto from_sysfs = detail::cache_levels(dir / "cache", dir / "core_cpus_list", allowed);
    ASSERT_EQ(from_sysfs.size(), 3u);
    EXPECT_EQ(from_sysfs[0].level, "L1d");
    EXPECT_EQ(from_sysfs[0].bytes, 48u * 1024);
    EXPECT_EQ(from_sysfs[0].sharing_cpus, 1) << "CPU 8 is not allowed";
    EXPECT_EQ(from_sysfs[1].level, "L2");
    EXPECT_EQ(from_sysfs[2].level, "L3");
    EXPECT_EQ(from_sysfs[2].sharing_cpus, 4);

    const auto from_cpuid = detail::cache_levels(dir / "no-such-cache", dir / "core_cpus_list", allowed);
    std::vector<CacheRoof> expected;
    if (::sysconf(_SC_LEVEL1_DCACHE_SIZE) > 0) expected.push_back({"L1d", std::uint64_t(::sysconf(_SC_LEVEL1_DCACHE_SIZE)), 2});
    if (::sysconf(_SC_LEVEL2_CACHE_SIZE) > 0) expected.push_back({"L2", std::uint64_t(::sysconf(_SC_LEVEL2_CACHE_SIZE)), 2});
    ASSERT_EQ(from_cpuid.size(), expected.size());
    for (std::size_t i = 0; i < expected.size(); ++i) {
        EXPECT_EQ(from_cpuid[i].level, expected[i].level);
        EXPECT_EQ(from_cpuid[i].bytes, expected[i].bytes);
        EXPECT_EQ(from_cpuid[i].sharing_cpus, 2) << "the core's two allowed CPUs";
    }
#if defined(__x86_64__) && defined(__GLIBC__)
    EXPECT_FALSE(expected.empty()) << "glibc reads L1d and L2 from CPUID on x86-64";
#endif
    fs::remove_all(dir);
}

TEST(MachinePeaksJson, RoundTripsEveryField) {
    const MachinePeaks m = synthetic_peaks();
    const nlohmann::json j = m;
    EXPECT_EQ(j.at("schema_version"), kMachinePeaksSchemaVersion);
    const auto back = nlohmann::json::parse(j.dump()).get<MachinePeaks>();
    EXPECT_EQ(nlohmann::json(back), j);
    EXPECT_EQ(back.cpu_model, m.cpu_model);
    EXPECT_EQ(back.all_threads.bf16_gflops, m.all_threads.bf16_gflops);
}

TEST(MachinePeaksJson, RejectsOtherVersionsAndMissingFields) {
    nlohmann::json j = synthetic_peaks();
    j["schema_version"] = kMachinePeaksSchemaVersion + 1;
    EXPECT_THROW((void)j.get<MachinePeaks>(), std::runtime_error);
    nlohmann::json k = synthetic_peaks();
    k.erase("one_thread");
    EXPECT_THROW((void)k.get<MachinePeaks>(), nlohmann::json::exception);
    // Only the int8 peak may be missing from a thread count's figures (older
    // files): a cache without its f32 peak is corrupt and is measured again.
    for (const char *figure : {"f32_gflops", "bf16_gflops", "triad_gbps", "copy_gbps"}) {
        nlohmann::json l = synthetic_peaks();
        l["all_threads"].erase(figure);
        EXPECT_THROW((void)l.get<MachinePeaks>(), nlohmann::json::exception) << figure;
    }
}

TEST(MachinePeaksJson, ReadsPeaksFromBeforeTheInt8Peak) {
    nlohmann::json j = synthetic_peaks();
    j.erase("int8_isa");
    j["one_thread"].erase("int8_gops");
    j["all_threads"].erase("int8_gops");
    const MachinePeaks m = j.get<MachinePeaks>();
    EXPECT_EQ(m.int8_isa, "");
    EXPECT_EQ(m.one_thread.int8_gops, 0.0);
    EXPECT_EQ(m.all_threads.f32_gflops, 400.0);
    // Without an int8 peak an s8 case is judged against f32's, as bf16 is without its own.
    EXPECT_DOUBLE_EQ(classify(1e9, 1e6, 0.02, m, 1, 0, PeakKind::int8).pct_peak_compute, 50.0);
}

// Schema 1 (before the AMX peaks, issue 28) still reads: result sets carry it.
TEST(MachinePeaksJson, ReadsSchemaOneWithoutAmx) {
    nlohmann::json j = synthetic_peaks();
    j["schema_version"] = 1;
    j.erase("amx");
    for (const char *t : {"one_thread", "all_threads"}) {
        j[t].erase("amx_bf16_gflops");
        j[t].erase("amx_int8_gops");
    }
    const MachinePeaks m = j.get<MachinePeaks>();
    EXPECT_EQ(m.schema_version, 1);
    EXPECT_EQ(m.amx, "");
    EXPECT_EQ(m.all_threads.amx_bf16_gflops, 0.0);
    EXPECT_EQ(m.one_thread.amx_int8_gops, 0.0);
    // Written again it stays schema 1: never taken for figures that tried AMX.
    EXPECT_EQ(nlohmann::json(m).at("schema_version"), 1);
    j["schema_version"] = 0;
    EXPECT_THROW((void)j.get<MachinePeaks>(), std::runtime_error);
}

TEST(MachinePeaksJson, ReadsPeaksFromBeforeTheCacheRoofs) {
    nlohmann::json j = synthetic_peaks();
    j.erase("cache_roofs");
    EXPECT_TRUE(j.get<MachinePeaks>().cache_roofs.empty());
    nlohmann::json k = synthetic_peaks();
    for (const nlohmann::json &bad : {nlohmann::json(1e300), nlohmann::json(0), nlohmann::json(-1)}) {
        k["cache_roofs"][0]["sharing_cpus"] = bad; // a count, never a cast of any number
        EXPECT_THROW((void)k.get<MachinePeaks>(), std::runtime_error) << bad;
    }
    k = synthetic_peaks();
    k["cache_roofs"][1]["bytes"] = -1e300;
    EXPECT_THROW((void)k.get<MachinePeaks>(), std::runtime_error);
}

// Result sets carry these keys as context.opbench.machine_peaks (results/README.md).
TEST(MachinePeaksJson, KeepsTheResultSetsKeys) {
    const nlohmann::json j = synthetic_peaks();
    std::vector<std::string> keys, thread_keys;
    for (const auto &[k, v] : j.items()) keys.push_back(k);
    for (const auto &[k, v] : j["one_thread"].items()) thread_keys.push_back(k);
    EXPECT_EQ(keys,
              (std::vector<std::string>{"all_threads", "amx", "cache_roofs", "cores", "cpu_model", "fma_isa", "has_bf16",
                                        "int8_isa", "measure_seconds", "measured_at", "method", "notes", "one_thread",
                                        "schema_version"}));
    EXPECT_EQ(thread_keys, (std::vector<std::string>{"amx_bf16_gflops", "amx_int8_gops", "avx2_f32_gflops", "avx2_int8_gops",
                                                     "bf16_gflops", "copy_gbps", "f32_gflops", "int8_gops", "threads",
                                                     "triad_gbps"}));
}

// A thread count that is no integer in int's range is refused before it is
// cast (the cast would be undefined), inside one_thread / all_threads too.
TEST(MachinePeaksJson, RefusesThreadCountsOutsideInt) {
    for (const char *where : {"one_thread", "all_threads"})
        for (const nlohmann::json &bad : {nlohmann::json(1e300), nlohmann::json(2.5), nlohmann::json(1ull << 40)}) {
            nlohmann::json j = synthetic_peaks();
            j[where]["threads"] = bad;
            EXPECT_THROW((void)j.get<MachinePeaks>(), std::runtime_error) << where << " " << bad;
        }
}

TEST(MachineCache, PathIsPerMachine) {
    const fs::path dir = "/x";
    const fs::path a = machine_cache_path(dir, "CPU A", 8);
    EXPECT_EQ(a.parent_path(), dir);
    EXPECT_TRUE(std::regex_match(a.filename().string(), std::regex(R"(machine-[0-9a-f]{16}\.json)"))) << a;
    EXPECT_EQ(a, machine_cache_path(dir, "CPU A", 8)); // stable
    EXPECT_NE(a, machine_cache_path(dir, "CPU B", 8));
    EXPECT_NE(a, machine_cache_path(dir, "CPU A", 16));
}

TEST(MachineCache, DirectoryFollowsEnvironment) {
    const char *old = std::getenv("OPBENCH_CACHE_DIR");
    const std::string saved = old ? old : "";
    ::setenv("OPBENCH_CACHE_DIR", "/some/where", 1);
    EXPECT_EQ(machine_cache_dir(), fs::path("/some/where"));
    if (old)
        ::setenv("OPBENCH_CACHE_DIR", saved.c_str(), 1);
    else
        ::unsetenv("OPBENCH_CACHE_DIR");
}

// With no HOME (and no OPBENCH_CACHE_DIR or XDG_CACHE_HOME) there is no cache
// at all, never a fixed shared path such as /tmp/opbench-cache.
TEST(MachineCache, NoHomeMeansNoCache) {
    std::map<std::string, std::string> saved;
    for (const char *v : {"OPBENCH_CACHE_DIR", "XDG_CACHE_HOME", "HOME"}) {
        if (const char *old = std::getenv(v)) saved[v] = old;
        ::unsetenv(v);
    }
    EXPECT_EQ(machine_cache_dir(), fs::path());
    EXPECT_NE(cache_dir_problem(machine_cache_dir()).find("no cache directory"), std::string::npos);
    for (const auto &[k, v] : saved) ::setenv(k.c_str(), v.c_str(), 1);
}

// The cache directory meets the plugins' trust rule: a symlink planted in a
// directory others may write is not followed.
TEST(MachineCache, AnUntrustedCacheDirectoryIsNotUsed) {
    TempDir tmp;
    const fs::path open_dir = tmp.path / "shared";
    fs::create_directories(open_dir);
    fs::permissions(open_dir, fs::perms::all, fs::perm_options::replace); // 0777, not sticky
    const fs::path elsewhere = tmp.path / "elsewhere";
    fs::create_directories(elsewhere);
    fs::create_directory_symlink(elsewhere, open_dir / "opbench-cache");
    const std::string why = cache_dir_problem(open_dir / "opbench-cache");
    EXPECT_NE(why.find("not used: it is reached through the symlink"), std::string::npos) << why;
    EXPECT_EQ(cache_dir_problem(elsewhere), "");
    MeasureOptions quick;
    quick.seconds_per_figure = 0.005;
    quick.min_trials = 1;
    quick.bandwidth_array_bytes = 1 << 20;
    const CachedMachinePeaks c = load_or_measure(false, open_dir / "opbench-cache", quick);
    EXPECT_NE(c.warning.find("not used: it is reached through the symlink"), std::string::npos) << c.warning;
    // One line, and no "cached in" before it: the peaks are measured each run (issue 44).
    const std::string line = peaks_origin_line(c);
    EXPECT_EQ(line.find("cached in"), std::string::npos) << line;
    EXPECT_NE(line.find("not cached (cache directory"), std::string::npos) << line;
    EXPECT_NE(line.find("each run measures them again"), std::string::npos) << line;
    EXPECT_EQ(line.find('\n'), std::string::npos) << line;
    EXPECT_TRUE(fs::is_empty(elsewhere)) << "nothing written through the planted link";
    fs::permissions(open_dir, fs::perms::others_write | fs::perms::group_write, fs::perm_options::remove);
}

// A poisoned cache (issue 44): figures no CPU reaches are measured again,
// with the reason, and 0 (not measured) stays allowed for the optional peaks.
TEST(MachinePeakBounds, FiguresNoCpuReachesAreImplausible) {
    EXPECT_EQ(implausible_peaks(synthetic_peaks()), "");
    MachinePeaks huge = synthetic_peaks();
    huge.all_threads.f32_gflops = 1e308;
    EXPECT_NE(implausible_peaks(huge).find("the f32 peak on 4 thread(s) is 1e+308 GFLOP/s"), std::string::npos)
        << implausible_peaks(huge);
    MachinePeaks tiny = synthetic_peaks();
    tiny.one_thread.f32_gflops = 1e-6;
    EXPECT_NE(implausible_peaks(tiny).find("the f32 peak on 1 thread(s) is 1e-06"), std::string::npos);
    MachinePeaks nan_bw = synthetic_peaks();
    nan_bw.one_thread.triad_gbps = std::nan("");
    EXPECT_NE(implausible_peaks(nan_bw).find("triad"), std::string::npos);
    MachinePeaks roof = synthetic_peaks();
    roof.cache_roofs[1].all_threads_gbps = 1e300;
    EXPECT_NE(implausible_peaks(roof).find("L2 cache roof"), std::string::npos);
    MachinePeaks no_bf16 = synthetic_peaks();
    no_bf16.one_thread.bf16_gflops = no_bf16.all_threads.bf16_gflops = 0;
    EXPECT_EQ(implausible_peaks(no_bf16), "");
}

TEST(MachineCache, APoisonedCacheIsMeasuredAgainSayingWhy) {
    TempDir tmp;
    MeasureOptions tiny;
    tiny.seconds_per_figure = 0;
    tiny.min_trials = 1;
    tiny.bandwidth_array_bytes = std::size_t{4} << 20;
    for (double poison : {1e308, 1e-6}) {
        MachinePeaks cached = synthetic_peaks();
        cached.cpu_model = cpu_model_name();
        cached.cores = allowed_cpu_count();
        cached.all_threads.threads = cached.cores;
        cached.one_thread.f32_gflops = poison;
        const fs::path path = machine_cache_path(tmp.path, cached.cpu_model, cached.cores);
        save_machine_peaks(cached, path);
        const CachedMachinePeaks c = load_or_measure(false, tmp.path, tiny);
        EXPECT_FALSE(c.from_cache) << poison;
        EXPECT_NE(c.peaks.one_thread.f32_gflops, poison);
        EXPECT_EQ(implausible_peaks(c.peaks), "") << "the new measurement is plausible";
        const std::string line = peaks_origin_line(c);
        EXPECT_NE(line.find("the cached machine peaks were not used (the f32 peak"), std::string::npos) << line;
        EXPECT_NE(line.find("cached in " + path.string()), std::string::npos) << line;
        EXPECT_EQ(load_machine_peaks(path)->one_thread.f32_gflops, c.peaks.one_thread.f32_gflops) << "rewritten";
    }
}

TEST(MachineCache, SaveThenLoadRoundTripsAndLeavesNoTemporaries) {
    TempDir tmp;
    const fs::path path = tmp.path / "nested" / "machine-test.json";
    const MachinePeaks m = synthetic_peaks();
    save_machine_peaks(m, path);
    const auto loaded = load_machine_peaks(path);
    ASSERT_TRUE(loaded.has_value());
    EXPECT_EQ(nlohmann::json(*loaded), nlohmann::json(m));
    int files = 0;
    for ([[maybe_unused]] const auto &e : fs::directory_iterator(path.parent_path())) ++files;
    EXPECT_EQ(files, 1);
}

TEST(MachineCache, MissingOrCorruptFilesLoadAsNothing) {
    TempDir tmp;
    EXPECT_FALSE(load_machine_peaks(tmp.path / "absent.json").has_value());
    const fs::path bad = tmp.path / "bad.json";
    std::ofstream(bad) << "{ \"schema_version\": 1, \"cpu_model\": ";
    EXPECT_FALSE(load_machine_peaks(bad).has_value());
}

TEST(MachineCache, SaveIntoUnwritablePlaceThrowsNamingThePath) {
    TempDir tmp;
    const fs::path blocker = tmp.path / "file";
    std::ofstream(blocker) << "x";
    try {
        save_machine_peaks(synthetic_peaks(), blocker / "machine.json");
        FAIL() << "expected an exception";
    } catch (const std::runtime_error &e) {
        EXPECT_NE(std::string(e.what()).find(blocker.string()), std::string::npos) << e.what();
    }
}

TEST(MachineCache, LoadOrMeasureUsesCacheForThisMachineOnly) {
    TempDir tmp;
    MachinePeaks sentinel = synthetic_peaks();
    sentinel.cpu_model = cpu_model_name();
    sentinel.cores = allowed_cpu_count();
    sentinel.one_thread.f32_gflops = 12345; // no real measurement gives this
    const fs::path path = machine_cache_path(tmp.path, sentinel.cpu_model, sentinel.cores);
    save_machine_peaks(sentinel, path);

    MeasureOptions tiny;
    tiny.seconds_per_figure = 0; // min_trials only
    tiny.min_trials = 1;
    tiny.bandwidth_array_bytes = std::size_t{4} << 20;

    const CachedMachinePeaks hit = load_or_measure(false, tmp.path, tiny);
    EXPECT_TRUE(hit.from_cache);
    EXPECT_EQ(hit.path, path);
    EXPECT_EQ(hit.peaks.one_thread.f32_gflops, 12345);

    const CachedMachinePeaks fresh = load_or_measure(true, tmp.path, tiny);
    EXPECT_FALSE(fresh.from_cache);
    EXPECT_TRUE(fresh.warning.empty()) << fresh.warning;
    EXPECT_NE(fresh.peaks.one_thread.f32_gflops, 12345);
    const auto rewritten = load_machine_peaks(path);
    ASSERT_TRUE(rewritten.has_value());
    EXPECT_EQ(rewritten->one_thread.f32_gflops, fresh.peaks.one_thread.f32_gflops);

    // A cache from before the int8 peak is measured again where the CPU has an int8 kernel.
    MachinePeaks old = sentinel;
    old.one_thread.int8_gops = old.all_threads.int8_gops = 0;
    save_machine_peaks(old, path);
    EXPECT_EQ(load_or_measure(false, tmp.path, tiny).from_cache, !__builtin_cpu_supports("avx2"));

    // A schema-1 cache (from before the AMX peaks) is measured again, on any CPU.
    MachinePeaks v1 = sentinel;
    v1.schema_version = 1;
    save_machine_peaks(v1, path);
    EXPECT_FALSE(load_or_measure(false, tmp.path, tiny).from_cache);

    // A file for another CPU under this machine's name is not trusted.
    MachinePeaks other = sentinel;
    other.cpu_model = "Some Other CPU";
    save_machine_peaks(other, path);
    EXPECT_FALSE(load_or_measure(false, tmp.path, tiny).from_cache);
}

TEST(MachinePeaksAtThreads, PicksOrInterpolates) {
    const MachinePeaks m = synthetic_peaks();
    EXPECT_EQ(m.at_threads(0).f32_gflops, 100.0);
    EXPECT_EQ(m.at_threads(1).f32_gflops, 100.0);
    EXPECT_EQ(m.at_threads(4).f32_gflops, 400.0);
    EXPECT_EQ(m.at_threads(64).triad_gbps, 20.0);
    const ThreadPeaks two = m.at_threads(2); // a third of the way from 1 to 4
    EXPECT_EQ(two.threads, 2);
    EXPECT_DOUBLE_EQ(two.f32_gflops, 200.0);
    EXPECT_DOUBLE_EQ(two.triad_gbps, 10.0 + 10.0 / 3.0);
}

TEST(Classify, ComputeBoundAboveTheRidge) {
    // 1 GFLOP over 1 MB in 20 ms on one thread: intensity 1000 > ridge 10.
    const Roofline r = classify(1e9, 1e6, 0.02, synthetic_peaks(), 1, 1e-7);
    EXPECT_EQ(r.bound, "compute-bound");
    EXPECT_DOUBLE_EQ(r.pct_peak_compute, 50.0);
    EXPECT_DOUBLE_EQ(r.pct_peak_bandwidth, 0.5);
    EXPECT_DOUBLE_EQ(r.arithmetic_intensity, 1000.0);
    EXPECT_DOUBLE_EQ(r.ridge_point, 10.0);
}

TEST(Classify, MemoryBoundBelowTheRidge) {
    // 1 MFLOP over 100 MB in 20 ms: intensity 0.01 < ridge 10.
    const Roofline r = classify(1e6, 1e8, 0.02, synthetic_peaks(), 1, 1e-7);
    EXPECT_EQ(r.bound, "memory-bound");
    EXPECT_DOUBLE_EQ(r.pct_peak_bandwidth, 50.0);
}

TEST(Classify, RidgeDependsOnThreadsAndDtype) {
    // Intensity 15: compute-bound against the 1-thread ridge (10), memory-bound
    // against the 4-thread one (20) and against bf16's (40).
    const MachinePeaks m = synthetic_peaks();
    EXPECT_EQ(classify(15e6, 1e6, 1.0, m, 1, 0).bound, "compute-bound");
    EXPECT_EQ(classify(15e6, 1e6, 1.0, m, 4, 0).bound, "memory-bound");
    EXPECT_EQ(classify(15e6, 1e6, 1.0, m, 1, 0, PeakKind::bf16).bound, "memory-bound");
}

TEST(Classify, Int8CasesAreJudgedAgainstTheInt8Roof) {
    const MachinePeaks m = synthetic_peaks();
    // 1 G ops in 20 ms on one thread: 50 G ops/s, 50% of f32's 100 and 6.25% of int8's 800.
    EXPECT_DOUBLE_EQ(classify(1e9, 1e6, 0.02, m, 1, 0, PeakKind::int8).pct_peak_compute, 6.25);
    EXPECT_DOUBLE_EQ(classify(1e9, 1e6, 0.02, m, 1, 0, PeakKind::int8).ridge_point, 80.0);
    EXPECT_EQ(peak_kind(OPB_DTYPE_S8), PeakKind::int8);
    EXPECT_EQ(peak_kind(OPB_DTYPE_BF16), PeakKind::bf16);
    EXPECT_EQ(peak_kind(OPB_DTYPE_F32), PeakKind::f32);
    EXPECT_EQ(peak_kind("s8"), PeakKind::int8);
    EXPECT_EQ(peak_kind("f16"), PeakKind::bf16);
}

TEST(Classify, OverheadBoundWhenFixedCostDominates) {
    const MachinePeaks m = synthetic_peaks();
    // 100 ns per call against a 50 ns fixed cost: under the 5x threshold.
    EXPECT_EQ(classify(1e9, 1e6, 100e-9, m, 1, 50e-9).bound, "overhead-bound");
    // The same call at 300 ns is past the threshold.
    EXPECT_EQ(classify(1e9, 1e6, 300e-9, m, 1, 50e-9).bound, "compute-bound");
    // Nothing to compute or move: only overhead is left.
    EXPECT_EQ(classify(0, 0, 1e-3, m, 1, 0).bound, "overhead-bound");
}

// Issue 17: % of bandwidth peak is of the roof of the cache level that holds
// the working set, so a case whose data stays in L2 is not "1000% of DRAM".
TEST(Classify, TheWorkingSetPicksItsCacheLevelsRoof) {
    const MachinePeaks m = synthetic_peaks();
    const double bytes = 48 << 10; // more than one L1d, within one L2
    const Roofline dram = classify(0, bytes, bytes / 20e9, m, 1, 0);
    EXPECT_EQ(dram.bandwidth_roof, "DRAM") << "no working set given: DRAM";
    EXPECT_NEAR(dram.pct_peak_bandwidth, 200.0, 1e-9);
    const Roofline l2 = classify(0, bytes, bytes / 20e9, m, 1, 0, PeakKind::f32, bytes);
    EXPECT_EQ(l2.bandwidth_roof, "L2");
    EXPECT_NEAR(l2.pct_peak_bandwidth, 20.0, 1e-9); // 20 GB/s of L2's 100
    // Four threads hold four private L1ds: 128 KiB.
    EXPECT_EQ(classify(0, bytes, 1e-6, m, 4, 0, PeakKind::f32, bytes).bandwidth_roof, "L1d");
    EXPECT_NEAR(classify(0, bytes, bytes / 80e9, m, 4, 0, PeakKind::f32, bytes).pct_peak_bandwidth, 10.0, 1e-9);
    // The shared L3 holds 32 MiB however many threads; past it, DRAM.
    EXPECT_EQ(classify(0, 16e6, 1e-3, m, 4, 0, PeakKind::f32, 16e6).bandwidth_roof, "L3");
    EXPECT_EQ(classify(0, 64e6, 1e-3, m, 4, 0, PeakKind::f32, 64e6).bandwidth_roof, "DRAM");
    // The ridge point moves with the roof: more bandwidth, a lower ridge.
    EXPECT_LT(l2.ridge_point, dram.ridge_point);
}

// A Sapphire Rapids-like fixture (issue 28): AMX tile peaks measured, and
// the AVX2 kernels' peaks for a backend held to AVX2.
MachinePeaks amx_peaks() {
    MachinePeaks m = synthetic_peaks();
    m.amx = "measured";
    m.one_thread.amx_bf16_gflops = 1600;
    m.all_threads.amx_bf16_gflops = 6400;
    m.one_thread.amx_int8_gops = 3200;
    m.all_threads.amx_int8_gops = 12800;
    m.one_thread.avx2_f32_gflops = 50;
    m.all_threads.avx2_f32_gflops = 200;
    m.one_thread.avx2_int8_gops = 200;
    m.all_threads.avx2_int8_gops = 800;
    return m;
}

TEST(ComputeRoof, FollowsTheIsaTheBackendRan) {
    const MachinePeaks m = amx_peaks();
    struct Want {
        PeakKind kind;
        const char *isa;
        const char *name;
        double gflops; // one thread
    };
    for (const Want &w : {
             Want{PeakKind::bf16, "avx512_core_amx", "AMX-BF16", 1600},
             Want{PeakKind::int8, "avx512_core_amx", "AMX-INT8", 3200},
             Want{PeakKind::f32, "avx512_core_amx", "AVX-512 FMA", 100}, // AMX has no f32 products
             Want{PeakKind::bf16, "avx512_core_bf16", "AVX512-BF16", 400},
             Want{PeakKind::int8, "avx512_core_bf16", "AVX512-VNNI", 800},
             Want{PeakKind::bf16, "avx512_core_vnni", "AVX-512 FMA", 100}, // bf16 computed as f32
             Want{PeakKind::int8, "avx512_core", "AVX2 int8", 200},        // no VNNI: vpmaddubsw
             Want{PeakKind::f32, "avx2", "AVX2 FMA", 50},                  // ONEDNN_MAX_CPU_ISA=AVX2
             Want{PeakKind::bf16, "avx2", "AVX2 FMA", 50},
             Want{PeakKind::int8, "avx2", "AVX2 int8", 200},
             Want{PeakKind::bf16, "", "AVX512-BF16", 400}, // no ISA named (naive): the dtype's roof, as before
             Want{PeakKind::int8, "", "AVX512-VNNI", 800},
         }) {
        const ComputeRoof r = compute_roof(m, 1, w.kind, w.isa);
        EXPECT_EQ(r.name, w.name) << w.isa;
        EXPECT_DOUBLE_EQ(r.gflops, w.gflops) << w.isa << " " << w.name;
    }
    EXPECT_DOUBLE_EQ(compute_roof(m, 4, PeakKind::int8, "avx512_core_amx").gflops, 12800);
    // AMX named but not measured (hidden or refused): the best non-AMX roof.
    EXPECT_EQ(compute_roof(synthetic_peaks(), 1, PeakKind::bf16, "avx512_core_amx").name, "AVX512-BF16");
}

// The gemm suite's bf16 case on an AMX machine: 1000 GFLOP/s on one thread.
TEST(Classify, AmxEntriesAreJudgedAgainstTheRoofThatRanThem) {
    const double flops = 1e9, bytes = 1e6, s = 1e-3;
    const Roofline amx = classify(flops, bytes, s, amx_peaks(), 1, 0, PeakKind::bf16, 0, "avx512_core_amx");
    EXPECT_DOUBLE_EQ(amx.pct_peak_compute, 62.5); // of AMX-BF16's 1600, not AVX512-BF16's 400
    EXPECT_EQ(amx.compute_roof, "AMX-BF16");
    EXPECT_TRUE(amx.compute_roof_by_isa);
    EXPECT_EQ(amx.above_roof_cause, "");

    // Where AMX was not measured the entry is above its roof, and says why.
    MachinePeaks hidden = synthetic_peaks();
    hidden.amx = "not measured: the kernel refused AMX tile data: arch_prctl(ARCH_REQ_XCOMP_PERM, "
                 "XFEATURE_XTILEDATA) failed: Operation not permitted";
    const Roofline over = classify(flops, bytes, s, hidden, 1, 0, PeakKind::bf16, 0, "avx512_core_amx");
    EXPECT_DOUBLE_EQ(over.pct_peak_compute, 250.0);
    EXPECT_EQ(over.compute_roof, "AVX512-BF16");
    EXPECT_FALSE(over.compute_roof_by_isa);
    EXPECT_NE(over.above_roof_cause.find("250% of the AVX512-BF16 roof"), std::string::npos) << over.above_roof_cause;
    EXPECT_NE(over.above_roof_cause.find("avx512_core_amx (AMX tiles)"), std::string::npos);
    EXPECT_NE(over.above_roof_cause.find("Operation not permitted"), std::string::npos);

    // ONEDNN_MAX_CPU_ISA=AVX2: an f32 case at 25 GFLOP/s is half the AVX2 FMA roof.
    const Roofline avx2 = classify(2.5e7, 1e4, s, amx_peaks(), 1, 0, PeakKind::f32, 0, "avx2");
    EXPECT_DOUBLE_EQ(avx2.pct_peak_compute, 50.0);
    EXPECT_EQ(avx2.compute_roof, "AVX2 FMA");
    EXPECT_TRUE(avx2.compute_roof_by_isa);

    // A backend that names no ISA (naive): the roof of before, not marked.
    const Roofline naive = classify(flops, bytes, s, amx_peaks(), 1, 0, PeakKind::bf16);
    EXPECT_EQ(naive.compute_roof, "AVX512-BF16");
    EXPECT_FALSE(naive.compute_roof_by_isa);
    EXPECT_NE(naive.above_roof_cause.find("names no ISA"), std::string::npos);

    // A bandwidth share above 100 names its level.
    const Roofline fast = classify(1e3, 1e8, s, amx_peaks(), 1, 0, PeakKind::f32, 0, "avx512_core_amx");
    EXPECT_GT(fast.pct_peak_bandwidth, 100.0);
    EXPECT_NE(fast.above_roof_cause.find("of the DRAM triad roof"), std::string::npos) << fast.above_roof_cause;
}

TEST(Classify, UnknownForMeaninglessInputs) {
    const MachinePeaks m = synthetic_peaks();
    EXPECT_EQ(classify(1e9, 1e6, 0.0, m, 1, 0).bound, "unknown");
    EXPECT_EQ(classify(1e9, 1e6, -1.0, m, 1, 0).bound, "unknown");
    EXPECT_EQ(classify(-1, 1e6, 1.0, m, 1, 0).bound, "unknown");
    EXPECT_EQ(classify(1e9, 1e6, 1.0, MachinePeaks{}, 1, 0).bound, "unknown");
}

TEST(CpuContext, HasEveryFieldWithTheRightType) {
    const nlohmann::json c = cpu_context();
    EXPECT_TRUE(c.at("cpu_model").is_string());
    for (const char *f : {"avx2", "fma", "avx512f", "avx512_bf16", "avx512_fp16", "amx_tile", "amx_bf16", "amx_int8"})
        EXPECT_TRUE(c.at("isa").at(f).is_boolean()) << f;
    EXPECT_GE(c.at("logical_cores").get<int>(), 1);
    EXPECT_EQ(c.at("allowed_cores").get<int>(), allowed_cpu_count());
    EXPECT_TRUE(c.at("physical_cores").is_null() || c.at("physical_cores").get<int>() >= 1);
    EXPECT_TRUE(c.at("memory_total_bytes").is_null() || c.at("memory_total_bytes").get<std::uint64_t>() > 0);
    EXPECT_TRUE(c.at("llc_bytes").is_null() || c.at("llc_bytes").get<std::uint64_t>() > 0);
    EXPECT_TRUE(c.at("frequency_governor").is_string());
    EXPECT_TRUE(c.at("cpu_scaling_enabled").is_null() || c.at("cpu_scaling_enabled").is_boolean());
    EXPECT_TRUE(c.contains("turbo_boost"));
    EXPECT_FALSE(c.at("kernel").get<std::string>().empty());
    EXPECT_TRUE(c.at("load_average").is_null() || c.at("load_average").size() == 3);
    // The ISA flags agree with the compiler's cpuid view.
    EXPECT_EQ(c.at("isa").at("avx512f").get<bool>(), __builtin_cpu_supports("avx512f") != 0);
}

} // namespace
} // namespace opbench
