// Tests of backends/naive/plugin.cpp: the C table the host sees through
// opb_plugin_entry, called exactly as a host would (no C++ API in between).
#include "naive/kernels.hpp"

#include "opbench/ops.hpp"
#include "opbench/plugin.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

extern "C" const opb_backend_api *opb_plugin_entry(uint32_t host_abi_version);

namespace opbench::naive {
namespace {

// What the plugin reports through the host services.
struct HostLog {
    uint64_t host_current = 0, device_current = 0, alloc_calls = 0;
    std::vector<std::string> messages;
};

opb_host_services make_services(HostLog *log) {
    opb_host_services s{};
    s.struct_size = sizeof s;
    s.abi_version = OPB_ABI_VERSION;
    s.host = log;
    s.log = [](void *h, int32_t, const char *m) { static_cast<HostLog *>(h)->messages.push_back(m); };
    s.on_alloc = [](void *h, uint64_t bytes, int32_t is_device) {
        auto *l = static_cast<HostLog *>(h);
        (is_device ? l->device_current : l->host_current) += bytes;
        ++l->alloc_calls;
    };
    s.on_free = [](void *h, uint64_t bytes, int32_t is_device) {
        auto *l = static_cast<HostLog *>(h);
        (is_device ? l->device_current : l->host_current) -= bytes;
    };
    s.scope_begin = [](void *, const char *) {};
    s.scope_end = [](void *) {};
    return s;
}

class NaivePlugin : public ::testing::Test {
protected:
    void SetUp() override {
        api = opb_plugin_entry(OPB_ABI_VERSION);
        ASSERT_NE(api, nullptr);
        services = make_services(&log);
        ASSERT_EQ(api->create(&services, &b), OPB_OK);
        ASSERT_NE(b, nullptr);
    }
    void TearDown() override {
        if (b) api->destroy(b);
    }

    opb_memory_stats stats() {
        opb_memory_stats s{};
        s.struct_size = sizeof s;
        s.abi_version = OPB_ABI_VERSION;
        EXPECT_EQ(api->memory_stats(b, &s), OPB_OK) << api->last_error(b);
        return s;
    }
    std::string error() const { return api->last_error(b); }

