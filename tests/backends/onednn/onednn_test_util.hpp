// Shared helpers for the oneDNN backend tests: a host services struct that
// records allocations and log lines, and a runner that pushes float data
// through the plugin's C table in any dtype.
#pragma once

#include "onednn_isa.hpp"

#include <opbench/ops.hpp>
#include <opbench/plugin.h>

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

extern "C" const opb_backend_api *opb_plugin_entry(uint32_t host_version);

namespace opbench::test {

struct RecordingHost {
    int64_t allocated = 0, freed = 0, alloc_calls = 0, free_calls = 0;
    std::vector<std::string> logs;
    opb_host_services services{};

    RecordingHost() {
        services.struct_size = sizeof services;
        services.abi_version = OPB_ABI_VERSION;
        services.host = this;
        services.log = [](void *h, int32_t, const char *m) { static_cast<RecordingHost *>(h)->logs.emplace_back(m); };
        services.on_alloc = [](void *h, uint64_t n, int32_t) {
            auto *s = static_cast<RecordingHost *>(h);
            s->allocated += int64_t(n);
            ++s->alloc_calls;
        };
        services.on_free = [](void *h, uint64_t n, int32_t) {
            auto *s = static_cast<RecordingHost *>(h);
            s->freed += int64_t(n);
            ++s->free_calls;
        };
        services.scope_begin = [](void *, const char *) {};
        services.scope_end = [](void *) {};
    }
};

// One backend instance per test, through the C table only.
class OnednnPluginTest : public ::testing::Test {
protected:
    void SetUp() override {
        api = opb_plugin_entry(OPB_ABI_VERSION);
        ASSERT_NE(api, nullptr);
        ASSERT_EQ(api->create(&host.services, &be), OPB_OK);
    }
    void TearDown() override {
        if (be) api->destroy(be);
    }
    std::string error() const { return api->last_error(be); }

    // The ISA oneDNN dispatches to, as the backend reports it (its
    // `onednn_isa` fact).
    std::string isa() const { return onednn_isa_of(*api, be); }

    // Whether `d` runs on this CPU, asserting that supports() says what is
    // right for the ISA: f32 always runs; bf16 runs exactly where oneDNN
    // has kernels for it (onednn_isa.hpp); f16 where oneDNN 2.6 has them.
    // A refusal must name the dtype and the ISA; the test is then skipped
    // with that reason (not passed).
    bool offered(const opb_op_desc &d) {
        const opb_status st = api->supports(be, &d);
        const std::string what = std::string(op_name(d.op)) + " " + std::string(dtype_name(d.dtype));
        if (d.dtype == OPB_DTYPE_F32) {
            EXPECT_EQ(st, OPB_OK) << what << " refused: " << error();
            return st == OPB_OK;
        }
        if (d.dtype == OPB_DTYPE_BF16) {
            EXPECT_EQ(st == OPB_OK, onednn_isa_runs_bf16(isa()))
                << what << " on ISA " << isa() << ": supports() returned " << st << " " << error();
        }
        if (st == OPB_OK) return true;
        EXPECT_EQ(st, OPB_ERR_UNSUPPORTED) << error();
        EXPECT_NE(error().find(dtype_name(d.dtype)), std::string::npos) << error();
        EXPECT_NE(error().find(isa()), std::string::npos) << error();
        [&] { GTEST_SKIP() << what << " does not run on ISA " << isa() << ": " << error(); }();
        return false;
    }

    // Rounds values to what `dtype` can hold, so the float64 reference sees
    // exactly the inputs the backend sees.
    static std::vector<float> representable(std::vector<float> v, int dtype) {
        for (auto &x : v) {
            if (dtype == OPB_DTYPE_BF16) x = bf16_to_f32(f32_to_bf16(x));
            if (dtype == OPB_DTYPE_F16) x = f16_to_f32(f32_to_f16(x));
        }
        return v;
    }
    static std::vector<float> random(int64_t n, float lo, float hi, int dtype, unsigned seed) {
        std::mt19937 rng(seed);
        std::uniform_real_distribution<float> dist(lo, hi);
        std::vector<float> v(static_cast<std::size_t>(n));
        for (auto &x : v) x = dist(rng);
        return representable(std::move(v), dtype);
    }

    // Runs `d` on the given inputs (in op_tensors order) and returns the
    // last output as floats. Fails the test on any plugin error.
    std::vector<float> run(const opb_op_desc &d, const std::vector<std::vector<float>> &inputs,
                           uint64_t *workspace = nullptr) {
        auto specs = op_tensors(d);
        EXPECT_GE(specs.size(), inputs.size() + 1); // outputs past the first (rope's Qr, Kr): the last is returned
        std::vector<void *> bufs;
        for (std::size_t i = 0; i < specs.size(); ++i) {
            const std::size_t esz = dtype_size(specs[i].dtype); // int8 matmul: per tensor
            void *p = nullptr;
            EXPECT_EQ(api->alloc(be, uint64_t(specs[i].elements()) * esz, &p), OPB_OK) << error();
            bufs.push_back(p);
            if (i < inputs.size()) {
                EXPECT_EQ(int64_t(inputs[i].size()), specs[i].elements()) << specs[i].name;
                std::vector<uint8_t> raw(inputs[i].size() * esz);
                for (std::size_t j = 0; j < inputs[i].size(); ++j)
                    store_from_f32(raw.data(), specs[i].dtype, int64_t(j), inputs[i][j]);
                EXPECT_EQ(api->copy_in(be, p, raw.data(), raw.size()), OPB_OK) << error();
            }
        }
        opb_plan *plan = nullptr;
        uint64_t ws = 0;
        std::vector<float> out;
        const opb_status st = api->prepare(be, &d, &plan, &ws);
        EXPECT_EQ(st, OPB_OK) << error();
        if (st == OPB_OK) {
            if (workspace) *workspace = ws;
            EXPECT_EQ(api->execute(be, plan, bufs.data(), int32_t(bufs.size())), OPB_OK) << error();
            EXPECT_EQ(api->synchronize(be), OPB_OK) << error();
            const int64_t n = specs.back().elements();
            const int out_dt = specs.back().dtype;
            std::vector<uint8_t> raw(std::size_t(n) * dtype_size(out_dt));
            EXPECT_EQ(api->copy_out(be, raw.data(), bufs.back(), raw.size()), OPB_OK) << error();
            out.resize(std::size_t(n));
            for (int64_t j = 0; j < n; ++j) out[std::size_t(j)] = load_as_f32(raw.data(), out_dt, j);
            api->release(be, plan);
        }
        for (void *p : bufs) api->free(be, p);
        return out;
    }

    const opb_backend_api *api = nullptr;
    opb_backend *be = nullptr;
    RecordingHost host;
};

} // namespace opbench::test
