// CUDA backend plugin: cuBLASLt matmuls, own CUDA kernels for the row and
// elementwise ops, composed attention from both, fused attention through
// cuDNN 9's backend-API SDPA (flash attention) graph. See README.md for what runs
// on which library and what has (not) been verified on a GPU.
//
// Host code only (g++): CUDA runtime, cuBLASLt and cuDNN are plain C APIs.
// The plugin must load and create an instance on machines with no driver and
// no GPU, so nothing here touches the device before create() has checked it,
// and every entry point refuses work with the recorded reason afterwards.
#include "kernels.hpp"
#include "planning.hpp"

#include "opbench/backend_helpers.hpp"
#include "opbench/ops.hpp"
#include "opbench/plugin.h"

#include <cublasLt.h>
#include <cuda_runtime_api.h>
#include <cudnn.h>

#include <algorithm>
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

std::string cudnn_error(const std::string &step, cudnnStatus_t s) {
    char detail[512] = {0};
    cudnnGetLastErrorString(detail, sizeof detail); // cuDNN's own account of the last failure
    std::string e = step + ": " + cudnnGetErrorString(s);
    if (detail[0]) e += " (" + std::string(detail) + ")";
    return e;
}

cudnnDataType_t cudnn_type(SdpaType t) {
    switch (t) {
    case SdpaType::Half: return CUDNN_DATA_HALF;
    case SdpaType::BFloat16: return CUDNN_DATA_BFLOAT16;
    case SdpaType::Int32: return CUDNN_DATA_INT32;
    case SdpaType::Boolean: return CUDNN_DATA_BOOLEAN;
    default: return CUDNN_DATA_FLOAT;
    }
}

cudnnPointwiseMode_t cudnn_pw(SdpaPw m) {
    switch (m) {
    case SdpaPw::Mul: return CUDNN_POINTWISE_MUL;
    case SdpaPw::Add: return CUDNN_POINTWISE_ADD;
    case SdpaPw::Sub: return CUDNN_POINTWISE_SUB;
    case SdpaPw::Exp: return CUDNN_POINTWISE_EXP;
    case SdpaPw::Log: return CUDNN_POINTWISE_LOG;
    case SdpaPw::Div: return CUDNN_POINTWISE_DIV;
    case SdpaPw::GenIndex: return CUDNN_POINTWISE_GEN_INDEX;
    case SdpaPw::CmpGe: return CUDNN_POINTWISE_CMP_GE;
    case SdpaPw::BinarySelect: return CUDNN_POINTWISE_BINARY_SELECT;
    }
    return CUDNN_POINTWISE_IDENTITY;
}

// Attributes cuDNN 9.x marks deprecated but that every cuDNN 9 release
// accepts (and early 9.x releases require): the handle of an operation graph
// and of an execution plan. Named by value so the deprecation warning does
// not hide real ones.
constexpr auto kOpGraphHandleAttr = static_cast<cudnnBackendAttributeName_t>(800);
constexpr auto kPlanHandleAttr = static_cast<cudnnBackendAttributeName_t>(400);

// A prepared cuDNN SDPA graph: every backend descriptor it created (destroyed
// in reverse order), the finalized execution plan and its workspace size.
struct CudnnSdpa {
    SdpaGraph graph;
    std::vector<cudnnBackendDescriptor_t> owned;
    cudnnBackendDescriptor_t plan = nullptr;
    int64_t workspace_size = 0;
    CudnnSdpa() = default;
    CudnnSdpa(const CudnnSdpa &) = delete;
    CudnnSdpa &operator=(const CudnnSdpa &) = delete;
    ~CudnnSdpa() {
        if (plan) cudnnBackendDestroyDescriptor(plan);
        for (auto it = owned.rbegin(); it != owned.rend(); ++it) cudnnBackendDestroyDescriptor(*it);
    }
};

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
    DeviceBuffer scores, probs; // attention composed scratch (workspace)
    std::unique_ptr<CudnnSdpa> sdpa; // attention fused
    DeviceBuffer sdpa_stats, sdpa_workspace; // attention fused (workspace)
};

struct CudaBackend : sdk::BackendBase {
    explicit CudaBackend(const opb_host_services *s) : BackendBase(s, /*device_memory=*/true) {}
    ~CudaBackend() override;

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
    uint64_t workspace_limit = 0;
    DeviceBuffer flush_buffer;

