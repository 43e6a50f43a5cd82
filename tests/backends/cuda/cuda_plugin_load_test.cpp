// Build/load test of the CUDA plugin; runs on every machine where it builds.
// Usage: cuda_plugin_load_test <path/to/opbench-backend-cuda.so>
//
// Loads the real .so, checks the ABI handshake and the table, creates an
// instance and checks that probe tells the truth: OK with a usable GPU,
// otherwise OPB_ERR_UNAVAILABLE with a reason, and then every device call
// refuses with that same reason instead of crashing.
#include "plugin_handle.hpp"

#include "opbench/ops.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <memory>
#include <string>

namespace {

const char *g_plugin_path = nullptr;

using opbench::test::PluginHandle;
using opbench::test::recording_services;
using opbench::test::RecordingHost;

class CudaPluginLoad : public ::testing::Test {
protected:
    void SetUp() override {
        handle = std::make_unique<PluginHandle>(g_plugin_path);
        ASSERT_TRUE(handle->error.empty()) << handle->error;
        api = handle->api;
    }
    // An instance whose probe found no usable device, or null (destroyed)
    // where one is usable: the test then skips, its case run on a GPU. The
    // host services it was made with are the fixture's, which outlive it.
    opb_backend *instance_without_a_device() {
        opb_backend *b = nullptr;
        if (api->create(&services, &b) != OPB_OK) {
            ADD_FAILURE() << "create failed";
            return nullptr;
        }
        if (api->probe(b) != OPB_OK) return b;
        api->destroy(b);
        return nullptr;
    }
    std::unique_ptr<PluginHandle> handle;
    const opb_backend_api *api = nullptr;
    RecordingHost host;
    const opb_host_services services = recording_services(&host);
};

TEST_F(CudaPluginLoad, HandshakeStructSizeAbiVersionAndIdentity) {
    EXPECT_EQ(api->struct_size, sizeof(opb_backend_api));
    EXPECT_EQ(api->abi_version, OPB_ABI_VERSION);
    EXPECT_STREQ(api->name, "cuda");
    ASSERT_NE(api->version, nullptr);
    EXPECT_GT(std::strlen(api->version), 0u);
    ASSERT_NE(api->description, nullptr);
    // Filled from the loaded libraries' version calls before the table is returned.
    ASSERT_NE(api->library_versions, nullptr);
    const std::string lv = api->library_versions;
    EXPECT_NE(lv.find("cuBLASLt "), std::string::npos) << lv;
    EXPECT_NE(lv.find("cuDNN 9."), std::string::npos) << lv;
    for (auto fn :
         {(void *)api->create,      (void *)api->destroy,     (void *)api->last_error,   (void *)api->probe,
          (void *)api->device_info, (void *)api->supports,    (void *)api->alloc,        (void *)api->free,
          (void *)api->copy_in,     (void *)api->copy_out,    (void *)api->prepare,      (void *)api->execute,
          (void *)api->release,     (void *)api->synchronize, (void *)api->memory_stats, (void *)api->reset_peak,
          (void *)api->timer_start, (void *)api->timer_stop,  (void *)api->info,         (void *)api->flush_cache})
        EXPECT_NE(fn, nullptr);
}

TEST_F(CudaPluginLoad, EntryRefusesAnotherMajorVersion) {
    const uint32_t other = uint32_t(OPB_ABI_VERSION_MAJOR + 1) << 16;
    EXPECT_EQ(handle->entry(other), nullptr);
}

TEST_F(CudaPluginLoad, CreateSucceedsAndProbeTellsWhetherTheGpuIsUsable) {
    RecordingHost host;
    const opb_host_services s = recording_services(&host);
    opb_backend *b = nullptr;
    ASSERT_EQ(api->create(&s, &b), OPB_OK);
    ASSERT_NE(b, nullptr);
    const opb_status st = api->probe(b);
    const std::string reason = api->last_error(b);
    if (st == OPB_OK) {
        std::printf("probe: CUDA device usable\n");
    } else {
        EXPECT_EQ(st, OPB_ERR_UNAVAILABLE);
        EXPECT_FALSE(reason.empty());
        const bool known = reason.rfind("no CUDA driver", 0) == 0 || reason.rfind("no CUDA device", 0) == 0 ||
                           reason.rfind("driver older than runtime", 0) == 0 ||
                           reason.rfind("CUDA device query failed", 0) == 0;
        EXPECT_TRUE(known) << reason;
        std::printf("probe: unavailable: %s\n", reason.c_str());
    }
    api->destroy(b);
}

// With or without a device, info says the backend uses one host thread: the
// harness (threads_used) then counts 1, not the run's --threads, when it
// judges an entry's CPUs oversubscribed.
TEST_F(CudaPluginLoad, InfoReportsOneHostThreadWithOrWithoutDevice) {
    RecordingHost host;
    const opb_host_services s = recording_services(&host);
    opb_backend *b = nullptr;
    ASSERT_EQ(api->create(&s, &b), OPB_OK);
    (void)api->probe(b);
    std::string keys;
    api->info(
        b,
        [](void *u, const char *k, const char *v) {
            *static_cast<std::string *>(u) += std::string(k) + "=" + v + "\n";
        },
        &keys);
    EXPECT_NE(keys.find("\nthreads=1\n"), std::string::npos) << keys;
    EXPECT_NE(keys.find("\nthreading=one host thread"), std::string::npos) << keys;
    api->destroy(b);
}

// Without a usable device every call that would touch it refuses with the
// probe's reason; nothing crashes and no memory is reported.
TEST_F(CudaPluginLoad, WithoutDeviceEveryDeviceCallIsUnavailableWithTheReason) {
    opb_backend *b = instance_without_a_device();
    if (!b) GTEST_SKIP() << "a CUDA device is usable here; covered by cuda_gpu_test";
    const std::string reason = api->last_error(b);

    auto d = opbench::make_desc(OPB_OP_MATMUL, OPB_DTYPE_F32);
    d.p.matmul = {1, 16, 16, 16, 0, 0, 0, 0, 0.0f, 0, 0};
    EXPECT_EQ(api->supports(b, &d), OPB_ERR_UNAVAILABLE);
    EXPECT_EQ(reason, api->last_error(b));
    opb_plan *plan = reinterpret_cast<opb_plan *>(0x1);
    uint64_t ws = 123;
    EXPECT_EQ(api->prepare(b, &d, &plan, &ws), OPB_ERR_UNAVAILABLE);
    EXPECT_EQ(plan, nullptr);
    EXPECT_EQ(reason, api->last_error(b));
    void *p = reinterpret_cast<void *>(0x1);
    EXPECT_EQ(api->alloc(b, 1024, &p), OPB_ERR_UNAVAILABLE);
    EXPECT_EQ(p, nullptr);
    EXPECT_EQ(api->synchronize(b), OPB_ERR_UNAVAILABLE);
    EXPECT_EQ(api->timer_start(b), OPB_ERR_UNAVAILABLE);
    double secs = -1;
    EXPECT_EQ(api->timer_stop(b, &secs), OPB_ERR_UNAVAILABLE);
    EXPECT_EQ(api->flush_cache(b), OPB_ERR_UNAVAILABLE);
    char buf[8] = {};
    EXPECT_EQ(api->copy_in(b, buf, buf, sizeof buf), OPB_ERR_UNAVAILABLE);
    EXPECT_EQ(api->copy_out(b, buf, buf, sizeof buf), OPB_ERR_UNAVAILABLE);
    api->free(b, buf); // not ours: ignored, must not crash

    opb_device_info info{};
    info.struct_size = sizeof info;
    info.abi_version = OPB_ABI_VERSION;
    EXPECT_EQ(api->device_info(b, &info), OPB_ERR_UNAVAILABLE);
    EXPECT_EQ(info.kind, OPB_DEVICE_GPU);
    EXPECT_EQ(info.struct_size, sizeof info); // header untouched
    EXPECT_EQ(info.total_memory, 0u);

    opb_memory_stats ms{};
    ms.struct_size = sizeof ms;
    ms.abi_version = OPB_ABI_VERSION;
    EXPECT_EQ(api->memory_stats(b, &ms), OPB_OK);
    EXPECT_EQ(ms.current_bytes, 0u);
    EXPECT_EQ(ms.peak_bytes, 0u);
    EXPECT_EQ(host.device_bytes, 0);
    EXPECT_EQ(host.allocs, 0);

    // info still reports versions and the reason, for the result context.
    std::string keys;
    api->info(
        b,
        [](void *u, const char *k, const char *v) {
            *static_cast<std::string *>(u) += std::string(k) + "=" + v + "\n";
        },
        &keys);
    EXPECT_NE(keys.find("runtime_cuda_version="), std::string::npos) << keys;
    EXPECT_NE(keys.find("cudnn_version=9."), std::string::npos) << keys;
    EXPECT_NE(keys.find("unavailable=" + reason), std::string::npos) << keys;
    api->destroy(b);
}

// ABI 1.6 (issue 42): the kernel timeline's entries are in the table; without
// a device activity_begin refuses with the device's reason (the host then says
// so and carries on), and activity_end without a begin refuses too.
TEST_F(CudaPluginLoad, KernelTimelineEntriesAndTheirRefusalWithoutADevice) {
    ASSERT_TRUE(OPB_API_HAS(api, activity_begin));
    ASSERT_TRUE(OPB_API_HAS(api, activity_end));
    opb_backend *b = instance_without_a_device();
    if (!b) GTEST_SKIP() << "a CUDA device is usable here; the timeline runs in gpu-device-run's timeline step";
    const std::string reason = api->last_error(b);
    EXPECT_EQ(api->activity_begin(b), OPB_ERR_UNAVAILABLE);
    EXPECT_EQ(reason, api->last_error(b));
    int records = 0;
    EXPECT_NE(api->activity_end(
                  b, [](void *u, const opb_activity *) { ++*static_cast<int *>(u); }, &records),
              OPB_OK);
    EXPECT_EQ(records, 0);
    api->destroy(b);
}

// ABI 1.6 (issue 41 item 3): the graph entries are in the table; without a
// device graph_prepare refuses with the device's reason (the host then
// measures batch and says so), graph_launch has nothing to replay, and
// graph_release with nothing held does nothing.
TEST_F(CudaPluginLoad, GraphEntriesAndTheirRefusalWithoutADevice) {
    ASSERT_TRUE(OPB_API_HAS(api, graph_prepare));
    ASSERT_TRUE(OPB_API_HAS(api, graph_launch));
    ASSERT_TRUE(OPB_API_HAS(api, graph_release));
    opb_backend *b = instance_without_a_device();
    if (!b) GTEST_SKIP() << "a CUDA device is usable here; the graph runs in cuda_gpu_test";
    const std::string reason = api->last_error(b);
    void *tensors[3] = {nullptr, nullptr, nullptr};
    EXPECT_EQ(api->graph_prepare(b, nullptr, tensors, 3, 4), OPB_ERR_UNAVAILABLE);
    EXPECT_EQ(reason, api->last_error(b));
    EXPECT_NE(api->graph_launch(b), OPB_OK);
    api->graph_release(b);
    api->destroy(b);
}

TEST_F(CudaPluginLoad, DeviceInfoNeverWritesPastACallersShortStruct) {
    RecordingHost host;
    const opb_host_services s = recording_services(&host);
    opb_backend *b = nullptr;
    ASSERT_EQ(api->create(&s, &b), OPB_OK);
    // An older host whose struct ends after `name`: the memory fields are not its.
    struct {
        opb_device_info info;
        unsigned char canary[16];
    } buf;
    std::memset(&buf, 0xAB, sizeof buf);
    buf.info.struct_size = offsetof(opb_device_info, total_memory);
    buf.info.abi_version = OPB_ABI_VERSION;
    api->device_info(b, &buf.info);
    const auto *bytes = reinterpret_cast<const unsigned char *>(&buf.info);
    for (size_t i = offsetof(opb_device_info, total_memory); i < sizeof buf.info; ++i)
        ASSERT_EQ(bytes[i], 0xAB) << "byte " << i << " past struct_size was written";
    EXPECT_EQ(buf.info.kind, OPB_DEVICE_GPU);
    api->destroy(b);
}

} // namespace

int main(int argc, char **argv) {
    ::testing::InitGoogleTest(&argc, argv);
    if (argc < 2) {
        std::fprintf(stderr, "usage: %s <path to opbench-backend-cuda.so>\n", argv[0]);
        return 2;
    }
    g_plugin_path = argv[1];
    return RUN_ALL_TESTS();
}
