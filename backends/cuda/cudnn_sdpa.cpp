#include "cudnn_sdpa.hpp"

#include <string>
#include <unordered_map>
#include <vector>

namespace opbench::cuda {

std::string cudnn_error(const std::string &step, cudnnStatus_t s) {
    char detail[512] = {0};
    cudnnGetLastErrorString(detail, sizeof detail); // cuDNN's own account of the last failure
    std::string e = step + ": " + cudnnGetErrorString(s);
    if (detail[0]) e += " (" + std::string(detail) + ")";
    return e;
}

namespace {

cudnnDataType_t cudnn_type(SdpaType t) {
    switch (t) {
    case SdpaType::Half: return CUDNN_DATA_HALF;
    case SdpaType::BFloat16: return CUDNN_DATA_BFLOAT16;
    case SdpaType::Int32: return CUDNN_DATA_INT32;
    case SdpaType::Boolean: return CUDNN_DATA_BOOLEAN;
    case SdpaType::Fp8E4M3: return CUDNN_DATA_FP8_E4M3;
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

} // namespace

CudnnResult build_sdpa_plan(cudnnHandle_t cudnn, const opb_op_desc &d, const cudaDeviceProp &prop, CudnnSdpa &S) {
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
    auto set = [&](cudnnBackendDescriptor_t desc, cudnnBackendAttributeName_t attr, cudnnBackendAttributeType_t type,
                   int64_t count, const void *value, const std::string &what) {
        return check(cudnnBackendSetAttribute(desc, attr, type, count, value),
                     "set attribute " + std::to_string(static_cast<int>(attr)) + " of " + what);
    };
    auto unsupported = [&]() {
        return CudnnResult{OPB_ERR_UNSUPPORTED, "attention fused (cuDNN SDPA graph): " + failed};
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
            (by_value && !set(desc, CUDNN_ATTR_TENSOR_IS_BY_VALUE, CUDNN_TYPE_BOOLEAN, 1, &by_value, what)) ||
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
            if (!op || !set(op, CUDNN_ATTR_OPERATION_MATMUL_ADESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &a, what) ||
                !set(op, CUDNN_ATTR_OPERATION_MATMUL_BDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &b, what) ||
                !set(op, CUDNN_ATTR_OPERATION_MATMUL_CDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &c, what) ||
                !set(op, CUDNN_ATTR_OPERATION_MATMUL_DESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &mm, what))
                return unsupported();
        } else if (o.kind == SdpaOpKind::Pointwise) {
            cudnnBackendDescriptor_t pw = create(CUDNN_BACKEND_POINTWISE_DESCRIPTOR, what);
            const cudnnPointwiseMode_t mode = cudnn_pw(o.pw);
            if (!pw || !set(pw, CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, 1, &mode, what) ||
                !set(pw, CUDNN_ATTR_POINTWISE_MATH_PREC, CUDNN_TYPE_DATA_TYPE, 1, &compute, what) ||
                (o.axis >= 0 && !set(pw, CUDNN_ATTR_POINTWISE_AXIS, CUDNN_TYPE_INT64, 1, &o.axis, what)) ||
                !check(cudnnBackendFinalize(pw), "finalize pointwise descriptor of " + what))
                return unsupported();
            op = create(CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR, what);
            cudnnBackendDescriptor_t x = tensor(o.x), y = tensor(o.y);
            if (!op ||
                !set(op, CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &pw, what) ||
                !set(op, CUDNN_ATTR_OPERATION_POINTWISE_XDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &x, what))
                return unsupported();
            if (o.b) {
                cudnnBackendDescriptor_t b = tensor(o.b);
                if (!set(op, CUDNN_ATTR_OPERATION_POINTWISE_BDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &b, what))
                    return unsupported();
            }
            if (o.t) {
                cudnnBackendDescriptor_t tt = tensor(o.t);
                if (!set(op, CUDNN_ATTR_OPERATION_POINTWISE_TDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &tt, what))
                    return unsupported();
            }
            if (!set(op, CUDNN_ATTR_OPERATION_POINTWISE_YDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &y, what))
                return unsupported();
        } else {
            cudnnBackendDescriptor_t rd = create(CUDNN_BACKEND_REDUCTION_DESCRIPTOR, what);
            const cudnnReduceTensorOp_t r = o.reduce == SdpaReduce::Max    ? CUDNN_REDUCE_TENSOR_MAX
                                            : o.reduce == SdpaReduce::Amax ? CUDNN_REDUCE_TENSOR_AMAX
                                                                           : CUDNN_REDUCE_TENSOR_ADD;
            if (!rd || !set(rd, CUDNN_ATTR_REDUCTION_OPERATOR, CUDNN_TYPE_REDUCTION_OPERATOR_TYPE, 1, &r, what) ||
                !set(rd, CUDNN_ATTR_REDUCTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &compute, what) ||
                !check(cudnnBackendFinalize(rd), "finalize reduction descriptor of " + what))
                return unsupported();
            op = create(CUDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR, what);
            cudnnBackendDescriptor_t x = tensor(o.x), y = tensor(o.y);
            if (!op || !set(op, CUDNN_ATTR_OPERATION_REDUCTION_XDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &x, what) ||
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
        !set(graph, CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, static_cast<int64_t>(ops.size()),
             ops.data(), "operation graph") ||
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
    if (!check(cudnnBackendGetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, 0, &count,
                                        nullptr),
               "count engine heuristic results"))
        return unsupported();
    if (count <= 0)
        return CudnnResult{OPB_ERR_UNSUPPORTED,
                           "attention fused (cuDNN SDPA graph): the engine heuristics offer no engine "
                           "configuration for this graph on " +
                               std::string(prop.name) + " (sm_" + std::to_string(prop.major) +
                               std::to_string(prop.minor) + ", cuDNN " + library_version_string(cudnnGetVersion()) +
                               ")"};
    std::vector<cudnnBackendDescriptor_t> cfgs;
    for (int64_t i = 0; i < count; ++i) {
        cudnnBackendDescriptor_t cfg = create(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR, "engine configuration");
        if (!cfg) return unsupported();
        cfgs.push_back(cfg);
    }
    int64_t got = 0;
    if (!check(cudnnBackendGetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, count, &got,
                                        cfgs.data()),
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
            st = cudnnBackendSetAttribute(plan, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, CUDNN_TYPE_BACKEND_DESCRIPTOR,
                                          1, &cfgs[i]);
        if (st == CUDNN_STATUS_SUCCESS) st = cudnnBackendFinalize(plan);
        if (st == CUDNN_STATUS_SUCCESS) {
            S.plan = plan;
        } else {
            if (tried.empty()) tried = cudnn_error("engine configuration 0 of " + std::to_string(got), st);
            if (plan) cudnnBackendDestroyDescriptor(plan);
        }
    }
    if (!S.plan)
        return CudnnResult{OPB_ERR_UNSUPPORTED, "attention fused (cuDNN SDPA graph): none of the " +
                                                    std::to_string(got) +
                                                    " engine configurations finalizes as an execution plan on " +
                                                    prop.name + "; first: " + tried};
    int64_t n = 0;
    if (!check(cudnnBackendGetAttribute(S.plan, CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, CUDNN_TYPE_INT64, 1, &n,
                                        &S.workspace_size),
               "get execution plan workspace size"))
        return unsupported();
    if (S.workspace_size < 0)
        return CudnnResult{OPB_ERR_INTERNAL, "attention fused: cuDNN reports a negative workspace size " +
                                                 std::to_string(S.workspace_size)};
    return {};
}

CudnnResult run_sdpa_plan(cudnnHandle_t cudnn, cudaStream_t stream, const CudnnSdpa &S, void *const *t, void *stats,
                          void *fp8_scalars, void *workspace) {
    const SdpaGraph &g = S.graph;
    cudnnStatus_t st = cudnnSetStream(cudnn, stream);
    if (st != CUDNN_STATUS_SUCCESS)
        return CudnnResult{OPB_ERR_DEVICE, "attention fused: " + cudnn_error("cudnnSetStream", st)};
    std::vector<int64_t> uids = g.bound_uids();
    std::vector<void *> ptrs;
    for (int64_t uid : uids) {
        const SdpaBinding b = g.binding(uid);
        void *ptr = nullptr;
        switch (b.source) {
        case SdpaBinding::ExecuteTensor: ptr = t[b.index]; break;
        case SdpaBinding::Stats: ptr = stats; break;
        case SdpaBinding::Fp8Scalar: ptr = fp8_scalars ? static_cast<float *>(fp8_scalars) + b.index : nullptr; break;
        case SdpaBinding::ByValue:
            ptr = uid == kSdpaScale      ? const_cast<float *>(&g.scale)
                  : uid == kSdpaMaskFill ? const_cast<float *>(&g.mask_fill)
                  : uid == kSdpaSeqKv    ? static_cast<void *>(const_cast<int32_t *>(&g.seq_kv))
                  : uid == kSdpaSeqQ     ? static_cast<void *>(const_cast<int32_t *>(&g.seq_q))
                                         : nullptr;
            break;
        case SdpaBinding::None: break;
        }
        if (!ptr)
            return CudnnResult{OPB_ERR_INTERNAL,
                               "attention fused: no data for bound tensor uid " + std::to_string(uid)};
        ptrs.push_back(ptr);
    }
    struct Pack {
        cudnnBackendDescriptor_t d = nullptr;
        ~Pack() {
            if (d) cudnnBackendDestroyDescriptor(d);
        }
    } pack;
    void *ws = workspace;
    const char *step = "create variant pack";
    st = cudnnBackendCreateDescriptor(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR, &pack.d);
    if (st == CUDNN_STATUS_SUCCESS) {
        step = "set variant pack unique ids";
        st = cudnnBackendSetAttribute(pack.d, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64,
                                      static_cast<int64_t>(uids.size()), uids.data());
    }
    if (st == CUDNN_STATUS_SUCCESS) {
        step = "set variant pack data pointers";
        st = cudnnBackendSetAttribute(pack.d, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR,
                                      static_cast<int64_t>(ptrs.size()), ptrs.data());
    }
    if (st == CUDNN_STATUS_SUCCESS) {
        step = "set variant pack workspace";
        st = cudnnBackendSetAttribute(pack.d, CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1, &ws);
    }
    if (st == CUDNN_STATUS_SUCCESS) {
        step = "finalize variant pack";
        st = cudnnBackendFinalize(pack.d);
    }
    if (st == CUDNN_STATUS_SUCCESS) {
        step = "cudnnBackendExecute";
        st = cudnnBackendExecute(cudnn, S.plan, pack.d);
    }
    if (st != CUDNN_STATUS_SUCCESS) return CudnnResult{OPB_ERR_DEVICE, "attention fused: " + cudnn_error(step, st)};
    return {};
}

} // namespace opbench::cuda
