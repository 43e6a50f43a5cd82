// CUDA backend plugin: cuBLASLt matmuls, own CUDA kernels for the row and
// elementwise ops, composed attention from both, fused attention through
// cuDNN 9's backend-API SDPA (flash attention) graph. See README.md for what runs
// on which library and what has (not) been verified on a GPU.
//
// Host code only (g++): CUDA runtime, cuBLASLt and cuDNN are plain C APIs.
// The plugin must load and create an instance on machines with no driver and
// no GPU, so nothing here touches the device before create() has checked it,
// and every entry point refuses work with the recorded reason afterwards.
#include "cudnn_sdpa.hpp"
#include "device_roofs.hpp"
#include "graph_capture.hpp"
#include "int8_gemm.hpp"
#include "kernel_timeline.hpp"
#include "kernels.hpp"
#include "nvml_reader.hpp"
#include "planning.hpp"
#include "rope_quant.hpp"
#include "roof_kernels.hpp"
#include "roof_plan.hpp"

#include "opbench/backend_helpers.hpp"
#include "opbench/ops.hpp"
#include "opbench/plugin.h"
#include "opbench/scope.hpp"

#include <cublasLt.h>
#include <cuda_runtime_api.h>
#include <cudnn.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

namespace opbench::cuda {
namespace {

std::string cuda_error(const char *what, cudaError_t e) {
    return std::string(what) + ": " + cudaGetErrorName(e) + ": " + cudaGetErrorString(e);
}
std::string lt_error(const char *what, cublasStatus_t s) {
    return std::string(what) + ": " + cublasLtGetStatusName(s) + ": " + cublasLtGetStatusString(s);
}

cudaDataType_t cuda_type(ElemType t) {
    switch (t) {
    case ElemType::BF16: return CUDA_R_16BF;
    case ElemType::F16: return CUDA_R_16F;
    case ElemType::E4M3: return CUDA_R_8F_E4M3;
    default: return CUDA_R_32F;
    }
}
cublasComputeType_t compute_type(ComputeType c) {
    return c == ComputeType::F32_FAST_TF32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
}

// Device memory from cudaMalloc, remembered with its size so free can count it.
struct DeviceBuffer {
    void *ptr = nullptr;
    uint64_t bytes = 0;
};

struct CudaBackend;

// One prepared cuBLASLt matmul: descriptors, the algorithm the heuristic
// chose, and the workspace it needs (allocated here, counted as workspace).
struct LtGemm {
    GemmPlan plan;
    cublasLtMatmulDesc_t desc = nullptr;
    cublasLtMatrixLayout_t first = nullptr, second = nullptr, d = nullptr;
    cublasLtMatmulAlgo_t algo{};
    DeviceBuffer workspace;
    LtGemm() = default;
    LtGemm(const LtGemm &) = delete;
    LtGemm &operator=(const LtGemm &) = delete;
    ~LtGemm() {
        if (d) cublasLtMatrixLayoutDestroy(d);
        if (second) cublasLtMatrixLayoutDestroy(second);
        if (first) cublasLtMatrixLayoutDestroy(first);
        if (desc) cublasLtMatmulDescDestroy(desc);
    }
};

struct Plan {
    opb_op_desc desc{};
    Impl impl = Impl::Unsupported;
    int tensor_count = 0;
    std::unique_ptr<LtGemm> gemm1, gemm2; // matmul: gemm1; attention: scores, output
    AttentionPlan attention;
    DeviceBuffer scores, probs;              // attention composed scratch (workspace)
    std::unique_ptr<CudnnSdpa> sdpa;         // attention fused
    DeviceBuffer sdpa_stats, sdpa_workspace; // attention fused (workspace)
    DeviceBuffer sdpa_fp8_scalars;           // attention fused FP8: scale_s, descale_s, amax_s, amax_o
    Int8Plan int8_plan;                      // matmul int8
    std::unique_ptr<Int8Gemm> int8;
    DeviceBuffer int8_shifted, int8_sums, int8_acc, int8_workspace; // matmul int8 (workspace)
    Fp8Plan fp8_plan;                                               // matmul f8e4m3 (its GEMM: gemm1)
    DeviceBuffer fp8_bias;                                          // its bias in bf16 (workspace)
};

struct CudaBackend : sdk::BackendBase {
    explicit CudaBackend(const opb_host_services *s) : BackendBase(s, /*device_memory=*/true), scopes(s) {}
    ~CudaBackend() override;

    sdk::ScopeHost scopes; // profiling scopes: composed attention's steps (StepScope)
    KernelTimeline timeline; // ABI 1.6 activity_begin / activity_end: CUPTI (issue 42)
    CapturedGraph graph;     // ABI 1.6 graph_prepare / graph_launch: --launch graph (issue 41)

    std::string unavailable; // why the device cannot be used; empty when usable
    int driver_version = 0, runtime_version = 0;
    cudaDeviceProp prop{};
    int clock_khz = 0, memory_clock_khz = 0;
    cudaStream_t stream = nullptr;
    cublasLtHandle_t lt = nullptr;
    cudnnHandle_t cudnn = nullptr;
    std::string cudnn_unavailable; // why there is no cuDNN handle (fused attention only)
    cudaEvent_t ev_start = nullptr, ev_stop = nullptr;
    bool timer_started = false;
    double host_in_execute = 0; // host seconds inside execute since timer_start (ABI 1.5)
    double last_sample_host_seconds = 0; // host_in_execute of the last timed sample
#ifdef OPBENCH_CUDA_TEST_MATMUL_SLOWDOWN
    int test_calls_in_sample = 0;           // matmul calls since timer_start
    double test_call_device_seconds = 0;    // the last timed sample's device time per matmul call
#endif
    double sustained_mhz = 0;   // the SM clock under the roofs' GEMM sweep; 0 until measured
    DeviceBuffer probe_buffer;  // the clock probe's per-SM cycles and nanoseconds
    std::unique_ptr<NvmlReader> nvml; // loaded on first use (nvmlInit takes a while)
    uint64_t nvml_reasons = 0;        // the clock-event reasons at clock_begin
    uint64_t workspace_limit = 0;
    DeviceBuffer flush_buffer;

    std::mutex alloc_mutex;
    std::unordered_map<void *, uint64_t> allocations;

    void init();
    const NvmlReader &nvml_reader();
    opb_status device_alloc(uint64_t bytes, DeviceBuffer &out, bool is_workspace, const char *what);
    void device_free(DeviceBuffer &buf, bool is_workspace);
    opb_status prepare_gemm(const GemmPlan &g, LtGemm &out, const char *what);
    opb_status run_gemm(LtGemm &g, const void *first, const void *second, void *d, const void *bias, const char *what);
    opb_status prepare_sdpa(const opb_op_desc &d, Plan &p);
    opb_status run_sdpa(Plan &p, void *const *t);
    opb_status prepare_int8(const opb_op_desc &d, Plan &p);
    opb_status run_int8(Plan &p, void *const *t);
    opb_status prepare_fp8(const opb_op_desc &d, Plan &p);
    opb_status run_fp8(Plan &p, void *const *t);
    void release_plan(Plan *p);
};

// Finds out whether the device can be used and sets up what every op shares.
// Never fails: a reason in `unavailable` is the outcome on a GPU-less machine.
void CudaBackend::init() {
    cudaDriverGetVersion(&driver_version); // 0 when no driver is installed
    cudaRuntimeGetVersion(&runtime_version);
    int count = 0;
    const cudaError_t ce = cudaGetDeviceCount(&count);
    unavailable = unavailable_reason(driver_version, runtime_version, static_cast<int>(ce), cudaGetErrorName(ce),
                                     cudaGetErrorString(ce), count);
    if (!unavailable.empty()) {
        cudaGetLastError(); // clear the runtime's last-error slot; nothing else will run
        return;
    }
    cudaError_t e;
    if ((e = cudaSetDevice(0)) != cudaSuccess) {
        unavailable = cuda_error("cudaSetDevice(0)", e);
        return;
    }
    if ((e = cudaGetDeviceProperties(&prop, 0)) != cudaSuccess) {
        unavailable = cuda_error("cudaGetDeviceProperties(0)", e);
        return;
    }
    // cudaDeviceProp lost its clock fields in CUDA 13: ask the attributes.
    cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, 0);
    cudaDeviceGetAttribute(&memory_clock_khz, cudaDevAttrMemoryClockRate, 0);
    if ((e = cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking)) != cudaSuccess) {
        unavailable = cuda_error("cudaStreamCreate", e);
        return;
    }
    if ((e = cudaEventCreate(&ev_start)) != cudaSuccess || (e = cudaEventCreate(&ev_stop)) != cudaSuccess) {
        unavailable = cuda_error("cudaEventCreate", e);
        return;
    }
    const cublasStatus_t s = cublasLtCreate(&lt);
    if (s != CUBLAS_STATUS_SUCCESS) {
        lt = nullptr;
        unavailable = lt_error("cublasLtCreate", s);
        return;
    }
    workspace_limit = cublaslt_workspace_limit(prop.major);
    // cuDNN serves fused attention only: without a handle that variant is
    // unsupported (with this reason) and everything else still runs.
    cudnnStatus_t ds = cudnnCreate(&cudnn);
    if (ds != CUDNN_STATUS_SUCCESS) {
        cudnn = nullptr;
        cudnn_unavailable = cudnn_error("cudnnCreate", ds);
    } else if ((ds = cudnnSetStream(cudnn, stream)) != CUDNN_STATUS_SUCCESS) {
        cudnn_unavailable = cudnn_error("cudnnSetStream", ds);
        cudnnDestroy(cudnn);
        cudnn = nullptr;
    }
}

