// CUDA backend — the int8 linear layer's cuBLASLt s8 GEMM (int8_gemm.hpp).
#include "int8_gemm.hpp"

namespace opbench::cuda {
namespace {

std::string lt_message(const char *what, cublasStatus_t s) {
    return std::string("matmul int8: ") + what + ": " + cublasLtGetStatusName(s) + ": " + cublasLtGetStatusString(s);
}

} // namespace

Int8Gemm::~Int8Gemm() {
    if (d_) cublasLtMatrixLayoutDestroy(d_);
    if (second_) cublasLtMatrixLayoutDestroy(second_);
    if (first_) cublasLtMatrixLayoutDestroy(first_);
    if (desc_) cublasLtMatmulDescDestroy(desc_);
}

Int8GemmResult Int8Gemm::prepare(cublasLtHandle_t lt, const GemmPlan &g, uint64_t workspace_limit) {
    cublasStatus_t s;
    // Integer compute takes int32 alpha/beta (scale type CUDA_R_32I).
    if ((s = cublasLtMatmulDescCreate(&desc_, CUBLAS_COMPUTE_32I, CUDA_R_32I)) != CUBLAS_STATUS_SUCCESS)
        return {OPB_ERR_DEVICE, lt_message("cublasLtMatmulDescCreate", s)};
    const cublasOperation_t ta = g.trans_first ? CUBLAS_OP_T : CUBLAS_OP_N;
    const cublasOperation_t tb = g.trans_second ? CUBLAS_OP_T : CUBLAS_OP_N;
    cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta);
    cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb);
    auto make_layout = [&](cublasLtMatrixLayout_t &l, cudaDataType_t t, const MatrixLayout &m) {
        if ((s = cublasLtMatrixLayoutCreate(&l, t, m.rows, m.cols, m.ld)) != CUBLAS_STATUS_SUCCESS) return false;
        if (g.batch > 1) {
            const int32_t count = g.batch;
            const int64_t stride = m.batch_stride;
            cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, sizeof count);
            cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride, sizeof stride);
        }
        return true;
    };
    if (!make_layout(first_, CUDA_R_8I, g.first) || !make_layout(second_, CUDA_R_8I, g.second) ||
        !make_layout(d_, CUDA_R_32I, g.d))
        return {OPB_ERR_DEVICE, lt_message("cublasLtMatrixLayoutCreate", s)};

    cublasLtMatmulPreference_t pref = nullptr;
    if ((s = cublasLtMatmulPreferenceCreate(&pref)) != CUBLAS_STATUS_SUCCESS)
        return {OPB_ERR_DEVICE, lt_message("cublasLtMatmulPreferenceCreate", s)};
    cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace_limit,
                                         sizeof workspace_limit);
    cublasLtMatmulHeuristicResult_t result{};
    int found = 0;
    s = cublasLtMatmulAlgoGetHeuristic(lt, desc_, first_, second_, d_, d_, pref, 1, &result, &found);
    cublasLtMatmulPreferenceDestroy(pref);
    if (s != CUBLAS_STATUS_SUCCESS || found == 0)
        return {OPB_ERR_UNSUPPORTED,
                "matmul int8: cuBLASLt offers no s8 GEMM for this layout (its int8 kernels want weights stored "
                "[N, K] (trans_b) and activations [M, K], leading dimensions multiples of 4)" +
                    (s != CUBLAS_STATUS_SUCCESS ? " (" + lt_message("heuristic", s) + ")" : std::string())};
    algo_ = result.algo;
    workspace_bytes_ = result.workspaceSize;
    return {};
}

Int8GemmResult Int8Gemm::run(cublasLtHandle_t lt, const void *first, const void *second, int32_t *d, void *workspace,
                             cudaStream_t stream) const {
    const int32_t alpha = 1, beta = 0;
    const cublasStatus_t s = cublasLtMatmul(lt, desc_, &alpha, first, first_, second, second_, &beta, d, d_, d, d_,
                                            &algo_, workspace, workspace_bytes_, stream);
    if (s != CUBLAS_STATUS_SUCCESS) return {OPB_ERR_DEVICE, lt_message("cublasLtMatmul", s)};
    return {};
}

} // namespace opbench::cuda
