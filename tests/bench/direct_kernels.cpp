// Hand-written direct loops of the kernels opbench measures, for the accuracy
// and call-path benchmarks (tests/bench/opbench_bench.py): no plugin, no
// harness, just the kernel in a timed loop.
//
//   direct_kernels naive-add    ROWS COLS SECONDS
//   direct_kernels naive-plugin-add ROWS COLS SECONDS   (the naive plugin's C table,
//                                   as the harness calls it: execute + synchronize)
//   direct_kernels naive-matmul M N K SECONDS
//   direct_kernels onednn-matmul M N K SECONDS [THREADS]   (when built with oneDNN;
//                                   THREADS 0 or absent: OpenMP's default, as opbench's threads = 0)
//
// Method: inputs in [-1, 1), three untimed calls, then samples of k calls
// each (k chosen so that a sample lasts at least 200 us, making the clock's
// cost negligible), taken for SECONDS seconds; prints the median time per
// call over the samples (the statistic opbench reports) as one line:
//   median_s=<seconds> samples=<n> calls_per_sample=<k>
#include "naive/kernels.hpp"

#ifdef OPBENCH_BENCH_ONEDNN
#include <oneapi/dnnl/dnnl.hpp>
#include <omp.h>
#endif

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

namespace opbench {
namespace {

using Clock = std::chrono::steady_clock;

std::vector<float> random_floats(std::size_t n, unsigned seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    std::vector<float> v(n);
    for (auto &x : v) x = dist(rng);
    return v;
}

// Times `call` as described above and prints the result line.
int measure(const std::function<void()> &call, double seconds) {
    for (int i = 0; i < 3; ++i) call();
    // Calibrate: double k until one batch takes >= 200 us.
    int k = 1;
    for (;;) {
        const auto t0 = Clock::now();
        for (int i = 0; i < k; ++i) call();
        const double dt = std::chrono::duration<double>(Clock::now() - t0).count();
        if (dt >= 200e-6 || k >= (1 << 24)) break;
        k *= 2;
    }
    std::vector<double> samples;
    samples.reserve(1 << 16);
    double total = 0;
    while (total < seconds || samples.size() < 10) {
        const auto t0 = Clock::now();
        for (int i = 0; i < k; ++i) call();
        const double dt = std::chrono::duration<double>(Clock::now() - t0).count();
        total += dt;
        samples.push_back(dt / k);
    }
    std::sort(samples.begin(), samples.end());
    const std::size_t n = samples.size();
    const double median = n % 2 ? samples[n / 2] : 0.5 * (samples[n / 2 - 1] + samples[n / 2]);
    std::printf("median_s=%.9e samples=%zu calls_per_sample=%d\n", median, n, k);
    return 0;
}

int naive_add(int64_t rows, int64_t cols, double seconds) {
    const std::size_t n = std::size_t(rows * cols);
    auto a = random_floats(n, 1), b = random_floats(n, 2);
    std::vector<float> y(n);
    opb_eltwise_params p{rows, cols};
    return measure([&] { naive::add(p, OPB_DTYPE_F32, a.data(), b.data(), y.data()); }, seconds);
}

int naive_matmul(int64_t m, int64_t n, int64_t k, double seconds) {
    auto a = random_floats(std::size_t(m * k), 1), b = random_floats(std::size_t(k * n), 2);
    std::vector<float> c(std::size_t(m * n));
    std::vector<double> ws(static_cast<std::size_t>(n));
    opb_matmul_params p{1, m, n, k, 0, 0, 0, 0, 0.0f, 0, 0};
    return measure([&] { naive::matmul(p, OPB_DTYPE_F32, a.data(), b.data(), nullptr, c.data(), ws.data()); }, seconds);
}

// The naive plugin's own entry point (linked in from naive_backend_dep).
extern "C" const opb_backend_api *opb_plugin_entry(uint32_t host_abi_version);

void no_log(void *, int32_t, const char *) {}
void no_alloc(void *, uint64_t, int32_t) {}
void no_scope_begin(void *, const char *) {}
void no_scope_end(void *) {}

// The plugin call path without the harness: the naive plugin's execute and
// synchronize through its C table, on tensors it allocated.
int naive_plugin_add(int64_t rows, int64_t cols, double seconds) {
    const opb_backend_api *api = opb_plugin_entry(OPB_ABI_VERSION);
    opb_host_services services{sizeof(opb_host_services),
                               OPB_ABI_VERSION,
                               nullptr,
                               no_log,
                               no_alloc,
                               no_alloc,
                               no_scope_begin,
                               no_scope_end,
                               nullptr};
    opb_backend *be = nullptr;
    if (api->create(&services, &be) != OPB_OK) return 1;
    opb_op_desc d{};
    d.struct_size = sizeof d;
    d.abi_version = OPB_ABI_VERSION;
    d.op = OPB_OP_ADD;
    d.dtype = OPB_DTYPE_F32;
    d.p.eltwise = {rows, cols};
    const uint64_t bytes = uint64_t(rows * cols) * sizeof(float);
    void *t[3] = {};
    auto a = random_floats(std::size_t(rows * cols), 1), b = random_floats(std::size_t(rows * cols), 2);
    for (auto &p : t)
        if (api->alloc(be, bytes, &p) != OPB_OK) return 1;
    api->copy_in(be, t[0], a.data(), bytes);
    api->copy_in(be, t[1], b.data(), bytes);
    opb_plan *plan = nullptr;
    uint64_t ws = 0;
    if (api->prepare(be, &d, &plan, &ws) != OPB_OK) return 1;
    const int rc = measure(
        [&] {
            if (api->execute(be, plan, t, 3) != OPB_OK) std::abort();
            api->synchronize(be);
        },
        seconds);
    api->release(be, plan);
    for (void *p : t) api->free(be, p);
    api->destroy(be);
    return rc;
}

#ifdef OPBENCH_BENCH_ONEDNN
// The same configuration as the onednn plugin's f32 matmul plan: [1, M, K] x
// [1, K, N] -> [1, M, N], plain row-major, user scratchpad, primitive built
// once, execute + stream wait per call, OpenMP's default thread count.
int onednn_matmul(int64_t m, int64_t n, int64_t k, double seconds, int threads) {
    using dnnl::memory;
    if (threads > 0) omp_set_num_threads(threads);
    dnnl::engine eng(dnnl::engine::kind::cpu, 0);
    dnnl::stream strm(eng);
    const auto f32 = memory::data_type::f32;
    memory::desc a_md({1, m, k}, f32, memory::format_tag::abc);
    memory::desc b_md({1, k, n}, f32, memory::format_tag::abc);
    memory::desc c_md({1, m, n}, f32, memory::format_tag::abc);
    dnnl::primitive_attr attr;
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(a_md, b_md, c_md), attr, eng);
    dnnl::matmul prim(pd);
    auto av = random_floats(std::size_t(m * k), 1), bv = random_floats(std::size_t(k * n), 2);
    memory a(a_md, eng, av.data()), b(b_md, eng, bv.data()), c(c_md, eng), scratch(pd.scratchpad_desc(), eng);
    std::unordered_map<int, memory> args{
        {DNNL_ARG_SRC, a}, {DNNL_ARG_WEIGHTS, b}, {DNNL_ARG_DST, c}, {DNNL_ARG_SCRATCHPAD, scratch}};
    return measure(
        [&] {
            prim.execute(strm, args);
            strm.wait();
        },
        seconds);
}
#endif

int usage() {
    std::fprintf(stderr, "usage: direct_kernels naive-add ROWS COLS SECONDS\n"
                         "       direct_kernels naive-matmul M N K SECONDS\n"
                         "       direct_kernels onednn-matmul M N K SECONDS\n");
    return 2;
}

} // namespace
} // namespace opbench

int main(int argc, char **argv) {
    using namespace opbench;
    if (argc < 2) return usage();
    const std::string what = argv[1];
    auto num = [&](int i) { return std::strtoll(argv[i], nullptr, 10); };
    if (what == "naive-add" && argc == 5) return naive_add(num(2), num(3), std::atof(argv[4]));
    if (what == "naive-plugin-add" && argc == 5) return naive_plugin_add(num(2), num(3), std::atof(argv[4]));
    if (what == "naive-matmul" && argc == 6) return naive_matmul(num(2), num(3), num(4), std::atof(argv[5]));
    if (what == "onednn-matmul" && (argc == 6 || argc == 7)) {
#ifdef OPBENCH_BENCH_ONEDNN
        return onednn_matmul(num(2), num(3), num(4), std::atof(argv[5]), argc == 7 ? int(num(6)) : 0);
#else
        std::fprintf(stderr, "built without oneDNN\n");
        return 77;
#endif
    }
    return usage();
}