const NvmlReader &CudaBackend::nvml_reader() {
    if (!nvml)
        nvml = std::make_unique<NvmlReader>(default_nvml_candidates(),
                                            uuid_string(reinterpret_cast<const unsigned char *>(prop.uuid.bytes)));
    return *nvml;
}

CudaBackend::~CudaBackend() {
    if (stream) cudaStreamSynchronize(stream);
    graph.release(); // before the buffers its calls use
    device_free(flush_buffer, false);
    device_free(probe_buffer, false);
    {
        std::lock_guard<std::mutex> lock(alloc_mutex);
        for (auto &[p, bytes] : allocations) { // the host forgot some: free, keep the books right
            cudaFree(p);
            memory.freed(bytes);
        }
        allocations.clear();
    }
    if (cudnn) cudnnDestroy(cudnn);
    if (lt) cublasLtDestroy(lt);
    if (ev_stop) cudaEventDestroy(ev_stop);
    if (ev_start) cudaEventDestroy(ev_start);
    if (stream) cudaStreamDestroy(stream);
}

opb_status CudaBackend::device_alloc(uint64_t bytes, DeviceBuffer &out, bool is_workspace, const char *what) {
    void *p = nullptr;
    const cudaError_t e = cudaMalloc(&p, bytes == 0 ? 1 : bytes);
    if (e != cudaSuccess) {
        cudaGetLastError();
        return fail(
            e == cudaErrorMemoryAllocation ? OPB_ERR_OUT_OF_MEMORY : OPB_ERR_DEVICE,
            cuda_error((std::string("cudaMalloc for ") + what + " (" + std::to_string(bytes) + " bytes)").c_str(), e));
    }
    out.ptr = p;
    out.bytes = bytes;
    if (is_workspace)
        memory.workspace_acquired(bytes);
    else
        memory.allocated(bytes);
    return OPB_OK;
}

void CudaBackend::device_free(DeviceBuffer &buf, bool is_workspace) {
    if (!buf.ptr) return;
    cudaFree(buf.ptr);
    if (is_workspace)
        memory.workspace_released(buf.bytes);
    else
        memory.freed(buf.bytes);
    buf = {};
}

opb_status CudaBackend::prepare_gemm(const GemmPlan &g, LtGemm &out, const char *what) {
    out.plan = g;
    cublasStatus_t s;
    auto lt_fail = [&](const char *call) { return fail(OPB_ERR_DEVICE, std::string(what) + ": " + lt_error(call, s)); };
    if ((s = cublasLtMatmulDescCreate(&out.desc, compute_type(g.compute), CUDA_R_32F)) != CUBLAS_STATUS_SUCCESS)
        return lt_fail("cublasLtMatmulDescCreate");
    const cublasOperation_t ta = g.trans_first ? CUBLAS_OP_T : CUBLAS_OP_N;
    const cublasOperation_t tb = g.trans_second ? CUBLAS_OP_T : CUBLAS_OP_N;
    cublasLtMatmulDescSetAttribute(out.desc, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta);
    cublasLtMatmulDescSetAttribute(out.desc, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb);
    if (g.bias) {
        const cublasLtEpilogue_t epi = CUBLASLT_EPILOGUE_BIAS;
        const cudaDataType_t bias_type = cuda_type(g.bias_type);
        const int64_t bias_stride = 0; // one bias vector shared by every batch
        cublasLtMatmulDescSetAttribute(out.desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof epi);
        cublasLtMatmulDescSetAttribute(out.desc, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &bias_type, sizeof bias_type);
        cublasLtMatmulDescSetAttribute(out.desc, CUBLASLT_MATMUL_DESC_BIAS_BATCH_STRIDE, &bias_stride,
                                       sizeof bias_stride);
    }
    auto make_layout = [&](cublasLtMatrixLayout_t &l, ElemType t, const MatrixLayout &m) {
        s = cublasLtMatrixLayoutCreate(&l, cuda_type(t), m.rows, m.cols, m.ld);
        if (s != CUBLAS_STATUS_SUCCESS) return false;
        if (g.batch > 1) {
            const int32_t count = g.batch;
            const int64_t stride = m.batch_stride;
            cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, sizeof count);
            cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride, sizeof stride);
        }
        return true;
    };
    if (!make_layout(out.first, g.ab_type, g.first) || !make_layout(out.second, g.ab_type, g.second) ||
        !make_layout(out.d, g.d_type, g.d))
        return lt_fail("cublasLtMatrixLayoutCreate");

    cublasLtMatmulPreference_t pref = nullptr;
    if ((s = cublasLtMatmulPreferenceCreate(&pref)) != CUBLAS_STATUS_SUCCESS)
        return lt_fail("cublasLtMatmulPreferenceCreate");
    const uint64_t limit = workspace_limit;
    cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &limit, sizeof limit);
    cublasLtMatmulHeuristicResult_t result{};
    int found = 0;
    s = cublasLtMatmulAlgoGetHeuristic(lt, out.desc, out.first, out.second, out.d, out.d, pref, 1, &result, &found);
    cublasLtMatmulPreferenceDestroy(pref);
    if (s != CUBLAS_STATUS_SUCCESS || found == 0)
        return fail(OPB_ERR_UNSUPPORTED, std::string(what) + ": cuBLASLt offers no algorithm for this shape/type" +
                                             (s != CUBLAS_STATUS_SUCCESS ? " (" + lt_error("heuristic", s) + ")" : ""));
    out.algo = result.algo;
    // Allocate exactly what the chosen algorithm asks for (<= limit), so the
    // reported workspace is what this plan really holds.
    if (result.workspaceSize > 0) return device_alloc(result.workspaceSize, out.workspace, true, "cuBLASLt workspace");
    return OPB_OK;
}

opb_status CudaBackend::run_gemm(LtGemm &g, const void *first, const void *second, void *d, const void *bias,
                                 const char *what) {
    if (g.plan.bias) cublasLtMatmulDescSetAttribute(g.desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof bias);
    const float alpha = 1.0f, beta = 0.0f;
    const cublasStatus_t s = cublasLtMatmul(lt, g.desc, &alpha, first, g.first, second, g.second, &beta, d, g.d, d, g.d,
                                            &g.algo, g.workspace.ptr, g.workspace.bytes, stream);
    if (s != CUBLAS_STATUS_SUCCESS) return fail(OPB_ERR_DEVICE, lt_error(what, s));
    return OPB_OK;
}

// Builds the cuDNN SDPA plan (cudnn_sdpa.hpp), then allocates its workspace
// and the softmax-stats output. A cuDNN refusal is OPB_ERR_UNSUPPORTED with
// its reason, so the harness records a skipped case rather than a failure.
opb_status CudaBackend::prepare_sdpa(const opb_op_desc &d, Plan &p) {
    p.sdpa = std::make_unique<CudnnSdpa>();
    if (CudnnResult r = build_sdpa_plan(cudnn, d, prop, *p.sdpa); r.status != OPB_OK) return fail(r.status, r.message);
    const CudnnSdpa &S = *p.sdpa;
    const SdpaGraph &g = S.graph;
    if (auto st = device_alloc(g.stats_bytes, p.sdpa_stats, true, "attention fused softmax stats"); st != OPB_OK)
        return st;
    if (g.fp8) { // P's quantisation scale and its inverse, once; the amaxes are written by every run
        if (auto st = device_alloc(g.fp8_scalar_bytes, p.sdpa_fp8_scalars, true, "attention fused FP8 scalars");
            st != OPB_OK)
            return st;
        const float init[kSdpaFp8Scalars] = {kSdpaFp8ScaleS, kSdpaFp8DescaleS, 0.0f, 0.0f};
        if (cudaError_t e = cudaMemcpy(p.sdpa_fp8_scalars.ptr, init, sizeof init, cudaMemcpyHostToDevice);
            e != cudaSuccess)
            return fail(OPB_ERR_DEVICE, std::string("attention fused FP8 scalars: cudaMemcpy: ") +
                                            cudaGetErrorString(e));
    }
    if (S.workspace_size > 0)
        return device_alloc(static_cast<uint64_t>(S.workspace_size), p.sdpa_workspace, true, "cuDNN SDPA workspace");
    return OPB_OK;
}

// Runs the fused-attention plan on the backend's stream (cudnn_sdpa.hpp).
opb_status CudaBackend::run_sdpa(Plan &p, void *const *t) {
    const CudnnResult r =
        run_sdpa_plan(cudnn, stream, *p.sdpa, t, p.sdpa_stats.ptr, p.sdpa_fp8_scalars.ptr, p.sdpa_workspace.ptr);
    return r.status == OPB_OK ? OPB_OK : fail(r.status, r.message);
}

