// The plugin ABI's layout: fields are only ever appended, so the offsets of
// ABI 1.0's fields and the fixed size of the op description may never change.
// A failure here means a change broke every plugin already built.
#include "opbench/plugin.h"

#include <gtest/gtest.h>

#include <cstddef>

extern "C" int header_alone_c(void);
int header_alone_plugin_h();
int header_alone_ops_hpp();
int header_alone_backend_helpers_hpp();
int header_alone_scope_hpp();

TEST(SdkHeaders, EachHeaderCompiledAloneAndLinks) {
    EXPECT_EQ(header_alone_c(), static_cast<int>(sizeof(opb_backend_api)));
    EXPECT_EQ(header_alone_plugin_h() + header_alone_ops_hpp() + header_alone_backend_helpers_hpp() +
                  header_alone_scope_hpp(),
              0);
}

TEST(AbiLayout, EveryStructStartsWithSizeThenVersion) {
    EXPECT_EQ(offsetof(opb_backend_api, struct_size), 0u);
    EXPECT_EQ(offsetof(opb_backend_api, abi_version), 4u);
    EXPECT_EQ(offsetof(opb_op_desc, struct_size), 0u);
    EXPECT_EQ(offsetof(opb_op_desc, abi_version), 4u);
    EXPECT_EQ(offsetof(opb_host_services, struct_size), 0u);
    EXPECT_EQ(offsetof(opb_device_info, abi_version), 4u);
    EXPECT_EQ(offsetof(opb_memory_stats, abi_version), 4u);
}

TEST(AbiLayout, BackendTableOffsetsOfVersion1_0) {
    // 8 bytes of header, 4 strings, then 20 function pointers in order.
    EXPECT_EQ(offsetof(opb_backend_api, name), 8u);
    EXPECT_EQ(offsetof(opb_backend_api, create), 40u);
    EXPECT_EQ(offsetof(opb_backend_api, prepare), 40u + 10 * sizeof(void *));
    EXPECT_EQ(offsetof(opb_backend_api, flush_cache), 40u + 19 * sizeof(void *));
    // The table of 1.0-1.4 ended there; 1.5 appends (the test below).
    EXPECT_EQ(offsetof(opb_backend_api, device_clocks), 40u + 20 * sizeof(void *));
}

TEST(AbiLayout, HostServicesOffsetsOfVersion1_0And1_1) {
    // 1.0: header, host pointer, 5 function pointers; 1.1 appends `profiling`.
    EXPECT_EQ(offsetof(opb_host_services, host), 8u);
    EXPECT_EQ(offsetof(opb_host_services, scope_end), 8u + 5 * sizeof(void *));
    EXPECT_EQ(offsetof(opb_host_services, profiling), 8u + 6 * sizeof(void *));
    EXPECT_EQ(sizeof(opb_host_services), 8u + 7 * sizeof(void *));
}

TEST(AbiLayout, OpDescriptionHasAFixedSizeUnion) {
    EXPECT_EQ(offsetof(opb_op_desc, p), 24u);
    EXPECT_EQ(sizeof(opb_op_desc), 24u + 128u);
}

TEST(AbiLayout, AttentionParamsKeepTheir1_1OffsetsAndAppendKvHeads) {
    // 1.0/1.1: five int64 dims, then scale and causal; 1.2 appends kv_heads.
    EXPECT_EQ(offsetof(opb_attention_params, head_dim), 32u);
    EXPECT_EQ(offsetof(opb_attention_params, scale), 40u);
    EXPECT_EQ(offsetof(opb_attention_params, causal), 44u);
    EXPECT_EQ(offsetof(opb_attention_params, kv_heads), 48u);
    EXPECT_LE(sizeof(opb_rope_params), 128u); // inside the fixed union
}

TEST(AbiVersion, MacrosAgree) {
    EXPECT_EQ(OPB_ABI_MAJOR(OPB_ABI_VERSION), static_cast<uint32_t>(OPB_ABI_VERSION_MAJOR));
    EXPECT_EQ(OPB_ABI_MINOR(OPB_ABI_VERSION), static_cast<uint32_t>(OPB_ABI_VERSION_MINOR));
}

TEST(AbiLayout, MatmulParamsKeepTheir1_0OffsetsAndAppendInt8Fields) {
    // 1.0: four int64 dims, then trans_a, trans_b, has_bias; 1.3 appends the
    // int8 fields, the first in what was the struct's tail padding.
    EXPECT_EQ(offsetof(opb_matmul_params, k), 24u);
    EXPECT_EQ(offsetof(opb_matmul_params, has_bias), 40u);
    EXPECT_EQ(offsetof(opb_matmul_params, act_dtype), 44u);
    EXPECT_EQ(offsetof(opb_matmul_params, act_scale), 48u);
    EXPECT_EQ(offsetof(opb_matmul_params, act_zero_point), 52u);
    EXPECT_EQ(offsetof(opb_matmul_params, out_dtype), 56u);
    EXPECT_LE(sizeof(opb_matmul_params), 128u); // inside the fixed union
    // The dtypes of ABI 1.0 keep their values.
    EXPECT_EQ(OPB_DTYPE_F32, 0);
    EXPECT_EQ(OPB_DTYPE_BF16, 1);
    EXPECT_EQ(OPB_DTYPE_F16, 2);
}

