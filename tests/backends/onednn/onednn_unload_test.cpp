// The built plugin survives being unloaded right after a multi-threaded op.
// oneDNN runs on OpenMP; after a parallel region libgomp's workers keep
// spinning for a while, so a dlclose that unmapped libgomp under them crashed
// opbench at exit. The plugin is linked with -z nodelete: dlclose leaves it
// (and libdnnl, libgomp) mapped.
#include <opbench/ops.hpp>
#include <opbench/plugin.h>

#include <gtest/gtest.h>

#include <dlfcn.h>

#include <string>

namespace {

std::string g_plugin_path; // argv[1]: the built opbench-backend-onednn.so

void run_parallel_op(const opb_backend_api *api) {
    opb_host_services s{};
    s.struct_size = sizeof s;
    s.abi_version = OPB_ABI_VERSION;
    s.log = [](void *, int32_t, const char *) {};
    s.on_alloc = [](void *, uint64_t, int32_t) {};
    s.on_free = [](void *, uint64_t, int32_t) {};
    s.scope_begin = [](void *, const char *) {};
    s.scope_end = [](void *) {};
    opb_backend *b = nullptr;
    ASSERT_EQ(api->create(&s, &b), OPB_OK);
    auto d = opbench::make_desc(OPB_OP_ADD, OPB_DTYPE_F32);
    d.threads = 2; // a parallel region, even on a 1-core machine
    d.p.eltwise = {256, 1024};
    opb_plan *plan = nullptr;
    ASSERT_EQ(api->prepare(b, &d, &plan, nullptr), OPB_OK) << api->last_error(b);
    void *t[3];
    for (auto &p : t) ASSERT_EQ(api->alloc(b, 256 * 1024 * 4, &p), OPB_OK);
    ASSERT_EQ(api->execute(b, plan, t, 3), OPB_OK) << api->last_error(b);
    ASSERT_EQ(api->synchronize(b), OPB_OK);
    api->release(b, plan);
    for (auto p : t) api->free(b, p);
    api->destroy(b);
}

TEST(OnednnUnload, PluginStaysMappedAfterDlcloseFollowingAParallelOp) {
    ASSERT_FALSE(g_plugin_path.empty()) << "pass the plugin's path as the first argument";
    for (int i = 0; i < 5; ++i) {
        void *h = dlopen(g_plugin_path.c_str(), RTLD_NOW | RTLD_LOCAL);
        ASSERT_NE(h, nullptr) << dlerror();
        auto entry = reinterpret_cast<opb_plugin_entry_fn>(dlsym(h, OPB_PLUGIN_ENTRY_SYMBOL));
        ASSERT_NE(entry, nullptr);
        run_parallel_op(entry(OPB_ABI_VERSION));
        ASSERT_EQ(dlclose(h), 0);
        // Still loaded: RTLD_NOLOAD finds it only if dlclose left it mapped.
        void *again = dlopen(g_plugin_path.c_str(), RTLD_NOW | RTLD_NOLOAD);
        EXPECT_NE(again, nullptr) << "dlclose unmapped the plugin (lost -z nodelete?)";
        if (again) dlclose(again);
    }
}

} // namespace

int main(int argc, char **argv) {
    ::testing::InitGoogleTest(&argc, argv);
    if (argc > 1) g_plugin_path = argv[1];
    return RUN_ALL_TESTS();
}