// int8 linear: the s8 GEMM's plan, then its scratch (shifted activations,
// weight column sums, the s32 output, cuBLASLt's workspace), all workspace.
opb_status CudaBackend::prepare_int8(const opb_op_desc &d, Plan &p) {
    p.int8_plan = plan_int8_matmul(d);
    const Int8Plan &q = p.int8_plan;
    p.int8 = std::make_unique<Int8Gemm>();
    if (const Int8GemmResult r = p.int8->prepare(lt, q.gemm, workspace_limit); r.status != OPB_OK)
        return fail(r.status, r.message);
    opb_status st = OPB_OK;
    if (q.shifted_bytes) st = device_alloc(q.shifted_bytes, p.int8_shifted, true, "int8 shifted activations");
    if (st == OPB_OK && q.column_sums_bytes)
        st = device_alloc(q.column_sums_bytes, p.int8_sums, true, "int8 weight column sums");
    if (st == OPB_OK) st = device_alloc(q.acc_bytes, p.int8_acc, true, "int8 s32 GEMM output");
    if (st == OPB_OK && p.int8->workspace_bytes())
        st = device_alloc(p.int8->workspace_bytes(), p.int8_workspace, true, "cuBLASLt int8 workspace");
    return st;
}

// int8 linear: shift u8 activations, column sums, s8 GEMM, dequantise (planning.hpp Int8Plan).
opb_status CudaBackend::run_int8(Plan &p, void *const *t) {
    const auto &m = p.desc.p.matmul;
    const Int8Plan &q = p.int8_plan;
    const bool has_bias = m.has_bias != 0;
    const void *activations = t[0];
    auto check = [&](const char *what, cudaError_t e) {
        return e == cudaSuccess ? OPB_OK : fail(OPB_ERR_DEVICE, cuda_error(what, e));
    };
    opb_status st = OPB_OK;
    if (q.shift_activations) {
        st = check("matmul int8 u8 shift kernel launch",
                   launch_u8_to_shifted_s8(static_cast<const uint8_t *>(t[0]),
                                           static_cast<int8_t *>(p.int8_shifted.ptr), m.batch * m.m * m.k, stream));
        activations = p.int8_shifted.ptr;
    }
    if (st == OPB_OK && q.shift != 0)
        st = check("matmul int8 column-sum kernel launch",
                   launch_weight_column_sums(static_cast<const int8_t *>(t[1]), static_cast<int32_t *>(p.int8_sums.ptr),
                                             m.batch, m.k, m.n, m.trans_b != 0, stream));
    if (st != OPB_OK) return st;
    auto *acc = static_cast<int32_t *>(p.int8_acc.ptr);
    // Column-major trick as for float matmuls: first operand the weights, second the activations.
    if (const Int8GemmResult r = p.int8->run(lt, t[1], activations, acc, p.int8_workspace.ptr, stream);
        r.status != OPB_OK)
        return fail(r.status, r.message);
    return check("matmul int8 dequantise kernel launch",
                 launch_int8_dequantize(acc, q.shift != 0 ? static_cast<const int32_t *>(p.int8_sums.ptr) : nullptr,
                                        static_cast<const float *>(t[2]),
                                        has_bias ? static_cast<const float *>(t[3]) : nullptr, t[has_bias ? 4 : 3],
                                        m.out_dtype, m.batch, m.m, m.n, q.shift, m.act_scale, stream));
}

// FP8: the E4M3 GEMM's plan (gemm1) and the bf16 copy of the bias (workspace).
opb_status CudaBackend::prepare_fp8(const opb_op_desc &d, Plan &p) {
    p.fp8_plan = plan_fp8_matmul(d);
    p.gemm1 = std::make_unique<LtGemm>();
    opb_status st = prepare_gemm(p.fp8_plan.gemm, *p.gemm1, "matmul f8e4m3");
    if (st == OPB_OK && p.fp8_plan.bias_bf16_bytes)
        st = device_alloc(p.fp8_plan.bias_bf16_bytes, p.fp8_bias, true, "FP8 matmul bias (bf16)");
    return st;
}

// FP8: the per-tensor scales by device pointer (A_SCALE is cuBLASLt's first
// operand's: opbench's b_scale), the bias converted to bf16, then the GEMM.
opb_status CudaBackend::run_fp8(Plan &p, void *const *t) {
    const Fp8Plan &f = p.fp8_plan;
    const void *first_scale = t[f.first_scale_tensor], *second_scale = t[f.second_scale_tensor];
    cublasLtMatmulDescSetAttribute(p.gemm1->desc, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &first_scale,
                                   sizeof first_scale);
    cublasLtMatmulDescSetAttribute(p.gemm1->desc, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &second_scale,
                                   sizeof second_scale);
    const bool bias = f.bias_tensor >= 0;
    if (bias)
        if (const cudaError_t e = launch_f32_to_bf16(static_cast<const float *>(t[f.bias_tensor]), p.fp8_bias.ptr,
                                                     p.desc.p.matmul.n, stream);
            e != cudaSuccess)
            return fail(OPB_ERR_DEVICE, cuda_error("matmul f8e4m3 bias conversion kernel launch", e));
    return run_gemm(*p.gemm1, t[1], t[0], t[bias ? 5 : 4], bias ? p.fp8_bias.ptr : nullptr,
                    "matmul f8e4m3 cublasLtMatmul");
}

void CudaBackend::release_plan(Plan *p) {
    if (!p) return;
    device_free(p->fp8_bias, true);
    device_free(p->int8_shifted, true);
    device_free(p->int8_sums, true);
    device_free(p->int8_acc, true);
    device_free(p->int8_workspace, true);
    device_free(p->sdpa_stats, true);
    device_free(p->sdpa_workspace, true);
    device_free(p->sdpa_fp8_scalars, true);
    if (p->gemm1) device_free(p->gemm1->workspace, true);
    if (p->gemm2) device_free(p->gemm2->workspace, true);
    device_free(p->scores, true);
    device_free(p->probs, true);
    delete p;
}

CudaBackend *self(opb_backend *b) { return reinterpret_cast<CudaBackend *>(b); }

// ---- the C entry points ----------------------------------------------------------

opb_status cuda_create(const opb_host_services *services, opb_backend **out) {
    if (!out) return OPB_ERR_INVALID;
    *out = nullptr;
    try {
        auto *b = new CudaBackend(services);
        b->init();
        if (!b->unavailable.empty()) b->log(OPB_LOG_INFO, "cuda backend unusable: " + b->unavailable);
        *out = reinterpret_cast<opb_backend *>(b);
        return OPB_OK;
    } catch (...) {
        if (services) services->log(services->host, OPB_LOG_ERROR, "cuda: create failed (out of memory)");
        return OPB_ERR_OUT_OF_MEMORY;
    }
}

void cuda_destroy(opb_backend *b) { delete self(b); }

const char *cuda_last_error(opb_backend *b) { return self(b)->error.c_str(); }

opb_status cuda_probe(opb_backend *b) {
    auto *c = self(b);
    if (!c->unavailable.empty()) return c->fail(OPB_ERR_UNAVAILABLE, c->unavailable);
    return OPB_OK;
}

opb_status cuda_device_info(opb_backend *b, opb_device_info *out) {
    auto *c = self(b);
    return sdk::guarded(c, [&]() -> opb_status {
        if (auto st = sdk::check_struct(c, "cuda", "opb_device_info", out); st != OPB_OK) return st;
        opb_device_info info;
        std::memset(&info, 0, sizeof info);
        info.kind = OPB_DEVICE_GPU;
        opb_status st = OPB_OK;
        if (!c->unavailable.empty()) {
            std::snprintf(info.name, sizeof info.name, "none (%s)", c->unavailable.c_str());
            st = c->fail(OPB_ERR_UNAVAILABLE, c->unavailable);
        } else {
            std::snprintf(info.name, sizeof info.name, "%.127s", c->prop.name);
            size_t free_b = 0, total_b = 0;
            if (cudaMemGetInfo(&free_b, &total_b) == cudaSuccess) {
                info.free_memory = free_b;
                info.total_memory = total_b;
            } else {
                info.total_memory = c->prop.totalGlobalMem;
            }
        }
        sdk::write_struct(out, info); // never past the caller's struct_size; header kept
        return st;
    });
}

opb_status check_usable(CudaBackend *c) {
    return c->unavailable.empty() ? OPB_OK : c->fail(OPB_ERR_UNAVAILABLE, c->unavailable);
}

