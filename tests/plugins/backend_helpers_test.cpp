// The SDK's boundary helpers (plugins/opbench/backend_helpers.hpp): struct
// header checks, writes that respect a caller's struct_size, reading a host's
// op description, and the answer for ops a backend does not run.
#include "opbench/backend_helpers.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

namespace opbench::sdk {
namespace {

struct Helpers : ::testing::Test {
    BackendBase b{nullptr};
};

TEST_F(Helpers, CheckStructRefusesNullForeignMajorAndShortStructs) {
    EXPECT_EQ(check_struct<opb_memory_stats>(&b, "be", "opb_memory_stats", nullptr), OPB_ERR_INVALID);
    EXPECT_EQ(b.error, "be: opb_memory_stats is NULL");
    opb_memory_stats s{};
    s.struct_size = sizeof s;
    s.abi_version = (OPB_ABI_VERSION_MAJOR + 1u) << 16;
    EXPECT_EQ(check_struct(&b, "be", "opb_memory_stats", &s), OPB_ERR_INVALID);
    EXPECT_NE(b.error.find("abi_version is 2.0, this plugin speaks 1."), std::string::npos) << b.error;
    s.abi_version = OPB_ABI_VERSION | 7u; // a later minor of the same major is fine
    EXPECT_EQ(check_struct(&b, "be", "opb_memory_stats", &s), OPB_OK);
    s.struct_size = 16; // an older host's shorter struct holding current_bytes: accepted
    EXPECT_EQ(check_struct(&b, "be", "opb_memory_stats", &s), OPB_OK);
    s.struct_size = 12; // does not hold current_bytes, the first field a plugin fills
    EXPECT_EQ(check_struct(&b, "be", "opb_memory_stats", &s), OPB_ERR_INVALID);
    EXPECT_NE(b.error.find("be: opb_memory_stats.struct_size is 12, expected at least 16"), std::string::npos)
        << b.error;
}

TEST_F(Helpers, WriteStructKeepsTheHeaderAndStopsAtStructSize) {
    struct {
        opb_memory_stats s;
        unsigned char guard[8];
    } buf;
    std::memset(&buf, 0xAB, sizeof buf);
    buf.s.struct_size = offsetof(opb_memory_stats, peak_bytes); // header + current_bytes
    buf.s.abi_version = OPB_ABI_VERSION;
    opb_memory_stats filled{};
    filled.struct_size = 999;
    filled.current_bytes = 11;
    filled.peak_bytes = 22;
    write_struct(&buf.s, filled);
    EXPECT_EQ(buf.s.struct_size, offsetof(opb_memory_stats, peak_bytes));
    EXPECT_EQ(buf.s.abi_version, OPB_ABI_VERSION);
    EXPECT_EQ(buf.s.current_bytes, 11u);
    const auto *bytes = reinterpret_cast<const unsigned char *>(&buf);
    for (std::size_t i = offsetof(opb_memory_stats, peak_bytes); i < sizeof buf; ++i)
        ASSERT_EQ(bytes[i], 0xAB) << "byte " << i << " past struct_size was written";
}

TEST_F(Helpers, ReadOpDescSortsUnknownOpsFromBadDescriptions) {
    opb_op_desc in = make_desc(OPB_OP_ADD, OPB_DTYPE_F32), out;
    in.p.eltwise = {2, 3};
    EXPECT_EQ(read_op_desc(&b, "be", &in, out), OPB_OK) << b.error;
    EXPECT_EQ(out.p.eltwise.cols, 3);
    EXPECT_EQ(out.struct_size, sizeof out);

    in.op = OPB_OP_COUNT; // newer than this SDK: a skip, not an error
    EXPECT_EQ(read_op_desc(&b, "be", &in, out), OPB_ERR_UNSUPPORTED);
    EXPECT_NE(b.error.find("be: op " + std::to_string(OPB_OP_COUNT) + " (unknown to this plugin's SDK"),
              std::string::npos)
        << b.error;

    in.op = OPB_OP_ADD;
    in.p.eltwise.rows = 0; // known op, malformed
    EXPECT_EQ(read_op_desc(&b, "be", &in, out), OPB_ERR_INVALID);
    EXPECT_EQ(b.error, "be: invalid add description: rows must be > 0, got 0");

    in.p.eltwise.rows = 2;
    in.struct_size = kOpDescSize_1_0 - 1; // shorter than any ABI 1.x host sends
    EXPECT_EQ(read_op_desc(&b, "be", &in, out), OPB_ERR_INVALID);
    EXPECT_EQ(read_op_desc(&b, "be", nullptr, out), OPB_ERR_INVALID);
}

TEST_F(Helpers, UnsupportedOpNamesTheOpAndWhatTheBackendOffers) {
    EXPECT_EQ(unsupported_op(&b, "tmpl", OPB_OP_MATMUL, "add and silu"), OPB_ERR_UNSUPPORTED);
    EXPECT_EQ(b.error, "tmpl: matmul: not offered by this backend (it offers add and silu)");
    EXPECT_EQ(unsupported_op(&b, "tmpl", -5), OPB_ERR_UNSUPPORTED);
    EXPECT_NE(b.error.find("tmpl: op -5 (unknown to this plugin's SDK"), std::string::npos) << b.error;
}

// copy_in / copy_out of a CPU plugin: every byte arrives, below the
// threshold (one thread), at it and above it (two halves, split on a page),
// at odd sizes and offsets, where a wrong split would drop or repeat bytes.
TEST(CopyHostMemory, EveryByteArrivesAtEverySizeAroundTheThreshold) {
    const uint64_t t = sdk::kCopyWorthAThread;
    for (uint64_t bytes : {uint64_t(0), uint64_t(1), t - 1, t, t + 1, t + 4097, 2 * t + 12345}) {
        std::vector<unsigned char> src(bytes + 3), dst(bytes + 3, 0xee);
        for (std::size_t i = 0; i < src.size(); ++i) src[i] = static_cast<unsigned char>(i * 2654435761u >> 13);
        sdk::copy_host_memory(dst.data() + 1, src.data() + 2, bytes); // unaligned on both sides
        EXPECT_EQ(dst[0], 0xee) << bytes;
        EXPECT_EQ(std::memcmp(dst.data() + 1, src.data() + 2, bytes), 0) << bytes;
        EXPECT_EQ(dst[bytes + 1], 0xee) << "nothing past the end, " << bytes;
    }
}

} // namespace
} // namespace opbench::sdk
