// Tests of harness/memory_estimate: a case's memory from its tensors, the
// budget from the machine or --mem-limit, and the skip reason.
#include "measure/memory_estimate.hpp"

#include "opbench/ops.hpp"

#include <gtest/gtest.h>

using namespace opbench;

namespace {

opb_op_desc matmul(int64_t m, int64_t n, int64_t k, int dtype = OPB_DTYPE_F32) {
    opb_op_desc d = make_desc(OPB_OP_MATMUL, dtype);
    d.p.matmul = {1, m, n, k, 0, 0, 0, 0, 0.0f, 0, 0};
    return d;
}

TEST(MemoryEstimate, CountsEveryCopyOfTheTensors) {
    // A, B, C of 1024 x 1024 f32: 4 MiB each; C is the output.
    const MemoryEstimate e = estimate_case_memory(matmul(1024, 1024, 1024));
    const uint64_t mib4 = 4ull << 20;
    EXPECT_EQ(e.tensors, 3 * mib4 /*host*/ + 3 * mib4 /*backend*/ + mib4 /*read back*/);
    EXPECT_EQ(e.reference, 3 * mib4 + mib4);
    EXPECT_EQ(e.workspace, 0u);
    EXPECT_EQ(e.total(), 11 * mib4);
    // bf16 halves every figure.
    EXPECT_EQ(estimate_case_memory(matmul(1024, 1024, 1024, OPB_DTYPE_BF16)).total(), 11 * mib4 / 2);
}

// --verify fast (for an op with a fast check) and off never run the
// reference: its copies are not counted (they used to be).
TEST(MemoryEstimate, TheReferenceCountsOnlyWhenItRuns) {
    const uint64_t mib4 = 4ull << 20;
    const MemoryEstimate e = estimate_case_memory(matmul(1024, 1024, 1024), /*reference_runs=*/false);
    EXPECT_EQ(e.reference, 0u);
    EXPECT_EQ(e.total(), 7 * mib4);
}

// Small figures in small units: "needs 0.00 GiB" said nothing.
TEST(MemoryEstimate, SkipReasonPrintsSizesInFittingUnits) {
    MemoryEstimate e;
    e.tensors = 3 * 1024 + 512;
    const auto reason = memory_skip_reason(e, MemoryBudget{1024, "--mem-limit"});
    ASSERT_TRUE(reason.has_value());
    EXPECT_EQ(reason->rfind("needs 3.5 KiB, 1.0 KiB available (--mem-limit)", 0), 0u) << *reason;
}

TEST(MemoryEstimate, ComposedAttentionHoldsItsScoreMatrix) {
    opb_op_desc d = make_desc(OPB_OP_ATTENTION, OPB_DTYPE_F32, OPB_ATTENTION_COMPOSED);
    d.p.attention = {2, 4, 512, 1024, 64, 0.0f, 0, 0};
    const uint64_t scores = 2ull * 4 * 512 * 1024 * 4;
    EXPECT_EQ(workspace_bound(d), 2 * scores);
    EXPECT_EQ(estimate_case_memory(d).workspace, 2 * scores);
    d.variant = OPB_ATTENTION_FUSED;
    EXPECT_EQ(workspace_bound(d), 0u) << "fused attention keeps no score matrix";
}

TEST(MemoryEstimate, AbsurdShapesSaturateInsteadOfWrapping) {
    const int64_t huge = int64_t(1) << 40;
    const MemoryEstimate e = estimate_case_memory(matmul(huge, huge, huge));
    EXPECT_EQ(e.total(), UINT64_MAX);
    EXPECT_TRUE(memory_skip_reason(e, MemoryBudget{1ull << 40, "MemAvailable"}).has_value());
}

TEST(MemoryEstimate, SkipReasonSaysWhatIsNeededAndWhatIsThere) {
    MemoryEstimate e;
    e.tensors = 12ull << 30;
    e.reference = 1ull << 29;
    const auto reason = memory_skip_reason(e, MemoryBudget{7ull << 30, "--mem-limit"});
    ASSERT_TRUE(reason.has_value());
    EXPECT_EQ(reason->rfind("needs 12.50 GiB, 7.00 GiB available (--mem-limit)", 0), 0u) << *reason;
    EXPECT_FALSE(memory_skip_reason(e, MemoryBudget{13ull << 30, "MemAvailable"}).has_value());
}

TEST(MemoryEstimate, TheBudgetIsTheSmallestLimit) {
    const uint64_t gib = 1ull << 30;
    MemoryBudget b = smallest_memory_limit({16 * gib, std::nullopt, std::nullopt});
    EXPECT_EQ(b.bytes, 16 * gib);
    EXPECT_EQ(b.source, "MemAvailable");
    b = smallest_memory_limit({16 * gib, 4 * gib, std::nullopt});
    EXPECT_EQ(b.bytes, 4 * gib);
    EXPECT_EQ(b.source, "cgroup memory.max") << "a container's limit below the machine's memory bounds it";
    b = smallest_memory_limit({16 * gib, 4 * gib, 1 * gib});
    EXPECT_EQ(b.bytes, 1 * gib);
    EXPECT_EQ(b.source, "--mem-limit");
    b = smallest_memory_limit({16 * gib, 32 * gib, 64 * gib});
    EXPECT_EQ(b.bytes, 16 * gib) << "a limit above the machine's memory does not raise it";
    EXPECT_EQ(b.source, "MemAvailable");
    b = smallest_memory_limit({std::nullopt, std::nullopt, std::nullopt});
    EXPECT_EQ(b.source, "unknown") << "with nothing readable, nothing is skipped for memory";
}

// The live machine: its MemAvailable moves between reads, so this checks the
// source that bounds each budget, and only --mem-limit's exact figure.
TEST(MemoryEstimate, TheMachineBudgetHonoursMemLimit) {
    const MemoryBudget machine = available_memory(std::nullopt);
    EXPECT_GT(machine.bytes, 0u);
    EXPECT_NE(machine.source, "--mem-limit");
    const MemoryBudget limited = available_memory(1ull << 20);
    EXPECT_EQ(limited.bytes, 1ull << 20);
    EXPECT_EQ(limited.source, "--mem-limit");
    EXPECT_NE(available_memory(UINT64_MAX - 1).source, "--mem-limit");
}

TEST(MemoryEstimate, ParsesSizesWithUnits) {
    EXPECT_EQ(parse_memory_size("16G"), 16ull << 30);
    EXPECT_EQ(parse_memory_size("512M"), 512ull << 20);
    EXPECT_EQ(parse_memory_size("1.5GiB"), 3ull << 29);
    EXPECT_EQ(parse_memory_size("64kb"), 64ull << 10);
    EXPECT_EQ(parse_memory_size("2048"), 2048u);
    EXPECT_EQ(parse_memory_size(""), std::nullopt);
    EXPECT_EQ(parse_memory_size("-1G"), std::nullopt);
    EXPECT_EQ(parse_memory_size("0"), std::nullopt);
    EXPECT_EQ(parse_memory_size("12 parsecs"), std::nullopt);
    EXPECT_EQ(parse_memory_size("1.2.3G"), std::nullopt);
    EXPECT_EQ(parse_memory_size("99999999999T"), std::nullopt);
}

} // namespace