opb_status check_desc(CudaBackend *c, const opb_op_desc *in, ImplChoice &choice) {
    // The copy is checked; the host's struct holds at least ABI 1.0's layout
    // once read_op_desc accepts it, so callers read *in after this.
    opb_op_desc desc;
    if (auto st = sdk::read_op_desc(c, "cuda", in, desc); st != OPB_OK) return st;
    const opb_op_desc *d = &desc;
    choice = choose_impl(*d);
    if (choice.impl == Impl::UnknownOp) return sdk::unsupported_op(c, "cuda", d->op);
    if (choice.impl == Impl::Unsupported) return c->fail(OPB_ERR_UNSUPPORTED, choice.reason);
    if (choice.impl == Impl::CudnnSdpa) {
        const std::string dt(dtype_name(d->dtype));
        if (!c->cudnn)
            return c->fail(OPB_ERR_UNSUPPORTED,
                           "attention fused (" + dt + "): no cuDNN handle: " + c->cudnn_unavailable);
        const SdpaEnv env{cudnnGetVersion(), c->prop.major, c->prop.minor};
        if (auto why = sdpa_unsupported_reason(*d, env); !why.empty())
            return c->fail(OPB_ERR_UNSUPPORTED, "attention fused (" + dt + "): " + why);
    }
    if (choice.impl == Impl::CublasLtFp8)
        if (auto why = fp8_unsupported_reason(*d, c->prop.major, c->prop.minor); !why.empty())
            return c->fail(OPB_ERR_UNSUPPORTED, "matmul f8e4m3: " + why);
    if (auto e = check_device_limits(*d); !e.empty()) return c->fail(OPB_ERR_UNSUPPORTED, e);
    return OPB_OK;
}

opb_status cuda_supports(opb_backend *b, const opb_op_desc *d) {
    auto *c = self(b);
    return sdk::guarded(c, [&]() -> opb_status {
        if (auto st = check_usable(c); st != OPB_OK) return st;
        ImplChoice choice;
        return check_desc(c, d, choice);
    });
}

opb_status cuda_alloc(opb_backend *b, uint64_t bytes, void **out) {
    auto *c = self(b);
    return sdk::guarded(c, [&]() -> opb_status {
        if (!out) return c->fail(OPB_ERR_INVALID, "alloc: out is NULL");
        *out = nullptr;
        if (auto st = check_usable(c); st != OPB_OK) return st;
        DeviceBuffer buf;
        if (auto st = c->device_alloc(bytes, buf, false, "a tensor"); st != OPB_OK) return st;
        std::lock_guard<std::mutex> lock(c->alloc_mutex);
        c->allocations[buf.ptr] = buf.bytes;
        *out = buf.ptr; // cudaMalloc memory is at least 256-byte aligned
        return OPB_OK;
    });
}

void cuda_free(opb_backend *b, void *ptr) {
    auto *c = self(b);
    if (!ptr) return;
    DeviceBuffer buf;
    {
        std::lock_guard<std::mutex> lock(c->alloc_mutex);
        auto it = c->allocations.find(ptr);
        if (it == c->allocations.end()) return; // not ours: ignore rather than corrupt
        buf = {it->first, it->second};
        c->allocations.erase(it);
    }
    c->device_free(buf, false);
}

opb_status copy(CudaBackend *c, void *dst, const void *src, uint64_t bytes, cudaMemcpyKind kind, const char *what) {
    if (auto st = check_usable(c); st != OPB_OK) return st;
    if ((!dst || !src) && bytes) return c->fail(OPB_ERR_INVALID, std::string(what) + ": NULL pointer");
    cudaError_t e = cudaMemcpyAsync(dst, src, bytes, kind, c->stream);
    if (e == cudaSuccess) e = cudaStreamSynchronize(c->stream);
    if (e != cudaSuccess) return c->fail(OPB_ERR_DEVICE, cuda_error(what, e));
    return OPB_OK;
}

opb_status cuda_copy_in(opb_backend *b, void *dst, const void *src, uint64_t bytes) {
    return copy(self(b), dst, src, bytes, cudaMemcpyHostToDevice, "copy_in (cudaMemcpyAsync H2D)");
}
opb_status cuda_copy_out(opb_backend *b, void *dst, const void *src, uint64_t bytes) {
    return copy(self(b), dst, src, bytes, cudaMemcpyDeviceToHost, "copy_out (cudaMemcpyAsync D2H)");
}

opb_status cuda_prepare(opb_backend *b, const opb_op_desc *d, opb_plan **out, uint64_t *workspace_bytes) {
    auto *c = self(b);
    return sdk::guarded(c, [&]() -> opb_status {
        if (!out) return c->fail(OPB_ERR_INVALID, "prepare: out is NULL");
        *out = nullptr;
        if (auto st = check_usable(c); st != OPB_OK) return st;
        ImplChoice choice;
        if (auto st = check_desc(c, d, choice); st != OPB_OK) return st;
        // Frees the plan's device buffers on any early return or exception.
        struct Guard {
            CudaBackend *c;
            Plan *p;
            ~Guard() { c->release_plan(p); }
        } guard{c, new Plan};
        Plan *p = guard.p;
        p->desc = *d;
        p->impl = choice.impl;
        p->tensor_count = expected_tensor_count(*d);
        opb_status st = OPB_OK;
        if (choice.impl == Impl::CublasLt) {
            p->gemm1 = std::make_unique<LtGemm>();
            st = c->prepare_gemm(plan_matmul(*d), *p->gemm1, "matmul");
        } else if (choice.impl == Impl::ComposedGemmSoftmax) {
            p->attention = plan_attention(*d);
            p->gemm1 = std::make_unique<LtGemm>();
            p->gemm2 = std::make_unique<LtGemm>();
            st = c->prepare_gemm(p->attention.scores, *p->gemm1, "attention QK^T");
            if (st == OPB_OK) st = c->prepare_gemm(p->attention.output, *p->gemm2, "attention PV");
            if (st == OPB_OK) st = c->device_alloc(p->attention.scores_bytes, p->scores, true, "attention scores");
            if (st == OPB_OK && p->attention.probs_bytes)
                st = c->device_alloc(p->attention.probs_bytes, p->probs, true, "attention probabilities");
        } else if (choice.impl == Impl::CudnnSdpa) {
            st = c->prepare_sdpa(*d, *p);
        } else if (choice.impl == Impl::CublasLtInt8) {
            st = c->prepare_int8(*d, *p);
        } else if (choice.impl == Impl::CublasLtFp8) {
            st = c->prepare_fp8(*d, *p);
        }
        if (st != OPB_OK) return st;
        uint64_t ws = p->scores.bytes + p->probs.bytes + p->sdpa_stats.bytes + p->sdpa_workspace.bytes +
                      p->sdpa_fp8_scalars.bytes +
                      p->int8_shifted.bytes + p->int8_sums.bytes + p->int8_acc.bytes + p->int8_workspace.bytes +
                      p->fp8_bias.bytes;
        if (p->gemm1) ws += p->gemm1->workspace.bytes;
        if (p->gemm2) ws += p->gemm2->workspace.bytes;
        if (workspace_bytes) *workspace_bytes = ws;
        guard.p = nullptr; // the host owns it now, until release
        *out = reinterpret_cast<opb_plan *>(p);
        return OPB_OK;
    });
}

opb_status launched(CudaBackend *c, cudaError_t e, const opb_op_desc &d) {
    if (e == cudaSuccess) return OPB_OK;
    return c->fail(OPB_ERR_DEVICE, cuda_error((std::string(op_name(d.op)) + " kernel launch").c_str(), e));
}

// A profiling scope around one step of an op. Kernels run asynchronously, so
// while the host records, the scope waits for the stream before it ends: its
// time is then the step's device time plus one launch and one synchronisation
// (profiled samples serialise the steps; the host keeps them out of the
// published timings). While the kernel timeline records (issue 42) it does
// not wait, so the gaps between the steps' kernels are the op's own, and it
// names the step for CUPTI: the kernels' device time is the step's. While
// the host does not record it costs one branch; with
// -Dprofiling_scopes=false it is compiled out.
class StepScope {
public:
    StepScope(CudaBackend &c, const char *name) noexcept
#if OPB_PROFILING_SCOPES
        : c_(c.scopes.recording() ? &c : nullptr), timeline_(c.timeline.recording() ? &c.timeline : nullptr) {
        if (timeline_) timeline_->scope_begin(name);
        if (c_) c_->scopes.begin(name);
    }
    ~StepScope() {
        if (c_) {
            if (!timeline_) cudaStreamSynchronize(c_->stream); // errors surface at the host's synchronize
            c_->scopes.end();
        }
        if (timeline_) timeline_->scope_end();
    }
#else
    {
        (void)c;
        (void)name;
    }
#endif
    StepScope(const StepScope &) = delete;
    StepScope &operator=(const StepScope &) = delete;

private:
#if OPB_PROFILING_SCOPES
    const CudaBackend *c_;
    KernelTimeline *timeline_;
#endif
};

