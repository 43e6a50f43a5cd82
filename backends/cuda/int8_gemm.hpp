// CUDA backend — one prepared cuBLASLt s8 x s8 -> s32 GEMM, the middle step
// of the int8 linear layer (Int8Plan in planning.hpp; the passes around it
// are rope_quant.cu's). Kept apart from backend.cpp's float GEMMs because its
// compute, scale and output types (CUBLAS_COMPUTE_32I, int32 alpha/beta,
// CUDA_R_32I D) differ from every other plan's.
#ifndef OPBENCH_CUDA_INT8_GEMM_HPP
#define OPBENCH_CUDA_INT8_GEMM_HPP

#include "planning.hpp"

#include "opbench/plugin.h"

#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>

namespace opbench::cuda {

struct Int8GemmResult {
    opb_status status = OPB_OK;
    std::string message; // what failed, where; empty on success
};

class Int8Gemm {
public:
    Int8Gemm() = default;
    Int8Gemm(const Int8Gemm &) = delete;
    Int8Gemm &operator=(const Int8Gemm &) = delete;
    ~Int8Gemm();

    // Descriptors and the heuristic's algorithm for g (plan_gemm's geometry).
    // OPB_ERR_UNSUPPORTED when cuBLASLt offers no s8 algorithm for the
    // layout (a skip, with what it wants), OPB_ERR_DEVICE when a call fails.
    [[nodiscard]] Int8GemmResult prepare(cublasLtHandle_t lt, const GemmPlan &g, uint64_t workspace_limit);
    [[nodiscard]] uint64_t workspace_bytes() const { return workspace_bytes_; }

    // d (s32) = first (s8 weights) . second (s8 activations), column-major as planned.
    [[nodiscard]] Int8GemmResult run(cublasLtHandle_t lt, const void *first, const void *second, int32_t *d,
                                     void *workspace, cudaStream_t stream) const;

private:
    cublasLtMatmulDesc_t desc_ = nullptr;
    cublasLtMatrixLayout_t first_ = nullptr, second_ = nullptr, d_ = nullptr;
    cublasLtMatmulAlgo_t algo_{};
    uint64_t workspace_bytes_ = 0;
};

} // namespace opbench::cuda

#endif // OPBENCH_CUDA_INT8_GEMM_HPP
