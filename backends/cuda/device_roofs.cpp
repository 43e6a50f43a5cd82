#include "device_roofs.hpp"

#include "roof_kernels.hpp"
#include "roof_plan.hpp"

#include <algorithm>
#include <vector>

namespace opbench::cuda {

namespace {
std::string error_text(const char *what, cudaError_t e) {
    return std::string(what) + ": " + cudaGetErrorName(e) + ": " + cudaGetErrorString(e);
}
} // namespace

ClockProbe probe_sm_clock(int sms, unsigned long long *scratch, cudaStream_t stream) {
    ClockProbe p;
    if (sms <= 0 || !scratch) {
        p.error = "clock probe: no SM count or scratch buffer";
        return p;
    }
    cudaError_t e = launch_clock_probe(sms, 20'000, scratch, stream);
    std::vector<unsigned long long> host(2 * static_cast<std::size_t>(sms));
    if (e == cudaSuccess)
        e = cudaMemcpyAsync(host.data(), scratch, host.size() * sizeof host[0], cudaMemcpyDeviceToHost, stream);
    if (e == cudaSuccess) e = cudaStreamSynchronize(stream);
    if (e != cudaSuccess) {
        p.error = error_text("clock probe", e);
        return p;
    }
    // The lowest SM: a throttled clock is throttled on every SM, a probe
    // block that shared its SM with other work reads low on that one only.
    double lowest = 0;
    for (int i = 0; i < sms; ++i) {
        const double mhz = clock_mhz_from_probe(host[2 * i], host[2 * i + 1]);
        if (mhz > 0 && (lowest == 0 || mhz < lowest)) lowest = mhz;
    }
    p.mhz = lowest;
    return p;
}

Bandwidth measure_triad(uint64_t bytes, int passes, cudaStream_t stream) {
    Bandwidth r;
    const uint64_t n = bytes / 3 / sizeof(float);
    void *va = nullptr, *vb = nullptr, *vc = nullptr;
    cudaEvent_t start = nullptr, stop = nullptr;
    cudaError_t e = cudaMalloc(&va, n * sizeof(float));
    if (e == cudaSuccess) e = cudaMalloc(&vb, n * sizeof(float));
    if (e == cudaSuccess) e = cudaMalloc(&vc, n * sizeof(float));
    float *a = static_cast<float *>(va), *b = static_cast<float *>(vb), *c = static_cast<float *>(vc);
    if (e == cudaSuccess) e = cudaMemsetAsync(b, 0, n * sizeof(float), stream);
    if (e == cudaSuccess) e = cudaMemsetAsync(c, 0, n * sizeof(float), stream);
    if (e == cudaSuccess) e = cudaEventCreate(&start);
    if (e == cudaSuccess) e = cudaEventCreate(&stop);
    // One untimed pass: first touch and, for an L2-sized set, the warm cache.
    if (e == cudaSuccess) e = launch_triad(a, b, c, 1.5f, n, stream);
    for (int i = 0; e == cudaSuccess && i < passes; ++i) {
        float ms = 0;
        e = cudaEventRecord(start, stream);
        if (e == cudaSuccess) e = launch_triad(a, b, c, 1.5f, n, stream);
        if (e == cudaSuccess) e = cudaEventRecord(stop, stream);
        if (e == cudaSuccess) e = cudaEventSynchronize(stop);
        if (e == cudaSuccess) e = cudaEventElapsedTime(&ms, start, stop);
        if (e == cudaSuccess && ms > 0)
            r.bytes_per_second = std::max(r.bytes_per_second, triad_traffic(n * 3 * sizeof(float)) / (ms * 1e-3));
    }
    if (e != cudaSuccess) {
        r.error = error_text("triad", e);
        r.bytes_per_second = 0;
        cudaGetLastError();
    }
    if (stop) cudaEventDestroy(stop);
    if (start) cudaEventDestroy(start);
    cudaFree(c);
    cudaFree(b);
    cudaFree(a);
    return r;
}

} // namespace opbench::cuda