opb_status execute_plan(opb_backend *b, opb_plan *plan, void *const *t, int32_t count) {
    auto *c = self(b);
    return sdk::guarded(c, [&]() -> opb_status {
        if (auto st = check_usable(c); st != OPB_OK) return st;
        auto *p = reinterpret_cast<Plan *>(plan);
        if (!p || !t) return c->fail(OPB_ERR_INVALID, "execute: plan or tensors is NULL");
        const opb_op_desc &d = p->desc;
        if (count != p->tensor_count)
            return c->fail(OPB_ERR_INVALID, std::string(op_name(d.op)) + ": execute got " + std::to_string(count) +
                                                " tensors, expected " + std::to_string(p->tensor_count));
        for (int i = 0; i < count; ++i)
            if (!t[i])
                return c->fail(OPB_ERR_INVALID,
                               std::string(op_name(d.op)) + ": tensor " + std::to_string(i) + " is NULL");
        switch (d.op) {
        case OPB_OP_MATMUL: {
            if (p->impl == Impl::CublasLtInt8) return c->run_int8(*p, t);
            if (p->impl == Impl::CublasLtFp8) return c->run_fp8(*p, t);
            const bool bias = d.p.matmul.has_bias != 0;
            void *C = t[bias ? 3 : 2];
            // Column-major trick: first operand is B, second is A (planning.hpp).
            return c->run_gemm(*p->gemm1, t[1], t[0], C, bias ? t[2] : nullptr, "matmul cublasLtMatmul");
        }
        case OPB_OP_SOFTMAX: {
            const auto &q = d.p.softmax;
            return launched(c,
                            launch_softmax(t[0], d.dtype, t[1], d.dtype, q.batch, q.rows, q.cols, effective_scale(d),
                                           q.causal != 0, c->stream),
                            d);
        }
        case OPB_OP_LAYERNORM: {
            const auto &q = d.p.norm;
            return launched(c, launch_layernorm(t[0], t[1], t[2], t[3], d.dtype, q.rows, q.cols, q.eps, c->stream), d);
        }
        case OPB_OP_RMSNORM: {
            const auto &q = d.p.norm;
            return launched(c, launch_rmsnorm(t[0], t[1], t[2], d.dtype, q.rows, q.cols, q.eps, c->stream), d);
        }
        case OPB_OP_GELU: {
            const auto &q = d.p.eltwise;
            return launched(c, launch_gelu(t[0], t[1], d.dtype, q.rows * q.cols, d.variant == OPB_GELU_TANH, c->stream),
                            d);
        }
        case OPB_OP_SILU: {
            const auto &q = d.p.eltwise;
            return launched(c, launch_silu(t[0], t[1], d.dtype, q.rows * q.cols, c->stream), d);
        }
        case OPB_OP_ADD: {
            const auto &q = d.p.eltwise;
            return launched(c, launch_add(t[0], t[1], t[2], d.dtype, q.rows * q.cols, c->stream), d);
        }
        case OPB_OP_ROPE:
            return launched(c, launch_rope(rope_shape(d), d.dtype, t[0], t[1], t[2], t[3], c->stream), d);
        case OPB_OP_QUANTIZE: {
            const auto &q = d.p.quantize;
            return launched(c,
                            launch_quantize(t[0], d.dtype, t[1], q.out_dtype, q.rows * q.cols, q.scale, q.zero_point,
                                            c->stream),
                            d);
        }
        case OPB_OP_ATTENTION: {
            if (p->impl == Impl::CudnnSdpa) return c->run_sdpa(*p, t);
            const AttentionPlan &a = p->attention;
            // S = Q.K^T (f32), P = softmax(scale S) (in place for f32), O = P.V.
            // Scopes qk / softmax / pv; the causal mask is applied inside the
            // softmax kernel, so there is no separate mask step here.
            {
                StepScope scope(*c, "qk");
                if (auto st =
                        c->run_gemm(*p->gemm1, t[1], t[0], p->scores.ptr, nullptr, "attention QK^T cublasLtMatmul");
                    st != OPB_OK)
                    return st;
            }
            void *probs = a.probs_in_place ? p->scores.ptr : p->probs.ptr;
            {
                StepScope scope(*c, "softmax");
                if (auto st = launched(c,
                                       launch_softmax(p->scores.ptr, OPB_DTYPE_F32, probs, d.dtype, a.bh, a.seq_q,
                                                      a.seq_kv, a.scale, a.causal, c->stream),
                                       d);
                    st != OPB_OK)
                    return st;
            }
            StepScope scope(*c, "pv");
            return c->run_gemm(*p->gemm2, t[2], probs, t[3], nullptr, "attention PV cublasLtMatmul");
        }
        }
        return c->fail(OPB_ERR_INTERNAL, "execute: plan with unknown op " + std::to_string(d.op));
    });
}

#ifdef OPBENCH_CUDA_TEST_MATMUL_SLOWDOWN
// A test build only (the meson target test-cuda-slower, never built by
// default or installed): `ab`'s known regression on a GPU (issue 41
// item 6). Each matmul is followed on the stream by a spin kernel of f / (1 +
// f) of the last timed sample's device time per call, f =
// OPBENCH_CUDA_TEST_MATMUL_SLOWDOWN: that time holds the spin before it, so
// the spin settles at f of the matmul's own time (plus one kernel boundary).
opb_status slow_down_matmul(CudaBackend *c, opb_plan *plan) {
    if (reinterpret_cast<Plan *>(plan)->desc.op != OPB_OP_MATMUL) return OPB_OK;
    if (c->timer_started) ++c->test_calls_in_sample;
    constexpr double f = OPBENCH_CUDA_TEST_MATMUL_SLOWDOWN;
    const double spin = f / (1 + f) * c->test_call_device_seconds;
    if (spin <= 0) return OPB_OK; // no timed sample yet
    const cudaError_t e = launch_spin(static_cast<uint64_t>(spin * 1e9), c->stream);
    return e == cudaSuccess ? OPB_OK : c->fail(OPB_ERR_DEVICE, cuda_error("test slowdown: spin kernel launch", e));
}
#endif

// execute_plan and, in the test build, its slowdown.
opb_status execute_call(opb_backend *b, opb_plan *plan, void *const *t, int32_t count) {
    const opb_status st = execute_plan(b, plan, t, count);
#ifdef OPBENCH_CUDA_TEST_MATMUL_SLOWDOWN
    if (st == OPB_OK) return slow_down_matmul(self(b), plan);
#endif
    return st;
}

// execute, timed on the host while the device timer runs: the launches' own
// cost per call beside the device's time (ABI 1.5 timer_host_seconds).
opb_status timed_execute(opb_backend *b, opb_plan *plan, void *const *t, int32_t count) {
    auto *c = self(b);
    if (!c->timer_started) return execute_call(b, plan, t, count);
    const auto start = std::chrono::steady_clock::now();
    const opb_status st = execute_call(b, plan, t, count);
    c->host_in_execute += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return st;
}

// While the kernel timeline records, each call's kernels carry its index.
opb_status cuda_execute(opb_backend *b, opb_plan *plan, void *const *t, int32_t count) {
    KernelTimeline &timeline = self(b)->timeline;
    if (!timeline.recording()) return timed_execute(b, plan, t, count);
    timeline.call_begin();
    const opb_status st = timed_execute(b, plan, t, count);
    timeline.call_end();
    return st;
}

// ABI 1.6 (issue 42): the kernel timeline from CUPTI (kernel_timeline.hpp).
// A refusal (no libcupti, no privilege) is OPB_ERR_UNAVAILABLE with CUPTI's
// reason: the host says so and carries on.
opb_status cuda_activity_begin(opb_backend *b) {
    auto *c = self(b);
    return sdk::guarded(c, [&]() -> opb_status {
        if (auto st = check_usable(c); st != OPB_OK) return st;
        if (std::string why = c->timeline.begin(); !why.empty()) return c->fail(OPB_ERR_UNAVAILABLE, why);
        return OPB_OK;
    });
}

opb_status cuda_activity_end(opb_backend *b, opb_activity_fn fn, void *user) {
    auto *c = self(b);
    return sdk::guarded(c, [&]() -> opb_status {
        if (!fn) return c->fail(OPB_ERR_INVALID, "activity_end: fn is NULL");
        if (std::string why = c->timeline.end(fn, user); !why.empty()) return c->fail(OPB_ERR_UNAVAILABLE, why);
        return OPB_OK;
    });
}

// ABI 1.6 (issue 41 item 3): `--launch graph`, the sample's calls captured
// once into a CUDA graph (graph_capture.hpp) and replayed per sample. A
// refused capture is OPB_ERR_UNAVAILABLE with the reason: the host then
// measures the calls back to back (batch) and says so.
opb_status cuda_graph_prepare(opb_backend *b, opb_plan *plan, void *const *t, int32_t count, int32_t calls) {
    auto *c = self(b);
    return sdk::guarded(c, [&]() -> opb_status {
        if (auto st = check_usable(c); st != OPB_OK) return st;
        if (calls < 1) return c->fail(OPB_ERR_INVALID, "graph_prepare: calls must be at least 1");
        // Nothing earlier may still run on the stream while it captures.
        if (const cudaError_t e = cudaStreamSynchronize(c->stream); e != cudaSuccess)
            return c->fail(OPB_ERR_DEVICE, cuda_error("graph_prepare: cudaStreamSynchronize", e));
        const std::string why = c->graph.capture(c->stream, calls, [&]() -> std::string {
            return execute_plan(b, plan, t, count) == OPB_OK ? std::string() : c->error;
        });
        if (!why.empty()) return c->fail(OPB_ERR_UNAVAILABLE, why);
        return OPB_OK;
    });
}