    const opb_backend_api *api = nullptr;
    HostLog log;
    opb_host_services services{};
    opb_backend *b = nullptr;
};

opb_op_desc add_desc(int64_t rows, int64_t cols) {
    opb_op_desc d = make_desc(OPB_OP_ADD, OPB_DTYPE_F32);
    d.p.eltwise = {rows, cols};
    return d;
}

opb_op_desc attention(int variant, int64_t seq) {
    opb_op_desc d = make_desc(OPB_OP_ATTENTION, OPB_DTYPE_F32, variant);
    d.p.attention = {1, 2, seq, seq, 16, 0.0f, 1, 0};
    return d;
}

// A valid description of every op, with its defaults filled in.
opb_op_desc valid_desc(int op, int dtype, int variant) {
    opb_op_desc d = make_desc(op, dtype, variant);
    switch (op) {
    case OPB_OP_MATMUL: d.p.matmul = {2, 8, 8, 8, 0, 1, 1, 0, 0.0f, 0, 0}; break;
    case OPB_OP_SOFTMAX: d.p.softmax = {1, 4, 8, 1.0f, 1}; break;
    case OPB_OP_LAYERNORM:
    case OPB_OP_RMSNORM: d.p.norm = {4, 8, 1e-5f}; break;
    case OPB_OP_ATTENTION: d.p.attention = {1, 2, 8, 8, 16, 0.0f, 0, 0}; break;
    case OPB_OP_ROPE: d.p.rope = {1, 2, 2, 4, 16, 0, 10000.0f, 0}; break;
    default: d.p.eltwise = {4, 8}; break;
    }
    return d;
}

TEST(NaivePluginEntry, TableHasItsSizeVersionsAndIdentity) {
    const opb_backend_api *api = opb_plugin_entry(OPB_ABI_VERSION);
    ASSERT_NE(api, nullptr);
    EXPECT_EQ(api->struct_size, sizeof(opb_backend_api));
    EXPECT_EQ(api->abi_version, OPB_ABI_VERSION);
    EXPECT_EQ(OPB_ABI_MAJOR(api->abi_version), uint32_t(OPB_ABI_VERSION_MAJOR));
    EXPECT_STREQ(api->name, "naive");
    EXPECT_STREQ(api->version, OPBENCH_PROJECT_VERSION);
    ASSERT_NE(api->description, nullptr);
    EXPECT_GT(std::strlen(api->description), 0u);
    EXPECT_EQ(std::strchr(api->description, '\n'), nullptr) << "description is one line";
    EXPECT_STREQ(api->library_versions, "");
}

TEST(NaivePluginEntry, EveryMandatoryEntryIsSetAndOptionalOnesAreAsDocumented) {
    const opb_backend_api *api = opb_plugin_entry(OPB_ABI_VERSION);
    ASSERT_NE(api, nullptr);
    EXPECT_NE(api->create, nullptr);
    EXPECT_NE(api->destroy, nullptr);
    EXPECT_NE(api->last_error, nullptr);
    EXPECT_NE(api->probe, nullptr);
    EXPECT_NE(api->device_info, nullptr);
    EXPECT_NE(api->supports, nullptr);
    EXPECT_NE(api->alloc, nullptr);
    EXPECT_NE(api->free, nullptr);
    EXPECT_NE(api->copy_in, nullptr);
    EXPECT_NE(api->copy_out, nullptr);
    EXPECT_NE(api->prepare, nullptr);
    EXPECT_NE(api->execute, nullptr);
    EXPECT_NE(api->release, nullptr);
    EXPECT_NE(api->synchronize, nullptr);
    EXPECT_NE(api->memory_stats, nullptr);
    EXPECT_NE(api->reset_peak, nullptr);
    // No device timer and no device cache: the host defaults apply.
    EXPECT_EQ(api->timer_start, nullptr);
    EXPECT_EQ(api->timer_stop, nullptr);
    EXPECT_EQ(api->flush_cache, nullptr);
    EXPECT_NE(api->info, nullptr);
}

TEST_F(NaivePlugin, ProbeSucceedsAndDeviceIsTheHostCpu) {
    EXPECT_EQ(api->probe(b), OPB_OK);
    opb_device_info info{};
    info.struct_size = sizeof info;
    info.abi_version = OPB_ABI_VERSION;
    ASSERT_EQ(api->device_info(b, &info), OPB_OK) << error();
    EXPECT_EQ(info.kind, OPB_DEVICE_CPU);
    EXPECT_GT(std::strlen(info.name), 0u);
    EXPECT_LT(std::strlen(info.name), sizeof info.name);
    EXPECT_GT(info.total_memory, 0u);
    EXPECT_LE(info.free_memory, info.total_memory);
}

TEST_F(NaivePlugin, DeviceInfoRefusesAShortStructAndAnotherMajor) {
    opb_device_info info{};
    info.struct_size = 8; // only the header
    info.abi_version = OPB_ABI_VERSION;
    EXPECT_EQ(api->device_info(b, &info), OPB_ERR_INVALID);
    EXPECT_NE(error().find("struct_size"), std::string::npos) << error();
    info.struct_size = sizeof info;
    info.abi_version = uint32_t(OPB_ABI_VERSION_MAJOR + 1) << 16;
    EXPECT_EQ(api->device_info(b, &info), OPB_ERR_INVALID);
    EXPECT_NE(error().find("abi_version"), std::string::npos) << error();
}

TEST_F(NaivePlugin, InfoReportsOneThreadAndTheAccumulation) {
    std::vector<std::pair<std::string, std::string>> facts;
    api->info(
        b, [](void *u, const char *k, const char *v) { static_cast<decltype(facts) *>(u)->emplace_back(k, v); },
        &facts);
    auto find = [&](const std::string &key) -> std::string {
        for (auto &[k, v] : facts)
            if (k == key) return v;
        return "<missing>";
    };
    EXPECT_EQ(find("threads"), "1");
    EXPECT_NE(find("accumulation").find("f64"), std::string::npos) << find("accumulation");
}

TEST_F(NaivePlugin, SupportsEveryValidDescriptionExceptTf32) {
    for (int op = 0; op < OPB_OP_COUNT; ++op)
        for (int dt : {OPB_DTYPE_F32, OPB_DTYPE_BF16, OPB_DTYPE_F16})
            for (int variant = 0; variant < int(variant_names(op).size()); ++variant) {
                opb_op_desc d = valid_desc(op, dt, variant);
                ASSERT_EQ(validate_desc(d), "") << "test bug: invalid desc for " << op_name(op);
                if (op == OPB_OP_MATMUL && variant == OPB_MATMUL_TF32) {
                    EXPECT_EQ(api->supports(b, &d), OPB_ERR_UNSUPPORTED);
                    EXPECT_NE(error().find("tf32 is a GPU tensor-core mode"), std::string::npos) << error();
                } else {
                    EXPECT_EQ(api->supports(b, &d), OPB_OK)
                        << op_name(op) << " " << dtype_name(dt) << " variant " << variant << ": " << error();
                }
            }
}

TEST_F(NaivePlugin, InvalidDescriptionIsRefusedWithTheReason) {
    opb_op_desc d = valid_desc(OPB_OP_MATMUL, OPB_DTYPE_F32, 0);
    d.p.matmul.m = 0;
    EXPECT_EQ(api->supports(b, &d), OPB_ERR_INVALID);
    EXPECT_NE(error().find("matmul"), std::string::npos) << error();
    EXPECT_NE(error().find("M must be > 0"), std::string::npos) << error();
    opb_plan *plan = nullptr;
    EXPECT_EQ(api->prepare(b, &d, &plan, nullptr), OPB_ERR_INVALID);
    EXPECT_EQ(plan, nullptr);

    opb_op_desc bad_variant = valid_desc(OPB_OP_ATTENTION, OPB_DTYPE_F32, 0);
    bad_variant.variant = 5;
    EXPECT_EQ(api->supports(b, &bad_variant), OPB_ERR_INVALID);
    EXPECT_NE(error().find("unknown variant 5"), std::string::npos) << error();

    opb_op_desc short_desc = add_desc(2, 2);
    short_desc.struct_size = 16;
    EXPECT_EQ(api->supports(b, &short_desc), OPB_ERR_INVALID);
    EXPECT_NE(error().find("struct_size"), std::string::npos) << error();

    EXPECT_EQ(api->supports(b, nullptr), OPB_ERR_INVALID);
    EXPECT_NE(error().find("NULL"), std::string::npos) << error();
}

TEST_F(NaivePlugin, AllocCopyPrepareExecuteReleaseRoundTrip) {
    const opb_op_desc d = add_desc(3, 5);
    const uint64_t bytes = 15 * sizeof(float);
    std::vector<float> a(15), bv(15), y(15, -1.0f);
    for (int i = 0; i < 15; ++i) {
        a[size_t(i)] = 0.5f * float(i);
        bv[size_t(i)] = 100.0f - float(i);
    }
    void *ta = nullptr, *tb = nullptr, *ty = nullptr;
    ASSERT_EQ(api->alloc(b, bytes, &ta), OPB_OK) << error();
    ASSERT_EQ(api->alloc(b, bytes, &tb), OPB_OK) << error();
    ASSERT_EQ(api->alloc(b, bytes, &ty), OPB_OK) << error();
    EXPECT_EQ(reinterpret_cast<uintptr_t>(ta) % 64, 0u) << "alloc must be 64-byte aligned";
    ASSERT_EQ(api->copy_in(b, ta, a.data(), bytes), OPB_OK);
    ASSERT_EQ(api->copy_in(b, tb, bv.data(), bytes), OPB_OK);

    opb_plan *plan = nullptr;
    uint64_t ws = 123;
    ASSERT_EQ(api->prepare(b, &d, &plan, &ws), OPB_OK) << error();
    ASSERT_NE(plan, nullptr);
    EXPECT_EQ(ws, 0u) << "add needs no workspace";
    void *tensors[] = {ta, tb, ty};
    ASSERT_EQ(api->execute(b, plan, tensors, 3), OPB_OK) << error();
    ASSERT_EQ(api->synchronize(b), OPB_OK);
    ASSERT_EQ(api->copy_out(b, y.data(), ty, bytes), OPB_OK);
    for (int i = 0; i < 15; ++i) EXPECT_EQ(y[size_t(i)], a[size_t(i)] + bv[size_t(i)]) << i;

    api->release(b, plan);
    api->free(b, ta);
    api->free(b, tb);
    api->free(b, ty);
    EXPECT_EQ(stats().current_bytes, 0u);
    EXPECT_EQ(log.host_current, 0u);
}

TEST_F(NaivePlugin, AttentionThroughThePluginEqualsTheKernel) {
    const opb_op_desc d = attention(OPB_ATTENTION_FUSED, 40);
    const auto specs = op_tensors(d);
    std::mt19937 rng(21);
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    std::vector<std::vector<float>> host;
    std::vector<void *> dev;
    for (const auto &t : specs) {
        host.emplace_back(size_t(t.elements()));
        for (float &x : host.back()) x = dist(rng);
        void *p = nullptr;
        ASSERT_EQ(api->alloc(b, host.back().size() * sizeof(float), &p), OPB_OK) << error();
        ASSERT_EQ(api->copy_in(b, p, host.back().data(), host.back().size() * sizeof(float)), OPB_OK);
        dev.push_back(p);
    }
    opb_plan *plan = nullptr;
    uint64_t ws = 0;
    ASSERT_EQ(api->prepare(b, &d, &plan, &ws), OPB_OK) << error();
    ASSERT_EQ(api->execute(b, plan, dev.data(), int32_t(dev.size())), OPB_OK) << error();
    std::vector<float> got(host[3].size());
    ASSERT_EQ(api->copy_out(b, got.data(), dev[3], got.size() * sizeof(float)), OPB_OK);

    std::vector<double> scratch(ws / sizeof(double));
    std::vector<float> want(host[3].size());
    attention_fused(d.p.attention, d.dtype, host[0].data(), host[1].data(), host[2].data(), want.data(),
                    scratch.data());
    EXPECT_EQ(got, want);
    api->release(b, plan);
    for (void *p : dev) api->free(b, p);
}

TEST_F(NaivePlugin, MemoryStatsCountTensorsAndWorkspaceExactly) {
    void *t1 = nullptr, *t2 = nullptr;
    ASSERT_EQ(api->alloc(b, 1000, &t1), OPB_OK);
    ASSERT_EQ(api->alloc(b, 24, &t2), OPB_OK);
    opb_memory_stats s = stats();
    EXPECT_EQ(s.current_bytes, 1024u);
    EXPECT_EQ(s.peak_bytes, 1024u);
    EXPECT_EQ(s.workspace_bytes, 0u);

    const opb_op_desc composed = attention(OPB_ATTENTION_COMPOSED, 64);
    const uint64_t expected_ws = 64u * 64u * sizeof(double); // the score matrix of one head
    ASSERT_EQ(workspace_bytes(composed), expected_ws);
    opb_plan *plan = nullptr;
    uint64_t ws = 0;
    ASSERT_EQ(api->prepare(b, &composed, &plan, &ws), OPB_OK) << error();
    EXPECT_EQ(ws, expected_ws);
    s = stats();
    EXPECT_EQ(s.current_bytes, 1024u + expected_ws);
    EXPECT_EQ(s.peak_bytes, 1024u + expected_ws);
    EXPECT_EQ(s.workspace_bytes, expected_ws);
    EXPECT_EQ(log.host_current, 1024u + expected_ws) << "host accounting must see the same bytes";
    EXPECT_EQ(log.device_current, 0u);

    api->release(b, plan);
    api->free(b, t1);
    s = stats();
    EXPECT_EQ(s.current_bytes, 24u);
    EXPECT_EQ(s.peak_bytes, 1024u + expected_ws) << "peak holds until reset_peak";
    EXPECT_EQ(s.workspace_bytes, 0u);
    api->reset_peak(b);
    s = stats();
    EXPECT_EQ(s.peak_bytes, 24u);

    // The fused plan's workspace is the same at seq 64 and seq 1024.
    opb_plan *p64 = nullptr, *p1024 = nullptr;
    uint64_t w64 = 0, w1024 = 0;
    const opb_op_desc f64 = attention(OPB_ATTENTION_FUSED, 64), f1024 = attention(OPB_ATTENTION_FUSED, 1024);
    ASSERT_EQ(api->prepare(b, &f64, &p64, &w64), OPB_OK) << error();
    ASSERT_EQ(api->prepare(b, &f1024, &p1024, &w1024), OPB_OK) << error();
    EXPECT_EQ(w64, w1024);
    EXPECT_EQ(stats().workspace_bytes, w64 + w1024);
    EXPECT_EQ(stats().current_bytes, 24u + w64 + w1024);
    api->release(b, p64);
    api->release(b, p1024);
    api->free(b, t2);
    s = stats();
    EXPECT_EQ(s.current_bytes, 0u);
    EXPECT_EQ(s.workspace_bytes, 0u);
    EXPECT_EQ(log.host_current, 0u);
}

TEST_F(NaivePlugin, MemoryStatsRefusesAShortStruct) {
    opb_memory_stats s{};
    s.struct_size = 12;
    s.abi_version = OPB_ABI_VERSION;
    EXPECT_EQ(api->memory_stats(b, &s), OPB_ERR_INVALID);
    EXPECT_NE(error().find("opb_memory_stats.struct_size"), std::string::npos) << error();
}

TEST_F(NaivePlugin, WrongTensorCountIsRefusedWithTheExpectedTensors) {
    opb_op_desc d = valid_desc(OPB_OP_MATMUL, OPB_DTYPE_F32, 0); // has_bias: A, B, bias, C
    opb_plan *plan = nullptr;
    ASSERT_EQ(api->prepare(b, &d, &plan, nullptr), OPB_OK) << error();
    std::vector<float> buf(256);
    void *tensors[] = {buf.data(), buf.data(), buf.data()};
    EXPECT_EQ(api->execute(b, plan, tensors, 3), OPB_ERR_INVALID);
    EXPECT_NE(error().find("expected 4 tensors (A, B, bias, C), got 3"), std::string::npos) << error();

    void *with_null[] = {buf.data(), nullptr, buf.data(), buf.data()};
    EXPECT_EQ(api->execute(b, plan, with_null, 4), OPB_ERR_INVALID);
    EXPECT_NE(error().find("tensor 1 (B) is NULL"), std::string::npos) << error();

    EXPECT_EQ(api->execute(b, nullptr, tensors, 3), OPB_ERR_INVALID);
    EXPECT_NE(error().find("plan is NULL"), std::string::npos) << error();
    api->release(b, plan);
}

TEST_F(NaivePlugin, PrepareCopiesTheDescription) {
    // The host may reuse its description after prepare: the plan must not keep a pointer to it.
    opb_op_desc d = add_desc(1, 4);
    opb_plan *plan = nullptr;
    ASSERT_EQ(api->prepare(b, &d, &plan, nullptr), OPB_OK) << error();
    d.p.eltwise.cols = 1000000;
    std::vector<float> a{1, 2, 3, 4}, c{10, 20, 30, 40}, y(4, 0.0f);
    void *tensors[] = {a.data(), c.data(), y.data()};
    ASSERT_EQ(api->execute(b, plan, tensors, 3), OPB_OK) << error();
    EXPECT_EQ(y, (std::vector<float>{11, 22, 33, 44}));
    api->release(b, plan);
}

// An op this plugin's SDK does not know (a newer host's op) is skipped, never
// failed: UNSUPPORTED from supports and prepare, with the reason.
TEST_F(NaivePlugin, AnOpItDoesNotKnowIsUnsupportedWithTheReason) {
    opb_op_desc d = make_desc(OPB_OP_COUNT + 3, OPB_DTYPE_F32);
    d.p.eltwise = {4, 4};
    EXPECT_EQ(api->supports(b, &d), OPB_ERR_UNSUPPORTED);
    EXPECT_NE(std::string(api->last_error(b))
                  .find("op " + std::to_string(OPB_OP_COUNT + 3) + " (unknown to this plugin's SDK"),
              std::string::npos)
        << api->last_error(b);
    opb_plan *plan = nullptr;
    EXPECT_EQ(api->prepare(b, &d, &plan, nullptr), OPB_ERR_UNSUPPORTED);
    EXPECT_EQ(plan, nullptr);
}

// Every op of the SDK's table has a naive kernel: the reference runs them all.
// plugin.h's QUANTIZE, by hand: y = saturate(round_half_even(x / scale) + zp).
TEST(NaiveKernels, QuantizeRoundsTiesToEvenSaturatesAndMapsNanToTheZeroPoint) {
    const float x[] = {0.0f, 0.3f, 0.75f, -0.25f, 1.25f, 100.0f, -100.0f, std::nanf("")};
    opb_quantize_params p{1, 8, 0.5f, 128, OPB_DTYPE_U8};
    uint8_t u[8];
    naive::quantize(p, OPB_DTYPE_F32, x, u);
    // x / 0.5 = 0, 0.6, 1.5, -0.5, 2.5, 200, -200, NaN -> 0, 1, 2, -0, 2, 200, -200, (0) then + 128, in 0..255
    const uint8_t want_u[] = {128, 129, 130, 128, 130, 255, 0, 128};
    for (int i = 0; i < 8; ++i) EXPECT_EQ(u[i], want_u[i]) << "u8 element " << i;
    p.out_dtype = OPB_DTYPE_S8;
    p.zero_point = 0;
    int8_t s[8];
    naive::quantize(p, OPB_DTYPE_F32, x, s);
    const int8_t want_s[] = {0, 1, 2, 0, 2, 127, -128, 0};
    for (int i = 0; i < 8; ++i) EXPECT_EQ(s[i], want_s[i]) << "s8 element " << i;
}

TEST(NaiveKernels, DispatchCoversEveryRowOfTheOpTable) {
    for (const OpInfo &row : kOps) EXPECT_TRUE(has_kernel(row.op)) << row.name;
    EXPECT_FALSE(has_kernel(-1));
    EXPECT_FALSE(has_kernel(OPB_OP_COUNT));
}

// The header checks are the SDK's (sdk::check_struct): a short description or
// another ABI major is INVALID with the field named.
TEST_F(NaivePlugin, ShortOrForeignStructsAreInvalidWithTheFieldNamed) {
    opb_op_desc d = make_desc(OPB_OP_ADD, OPB_DTYPE_F32);
    d.p.eltwise = {4, 4};
    d.struct_size = 16;
    EXPECT_EQ(api->supports(b, &d), OPB_ERR_INVALID);
    EXPECT_NE(std::string(api->last_error(b)).find("naive: opb_op_desc.struct_size is 16"), std::string::npos)
        << api->last_error(b);
    d.struct_size = sizeof d;
    d.abi_version = (OPB_ABI_VERSION_MAJOR + 1u) << 16;
    EXPECT_EQ(api->supports(b, &d), OPB_ERR_INVALID);
    EXPECT_NE(std::string(api->last_error(b)).find("majors must match"), std::string::npos);
    opb_memory_stats ms{};
    ms.abi_version = OPB_ABI_VERSION;
    ms.struct_size = 4;
    EXPECT_EQ(api->memory_stats(b, &ms), OPB_ERR_INVALID);
}

} // namespace
} // namespace opbench::naive
