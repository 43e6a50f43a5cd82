// The memory figures of a result set, checked exactly against a backend whose
// allocations are known to the byte (issue 5, "Memory": "the figures must
// match exactly (host) and to the page (RSS)").
//
// Runs the real opbench program (OPBENCH_EXE) on memory_accounting.toml, a
// tiny f32 add, with --backends naive,alloc_probe; OPBENCH_PLUGIN_PATH names
// the alloc_probe plugin (tests/plugins/alloc_probe_plugin.cpp), whose
// allocations are:
//   prepare: P = ALLOC_PROBE_PREPARE_BYTES, held until release, every page
//            written, reported through on_alloc and as workspace;
//   execute: one malloc + free of E = ALLOC_PROBE_EXECUTE_BYTES, not reported
//            (only the heap interposer can see it);
//   alloc:   each tensor, exactly its size, reported through on_alloc.
#include "../case_outcome.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>

#ifndef OPBENCH_EXE
#error "OPBENCH_EXE must be defined (tests/harness/meson.build)"
#endif

namespace opbench {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr uint64_t P = ALLOC_PROBE_PREPARE_BYTES;
constexpr uint64_t E = ALLOC_PROBE_EXECUTE_BYTES;

// Runs opbench on the test suite with `extra` arguments; returns the result set.
json run_opbench(const std::string &backends, const std::string &extra) {
    const fs::path out =
        fs::temp_directory_path() / ("opbench-memory-accounting-" + std::to_string(::getpid()) + ".json");
    ::setenv("OPBENCH_PLUGIN_PATH", ALLOC_PROBE_PLUGIN, 1);
    const std::string cmd = std::string("'") + OPBENCH_EXE + "' run '" + MEMORY_SUITE + "' --backends " + backends +
                            " --no-progress --out '" + out.string() + "' " + extra + " > '" + out.string() +
                            ".log' 2>&1";
    const int rc = std::system(cmd.c_str());
    EXPECT_EQ(rc, 0) << cmd << " (output in " << out.string() << ".log)";
    std::ifstream in(out);
    EXPECT_TRUE(in.good()) << "no result set at " << out;
    json j = json::parse(in);
    fs::remove(out);
    fs::remove(out.string() + ".log");
    return j;
}

// The (first) iteration entry of `backend`.
const json &entry(const json &set, const std::string &backend) {
    for (const auto &b : set.at("benchmarks"))
        if (b.value("backend", "") == backend && b.value("run_type", "") == "iteration") return b;
    throw std::runtime_error("no iteration entry for backend " + backend);
}

uint64_t tensor_bytes(const json &e) {
    // add: a, b, y, each rows x cols f32.
    const auto &p = e.at("params");
    return 3 * p.at("R").get<uint64_t>() * p.at("C").get<uint64_t>() * sizeof(float);
}

class MemoryAccounting : public ::testing::Test {
protected:
    // Warm: naive first (the RSS comparison needs it), then the probe. Cold:
    // the probe first, so it is the first cold-cache case of its run (the one
    // during which the harness sets up its cache evictor).
    static void SetUpTestSuite() {
        warm_ = new json(run_opbench("naive,alloc_probe", ""));
        cold_ = new json(run_opbench("alloc_probe,naive", "--cache cold"));
        // RSS is a process's figure: comparing two cases' peaks needs them
        // in one process. By default each backend's cases run in a worker of
        // their own (with its own baseline RSS), so this run keeps them in
        // opbench itself.
        one_process_ = new json(run_opbench("naive,alloc_probe", "--isolate none"));
    }
    static void TearDownTestSuite() {
        delete warm_;
        delete cold_;
        delete one_process_;
        warm_ = cold_ = one_process_ = nullptr;
    }
    static json *warm_, *cold_, *one_process_;
};
json *MemoryAccounting::warm_ = nullptr;
json *MemoryAccounting::cold_ = nullptr;
json *MemoryAccounting::one_process_ = nullptr;

TEST_F(MemoryAccounting, ProbeCaseVerifiedAndRanToTheEnd) {
    for (const json *set : {warm_, cold_}) {
        const json &e = entry(*set, "alloc_probe");
        EXPECT_TRUE(test::ran_to_the_end(e.at("status").get<std::string>())) << e.dump(2);
        EXPECT_EQ(e.at("verified"), true);
        EXPECT_EQ(e.at("memory").at("heap_tracked"), true);
    }
    EXPECT_EQ(entry(*cold_, "alloc_probe").at("settings").at("cache"), "cold");
}

// One malloc of E per execute, and nothing else: the harness's own work
// around execute (the sample loop, synchronize) must add no allocation.
TEST_F(MemoryAccounting, AllocationsPerCallAreExact) {
    for (const json *set : {warm_, cold_}) {
        const json &m = entry(*set, "alloc_probe").at("memory");
        EXPECT_EQ(m.at("allocs_per_call").get<double>(), 1.0);
        EXPECT_EQ(m.at("alloc_bytes_per_call").get<double>(), double(E));
    }
}

TEST_F(MemoryAccounting, WorkspaceAndAccountedPeaksAreExact) {
    for (const json *set : {warm_, cold_}) {
        const json &e = entry(*set, "alloc_probe");
        const json &m = e.at("memory");
        const uint64_t t = tensor_bytes(e);
        EXPECT_EQ(m.at("workspace_bytes").get<uint64_t>(), P);
        EXPECT_EQ(m.at("host_accounted_peak_bytes").get<uint64_t>(), P + t);
        EXPECT_EQ(m.at("plugin_peak_bytes").get<uint64_t>(), P + t);
        EXPECT_EQ(m.at("device_accounted_peak_bytes").get<uint64_t>(), 0u);
    }
}

// The interposer's peak is process-wide (the harness's own allocations during
// the case add to it), so only its lower bound is exact: it holds P and the
// tensors at once.
TEST_F(MemoryAccounting, HeapPeakHoldsWorkspaceAndTensors) {
    for (const json *set : {warm_, cold_}) {
        const json &e = entry(*set, "alloc_probe");
        EXPECT_GE(e.at("memory").at("heap_peak_bytes").get<uint64_t>(), P + tensor_bytes(e));
    }
}

// The cold-cache evictor (a buffer of twice the LLC, kept for the whole run)
// is the harness's, not the case's: the first cold case's heap peak must not
// hold it. Its size is at least several MiB on any machine, far above the
// harness's few KiB of per-case bookkeeping that the bound below allows.
TEST_F(MemoryAccounting, ColdCacheEvictorIsNotTheCasesMemory) {
    const auto warm = entry(*warm_, "alloc_probe").at("memory").at("heap_peak_bytes").get<uint64_t>();
    const auto cold = entry(*cold_, "alloc_probe").at("memory").at("heap_peak_bytes").get<uint64_t>();
    EXPECT_LT(cold, warm + (1u << 20)) << "cold " << cold << ", warm " << warm;
}

// rss_peak_bytes is the process's high-water mark (VmHWM) after a reset at the
// case's start, i.e. it includes the RSS the process already had. In one
// process (--isolate none), the naive case on the same shape runs just before
// the probe case and its own peak is
// that starting RSS plus a few pages; the probe's P block is a fresh mmap (P
// is above glibc's largest dynamic mmap threshold) whose every page is
// written, so the probe's peak exceeds the naive case's by at least P.
TEST_F(MemoryAccounting, RssPeakCoversWorkspaceToThePage) {
    const json &probe = entry(*one_process_, "alloc_probe").at("memory");
    const json &naive = entry(*one_process_, "naive").at("memory");
    if (!probe.at("rss_peak_reset").get<bool>() || !naive.at("rss_peak_reset").get<bool>())
        GTEST_SKIP() << "the kernel refused to reset VmHWM (/proc/self/clear_refs): "
                        "per-case RSS peaks are not isolated here";
    const auto probe_peak = probe.at("rss_peak_bytes").get<uint64_t>();
    const auto naive_peak = naive.at("rss_peak_bytes").get<uint64_t>();
    ASSERT_GT(probe_peak, naive_peak);
    EXPECT_GE(probe_peak - naive_peak, P) << "probe " << probe_peak << ", naive " << naive_peak;
    // ...and by not much more: P, the tensors and a little harness bookkeeping.
    EXPECT_LE(probe_peak - naive_peak, P + (1u << 20)) << "probe " << probe_peak << ", naive " << naive_peak;
}

} // namespace
} // namespace opbench