// A GPU backend's device (issue 42): only a context whose device is a GPU
// that says how much is free has a device memory to check against.
TEST(DeviceMemory, OnlyAGpuThatReportsFreeMemoryIsChecked) {
    nlohmann::json ctx = {{"device", {{"kind", "gpu"}, {"name", "NVIDIA H100"}, {"free_memory", 1024u}}}};
    const auto gpu = gpu_device_memory(ctx);
    ASSERT_TRUE(gpu.has_value());
    EXPECT_EQ(gpu->name, "NVIDIA H100");
    EXPECT_EQ(gpu->free, 1024u);
    ctx["device"]["free_memory"] = 0u; // unknown
    EXPECT_FALSE(gpu_device_memory(ctx).has_value());
    ctx["device"] = {{"kind", "cpu"}, {"name", "host"}, {"free_memory", 1024u}};
    EXPECT_FALSE(gpu_device_memory(ctx).has_value()) << "the host's memory is the host check's";
    EXPECT_FALSE(gpu_device_memory(nlohmann::json{{"name", "x"}}).has_value()) << "no device info";
    EXPECT_FALSE(gpu_device_memory(nullptr).has_value());
}

TEST(DeviceMemory, SkipReasonNamesEachPartAndTheDevice) {
    const uint64_t gib = 1ull << 30;
    const DeviceMemoryNeed need{15 * gib, 2 * gib + gib / 10, 3ull << 20, 64ull << 10};
    EXPECT_EQ(need.total(), 17 * gib + gib / 10 + (3ull << 20) + (64ull << 10));
    const auto reason = device_memory_skip_reason(need, DeviceMemory{"NVIDIA H100", 14 * gib});
    ASSERT_TRUE(reason.has_value());
    EXPECT_EQ(*reason, "needs 17.10 GiB on the device (weights 15.00 GiB, KV cache 2.10 GiB, activations 3.0 MiB, "
                       "workspace 64.0 KiB), 14.00 GiB free on NVIDIA H100");
    EXPECT_FALSE(device_memory_skip_reason(need, DeviceMemory{"NVIDIA H200", need.total()}).has_value())
        << "exactly the free memory fits";
    const DeviceMemoryNeed absurd{UINT64_MAX, 1, 1, 1};
    EXPECT_EQ(absurd.total(), UINT64_MAX) << "saturates";
}
