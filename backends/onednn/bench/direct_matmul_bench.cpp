// Direct oneDNN matmul loop: the baseline that opbench's onednn backend is
// compared with (issue 3: "within 5% of oneDNN itself"). Same configuration
// as the plugin's matmul plan: row-major [1, M, K] x [1, K, N] -> [1, M, N]
// (linear layers: B stored [N, K], i.e. trans_b, plus a bias, as in
// suites/gemm.toml), user-managed scratchpad, primitive created once outside
// the timed loop; manual time around execute + stream.wait().
//
// Names follow opbench's (`matmul/B:1/M:../N:../K:../dt:../threads:N/be:...`)
// with be:onednn-direct, so the two result sets line up row by row.
#include <benchmark/benchmark.h>
#include <oneapi/dnnl/dnnl.hpp>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <cstdint>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

namespace {

using dnnl::memory;

struct Shape {
    int64_t m, n, k;
    bool linear; // trans_b + bias
};

void run_matmul(benchmark::State &state, Shape s, memory::data_type dt, int threads) {
    if (omp_get_max_threads() != threads) omp_set_num_threads(threads);
    dnnl::engine eng(dnnl::engine::kind::cpu, 0);
    dnnl::stream strm(eng);
    memory::desc a_md({1, s.m, s.k}, dt, memory::format_tag::abc);
    memory::desc b_md({1, s.k, s.n}, dt, s.linear ? memory::format_tag::acb : memory::format_tag::abc);
    memory::desc c_md({1, s.m, s.n}, dt, memory::format_tag::abc);
    memory::desc bias_md({1, 1, s.n}, dt, memory::format_tag::abc);
    dnnl::primitive_attr attr;
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    dnnl::matmul::primitive_desc pd(
        s.linear ? dnnl::matmul::desc(a_md, b_md, bias_md, c_md) : dnnl::matmul::desc(a_md, b_md, c_md), attr, eng);
    dnnl::matmul prim(pd);

    memory a(a_md, eng), b(b_md, eng), c(c_md, eng), bias(bias_md, eng), scratch(pd.scratchpad_desc(), eng);
    // Inputs in [-1, 1): values matter for nothing but realism (no denormals).
    std::mt19937 rng(42);
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    for (auto *mem : {&a, &b, &bias}) {
        const auto n = mem->get_desc().get_size() / memory::data_type_size(dt);
        if (dt == memory::data_type::f32) {
            auto *p = static_cast<float *>(mem->get_data_handle());
            for (std::size_t i = 0; i < n; ++i) p[i] = dist(rng);
        } else { // bf16: upper half of the f32 pattern
            auto *p = static_cast<uint16_t *>(mem->get_data_handle());
            for (std::size_t i = 0; i < n; ++i) {
                float f = dist(rng);
                uint32_t u;
                std::memcpy(&u, &f, 4);
                p[i] = uint16_t(u >> 16);
            }
        }
    }
    std::unordered_map<int, memory> args{
        {DNNL_ARG_SRC, a}, {DNNL_ARG_WEIGHTS, b}, {DNNL_ARG_DST, c}, {DNNL_ARG_SCRATCHPAD, scratch}};
    if (s.linear) args.insert({DNNL_ARG_BIAS, bias});
    prim.execute(strm, args); // first run outside the timing (page faults, caches)
    strm.wait();
    std::vector<double> samples;
    samples.reserve(1 << 16);
    for (auto _ : state) {
        auto t0 = std::chrono::steady_clock::now();
        prim.execute(strm, args);
        strm.wait();
        auto t1 = std::chrono::steady_clock::now();
        const double sec = std::chrono::duration<double>(t1 - t0).count();
        state.SetIterationTime(sec);
        samples.push_back(sec); // after t1: not timed
    }
    // Google Benchmark reports the mean; opbench reports the median of its
    // samples, so the median is recorded too, for a like-for-like comparison.
    if (!samples.empty()) {
        std::nth_element(samples.begin(), samples.begin() + samples.size() / 2, samples.end());
        state.counters["median_s"] = samples[samples.size() / 2];
    }
    // The same FLOP convention as opbench (ops.hpp): 2MNK, + MN for the bias.
    const double flops = 2.0 * double(s.m) * double(s.n) * double(s.k) + (s.linear ? double(s.m) * double(s.n) : 0.0);
    state.counters["GFLOPS"] = benchmark::Counter(flops * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
    state.counters["threads"] = threads;
    state.SetLabel(pd.impl_info_str());
}

void register_all(int all_threads) {
    const Shape shapes[] = {
        // square, as suites/gemm.toml "square"
        {512, 512, 512, false},
        {1024, 1024, 1024, false},
        {2048, 2048, 2048, false},
        // GPT-2 small / BERT-base linear layers at 1024 tokens
        {1024, 2304, 768, true}, // fused QKV projection
        {1024, 768, 768, true},  // attention output projection
        {1024, 3072, 768, true}, // MLP up
        {1024, 768, 3072, true}, // MLP down
        // the same layers at 2048 tokens, as suites/gemm.toml "linear"
        {2048, 2304, 768, true},
        {2048, 3072, 768, true},
        {2048, 768, 3072, true},
    };
    const std::pair<const char *, memory::data_type> dtypes[] = {{"f32", memory::data_type::f32},
                                                                 {"bf16", memory::data_type::bf16}};
    std::vector<int> thread_counts{1};
    if (all_threads > 1) thread_counts.push_back(all_threads);
    for (const auto &[dname, dt] : dtypes)
        for (int th : thread_counts)
            for (const auto &s : shapes) {
                const std::string name = "matmul/B:1/M:" + std::to_string(s.m) + "/N:" + std::to_string(s.n) +
                                         "/K:" + std::to_string(s.k) + (s.linear ? "/tb:1/bias:1" : "") +
                                         "/dt:" + dname + "/threads:" + std::to_string(th) + "/be:onednn-direct";
                benchmark::RegisterBenchmark(name.c_str(), run_matmul, s, dt, th)
                    ->UseManualTime()
                    ->Unit(benchmark::kMillisecond);
            }
}

} // namespace

int main(int argc, char **argv) {
    // "All threads" is OpenMP's default team size, as in the plugin (threads = 0).
    register_all(omp_get_max_threads());
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}
