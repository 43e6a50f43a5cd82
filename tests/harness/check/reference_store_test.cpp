// reference_store.cpp: stored references come back bit for bit, keyed by
// description, seed and backend version; a file that does not match its
// inputs, its own hash or its key is dropped; the directory stays under its
// size bound, least recently used first.
#include "check/reference_store.hpp"

#include "opbench/ops.hpp"
#include "../result_set_fixture.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>

#include <unistd.h>

using namespace opbench;
namespace fs = std::filesystem;

namespace {

using opbench::test::TempDir; // a fresh directory, removed with what is in it

opb_op_desc add_desc(int64_t cols) {
    opb_op_desc d = make_desc(OPB_OP_ADD, OPB_DTYPE_F32);
    d.p.eltwise = {4, cols};
    return d;
}

ReferenceKey key_for(const opb_op_desc &d, uint64_t seed = 1, std::string version = "naive 1.0") {
    ReferenceKey k;
    k.desc = d;
    k.input_seed = seed;
    k.backend = "naive";
    k.backend_version = std::move(version);
    return k;
}

// Outputs as a reference would produce them: a + b.
std::vector<std::vector<uint8_t>> outputs_of(const HostTensors &t) {
    std::vector<uint8_t> y(t.buffers[2].size());
    const auto *a = reinterpret_cast<const float *>(t.buffers[0].data());
    const auto *b = reinterpret_cast<const float *>(t.buffers[1].data());
    auto *o = reinterpret_cast<float *>(y.data());
    for (std::size_t i = 0; i < y.size() / 4; ++i) o[i] = a[i] + b[i];
    return {y};
}

int ref_files(const fs::path &dir) {
    int n = 0;
    for (const auto &e : fs::directory_iterator(dir)) n += e.path().extension() == ".ref";
    return n;
}

} // namespace

TEST(ReferenceStore, StoredOutputsComeBackBitForBit) {
    TempDir tmp;
    ReferenceStore cache(tmp.path, 1 << 20);
    const opb_op_desc d = add_desc(64);
    HostTensors in = make_inputs(d, 1);
    EXPECT_FALSE(cache.load(key_for(d), in).has_value());
    EXPECT_EQ(cache.counters().misses, 1);
    const auto out = outputs_of(in);
    cache.store(key_for(d), in, out);
    EXPECT_EQ(cache.counters().stored, 1);
    auto back = cache.load(key_for(d), in);
    ASSERT_TRUE(back.has_value()) << cache.last_problem();
    EXPECT_EQ(*back, out);
    EXPECT_EQ(cache.counters().hits, 1);
    // A second cache object on the same directory (the next run) finds it too.
    ReferenceStore next_run(tmp.path, 1 << 20);
    EXPECT_TRUE(next_run.load(key_for(d), in).has_value());
    // No temporary files are left behind.
    for (const auto &e : fs::directory_iterator(tmp.path)) EXPECT_EQ(e.path().extension(), ".ref") << e.path();
}

TEST(ReferenceStore, KeyCoversDescriptionSeedAndBackendVersionButNotThreads) {
    const opb_op_desc d = add_desc(64);
    opb_op_desc threaded = d;
    threaded.threads = 7;
    EXPECT_EQ(key_for(d).file_name(), key_for(threaded).file_name());
    EXPECT_NE(key_for(d).file_name(), key_for(add_desc(65)).file_name());
    EXPECT_NE(key_for(d).file_name(), key_for(d, 2).file_name());
    EXPECT_NE(key_for(d).file_name(), key_for(d, 1, "naive 1.1").file_name());
    opb_op_desc bf16 = d;
    bf16.dtype = OPB_DTYPE_BF16;
    EXPECT_NE(key_for(d).file_name(), key_for(bf16).file_name());
}

TEST(ReferenceStore, OtherInputsUnderTheSameKeyAreRejectedAndTheFileDropped) {
    TempDir tmp;
    ReferenceStore cache(tmp.path, 1 << 20);
    const opb_op_desc d = add_desc(64);
    HostTensors in = make_inputs(d, 1);
    cache.store(key_for(d), in, outputs_of(in));
    // Same key, other input bits: as if the input generator had changed.
    HostTensors other = make_inputs(d, 2);
    EXPECT_FALSE(cache.load(key_for(d), other).has_value());
    EXPECT_EQ(cache.counters().rejected, 1);
    EXPECT_NE(cache.last_problem().find("inputs"), std::string::npos) << cache.last_problem();
    EXPECT_EQ(ref_files(tmp.path), 0);
}

TEST(ReferenceStore, AFlippedOutputByteOrATruncatedFileIsRejected) {
    TempDir tmp;
    ReferenceStore cache(tmp.path, 1 << 20);
    const opb_op_desc d = add_desc(64);
    HostTensors in = make_inputs(d, 1);
    const fs::path file = tmp.path / key_for(d).file_name();

    cache.store(key_for(d), in, outputs_of(in));
    {
        std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
        f.seekp(-3, std::ios::end);
        f.put('\x55');
    }
    EXPECT_FALSE(cache.load(key_for(d), in).has_value());
    EXPECT_NE(cache.last_problem().find("hash"), std::string::npos) << cache.last_problem();

    cache.store(key_for(d), in, outputs_of(in));
    fs::resize_file(file, fs::file_size(file) - 10);
    EXPECT_FALSE(cache.load(key_for(d), in).has_value());
    EXPECT_NE(cache.last_problem().find("truncated"), std::string::npos) << cache.last_problem();

    std::ofstream(file) << "not a reference\n";
    EXPECT_FALSE(cache.load(key_for(d), in).has_value());
    EXPECT_EQ(cache.counters().rejected, 3);
    EXPECT_FALSE(fs::exists(file));
}