    std::mutex alloc_mutex;
    std::unordered_map<void *, uint64_t> allocations;

    void init();
    opb_status device_alloc(uint64_t bytes, DeviceBuffer &out, bool is_workspace, const char *what);
    void device_free(DeviceBuffer &buf, bool is_workspace);
    opb_status prepare_gemm(const GemmPlan &g, LtGemm &out, const char *what);
    opb_status run_gemm(LtGemm &g, const void *first, const void *second, void *d,
                        const void *bias, const char *what);
    opb_status prepare_sdpa(const opb_op_desc &d, Plan &p);
    opb_status run_sdpa(Plan &p, void *const *t);
    void release_plan(Plan *p);
};

// Finds out whether the device can be used and sets up what every op shares.
// Never fails: a reason in `unavailable` is the outcome on a GPU-less machine.
void CudaBackend::init() {
    cudaDriverGetVersion(&driver_version); // 0 when no driver is installed
    cudaRuntimeGetVersion(&runtime_version);
    int count = 0;
    const cudaError_t ce = cudaGetDeviceCount(&count);
    unavailable = unavailable_reason(driver_version, runtime_version, static_cast<int>(ce),
                                     cudaGetErrorName(ce), cudaGetErrorString(ce), count);
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
    if ((e = cudaEventCreate(&ev_start)) != cudaSuccess ||
        (e = cudaEventCreate(&ev_stop)) != cudaSuccess) {
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

CudaBackend::~CudaBackend() {
    if (stream) cudaStreamSynchronize(stream);
    device_free(flush_buffer, false);
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

opb_status CudaBackend::device_alloc(uint64_t bytes, DeviceBuffer &out, bool is_workspace,
                                     const char *what) {
    void *p = nullptr;
    const cudaError_t e = cudaMalloc(&p, bytes == 0 ? 1 : bytes);
    if (e != cudaSuccess) {
        cudaGetLastError();
        return fail(e == cudaErrorMemoryAllocation ? OPB_ERR_OUT_OF_MEMORY : OPB_ERR_DEVICE,
                    cuda_error((std::string("cudaMalloc for ") + what + " (" +
                                std::to_string(bytes) + " bytes)")
                                   .c_str(),
                               e));
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
    auto lt_fail = [&](const char *call) {
        return fail(OPB_ERR_DEVICE, std::string(what) + ": " + lt_error(call, s));
    };
    if ((s = cublasLtMatmulDescCreate(&out.desc, compute_type(g.compute), CUDA_R_32F)) !=
        CUBLAS_STATUS_SUCCESS)
        return lt_fail("cublasLtMatmulDescCreate");
    const cublasOperation_t ta = g.trans_first ? CUBLAS_OP_T : CUBLAS_OP_N;
    const cublasOperation_t tb = g.trans_second ? CUBLAS_OP_T : CUBLAS_OP_N;
    cublasLtMatmulDescSetAttribute(out.desc, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta);
    cublasLtMatmulDescSetAttribute(out.desc, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb);
    if (g.bias) {
        const cublasLtEpilogue_t epi = CUBLASLT_EPILOGUE_BIAS;
        const cudaDataType_t bias_type = cuda_type(g.d_type);
        const int64_t bias_stride = 0; // one bias vector shared by every batch
        cublasLtMatmulDescSetAttribute(out.desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof epi);
        cublasLtMatmulDescSetAttribute(out.desc, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &bias_type,
                                       sizeof bias_type);
        cublasLtMatmulDescSetAttribute(out.desc, CUBLASLT_MATMUL_DESC_BIAS_BATCH_STRIDE,
                                       &bias_stride, sizeof bias_stride);
    }
    auto make_layout = [&](cublasLtMatrixLayout_t &l, ElemType t, const MatrixLayout &m) {
        s = cublasLtMatrixLayoutCreate(&l, cuda_type(t), m.rows, m.cols, m.ld);
        if (s != CUBLAS_STATUS_SUCCESS) return false;
        if (g.batch > 1) {
            const int32_t count = g.batch;
            const int64_t stride = m.batch_stride;
            cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count,
                                             sizeof count);
            cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET,
                                             &stride, sizeof stride);
        }
        return true;
    };
    if (!make_layout(out.first, g.ab_type, g.first) ||
        !make_layout(out.second, g.ab_type, g.second) || !make_layout(out.d, g.d_type, g.d))
        return lt_fail("cublasLtMatrixLayoutCreate");

    cublasLtMatmulPreference_t pref = nullptr;
    if ((s = cublasLtMatmulPreferenceCreate(&pref)) != CUBLAS_STATUS_SUCCESS)
        return lt_fail("cublasLtMatmulPreferenceCreate");
    const uint64_t limit = workspace_limit;
    cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &limit,
                                         sizeof limit);
    cublasLtMatmulHeuristicResult_t result{};
    int found = 0;
    s = cublasLtMatmulAlgoGetHeuristic(lt, out.desc, out.first, out.second, out.d, out.d, pref, 1,
                                       &result, &found);
    cublasLtMatmulPreferenceDestroy(pref);
    if (s != CUBLAS_STATUS_SUCCESS || found == 0)
        return fail(OPB_ERR_UNSUPPORTED,
                    std::string(what) + ": cuBLASLt offers no algorithm for this shape/type" +
                        (s != CUBLAS_STATUS_SUCCESS ? " (" + lt_error("heuristic", s) + ")" : ""));
    out.algo = result.algo;
    // Allocate exactly what the chosen algorithm asks for (<= limit), so the
    // reported workspace is what this plan really holds.
    if (result.workspaceSize > 0)
        return device_alloc(result.workspaceSize, out.workspace, true, "cuBLASLt workspace");
    return OPB_OK;
}

opb_status CudaBackend::run_gemm(LtGemm &g, const void *first, const void *second, void *d,
                                 const void *bias, const char *what) {
    if (g.plan.bias)
        cublasLtMatmulDescSetAttribute(g.desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias,
                                       sizeof bias);
    const float alpha = 1.0f, beta = 0.0f;
    const cublasStatus_t s =
        cublasLtMatmul(lt, g.desc, &alpha, first, g.first, second, g.second, &beta, d, g.d, d, g.d,
                       &g.algo, g.workspace.ptr, g.workspace.bytes, stream);
    if (s != CUBLAS_STATUS_SUCCESS) return fail(OPB_ERR_DEVICE, lt_error(what, s));
    return OPB_OK;
}

// Builds the SDPA operation graph of planning.hpp with cuDNN backend
// descriptors, asks the heuristics for engine configurations, finalizes the
// first one that this GPU/cuDNN accepts as an execution plan and allocates its
// workspace and the softmax-stats output. Any cuDNN refusal is
// OPB_ERR_UNSUPPORTED naming the step and cuDNN's status, so the harness
// records a skipped case rather than a failure.
opb_status CudaBackend::prepare_sdpa(const opb_op_desc &d, Plan &p) {
    p.sdpa = std::make_unique<CudnnSdpa>();
    CudnnSdpa &S = *p.sdpa;
    S.graph = plan_sdpa(d);
    const SdpaGraph &g = S.graph;
    std::string failed; // set by the helpers on the first failure
    auto check = [&](cudnnStatus_t s, const std::string &step) {
        if (s == CUDNN_STATUS_SUCCESS) return true;
        if (failed.empty()) failed = cudnn_error(step, s);
        return false;
    };
    auto create = [&](cudnnBackendDescriptorType_t type, const std::string &what) {
        cudnnBackendDescriptor_t desc = nullptr;
        if (!check(cudnnBackendCreateDescriptor(type, &desc), "create " + what + " descriptor"))
            return static_cast<cudnnBackendDescriptor_t>(nullptr);
        S.owned.push_back(desc);
        return desc;
    };
    auto set = [&](cudnnBackendDescriptor_t desc, cudnnBackendAttributeName_t attr,
                   cudnnBackendAttributeType_t type, int64_t count, const void *value,
                   const std::string &what) {
        return check(cudnnBackendSetAttribute(desc, attr, type, count, value),
                     "set attribute " + std::to_string(static_cast<int>(attr)) + " of " + what);
    };
    auto unsupported = [&]() {
        return fail(OPB_ERR_UNSUPPORTED, "attention fused (cuDNN SDPA graph): " + failed);
    };

    // Tensors.
    std::unordered_map<int64_t, cudnnBackendDescriptor_t> tensors;
    for (const SdpaTensor &t : g.tensors) {
        const std::string what = std::string("tensor '") + t.name + "' (uid " + std::to_string(t.uid) + ")";
        cudnnBackendDescriptor_t desc = create(CUDNN_BACKEND_TENSOR_DESCRIPTOR, what);
        if (!desc) return unsupported();
        const cudnnDataType_t dt = cudnn_type(t.type);
        const int64_t alignment = 16;
        const bool is_virtual = t.is_virtual, by_value = t.by_value;
        if (!set(desc, CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &dt, what) ||
            !set(desc, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, 4, t.dims, what) ||
            !set(desc, CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, 4, t.strides, what) ||
            !set(desc, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &t.uid, what) ||
            !set(desc, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 1, &alignment, what) ||
            !set(desc, CUDNN_ATTR_TENSOR_IS_VIRTUAL, CUDNN_TYPE_BOOLEAN, 1, &is_virtual, what) ||
            (by_value &&
             !set(desc, CUDNN_ATTR_TENSOR_IS_BY_VALUE, CUDNN_TYPE_BOOLEAN, 1, &by_value, what)) ||
            !check(cudnnBackendFinalize(desc), "finalize " + what))
            return unsupported();
        tensors[t.uid] = desc;
    }
    auto tensor = [&](int64_t uid) { return tensors.at(uid); };

    // Operations, in graph order.
    std::vector<cudnnBackendDescriptor_t> ops;
    for (const SdpaOp &o : g.ops) {
        const std::string what = std::string("operation '") + o.name + "'";
        const cudnnDataType_t compute = cudnn_type(o.compute);
        cudnnBackendDescriptor_t op = nullptr;
        if (o.kind == SdpaOpKind::Matmul) {
            cudnnBackendDescriptor_t mm = create(CUDNN_BACKEND_MATMUL_DESCRIPTOR, what);
            if (!mm || !set(mm, CUDNN_ATTR_MATMUL_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &compute, what) ||
                !check(cudnnBackendFinalize(mm), "finalize matmul descriptor of " + what))
                return unsupported();
            op = create(CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR, what);
            cudnnBackendDescriptor_t a = tensor(o.x), b = tensor(o.b), c = tensor(o.y);
            if (!op ||
                !set(op, CUDNN_ATTR_OPERATION_MATMUL_ADESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &a, what) ||
                !set(op, CUDNN_ATTR_OPERATION_MATMUL_BDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &b, what) ||
                !set(op, CUDNN_ATTR_OPERATION_MATMUL_CDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &c, what) ||
                !set(op, CUDNN_ATTR_OPERATION_MATMUL_DESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &mm, what))
                return unsupported();
        } else if (o.kind == SdpaOpKind::Pointwise) {
            cudnnBackendDescriptor_t pw = create(CUDNN_BACKEND_POINTWISE_DESCRIPTOR, what);
            const cudnnPointwiseMode_t mode = cudnn_pw(o.pw);
            if (!pw || !set(pw, CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, 1, &mode, what) ||
                !set(pw, CUDNN_ATTR_POINTWISE_MATH_PREC, CUDNN_TYPE_DATA_TYPE, 1, &compute, what) ||
                (o.axis >= 0 &&
                 !set(pw, CUDNN_ATTR_POINTWISE_AXIS, CUDNN_TYPE_INT64, 1, &o.axis, what)) ||
                !check(cudnnBackendFinalize(pw), "finalize pointwise descriptor of " + what))
                return unsupported();
            op = create(CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR, what);
            cudnnBackendDescriptor_t x = tensor(o.x), y = tensor(o.y);
            if (!op ||
                !set(op, CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1,
                     &pw, what) ||
                !set(op, CUDNN_ATTR_OPERATION_POINTWISE_XDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &x, what))
                return unsupported();
            if (o.b) {
                cudnnBackendDescriptor_t b = tensor(o.b);
                if (!set(op, CUDNN_ATTR_OPERATION_POINTWISE_BDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &b,
                         what))
                    return unsupported();
            }
            if (o.t) {
                cudnnBackendDescriptor_t tt = tensor(o.t);
                if (!set(op, CUDNN_ATTR_OPERATION_POINTWISE_TDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &tt,
                         what))
                    return unsupported();
            }
            if (!set(op, CUDNN_ATTR_OPERATION_POINTWISE_YDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &y, what))
                return unsupported();
        } else {
            cudnnBackendDescriptor_t rd = create(CUDNN_BACKEND_REDUCTION_DESCRIPTOR, what);
            const cudnnReduceTensorOp_t r =
                o.reduce == SdpaReduce::Max ? CUDNN_REDUCE_TENSOR_MAX : CUDNN_REDUCE_TENSOR_ADD;
            if (!rd ||
                !set(rd, CUDNN_ATTR_REDUCTION_OPERATOR, CUDNN_TYPE_REDUCTION_OPERATOR_TYPE, 1, &r, what) ||
                !set(rd, CUDNN_ATTR_REDUCTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &compute, what) ||
                !check(cudnnBackendFinalize(rd), "finalize reduction descriptor of " + what))
                return unsupported();
            op = create(CUDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR, what);
            cudnnBackendDescriptor_t x = tensor(o.x), y = tensor(o.y);
            if (!op ||
                !set(op, CUDNN_ATTR_OPERATION_REDUCTION_XDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &x, what) ||
                !set(op, CUDNN_ATTR_OPERATION_REDUCTION_YDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &y, what) ||
                !set(op, CUDNN_ATTR_OPERATION_REDUCTION_DESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &rd, what))
                return unsupported();
        }
        if (!check(cudnnBackendFinalize(op), "finalize " + what)) return unsupported();
        ops.push_back(op);
    }

    // Operation graph, heuristics, execution plan.
    cudnnBackendDescriptor_t graph = create(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR, "operation graph");
    if (!graph || !set(graph, kOpGraphHandleAttr, CUDNN_TYPE_HANDLE, 1, &cudnn, "operation graph") ||
        !set(graph, CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR,
             static_cast<int64_t>(ops.size()), ops.data(), "operation graph") ||
        !check(cudnnBackendFinalize(graph), "finalize operation graph"))
        return unsupported();
    cudnnBackendDescriptor_t heur = create(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR, "engine heuristics");
    const cudnnBackendHeurMode_t mode = CUDNN_HEUR_MODE_A;
    if (!heur ||
        !set(heur, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &graph,
             "engine heuristics") ||
        !set(heur, CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1, &mode, "engine heuristics") ||
        !check(cudnnBackendFinalize(heur), "finalize engine heuristics"))
        return unsupported();
    int64_t count = 0;
    if (!check(cudnnBackendGetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_RESULTS,
                                        CUDNN_TYPE_BACKEND_DESCRIPTOR, 0, &count, nullptr),
               "count engine heuristic results"))
        return unsupported();
    if (count <= 0)
        return fail(OPB_ERR_UNSUPPORTED,
                    "attention fused (cuDNN SDPA graph): the engine heuristics offer no engine "
                    "configuration for this graph on " + std::string(prop.name) + " (sm_" +
                        std::to_string(prop.major) + std::to_string(prop.minor) + ", cuDNN " +
                        library_version_string(cudnnGetVersion()) + ")");
    std::vector<cudnnBackendDescriptor_t> cfgs;
    for (int64_t i = 0; i < count; ++i) {
        cudnnBackendDescriptor_t cfg = create(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR, "engine configuration");
        if (!cfg) return unsupported();
        cfgs.push_back(cfg);
    }
    int64_t got = 0;
    if (!check(cudnnBackendGetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_RESULTS,
                                        CUDNN_TYPE_BACKEND_DESCRIPTOR, count, &got, cfgs.data()),
               "get engine heuristic results"))
        return unsupported();
    // The first configuration (heuristics order) that finalizes as a plan.
    std::string tried;
    for (int64_t i = 0; i < got && !S.plan; ++i) {
        cudnnBackendDescriptor_t plan = nullptr;
        cudnnStatus_t st = cudnnBackendCreateDescriptor(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR, &plan);
        if (st == CUDNN_STATUS_SUCCESS)
            st = cudnnBackendSetAttribute(plan, kPlanHandleAttr, CUDNN_TYPE_HANDLE, 1, &cudnn);
        if (st == CUDNN_STATUS_SUCCESS)
            st = cudnnBackendSetAttribute(plan, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG,
                                          CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &cfgs[i]);
        if (st == CUDNN_STATUS_SUCCESS) st = cudnnBackendFinalize(plan);
        if (st == CUDNN_STATUS_SUCCESS) {
            S.plan = plan;
        } else {
            if (tried.empty()) tried = cudnn_error("engine configuration 0 of " + std::to_string(got), st);
            if (plan) cudnnBackendDestroyDescriptor(plan);
        }
    }
    if (!S.plan)
        return fail(OPB_ERR_UNSUPPORTED,
                    "attention fused (cuDNN SDPA graph): none of the " + std::to_string(got) +
                        " engine configurations finalizes as an execution plan on " + prop.name +
                        "; first: " + tried);
    int64_t n = 0;
    if (!check(cudnnBackendGetAttribute(S.plan, CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE,
                                        CUDNN_TYPE_INT64, 1, &n, &S.workspace_size),
               "get execution plan workspace size"))
        return unsupported();
    if (S.workspace_size < 0)
        return fail(OPB_ERR_INTERNAL, "attention fused: cuDNN reports a negative workspace size " +
                                          std::to_string(S.workspace_size));
    if (auto st = device_alloc(g.stats_bytes, p.sdpa_stats, true, "attention fused softmax stats");
        st != OPB_OK)
        return st;
    if (S.workspace_size > 0)
        return device_alloc(static_cast<uint64_t>(S.workspace_size), p.sdpa_workspace, true,
                            "cuDNN SDPA workspace");
    return OPB_OK;
}