// One replay; its host time counts as execute's does while the device timer runs.
opb_status cuda_graph_launch(opb_backend *b) {
    auto *c = self(b);
    if (auto st = check_usable(c); st != OPB_OK) return st;
    if (!c->graph.held()) return c->fail(OPB_ERR_INVALID, "graph_launch without graph_prepare");
    const auto start = std::chrono::steady_clock::now();
    const cudaError_t e = c->graph.launch(c->stream);
    if (c->timer_started)
        c->host_in_execute += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (e != cudaSuccess) return c->fail(OPB_ERR_DEVICE, cuda_error("cudaGraphLaunch", e));
    return OPB_OK;
}

void cuda_graph_release(opb_backend *b) {
    auto *c = self(b);
    if (c->stream) cudaStreamSynchronize(c->stream); // a replay may still run
    c->graph.release();
}

void cuda_release(opb_backend *b, opb_plan *plan) {
    auto *c = self(b);
    if (!plan) return;
    // A plan may still be in use by enqueued work: wait before freeing its buffers.
    if (c->stream) cudaStreamSynchronize(c->stream);
    c->release_plan(reinterpret_cast<Plan *>(plan));
}

opb_status cuda_synchronize(opb_backend *b) {
    auto *c = self(b);
    if (auto st = check_usable(c); st != OPB_OK) return st;
    const cudaError_t e = cudaStreamSynchronize(c->stream);
    if (e != cudaSuccess) return c->fail(OPB_ERR_DEVICE, cuda_error("cudaStreamSynchronize", e));
    return OPB_OK;
}

opb_status cuda_memory_stats(opb_backend *b, opb_memory_stats *out) {
    return sdk::memory_stats(self(b), "cuda", out);
}

void cuda_reset_peak(opb_backend *b) { self(b)->memory.reset_peak(); }

opb_status cuda_timer_start(opb_backend *b) {
    auto *c = self(b);
    if (auto st = check_usable(c); st != OPB_OK) return st;
    // On an idle stream the start event is stamped at once, and the first
    // call's kernel starts only when the host has launched it: the device
    // time then holds the launch (on an H200, 2026-11-28: 7.9 us for a 3 us
    // softmax, spread 4% between repetitions). A spin kernel ahead of the
    // event keeps the stream busy while the host enqueues the sample's calls:
    // twice the last sample's host time in execute, at least 30 us.
    const double lead = std::clamp(2.0 * c->last_sample_host_seconds, 30e-6, 5e-3);
    cudaError_t e = launch_spin(static_cast<uint64_t>(lead * 1e9), c->stream);
    if (e != cudaSuccess) return c->fail(OPB_ERR_DEVICE, cuda_error("timer_start: spin kernel launch", e));
    e = cudaEventRecord(c->ev_start, c->stream);
    if (e != cudaSuccess) return c->fail(OPB_ERR_DEVICE, cuda_error("timer_start: cudaEventRecord", e));
    c->timer_started = true;
    c->host_in_execute = 0;
#ifdef OPBENCH_CUDA_TEST_MATMUL_SLOWDOWN
    c->test_calls_in_sample = 0;
#endif
    return OPB_OK;
}

opb_status cuda_timer_stop(opb_backend *b, double *seconds) {
    auto *c = self(b);
    if (auto st = check_usable(c); st != OPB_OK) return st;
    if (!seconds) return c->fail(OPB_ERR_INVALID, "timer_stop: seconds is NULL");
    if (!c->timer_started) return c->fail(OPB_ERR_INVALID, "timer_stop without timer_start");
    c->timer_started = false;
    c->last_sample_host_seconds = c->host_in_execute;
    cudaError_t e = cudaEventRecord(c->ev_stop, c->stream);
    if (e == cudaSuccess) e = cudaEventSynchronize(c->ev_stop);
    float ms = 0.0f;
    if (e == cudaSuccess) e = cudaEventElapsedTime(&ms, c->ev_start, c->ev_stop);
    if (e != cudaSuccess) return c->fail(OPB_ERR_DEVICE, cuda_error("timer_stop (cudaEvent)", e));
    *seconds = static_cast<double>(ms) * 1e-3;
#ifdef OPBENCH_CUDA_TEST_MATMUL_SLOWDOWN
    if (c->test_calls_in_sample > 0) c->test_call_device_seconds = *seconds / c->test_calls_in_sample;
#endif
    return OPB_OK;
}

opb_status cuda_flush_cache(opb_backend *b) {
    auto *c = self(b);
    return sdk::guarded(c, [&]() -> opb_status {
        if (auto st = check_usable(c); st != OPB_OK) return st;
        if (!c->flush_buffer.ptr) {
            // Twice the L2 so that no line of earlier work survives the sweep;
            // allocated once, counted as memory the backend holds.
            const uint64_t bytes = std::max<uint64_t>(2ull * c->prop.l2CacheSize, 1ull << 20);
            if (auto st = c->device_alloc(bytes, c->flush_buffer, false, "L2 flush buffer"); st != OPB_OK) return st;
        }
        const cudaError_t e = cudaMemsetAsync(c->flush_buffer.ptr, 0, c->flush_buffer.bytes, c->stream);
        if (e != cudaSuccess) return c->fail(OPB_ERR_DEVICE, cuda_error("flush_cache: cudaMemsetAsync", e));
        return OPB_OK;
    });
}

// ---- ABI 1.5: the device measured (issue 41; README.md says what ran on a GPU) ----

opb_status cuda_timer_host_seconds(opb_backend *b, double *seconds) {
    auto *c = self(b);
    if (!seconds) return c->fail(OPB_ERR_INVALID, "timer_host_seconds: seconds is NULL");
    *seconds = c->host_in_execute;
    return OPB_OK;
}

opb_status cuda_device_clocks(opb_backend *b, opb_device_clocks *out) {
    auto *c = self(b);
    if (auto st = check_usable(c); st != OPB_OK) return st;
    if (!out) return c->fail(OPB_ERR_INVALID, "device_clocks: out is NULL");
    std::snprintf(out->uuid, sizeof out->uuid, "%s",
                  uuid_string(reinterpret_cast<const unsigned char *>(c->prop.uuid.bytes)).c_str());
    // The CUDA driver's API version: the display driver's own needs NVML.
    std::snprintf(out->driver, sizeof out->driver, "CUDA %s", cuda_version_string(c->driver_version).c_str());
    out->max_mhz = c->clock_khz / 1000.0;
    // Measured under the roofs' sweep when this instance ran it; else the
    // ceiling (a throttle rule against the ceiling is stricter: README.md).
    out->sustained_mhz = c->sustained_mhz > 0 ? c->sustained_mhz : out->max_mhz;
    return OPB_OK;
}

opb_status cuda_clock_begin(opb_backend *b) {
    auto *c = self(b);
    if (auto st = check_usable(c); st != OPB_OK) return st;
    c->nvml_reasons = c->nvml_reader().reasons();
    return OPB_OK;
}

// The clock right after the repetition's last sample (the probe runs after
// the host synchronized): a clock that fell under the load is still down.
// NVML (when it loads) gives power and temperature at the end and the
// clock-event reasons of the start and the end OR-ed.
opb_status cuda_clock_end(opb_backend *b, opb_clock_reading *out) {
    auto *c = self(b);
    return sdk::guarded(c, [&]() -> opb_status {
        if (auto st = check_usable(c); st != OPB_OK) return st;
        if (!out) return c->fail(OPB_ERR_INVALID, "clock_end: out is NULL");
        const int sms = c->prop.multiProcessorCount;
        if (!c->probe_buffer.ptr)
            if (auto st = c->device_alloc(2ull * sms * sizeof(unsigned long long), c->probe_buffer, false,
                                          "clock probe buffer");
                st != OPB_OK)
                return st;
        const ClockProbe p =
            probe_sm_clock(sms, static_cast<unsigned long long *>(c->probe_buffer.ptr), c->stream);
        if (!p.error.empty()) return c->fail(OPB_ERR_DEVICE, p.error);
        out->sm_clock_mhz = p.mhz;
        const NvmlSample s = c->nvml_reader().read();
        out->power_watts = s.power_watts;
        out->temperature_c = s.temperature_c;
        out->throttle_reasons = c->nvml_reasons | s.clock_event_reasons;
        return OPB_OK;
    });
}

// One GEMM of the roofs' sweep, n^3 in (unit, dtype), ready to run: a float
// plan (f32 SIMT, TF32, bf16, f16), cuBLASLt's FP8 plan (TN, bf16 out, unit
// scales by device pointer) or its s8 x s8 -> s32 plan (TN). Operands hold
// random values (launch_fill_random says why not zeros).
struct RoofGemmRun {
    CudaBackend *c;
    int32_t dtype;
    LtGemm lt;                      // float and FP8
    std::unique_ptr<Int8Gemm> int8; // s8
    DeviceBuffer a, b, d, scales, int8_workspace;

