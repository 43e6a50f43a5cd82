// The oneDNN backend's plugin contract: identity and info, supports() reasons,
// invalid descriptions, workspace and memory accounting, thread settings.
#include "onednn_test_util.hpp"

#include "onednn_backend.hpp"

#include <oneapi/dnnl/dnnl.hpp>
#include <omp.h>

#include <cstdlib>
#include <map>

namespace opbench::test {
namespace {

using OnednnPlugin = OnednnPluginTest;

std::map<std::string, std::string> info_of(const opb_backend_api *api, opb_backend *be) {
    std::map<std::string, std::string> kv;
    EXPECT_NE(api->info, nullptr);
    api->info(
        be,
        [](void *u, const char *k, const char *v) { (*static_cast<std::map<std::string, std::string> *>(u))[k] = v; },
        &kv);
    return kv;
}

TEST(OnednnEntry, RefusesAHostOfAnotherAbiMajor) {
    EXPECT_EQ(opb_plugin_entry((OPB_ABI_VERSION_MAJOR + 1u) << 16), nullptr);
    const auto *api = opb_plugin_entry(OPB_ABI_VERSION);
    ASSERT_NE(api, nullptr);
    EXPECT_EQ(api->struct_size, sizeof(opb_backend_api));
    EXPECT_EQ(api->abi_version, OPB_ABI_VERSION);
}

TEST_F(OnednnPlugin, NamesItselfAndTheOnednnVersionItRunsWith) {
    EXPECT_STREQ(api->name, "onednn");
    const dnnl_version_t *v = dnnl_version();
    const std::string want =
        "oneDNN " + std::to_string(v->major) + "." + std::to_string(v->minor) + "." + std::to_string(v->patch);
    EXPECT_EQ(std::string(api->library_versions), want);
    EXPECT_EQ(api->probe(be), OPB_OK) << error();
}

TEST_F(OnednnPlugin, InfoReportsDispatchedIsaRuntimeAndThreads) {
    auto kv = info_of(api, be);
    ASSERT_TRUE(kv.count("onednn_isa"));
    EXPECT_EQ(kv["onednn_isa"], onednn::isa_name(dnnl::get_effective_cpu_isa()));
    EXPECT_NE(kv["onednn_isa"], "unknown");
    EXPECT_EQ(kv["onednn_cpu_runtime"], "OpenMP");
    if (!std::getenv("OMP_NUM_THREADS")) { // then "all threads" means every core
        EXPECT_EQ(kv["onednn_default_threads"], std::to_string(omp_get_num_procs()));
    }
    EXPECT_EQ(kv["onednn_version"].rfind(std::to_string(dnnl_version()->major) + ".", 0), 0u) << kv["onednn_version"];
}

TEST_F(OnednnPlugin, DeviceInfoIsTheCpuWithItsMemory) {
    opb_device_info info{};
    info.struct_size = sizeof info;
    info.abi_version = OPB_ABI_VERSION;
    ASSERT_EQ(api->device_info(be, &info), OPB_OK) << error();
    EXPECT_EQ(info.kind, OPB_DEVICE_CPU);
    EXPECT_GT(std::string(info.name).size(), 0u);
    EXPECT_GT(info.total_memory, 0u);
}

TEST_F(OnednnPlugin, SupportsSaysWhyFusedAttentionAndTf32AreUnsupported) {
    auto fused = make_desc(OPB_OP_ATTENTION, OPB_DTYPE_F32, OPB_ATTENTION_FUSED);
    fused.p.attention = {1, 2, 64, 64, 32, 0.0f, 1, 0};
    EXPECT_EQ(api->supports(be, &fused), OPB_ERR_UNSUPPORTED);
    EXPECT_NE(error().find("no fused scaled-dot-product attention primitive"), std::string::npos) << error();

    auto tf32 = make_desc(OPB_OP_MATMUL, OPB_DTYPE_F32, OPB_MATMUL_TF32);
    tf32.p.matmul = {1, 64, 64, 64, 0, 0, 0, 0, 0.0f, 0, 0};
    EXPECT_EQ(api->supports(be, &tf32), OPB_ERR_UNSUPPORTED);
    EXPECT_NE(error().find("no TF32 math mode"), std::string::npos) << error();

    // prepare refuses the same way, with the same reason.
    opb_plan *plan = nullptr;
    EXPECT_EQ(api->prepare(be, &tf32, &plan, nullptr), OPB_ERR_UNSUPPORTED);
    EXPECT_EQ(plan, nullptr);
    EXPECT_NE(error().find("TF32"), std::string::npos) << error();
}

TEST_F(OnednnPlugin, SupportsRmsnormThroughReductionAndLayerNorm) {
    for (int dt : {OPB_DTYPE_F32, OPB_DTYPE_BF16}) {
        auto d = make_desc(OPB_OP_RMSNORM, dt);
        d.p.norm = {8, 64, 1e-6f};
        offered(d); // f32 everywhere, bf16 where the ISA has it
    }
}

TEST_F(OnednnPlugin, SupportsRefusesCausalRowsThatSeeNoColumn) {
    auto d = make_desc(OPB_OP_SOFTMAX, OPB_DTYPE_F32);
    d.p.softmax = {1, 8, 4, 1.0f, 1};
    EXPECT_EQ(api->supports(be, &d), OPB_ERR_UNSUPPORTED);
    EXPECT_NE(error().find("rows (8) > cols (4)"), std::string::npos) << error();
}

TEST_F(OnednnPlugin, F16IsOfferedOrRefusedWithTheDtypeAndIsaNamed) {
    auto d = make_desc(OPB_OP_MATMUL, OPB_DTYPE_F16);
    d.p.matmul = {1, 32, 32, 32, 0, 0, 0, 0, 0.0f, 0, 0};
    const opb_status st = api->supports(be, &d);
    if (st == OPB_OK) return; // a CPU where 2.6 has f16 matmul kernels
    EXPECT_EQ(st, OPB_ERR_UNSUPPORTED);
    EXPECT_NE(error().find("matmul f16"), std::string::npos) << error();
    EXPECT_NE(error().find(onednn::isa_name(dnnl::get_effective_cpu_isa())), std::string::npos) << error();
}

TEST_F(OnednnPlugin, InvalidDescriptionIsRefusedWithWhatIsWrong) {
    auto d = make_desc(OPB_OP_MATMUL, OPB_DTYPE_F32);
    d.p.matmul = {1, 0, 8, 8, 0, 0, 0, 0, 0.0f, 0, 0};
    EXPECT_EQ(api->supports(be, &d), OPB_ERR_INVALID);
    EXPECT_NE(error().find("M must be > 0"), std::string::npos) << error();
    EXPECT_EQ(api->supports(be, nullptr), OPB_ERR_INVALID);
}

TEST_F(OnednnPlugin, ExecuteChecksTheTensorCount) {
    auto d = make_desc(OPB_OP_ADD, OPB_DTYPE_F32);
    d.p.eltwise = {2, 8};
    opb_plan *plan = nullptr;
    ASSERT_EQ(api->prepare(be, &d, &plan, nullptr), OPB_OK) << error();
    void *p = nullptr;
    ASSERT_EQ(api->alloc(be, 64, &p), OPB_OK);
    void *tensors[2] = {p, p};
    EXPECT_EQ(api->execute(be, plan, tensors, 2), OPB_ERR_INVALID);
    EXPECT_NE(error().find("takes 3 tensors, got 2"), std::string::npos) << error();
    api->release(be, plan);
    api->free(be, p);
}

TEST_F(OnednnPlugin, AttentionWorkspaceHoldsScoresAndIsCountedAndReleased) {
    auto d = make_desc(OPB_OP_ATTENTION, OPB_DTYPE_BF16, OPB_ATTENTION_COMPOSED);
    d.p.attention = {2, 4, 128, 128, 64, 0.0f, 1, 0};
    if (!offered(d)) return;
    opb_plan *plan = nullptr;
    uint64_t ws = 0;
    ASSERT_EQ(api->prepare(be, &d, &plan, &ws), OPB_OK) << error();
    // f32 scores + bf16 probabilities + the f32 causal mask, plus scratchpad.
    const uint64_t scores = 2 * 4 * 128 * 128 * (4 + 2) + 128 * 128 * 4;
    EXPECT_GE(ws, scores);
    opb_memory_stats st{};
    st.struct_size = sizeof st;
    st.abi_version = OPB_ABI_VERSION;
    ASSERT_EQ(api->memory_stats(be, &st), OPB_OK);
    EXPECT_EQ(st.workspace_bytes, ws);
    EXPECT_EQ(st.current_bytes, ws);
    EXPECT_EQ(host.allocated, int64_t(ws)); // reported to the host as it happened
    api->release(be, plan);
    ASSERT_EQ(api->memory_stats(be, &st), OPB_OK);
    EXPECT_EQ(st.workspace_bytes, 0u);
    EXPECT_EQ(st.current_bytes, 0u);
    EXPECT_EQ(st.peak_bytes, ws);
    EXPECT_EQ(host.freed, host.allocated);
}

TEST_F(OnednnPlugin, MatmulScratchpadIsUserManagedAndCounted) {
    // A transposed-A bf16 matmul needs oneDNN to pack A: that buffer is the
    // scratchpad, which must appear in the plan's workspace, not be hidden
    // inside the library.
    auto d = make_desc(OPB_OP_MATMUL, OPB_DTYPE_BF16);
    d.p.matmul = {1, 256, 256, 256, 1, 0, 0, 0, 0.0f, 0, 0};
    if (!offered(d)) return;
    opb_plan *plan = nullptr;
    uint64_t ws = 0;
    ASSERT_EQ(api->prepare(be, &d, &plan, &ws), OPB_OK) << error();
    EXPECT_GT(ws, 0u);
    opb_memory_stats st{};
    st.struct_size = sizeof st;
    st.abi_version = OPB_ABI_VERSION;
    ASSERT_EQ(api->memory_stats(be, &st), OPB_OK);
    EXPECT_EQ(st.workspace_bytes, ws);
    api->release(be, plan);
}

TEST_F(OnednnPlugin, HostAllocationsAreAlignedAndAccounted) {
    void *p = nullptr;
    ASSERT_EQ(api->alloc(be, 1000, &p), OPB_OK) << error();
    EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 64, 0u);
    EXPECT_EQ(host.allocated, 1000);
    api->free(be, p);
    EXPECT_EQ(host.freed, 1000);
}

// threads = 1 and threads = 0 (all cores) both run, give the same result, and
// leave OpenMP's team size at what was asked while the op runs.
TEST_F(OnednnPlugin, OneThreadAndAllThreadsBothRunAndAgree) {
    const int all = std::getenv("OMP_NUM_THREADS") ? omp_get_max_threads() : omp_get_num_procs();
    std::vector<std::vector<float>> results;
    for (int threads : {1, 0}) {
        auto d = make_desc(OPB_OP_MATMUL, OPB_DTYPE_F32);
        d.threads = threads;
        d.p.matmul = {2, 96, 80, 64, 0, 1, 1, 0, 0.0f, 0, 0};
        auto a = random(2 * 96 * 64, -1, 1, OPB_DTYPE_F32, 21);
        auto b = random(2 * 80 * 64, -1, 1, OPB_DTYPE_F32, 22);
        auto bias = random(80, -1, 1, OPB_DTYPE_F32, 23);
        results.push_back(run(d, {a, b, bias}));
        EXPECT_EQ(omp_get_max_threads(), threads == 0 ? all : threads);
    }
    ASSERT_EQ(results[0].size(), results[1].size());
    for (std::size_t i = 0; i < results[0].size(); ++i)
        ASSERT_NEAR(results[0][i], results[1][i], 1e-4) << "element " << i;
}

TEST_F(OnednnPlugin, PrepareLogsTheImplementationOnednnChose) {
    auto d = make_desc(OPB_OP_SOFTMAX, OPB_DTYPE_F32);
    d.p.softmax = {1, 4, 16, 1.0f, 0};
    opb_plan *plan = nullptr;
    ASSERT_EQ(api->prepare(be, &d, &plan, nullptr), OPB_OK) << error();
    ASSERT_FALSE(host.logs.empty());
    EXPECT_NE(host.logs.back().find("softmax: "), std::string::npos) << host.logs.back();
    api->release(be, plan);
}

// An op unknown to this plugin's SDK is skipped, never failed: UNSUPPORTED
// with the reason (before the SDK helper, make_recipe threw and the case
// was recorded as failed with OPB_ERR_INTERNAL).
TEST_F(OnednnPlugin, AnOpItDoesNotKnowIsUnsupportedNotInternal) {
    auto d = make_desc(OPB_OP_COUNT + 3, OPB_DTYPE_F32);
    d.p.eltwise = {4, 4};
    EXPECT_EQ(api->supports(be, &d), OPB_ERR_UNSUPPORTED) << error();
    EXPECT_NE(error().find("onednn: op " + std::to_string(OPB_OP_COUNT + 3)), std::string::npos) << error();
    opb_plan *plan = nullptr;
    EXPECT_EQ(api->prepare(be, &d, &plan, nullptr), OPB_ERR_UNSUPPORTED) << error();
    EXPECT_EQ(plan, nullptr);
}

} // namespace
} // namespace opbench::test