TEST(ReferenceStore, KeepsUnderItsBoundDroppingTheLeastRecentlyUsed) {
    TempDir tmp;
    // Each entry is 4 x 256 f32 = 4 KiB of outputs plus a header: three fit in 14 KiB, four do not.
    ReferenceStore cache(tmp.path, 14 * 1024);
    std::vector<opb_op_desc> descs = {add_desc(256), add_desc(256), add_desc(256), add_desc(256)};
    std::vector<HostTensors> ins;
    for (int i = 0; i < 4; ++i) ins.push_back(make_inputs(descs[i], uint64_t(i)));
    for (int i = 0; i < 3; ++i) {
        cache.store(key_for(descs[i], uint64_t(i)), ins[i], outputs_of(ins[i]));
        std::this_thread::sleep_for(std::chrono::milliseconds(20)); // distinct file times
    }
    ASSERT_EQ(ref_files(tmp.path), 3);
    // Use the oldest: now the second is the least recently used.
    ASSERT_TRUE(cache.load(key_for(descs[0], 0), ins[0]).has_value());
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    cache.store(key_for(descs[3], 3), ins[3], outputs_of(ins[3]));
    EXPECT_EQ(cache.counters().evicted, 1);
    EXPECT_EQ(ref_files(tmp.path), 3);
    EXPECT_TRUE(cache.load(key_for(descs[0], 0), ins[0]).has_value());
    EXPECT_FALSE(cache.load(key_for(descs[1], 1), ins[1]).has_value());
    EXPECT_TRUE(cache.load(key_for(descs[2], 2), ins[2]).has_value());
    EXPECT_TRUE(cache.load(key_for(descs[3], 3), ins[3]).has_value());
}

TEST(ReferenceStore, AnEntryLargerThanTheBoundIsNotStored) {
    TempDir tmp;
    ReferenceStore cache(tmp.path, 100);
    const opb_op_desc d = add_desc(64);
    HostTensors in = make_inputs(d, 1);
    cache.store(key_for(d), in, outputs_of(in));
    EXPECT_EQ(cache.counters().stored, 0);
    EXPECT_EQ(ref_files(tmp.path), 0);
}

TEST(ReferenceStore, AnUnwritableDirectoryIsAProblemNotAnException) {
    TempDir tmp;
    const fs::path blocked = tmp.path / "file-not-dir";
    std::ofstream(blocked) << "x";
    ReferenceStore cache(blocked / "references", 1 << 20);
    const opb_op_desc d = add_desc(64);
    HostTensors in = make_inputs(d, 1);
    EXPECT_NO_THROW(cache.store(key_for(d), in, outputs_of(in)));
    EXPECT_EQ(cache.counters().errors, 1);
    EXPECT_NE(cache.last_problem().find("cannot store"), std::string::npos) << cache.last_problem();
    EXPECT_FALSE(cache.load(key_for(d), in).has_value());
}

TEST(ReferenceStore, DefaultDirFollowsTheMachineCacheDir) {
    const char *old = std::getenv("OPBENCH_CACHE_DIR");
    const std::string saved = old ? old : "";
    ::setenv("OPBENCH_CACHE_DIR", "/some/where", 1);
    EXPECT_EQ(ReferenceStore::default_dir(), fs::path("/some/where/references"));
    if (old)
        ::setenv("OPBENCH_CACHE_DIR", saved.c_str(), 1);
    else
        ::unsetenv("OPBENCH_CACHE_DIR");
}

TEST(ReferenceStore, LoadOrComputeComputesOnceThenServesTheCache) {
    TempDir tmp;
    const opb_op_desc d = add_desc(64);
    HostTensors in = make_inputs(d, 1);
    int computed = 0;
    auto compute = [&] {
        ++computed;
        return outputs_of(in);
    };
    std::string source;
    ReferenceStore first_run(tmp.path, 1 << 20);
    EXPECT_EQ(first_run.load_or_compute(key_for(d), in, compute, source), outputs_of(in));
    EXPECT_EQ(source, "computed");
    ReferenceStore second_run(tmp.path, 1 << 20);
    EXPECT_EQ(second_run.load_or_compute(key_for(d), in, compute, source), outputs_of(in));
    EXPECT_EQ(source, "cache");
    EXPECT_EQ(computed, 1);
    // A failing computation stores nothing.
    EXPECT_THROW((void)second_run.load_or_compute(
                     key_for(d, 9), in, []() -> Outputs { throw std::runtime_error("x"); }, source),
                 std::runtime_error);
    EXPECT_EQ(ref_files(tmp.path), 1);
}