    RoofGemmRun(CudaBackend *backend, int32_t dtype_) : c(backend), dtype(dtype_) {}
    RoofGemmRun(const RoofGemmRun &) = delete;
    RoofGemmRun &operator=(const RoofGemmRun &) = delete;
    ~RoofGemmRun() {
        for (DeviceBuffer *buf : {&int8_workspace, &scales, &d, &b, &a}) c->device_free(*buf, true);
    }

    opb_status prepare(int32_t unit, int64_t n) {
        opb_status st = OPB_OK;
        if (dtype == OPB_DTYPE_S8 || dtype == OPB_DTYPE_F8_E4M3) {
            opb_op_desc desc = make_desc(OPB_OP_MATMUL, dtype);
            desc.p.matmul = opb_matmul_params{1, n, n, n, 0, /*trans_b=*/1, 0, OPB_DTYPE_S8, 1.0f, 0,
                                              dtype == OPB_DTYPE_S8 ? OPB_DTYPE_F32 : OPB_DTYPE_BF16};
            if (dtype == OPB_DTYPE_S8) {
                int8 = std::make_unique<Int8Gemm>();
                if (const Int8GemmResult r = int8->prepare(c->lt, plan_int8_matmul(desc).gemm, c->workspace_limit);
                    r.status != OPB_OK)
                    return c->fail(r.status, "roof GEMM s8: " + r.message);
                if (int8->workspace_bytes())
                    st = c->device_alloc(int8->workspace_bytes(), int8_workspace, true, "roof GEMM s8 workspace");
            } else {
                st = c->prepare_gemm(plan_fp8_matmul(desc).gemm, lt, "roof GEMM f8e4m3");
                // Each scale 256 bytes apart, as an op's two scale tensors are:
                // with them 4 bytes apart the H200 run got NOT_SUPPORTED (the
                // one difference from the FP8 ops that ran; not yet confirmed).
                constexpr std::size_t kScaleStride = 256;
                const float one = 1.0f;
                if (st == OPB_OK) st = c->device_alloc(2 * kScaleStride, scales, true, "roof GEMM FP8 scales");
                for (std::size_t i = 0; st == OPB_OK && i < 2; ++i)
                    if (cudaMemcpy(static_cast<char *>(scales.ptr) + i * kScaleStride, &one, sizeof one,
                                   cudaMemcpyHostToDevice) != cudaSuccess)
                        st = c->fail(OPB_ERR_DEVICE, "roof GEMM f8e4m3: copying its scales failed");
                const void *first = scales.ptr, *second = static_cast<const char *>(scales.ptr) + kScaleStride;
                cublasLtMatmulDescSetAttribute(lt.desc, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &first, sizeof first);
                cublasLtMatmulDescSetAttribute(lt.desc, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &second, sizeof second);
            }
        } else {
            const ElemType ab = elem_type(dtype);
            const ComputeType compute =
                unit == OPB_ROOF_TENSOR && dtype == OPB_DTYPE_F32 ? ComputeType::F32_FAST_TF32 : ComputeType::F32;
            st = c->prepare_gemm(plan_gemm(1, n, n, n, false, false, false, ab, ab, compute), lt, "roof GEMM");
        }
        const uint64_t elems = static_cast<uint64_t>(n) * static_cast<uint64_t>(n);
        if (st == OPB_OK) st = c->device_alloc(elems * roof_operand_bytes(dtype), a, true, "roof GEMM A");
        if (st == OPB_OK) st = c->device_alloc(elems * roof_operand_bytes(dtype), b, true, "roof GEMM B");
        if (st == OPB_OK) st = c->device_alloc(elems * roof_output_bytes(dtype), d, true, "roof GEMM D");
        const RoofFill fill = dtype == OPB_DTYPE_F32    ? RoofFill::F32
                              : dtype == OPB_DTYPE_BF16 ? RoofFill::BF16
                              : dtype == OPB_DTYPE_F16  ? RoofFill::F16
                              : dtype == OPB_DTYPE_S8   ? RoofFill::S8
                                                        : RoofFill::E4M3;
        if (st == OPB_OK && (launch_fill_random(a.ptr, elems, fill, 1, c->stream) != cudaSuccess ||
                             launch_fill_random(b.ptr, elems, fill, 2, c->stream) != cudaSuccess))
            st = c->fail(OPB_ERR_DEVICE, "roof GEMM: the operand fill kernel failed to launch");
        return st;
    }

    opb_status run() {
        if (int8) {
            const Int8GemmResult r = int8->run(c->lt, b.ptr, a.ptr, static_cast<int32_t *>(d.ptr),
                                               int8_workspace.ptr, c->stream);
            return r.status == OPB_OK ? OPB_OK : c->fail(r.status, "roof GEMM s8: " + r.message);
        }
        return c->run_gemm(lt, b.ptr, a.ptr, d.ptr, nullptr,
                           dtype == OPB_DTYPE_F8_E4M3 ? "roof GEMM f8e4m3 cublasLtMatmul" : "roof GEMM cublasLtMatmul");
    }
};

// The sustained rate of one prepared roof GEMM: a first call warms up and
// sizes a run of back-to-back calls filling 0.5 s (enough to reach the
// power-limited clock); then the SM clock the run left the device at.
opb_status time_roof_gemm(CudaBackend *c, RoofGemmRun &g, double flop, double &rate, double &mhz) {
    float ms = 0;
    opb_status st = g.run();
    if (st == OPB_OK) {
        cudaEventRecord(c->ev_start, c->stream);
        st = g.run();
        cudaEventRecord(c->ev_stop, c->stream);
        cudaEventSynchronize(c->ev_stop);
        cudaEventElapsedTime(&ms, c->ev_start, c->ev_stop);
    }
    const int reps = gemm_repetitions(flop, ms > 0 ? flop / (ms * 1e-3) : 0, 0.5);
    if (st == OPB_OK) {
        cudaEventRecord(c->ev_start, c->stream);
        for (int i = 0; st == OPB_OK && i < reps; ++i) st = g.run();
        cudaEventRecord(c->ev_stop, c->stream);
        const cudaError_t e = cudaEventSynchronize(c->ev_stop);
        if (e == cudaSuccess) cudaEventElapsedTime(&ms, c->ev_start, c->ev_stop);
        else st = c->fail(OPB_ERR_DEVICE, cuda_error("roof GEMM", e));
    }
    if (st != OPB_OK) return st;
    rate = ms > 0 ? flop * reps / (ms * 1e-3) : 0;
    const int sms = c->prop.multiProcessorCount;
    if (!c->probe_buffer.ptr)
        st = c->device_alloc(2ull * sms * sizeof(unsigned long long), c->probe_buffer, false, "clock probe buffer");
    if (st == OPB_OK) mhz = probe_sm_clock(sms, static_cast<unsigned long long *>(c->probe_buffer.ptr), c->stream).mhz;
    return st;
}

// A roof record of (unit, dtype) with this device's datasheet figure; the
// caller fills measured, the clock and the method.
opb_device_roof roof_record(const CudaBackend *c, int32_t unit, int32_t dtype) {
    opb_device_roof r;
    std::memset(&r, 0, sizeof r);
    r.struct_size = sizeof r;
    r.abi_version = OPB_ABI_VERSION;
    r.unit = unit;
    r.dtype = dtype;
    r.datasheet = datasheet_figure(find_datasheet(c->prop.name), unit, dtype);
    return r;
}

// One roof from the GEMM sweep: the best rate over the sweep's shapes of
// (unit, dtype). A shape cuBLASLt refuses is logged and passed over (on an
// H200, 2026-11-28, FP8 at n = 8192 or 16384 came back NOT_SUPPORTED); the
// roof fails only when every shape did, with the last shape's error.
opb_status measure_gemm_roof(CudaBackend *c, int32_t unit, int32_t dtype, opb_roof_fn fn, void *user) {
    double best = 0, best_mhz = 0;
    int64_t best_n = 0;
    opb_status last_failure = OPB_OK;
    for (const RoofGemm &g : roof_gemm_sweep()) {
        if (g.unit != unit || g.dtype != dtype) continue;
        double rate = 0, mhz = 0;
        {
            RoofGemmRun run(c, dtype);
            opb_status st = run.prepare(unit, g.n);
            if (st == OPB_OK) st = time_roof_gemm(c, run, 2.0 * double(g.n) * double(g.n) * double(g.n), rate, mhz);
            if (st != OPB_OK) {
                cudaGetLastError();
                c->log(OPB_LOG_WARN, "device roof GEMM n=" + std::to_string(g.n) + " passed over: " + c->error);
                last_failure = st;
                continue;
            }
        }
        if (rate > best) {
            best = rate;
            best_n = g.n;
            best_mhz = mhz;
        }
    }
    if (!(best > 0)) return last_failure;
    if (unit == OPB_ROOF_TENSOR && dtype == OPB_DTYPE_BF16 && best_mhz > 0) c->sustained_mhz = best_mhz;
    opb_device_roof r = roof_record(c, unit, dtype);
    r.measured = best;
    r.sm_clock_mhz = best_mhz;
    std::snprintf(r.method, sizeof r.method, "cuBLASLt GEMM%s, random operands, best n^3 at n=%lld, 0.5 s each",
                  dtype == OPB_DTYPE_F8_E4M3 || dtype == OPB_DTYPE_S8 ? " (TN)" : "", static_cast<long long>(best_n));
    fn(user, &r);
    return OPB_OK;
}