// Binds Q, K, V, O, the stats buffer and the by-value scalars to their uids
// and runs the plan on the backend's stream.
opb_status CudaBackend::run_sdpa(Plan &p, void *const *t) {
    const CudnnSdpa &S = *p.sdpa;
    const SdpaGraph &g = S.graph;
    cudnnStatus_t st = cudnnSetStream(cudnn, stream);
    if (st != CUDNN_STATUS_SUCCESS)
        return fail(OPB_ERR_DEVICE, "attention fused: " + cudnn_error("cudnnSetStream", st));
    std::vector<int64_t> uids = g.bound_uids();
    std::vector<void *> ptrs;
    for (int64_t uid : uids) {
        switch (uid) {
        case kSdpaQ: ptrs.push_back(t[0]); break;
        case kSdpaK: ptrs.push_back(t[1]); break;
        case kSdpaV: ptrs.push_back(t[2]); break;
        case kSdpaO: ptrs.push_back(t[3]); break;
        case kSdpaStats: ptrs.push_back(p.sdpa_stats.ptr); break;
        case kSdpaScale: ptrs.push_back(const_cast<float *>(&g.scale)); break;
        case kSdpaMaskFill: ptrs.push_back(const_cast<float *>(&g.mask_fill)); break;
        case kSdpaSeqKv: ptrs.push_back(const_cast<int32_t *>(&g.seq_kv)); break;
        case kSdpaSeqQ: ptrs.push_back(const_cast<int32_t *>(&g.seq_q)); break;
        default:
            return fail(OPB_ERR_INTERNAL,
                        "attention fused: no data for bound tensor uid " + std::to_string(uid));
        }
    }
    struct Pack {
        cudnnBackendDescriptor_t d = nullptr;
        ~Pack() {
            if (d) cudnnBackendDestroyDescriptor(d);
        }
    } pack;
    void *ws = p.sdpa_workspace.ptr;
    const char *step = "create variant pack";
    st = cudnnBackendCreateDescriptor(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR, &pack.d);
    if (st == CUDNN_STATUS_SUCCESS) {
        step = "set variant pack unique ids";
        st = cudnnBackendSetAttribute(pack.d, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64,
                                      static_cast<int64_t>(uids.size()), uids.data());
    }
    if (st == CUDNN_STATUS_SUCCESS) {
        step = "set variant pack data pointers";
        st = cudnnBackendSetAttribute(pack.d, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS,
                                      CUDNN_TYPE_VOID_PTR, static_cast<int64_t>(ptrs.size()),
                                      ptrs.data());
    }
    if (st == CUDNN_STATUS_SUCCESS) {
        step = "set variant pack workspace";
        st = cudnnBackendSetAttribute(pack.d, CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR,
                                      1, &ws);
    }
    if (st == CUDNN_STATUS_SUCCESS) {
        step = "finalize variant pack";
        st = cudnnBackendFinalize(pack.d);
    }
    if (st == CUDNN_STATUS_SUCCESS) {
        step = "cudnnBackendExecute";
        st = cudnnBackendExecute(cudnn, S.plan, pack.d);
    }
    if (st != CUDNN_STATUS_SUCCESS)
        return fail(OPB_ERR_DEVICE, "attention fused: " + cudnn_error(step, st));
    return OPB_OK;
}