TEST(AbiLayout, Version1_5AppendsFiveOptionalEntriesAfterFlushCache) {
    // The 1.0-1.4 table ends at flush_cache; 1.5 appends device_clocks,
    // measure_roofs, clock_begin, clock_end, timer_host_seconds.
    EXPECT_EQ(offsetof(opb_backend_api, device_clocks), 40u + 20 * sizeof(void *));
    EXPECT_EQ(offsetof(opb_backend_api, timer_host_seconds), 40u + 24 * sizeof(void *));
    // The 1.5 table ended there; 1.6 appends (the test below).
    EXPECT_EQ(offsetof(opb_backend_api, activity_begin), 40u + 25 * sizeof(void *));
    EXPECT_EQ(offsetof(opb_device_roof, abi_version), 4u);
    EXPECT_EQ(offsetof(opb_device_clocks, abi_version), 4u);
    EXPECT_EQ(offsetof(opb_clock_reading, abi_version), 4u);
    // The dtypes before 1.5 keep their values; FP8 e4m3 is appended.
    EXPECT_EQ(OPB_DTYPE_S8, 3);
    EXPECT_EQ(OPB_DTYPE_U8, 4);
    EXPECT_EQ(OPB_DTYPE_F8_E4M3, 5);
}

TEST(AbiLayout, Version1_6AppendsTheKernelTimelineAfterTimerHostSeconds) {
    // 1.6 (issue 42): activity_begin / activity_end, and the record they hand over.
    EXPECT_EQ(offsetof(opb_backend_api, activity_begin), 40u + 25 * sizeof(void *));
    EXPECT_EQ(offsetof(opb_backend_api, activity_end), 40u + 26 * sizeof(void *));
    EXPECT_EQ(offsetof(opb_activity, abi_version), 4u);
    EXPECT_EQ(offsetof(opb_activity, start_ns), 16u);
    EXPECT_EQ(offsetof(opb_activity, stream), 32u);
    EXPECT_EQ(offsetof(opb_activity, name), 40u);
    EXPECT_EQ(OPB_ACTIVITY_KERNEL, 0);
}

TEST(AbiLayout, Version1_6AppendsTheGraphEntriesAfterTheKernelTimeline) {
    // 1.6 (issue 41 item 3, before 1.6 was released): the graph launch mode.
    EXPECT_EQ(offsetof(opb_backend_api, graph_prepare), 40u + 27 * sizeof(void *));
    EXPECT_EQ(offsetof(opb_backend_api, graph_launch), 40u + 28 * sizeof(void *));
    EXPECT_EQ(offsetof(opb_backend_api, graph_release), 40u + 29 * sizeof(void *));
    EXPECT_EQ(sizeof(opb_backend_api), 40u + 30 * sizeof(void *));
}

namespace {
opb_status any_activity_begin(opb_backend *) { return OPB_OK; }
} // namespace

TEST(AbiLayout, ATable1_5HasNoKernelTimeline) {
    opb_backend_api api{};
    api.activity_begin = any_activity_begin;
    api.struct_size = sizeof api;
    EXPECT_TRUE(OPB_API_HAS(&api, activity_begin));
    // A 1.5 table ends after timer_host_seconds.
    api.struct_size = static_cast<uint32_t>(offsetof(opb_backend_api, activity_begin));
    EXPECT_FALSE(OPB_API_HAS(&api, activity_begin));
}

TEST(AbiLayout, ATableEndingAtTheTimelineHasNoGraph) {
    opb_backend_api api{};
    api.graph_launch = [](opb_backend *) { return OPB_OK; };
    api.struct_size = sizeof api;
    EXPECT_TRUE(OPB_API_HAS(&api, graph_launch));
    api.struct_size = static_cast<uint32_t>(offsetof(opb_backend_api, graph_prepare));
    EXPECT_FALSE(OPB_API_HAS(&api, graph_launch));
}

namespace {
opb_status any_clock_begin(opb_backend *) { return OPB_OK; }
} // namespace

TEST(AbiLayout, ApiHasReadsNoEntryPastATablesStructSize) {
    opb_backend_api api{};
    api.clock_begin = any_clock_begin;
    api.struct_size = sizeof api;
    EXPECT_TRUE(OPB_API_HAS(&api, clock_begin));
    EXPECT_FALSE(OPB_API_HAS(&api, clock_end)); // in the table but NULL
    // A 1.4 table ends at device_clocks: what lies past it is not the plugin's.
    api.struct_size = static_cast<uint32_t>(offsetof(opb_backend_api, device_clocks));
    EXPECT_FALSE(OPB_API_HAS(&api, clock_begin));
}
