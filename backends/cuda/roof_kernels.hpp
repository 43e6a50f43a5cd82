// Kernels of the device's own measurements (ABI 1.5, issue 41): the SM
// clock probe and the triad that measures DRAM and L2 bandwidth.
#ifndef OPBENCH_CUDA_ROOF_KERNELS_HPP
#define OPBENCH_CUDA_ROOF_KERNELS_HPP

#include <cuda_runtime_api.h>

#include <cstdint>

namespace opbench::cuda {

// One block per SM: its first thread reads %globaltimer and clock64, spins
// for `spin_ns` nanoseconds of %globaltimer, and writes its SM cycles and
// nanoseconds to out[2 * block] and out[2 * block + 1] (device memory of
// 2 * blocks uint64 values).
cudaError_t launch_clock_probe(int blocks, uint64_t spin_ns, unsigned long long *out, cudaStream_t stream);

// a[i] = b[i] + s * c[i] over n floats each (grid-stride).
cudaError_t launch_triad(float *a, const float *b, const float *c, float s, uint64_t n, cudaStream_t stream);

} // namespace opbench::cuda

#endif // OPBENCH_CUDA_ROOF_KERNELS_HPP
