// The device's clock and bandwidth, measured with roof_kernels.cu (ABI 1.5,
// issue 41). Host code around the CUDA runtime; the GEMM roofs are measured
// in backend.cpp, where the cuBLASLt plans are.
#ifndef OPBENCH_CUDA_DEVICE_ROOFS_HPP
#define OPBENCH_CUDA_DEVICE_ROOFS_HPP

#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>

namespace opbench::cuda {

// Reads the SM clock with one probe block per SM (`sms`), spinning 20 us.
// `mhz` is the lowest SM's clock. `scratch` holds 2 * sms uint64 of device memory.
struct ClockProbe {
    double mhz = 0;
    std::string error; // "" on success
};
[[nodiscard]] ClockProbe probe_sm_clock(int sms, unsigned long long *scratch, cudaStream_t stream);

// The best triad rate (bytes/s) over `passes` passes of `bytes` of three f32
// arrays, timed with events; 0 and `error` set on failure. Allocates and
// frees its arrays.
struct Bandwidth {
    double bytes_per_second = 0;
    std::string error;
};
[[nodiscard]] Bandwidth measure_triad(uint64_t bytes, int passes, cudaStream_t stream);

} // namespace opbench::cuda

#endif // OPBENCH_CUDA_DEVICE_ROOFS_HPP
