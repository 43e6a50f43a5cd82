#include "roof_kernels.hpp"

#include <cuda_fp16.h>

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

__global__ void spin_kernel(unsigned long long spin_ns) {
    const unsigned long long t0 = global_timer_ns();
    while (global_timer_ns() - t0 < spin_ns) {
    }
}

__global__ void triad_kernel(float *a, const float *b, const float *c, float s, unsigned long long n) {
    const unsigned long long stride = static_cast<unsigned long long>(gridDim.x) * blockDim.x;
    for (unsigned long long i = static_cast<unsigned long long>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
         i += stride)
        a[i] = b[i] + s * c[i];
}

// A 32-bit mix of the index and seed (splitmix64's finaliser).
__device__ unsigned int hash_index(unsigned long long i, unsigned int seed) {
    unsigned long long z = i + 0x9e3779b97f4a7c15ull * (seed + 1ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return static_cast<unsigned int>((z ^ (z >> 31)) >> 32);
}

__global__ void fill_random_kernel(void *out, unsigned long long count, RoofFill kind, unsigned int seed) {
    const unsigned long long stride = static_cast<unsigned long long>(gridDim.x) * blockDim.x;
    for (unsigned long long i = static_cast<unsigned long long>(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
         i += stride) {
        const unsigned int h = hash_index(i, seed);
        const float v = static_cast<float>(h) * (2.0f / 4294967296.0f) - 1.0f; // [-1, 1)
        switch (kind) {
        case RoofFill::F32: static_cast<float *>(out)[i] = v; break;
        case RoofFill::BF16: // truncating the f32's low half is a valid bf16
            static_cast<unsigned short *>(out)[i] = static_cast<unsigned short>(__float_as_uint(v) >> 16);
            break;
        case RoofFill::F16: static_cast<__half *>(out)[i] = __float2half(v); break;
        case RoofFill::E4M3: // sign, exponent 1..7, any mantissa: never NaN (0x7f)
            static_cast<unsigned char *>(out)[i] = static_cast<unsigned char>((h >> 24 & 0x80u) | (0x08u + h % 0x38u));
            break;
        case RoofFill::S8: static_cast<unsigned char *>(out)[i] = static_cast<unsigned char>(h); break;
        }
    }
}

} // namespace

cudaError_t launch_fill_random(void *out, uint64_t count, RoofFill kind, uint32_t seed, cudaStream_t stream) {
    fill_random_kernel<<<1024, 256, 0, stream>>>(out, count, kind, seed);
    return cudaGetLastError();
}

cudaError_t launch_clock_probe(int blocks, uint64_t spin_ns, unsigned long long *out, cudaStream_t stream) {
    clock_probe_kernel<<<blocks, 32, 0, stream>>>(spin_ns, out);
    return cudaGetLastError();
}

cudaError_t launch_spin(uint64_t spin_ns, cudaStream_t stream) {
    spin_kernel<<<1, 1, 0, stream>>>(spin_ns);
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