// A roof the sweep could not measure: measured 0, its method the error.
void report_unmeasured_roof(CudaBackend *c, int32_t unit, int32_t dtype, opb_roof_fn fn, void *user) {
    opb_device_roof r = roof_record(c, unit, dtype);
    // The method field holds 95 characters of the reason; the log has it whole.
    c->log(OPB_LOG_WARN, "device roof not measured: " + c->error);
    std::snprintf(r.method, sizeof r.method, "not measured: %s", c->error.c_str());
    fn(user, &r);
}

opb_status report_bandwidth(CudaBackend *c, int32_t unit, uint64_t bytes, opb_roof_fn fn, void *user) {
    const Bandwidth bw = measure_triad(bytes, 20, c->stream);
    if (!bw.error.empty()) return c->fail(OPB_ERR_DEVICE, bw.error);
    opb_device_roof r = roof_record(c, unit, -1);
    r.measured = bw.bytes_per_second;
    std::snprintf(r.method, sizeof r.method, "triad over %llu MiB, best of 20",
                  static_cast<unsigned long long>(bytes >> 20));
    fn(user, &r);
    return OPB_OK;
}

opb_status cuda_measure_roofs(opb_backend *b, opb_roof_fn fn, void *user) {
    auto *c = self(b);
    return sdk::guarded(c, [&]() -> opb_status {
        if (auto st = check_usable(c); st != OPB_OK) return st;
        if (!fn) return c->fail(OPB_ERR_INVALID, "measure_roofs: fn is NULL");
        const std::pair<int32_t, int32_t> gemm_roofs[] = {
            {OPB_ROOF_SIMT, OPB_DTYPE_F32},  {OPB_ROOF_TENSOR, OPB_DTYPE_F32},      {OPB_ROOF_TENSOR, OPB_DTYPE_BF16},
            {OPB_ROOF_TENSOR, OPB_DTYPE_F16}, {OPB_ROOF_TENSOR, OPB_DTYPE_F8_E4M3}, {OPB_ROOF_TENSOR, OPB_DTYPE_S8}};
        const bool has_fp8 = c->prop.major * 10 + c->prop.minor >= 89; // FP8 tensor cores: Ada, Hopper and later
        // A roof whose GEMM fails is reported unmeasured with the reason, and
        // the others are measured: one refused dtype costs no other its roof.
        for (auto [unit, dtype] : gemm_roofs) {
            if (dtype == OPB_DTYPE_F8_E4M3 && !has_fp8) continue;
            if (measure_gemm_roof(c, unit, dtype, fn, user) != OPB_OK) {
                cudaGetLastError();
                report_unmeasured_roof(c, unit, dtype, fn, user);
            }
        }
        const uint64_t l2 = static_cast<uint64_t>(c->prop.l2CacheSize);
        if (auto st = report_bandwidth(c, OPB_ROOF_DRAM, triad_bytes_for_dram(l2), fn, user); st != OPB_OK) return st;
        return report_bandwidth(c, OPB_ROOF_L2, triad_bytes_for_l2(l2), fn, user);
    });
}

void cuda_info(opb_backend *b, opb_info_fn fn, void *user) {
    auto *c = self(b);
    if (!fn) return;
    try {
        auto put = [&](const char *k, const std::string &v) { fn(user, k, v.c_str()); };
        put("driver_cuda_version",
            c->driver_version ? cuda_version_string(c->driver_version) : std::string("none (no driver)"));
        put("runtime_cuda_version", cuda_version_string(c->runtime_version));
        put("cublaslt_version", library_version_string(cublasLtGetVersion()));
        put("cudnn_version", library_version_string(cudnnGetVersion()));
        put("compiled_archs", OPBENCH_CUDA_ARCHS);
        // One host thread issues each op onto one stream: the harness counts
        // this, not --threads, against free CPUs (on an H100 host every entry
        // was 'noisy' for "16 threads on 14.9 free CPUs").
        put("threads", "1");
        put("threading", "one host thread launches each op on one CUDA stream; the description's threads "
                         "field is ignored");
        if (!c->unavailable.empty()) {
            put("unavailable", c->unavailable);
            return;
        }
        const cudaDeviceProp &p = c->prop;
        put("device", p.name);
        put("compute_capability", std::to_string(p.major) + "." + std::to_string(p.minor));
        put("sm_count", std::to_string(p.multiProcessorCount));
        put("memory_bytes", std::to_string(p.totalGlobalMem));
        put("l2_cache_bytes", std::to_string(p.l2CacheSize));
        put("sm_clock_mhz", std::to_string(c->clock_khz / 1000));
        put("memory_clock_mhz", std::to_string(c->memory_clock_khz / 1000));
        put("memory_bus_width_bits", std::to_string(p.memoryBusWidth));
        // Where power, temperature and clock-event reasons come from, or why none.
        put("nvml", c->nvml_reader().status());
        // The device's own roofs for the host's bottleneck analysis (never the CPU's).
        const DevicePeaks peaks = theoretical_peaks(p.major, p.minor, p.multiProcessorCount, c->clock_khz,
                                                    c->memory_clock_khz, p.memoryBusWidth);
        if (peaks.f32_gflops > 0 && peaks.bandwidth_gbps > 0) {
            put("peak_f32_gflops", std::to_string(peaks.f32_gflops));
            put("peak_bandwidth_gbps", std::to_string(peaks.bandwidth_gbps));
            put("peak_source", "theoretical: SMs x FP32 lanes x 2 x clock; 2 x memory clock x bus width");
        }
        put("uuid", uuid_string(reinterpret_cast<const unsigned char *>(p.uuid.bytes)));
        put("cublaslt_workspace_limit_bytes", std::to_string(c->workspace_limit));
    } catch (...) {
        // info is best effort; never let an exception cross the boundary
    }
}

opb_backend_api make_api() {
    opb_backend_api a;
    std::memset(&a, 0, sizeof a);
    a.struct_size = sizeof a;
    a.abi_version = OPB_ABI_VERSION;
    a.name = "cuda";
    a.version = OPBENCH_CUDA_PLUGIN_VERSION;
    a.description = "NVIDIA GPU: cuBLASLt matmul/attention GEMMs, own CUDA kernels for "
                    "softmax/norms/activations, cuDNN SDPA graph for fused attention";
    a.library_versions = "";
    a.create = cuda_create;
    a.destroy = cuda_destroy;
    a.last_error = cuda_last_error;
    a.probe = cuda_probe;
    a.device_info = cuda_device_info;
    a.supports = cuda_supports;
    a.alloc = cuda_alloc;
    a.free = cuda_free;
    a.copy_in = cuda_copy_in;
    a.copy_out = cuda_copy_out;
    a.prepare = cuda_prepare;
    a.execute = cuda_execute;
    a.release = cuda_release;
    a.synchronize = cuda_synchronize;
    a.memory_stats = cuda_memory_stats;
    a.reset_peak = cuda_reset_peak;
    a.timer_start = cuda_timer_start;
    a.timer_stop = cuda_timer_stop;
    a.info = cuda_info;
    a.flush_cache = cuda_flush_cache;
    a.device_clocks = cuda_device_clocks;
    a.measure_roofs = cuda_measure_roofs;
    a.clock_begin = cuda_clock_begin;
    a.clock_end = cuda_clock_end;
    a.timer_host_seconds = cuda_timer_host_seconds;
    a.activity_begin = cuda_activity_begin; // ABI 1.6
    a.activity_end = cuda_activity_end;
    a.graph_prepare = cuda_graph_prepare; // ABI 1.6, issue 41
    a.graph_launch = cuda_graph_launch;
    a.graph_release = cuda_graph_release;
    return a;
}

opb_backend_api g_api = make_api();
char g_library_versions[160];
std::once_flag g_versions_once;

} // namespace
} // namespace opbench::cuda

OPB_PLUGIN_ENTRY(host_version) {
    using namespace opbench::cuda;
    if (OPB_ABI_MAJOR(host_version) != OPB_ABI_VERSION_MAJOR) return nullptr;
    // Versions come from the libraries actually loaded; both calls work
    // without a driver or device.
    std::call_once(g_versions_once, [] {
        int rt = 0;
        cudaRuntimeGetVersion(&rt);
        std::snprintf(g_library_versions, sizeof g_library_versions, "CUDA runtime %s, cuBLASLt %s, cuDNN %s",
                      cuda_version_string(rt).c_str(), library_version_string(cublasLtGetVersion()).c_str(),
                      library_version_string(cudnnGetVersion()).c_str());
        g_api.library_versions = g_library_versions;
    });
    return &g_api;
}
