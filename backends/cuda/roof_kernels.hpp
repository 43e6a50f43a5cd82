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

// The element types the roofs' GEMM operands are filled in.
enum class RoofFill { F32, BF16, F16, E4M3, S8 };
// Fills `count` elements of `kind` with pseudo-random values (a hash of the
// index and `seed`): floats in [-1, 1), e4m3 of exponent 1..7, s8 over its
// whole range. Random operands, not zeros: tensor cores draw less power on
// zeros and hold a higher clock than on real data.
cudaError_t launch_fill_random(void *out, uint64_t count, RoofFill kind, uint32_t seed, cudaStream_t stream);

// One thread that spins for `spin_ns` nanoseconds of %globaltimer: work
// that keeps the stream busy while the host enqueues what follows it.
cudaError_t launch_spin(uint64_t spin_ns, cudaStream_t stream);

// a[i] = b[i] + s * c[i] over n floats each (grid-stride).
cudaError_t launch_triad(float *a, const float *b, const float *c, float s, uint64_t n, cudaStream_t stream);

} // namespace opbench::cuda

#endif // OPBENCH_CUDA_ROOF_KERNELS_HPP