void CudaBackend::release_plan(Plan *p) {
    if (!p) return;
    device_free(p->sdpa_stats, true);
    device_free(p->sdpa_workspace, true);
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

opb_status copy(CudaBackend *c, void *dst, const void *src, uint64_t bytes, cudaMemcpyKind kind,
                const char *what) {
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

opb_status cuda_prepare(opb_backend *b, const opb_op_desc *d, opb_plan **out,
                        uint64_t *workspace_bytes) {
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
            if (st == OPB_OK)
                st = c->device_alloc(p->attention.scores_bytes, p->scores, true, "attention scores");
            if (st == OPB_OK && p->attention.probs_bytes)
                st = c->device_alloc(p->attention.probs_bytes, p->probs, true,
                                     "attention probabilities");
        } else if (choice.impl == Impl::CudnnSdpa) {
            st = c->prepare_sdpa(*d, *p);
        }
        if (st != OPB_OK) return st;
        uint64_t ws = p->scores.bytes + p->probs.bytes + p->sdpa_stats.bytes +
                      p->sdpa_workspace.bytes;
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
    return c->fail(OPB_ERR_DEVICE,
                   cuda_error((std::string(op_name(d.op)) + " kernel launch").c_str(), e));
}

opb_status cuda_execute(opb_backend *b, opb_plan *plan, void *const *t, int32_t count) {
    auto *c = self(b);
    return sdk::guarded(c, [&]() -> opb_status {
        if (auto st = check_usable(c); st != OPB_OK) return st;
        auto *p = reinterpret_cast<Plan *>(plan);
        if (!p || !t) return c->fail(OPB_ERR_INVALID, "execute: plan or tensors is NULL");
        const opb_op_desc &d = p->desc;
        if (count != p->tensor_count)
            return c->fail(OPB_ERR_INVALID, std::string(op_name(d.op)) + ": execute got " +
                                                std::to_string(count) + " tensors, expected " +
                                                std::to_string(p->tensor_count));
        for (int i = 0; i < count; ++i)
            if (!t[i])
                return c->fail(OPB_ERR_INVALID, std::string(op_name(d.op)) + ": tensor " +
                                                    std::to_string(i) + " is NULL");
        switch (d.op) {
        case OPB_OP_MATMUL: {
            const bool bias = d.p.matmul.has_bias != 0;
            void *C = t[bias ? 3 : 2];
            // Column-major trick: first operand is B, second is A (planning.hpp).
            return c->run_gemm(*p->gemm1, t[1], t[0], C, bias ? t[2] : nullptr, "matmul cublasLtMatmul");
        }
        case OPB_OP_SOFTMAX: {
            const auto &q = d.p.softmax;
            return launched(c,
                            launch_softmax(t[0], d.dtype, t[1], d.dtype, q.batch, q.rows, q.cols,
                                           effective_scale(d), q.causal != 0, c->stream),
                            d);
        }
        case OPB_OP_LAYERNORM: {
            const auto &q = d.p.norm;
            return launched(c, launch_layernorm(t[0], t[1], t[2], t[3], d.dtype, q.rows, q.cols,
                                                q.eps, c->stream),
                            d);
        }
        case OPB_OP_RMSNORM: {
            const auto &q = d.p.norm;
            return launched(
                c, launch_rmsnorm(t[0], t[1], t[2], d.dtype, q.rows, q.cols, q.eps, c->stream), d);
        }
        case OPB_OP_GELU: {
            const auto &q = d.p.eltwise;
            return launched(c, launch_gelu(t[0], t[1], d.dtype, q.rows * q.cols,
                                           d.variant == OPB_GELU_TANH, c->stream),
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
        case OPB_OP_ATTENTION: {
            if (p->impl == Impl::CudnnSdpa) return c->run_sdpa(*p, t);
            const AttentionPlan &a = p->attention;
            // S = Q.K^T (f32), P = softmax(scale S) (in place for f32), O = P.V.
            if (auto st = c->run_gemm(*p->gemm1, t[1], t[0], p->scores.ptr, nullptr,
                                      "attention QK^T cublasLtMatmul");
                st != OPB_OK)
                return st;
            void *probs = a.probs_in_place ? p->scores.ptr : p->probs.ptr;
            if (auto st = launched(c,
                                   launch_softmax(p->scores.ptr, OPB_DTYPE_F32, probs, d.dtype,
                                                  a.bh, a.seq_q, a.seq_kv, a.scale, a.causal,
                                                  c->stream),
                                   d);
                st != OPB_OK)
                return st;
            return c->run_gemm(*p->gemm2, t[2], probs, t[3], nullptr, "attention PV cublasLtMatmul");
        }
        }
        return c->fail(OPB_ERR_INTERNAL, "execute: plan with unknown op " + std::to_string(d.op));
    });
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
    auto *c = self(b);
    if (auto st = sdk::check_struct(c, "cuda", "opb_memory_stats", out); st != OPB_OK) return st;
    opb_memory_stats s;
    std::memset(&s, 0, sizeof s);
    c->memory.fill(&s);
    sdk::write_struct(out, s);
    return OPB_OK;
}

void cuda_reset_peak(opb_backend *b) { self(b)->memory.reset_peak(); }

opb_status cuda_timer_start(opb_backend *b) {
    auto *c = self(b);
    if (auto st = check_usable(c); st != OPB_OK) return st;
    const cudaError_t e = cudaEventRecord(c->ev_start, c->stream);
    if (e != cudaSuccess) return c->fail(OPB_ERR_DEVICE, cuda_error("timer_start: cudaEventRecord", e));
    c->timer_started = true;
    return OPB_OK;
}

opb_status cuda_timer_stop(opb_backend *b, double *seconds) {
    auto *c = self(b);
    if (auto st = check_usable(c); st != OPB_OK) return st;
    if (!seconds) return c->fail(OPB_ERR_INVALID, "timer_stop: seconds is NULL");
    if (!c->timer_started) return c->fail(OPB_ERR_INVALID, "timer_stop without timer_start");
    c->timer_started = false;
    cudaError_t e = cudaEventRecord(c->ev_stop, c->stream);
    if (e == cudaSuccess) e = cudaEventSynchronize(c->ev_stop);
    float ms = 0.0f;
    if (e == cudaSuccess) e = cudaEventElapsedTime(&ms, c->ev_start, c->ev_stop);
    if (e != cudaSuccess) return c->fail(OPB_ERR_DEVICE, cuda_error("timer_stop (cudaEvent)", e));
    *seconds = static_cast<double>(ms) * 1e-3;
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
            if (auto st = c->device_alloc(bytes, c->flush_buffer, false, "L2 flush buffer");
                st != OPB_OK)
                return st;
        }
        const cudaError_t e =
            cudaMemsetAsync(c->flush_buffer.ptr, 0, c->flush_buffer.bytes, c->stream);
        if (e != cudaSuccess) return c->fail(OPB_ERR_DEVICE, cuda_error("flush_cache: cudaMemsetAsync", e));
        return OPB_OK;
    });
}

void cuda_info(opb_backend *b, opb_info_fn fn, void *user) {
    auto *c = self(b);
    if (!fn) return;
    try {
        auto put = [&](const char *k, const std::string &v) { fn(user, k, v.c_str()); };
        put("driver_cuda_version", c->driver_version ? cuda_version_string(c->driver_version)
                                                      : std::string("none (no driver)"));
        put("runtime_cuda_version", cuda_version_string(c->runtime_version));
        put("cublaslt_version", library_version_string(cublasLtGetVersion()));
        put("cudnn_version", library_version_string(cudnnGetVersion()));
        put("compiled_archs", OPBENCH_CUDA_ARCHS);
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
        std::snprintf(g_library_versions, sizeof g_library_versions,
                      "CUDA runtime %s, cuBLASLt %s, cuDNN %s", cuda_version_string(rt).c_str(),
                      library_version_string(cublasLtGetVersion()).c_str(),
                      library_version_string(cudnnGetVersion()).c_str());
        g_api.library_versions = g_library_versions;
    });
    return &g_api;
}
