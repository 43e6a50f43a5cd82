#include "roof_kernels.hpp"

namespace opbench::cuda {
namespace {

__device__ unsigned long long global_timer_ns() {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

// As nvbench's clock reading: cycles of this SM over wall nanoseconds.
__global__ void clock_probe_kernel(unsigned long long spin_ns, unsigned long long *out) {
    if (threadIdx.x != 0) return;
    const unsigned long long t0 = global_timer_ns();
    const long long c0 = clock64();
    unsigned long long t1 = t0;
    while (t1 - t0 < spin_ns) t1 = global_timer_ns();
    const long long c1 = clock64();
    out[2 * blockIdx.x] = static_cast<unsigned long long>(c1 - c0);
    out[2 * blockIdx.x + 1] = t1 - t0;
}

__global__ void triad_kernel(float *a, const float *b, const float *c, float s, unsigned long long n) {
    const unsigned long long stride = static_cast<unsigned long long>(gridDim.x) * blockDim.x;
    for (unsigned long long i = static_cast<unsigned long long>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
         i += stride)
        a[i] = b[i] + s * c[i];
}

} // namespace

cudaError_t launch_clock_probe(int blocks, uint64_t spin_ns, unsigned long long *out, cudaStream_t stream) {
    clock_probe_kernel<<<blocks, 32, 0, stream>>>(spin_ns, out);
    return cudaGetLastError();
}

cudaError_t launch_triad(float *a, const float *b, const float *c, float s, uint64_t n, cudaStream_t stream) {
    int device = 0, sms = 0;
    cudaGetDevice(&device);
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
    // Enough blocks to keep every SM's memory pipes full; grid-stride covers the rest.
    triad_kernel<<<sms > 0 ? sms * 8 : 1024, 256, 0, stream>>>(a, b, c, s, n);
    return cudaGetLastError();
}

} // namespace opbench::cuda
