// CUDA backend — host-side planning (see planning.hpp). No CUDA headers here.
#include "planning.hpp"

#include "opbench/ops.hpp"

#include <cstdio>
#include <limits>

namespace opbench::cuda {

ImplChoice choose_impl(const opb_op_desc &d) {
    switch (d.op) {
    case OPB_OP_MATMUL:
        // cuBLASLt's int8 GEMM is s8 x s8 -> s32 with one alpha and no zero
        // point: u8 = s8 + 128 and a weight column-sum correction carry the
        // zero point, a dequantising pass the per-column scales (Int8Plan).
        if (d.dtype == OPB_DTYPE_S8) return {Impl::CublasLtInt8, {}};
        if (d.dtype == OPB_DTYPE_F8_E4M3) {
            if (auto why = fp8_unsupported_reason(d, 0, 0); !why.empty())
                return {Impl::Unsupported, "matmul f8e4m3: " + why};
            return {Impl::CublasLtFp8, {}};
        }
        if (d.variant == OPB_MATMUL_TF32 && d.dtype != OPB_DTYPE_F32)
            return {Impl::Unsupported, "matmul tf32: the TF32 variant applies to f32 inputs only, got " +
                                           std::string(dtype_name(d.dtype)) + " (use variant default)"};
        return {Impl::CublasLt, {}};
    // Own kernels rather than cuDNN: cuDNN 9's legacy cudnnSoftmaxForward has
    // no scale on the input and no causal mask, and its norm operations exist
    // only as backend-API graphs whose engine choice could not be verified
    // without a GPU. The kernels are small and checked against the reference.
    case OPB_OP_SOFTMAX:
    case OPB_OP_LAYERNORM:
    case OPB_OP_RMSNORM:
    case OPB_OP_GELU:
    case OPB_OP_SILU:
    case OPB_OP_ADD: return {Impl::OwnKernel, {}};
    case OPB_OP_ATTENTION:
        // Grouped-query attention runs composed (plan_attention batches the
        // GEMMs per K/V head) and fused (cuDNN's SDPA graph takes K/V with
        // fewer heads than Q; sdpa_unsupported_reason says where it does not).
        if (d.variant == OPB_ATTENTION_COMPOSED && d.dtype == OPB_DTYPE_F8_E4M3)
            return {Impl::Unsupported, "attention composed (f8e4m3): FP8 attention runs fused only here (cuDNN's "
                                       "FP8 SDPA graph, sm_90+); use variant fused"};
        if (d.variant == OPB_ATTENTION_COMPOSED) return {Impl::ComposedGemmSoftmax, {}};
        if (auto why = sdpa_unsupported_reason(d, SdpaEnv{}); !why.empty())
            return {Impl::Unsupported, "attention fused (" + std::string(dtype_name(d.dtype)) + "): " + why};
        return {Impl::CudnnSdpa, {}};
    // Own kernels (rope_quant.cu): cuDNN and cuBLASLt have no rotary
    // embedding and no affine quantisation operation.
    case OPB_OP_ROPE:
    case OPB_OP_QUANTIZE: return {Impl::OwnKernel, {}};
    }
    return {Impl::UnknownOp, "no implementation of op " + std::to_string(d.op)};
}

std::string check_device_limits(const opb_op_desc &d) {
    constexpr int64_t i32max = std::numeric_limits<int32_t>::max();
    auto too_big = [](const char *what, int64_t v, int64_t limit) {
        return std::string(what) + " = " + std::to_string(v) + " exceeds the CUDA limit of " + std::to_string(limit);
    };
    switch (d.op) {
    case OPB_OP_MATMUL:
        if (d.p.matmul.batch > i32max) return too_big("matmul batch (cuBLASLt batch count)", d.p.matmul.batch, i32max);
        if (d.dtype == OPB_DTYPE_S8 && d.p.matmul.k > kMaxInt8K)
            return too_big("matmul int8 k (s32 sum of s8 products)", d.p.matmul.k, kMaxInt8K);
        break;
    case OPB_OP_SOFTMAX:
        if (d.p.softmax.batch * d.p.softmax.rows > i32max)
            return too_big("softmax batch*rows (grid size)", d.p.softmax.batch * d.p.softmax.rows, i32max);
        break;
    case OPB_OP_LAYERNORM:
    case OPB_OP_RMSNORM:
        if (d.p.norm.rows > i32max) return too_big("norm rows (grid size)", d.p.norm.rows, i32max);
        break;
    case OPB_OP_ATTENTION: {
        const auto &p = d.p.attention;
        if (d.variant == OPB_ATTENTION_FUSED) break; // cuDNN's limits: sdpa_unsupported_reason
        if (p.batch * p.heads > i32max)
            return too_big("attention batch*heads (cuBLASLt batch count)", p.batch * p.heads, i32max);
        if (p.batch * p.heads * p.seq_q > i32max)
            return too_big("attention batch*heads*seq_q (softmax grid size)", p.batch * p.heads * p.seq_q, i32max);
        break;
    }
    default: break;
    }
    return {};
}

int expected_tensor_count(const opb_op_desc &d) { return static_cast<int>(op_tensors(d).size()); }

ElemType elem_type(int dtype) {
    switch (dtype) {
    case OPB_DTYPE_BF16: return ElemType::BF16;
    case OPB_DTYPE_F16: return ElemType::F16;
    case OPB_DTYPE_F8_E4M3: return ElemType::E4M3;
    default: return ElemType::F32;
    }
}

GemmPlan plan_gemm(int64_t batch, int64_t m, int64_t n, int64_t k, bool trans_a, bool trans_b, bool bias, ElemType ab,
                   ElemType d_type, ComputeType compute) {
    GemmPlan g;
    g.batch = static_cast<int32_t>(batch);
    g.bias = bias;
    g.ab_type = ab;
    g.d_type = d_type;
    g.bias_type = d_type;
    g.compute = compute;

    // First operand: the B buffer, needed as op(B)^T, an N x K column-major matrix.
    // Stored row-major [K,N] (no trans_b) it already is N x K column-major, ld N;
    // stored [N,K] (trans_b) it is K x N column-major, ld K, and must be transposed.
    g.trans_first = trans_b;
    g.first.rows = static_cast<uint64_t>(trans_b ? k : n);
    g.first.cols = static_cast<uint64_t>(trans_b ? n : k);
    g.first.ld = trans_b ? k : n;
    g.first.batch_stride = k * n;

    // Second operand: the A buffer, needed as op(A)^T, K x M column-major.
    g.trans_second = trans_a;
    g.second.rows = static_cast<uint64_t>(trans_a ? m : k);
    g.second.cols = static_cast<uint64_t>(trans_a ? k : m);
    g.second.ld = trans_a ? m : k;
    g.second.batch_stride = m * k;

    // D: row-major [M,N] is N x M column-major, ld N.
    g.d.rows = static_cast<uint64_t>(n);
    g.d.cols = static_cast<uint64_t>(m);
    g.d.ld = n;
    g.d.batch_stride = m * n;
    return g;
}

GemmPlan plan_matmul(const opb_op_desc &d) {
    const auto &p = d.p.matmul;
    const ElemType t = elem_type(d.dtype);
    const ComputeType c = d.variant == OPB_MATMUL_TF32 ? ComputeType::F32_FAST_TF32 : ComputeType::F32;
    return plan_gemm(p.batch, p.m, p.n, p.k, p.trans_a != 0, p.trans_b != 0, p.has_bias != 0, t, t, c);
}

AttentionPlan plan_attention(const opb_op_desc &d) {
    const auto &p = d.p.attention;
    AttentionPlan a;
    a.bh = p.batch * p.heads;
    a.kv_heads = attention_kv_heads(p);
    a.group = p.heads / a.kv_heads;
    a.seq_q = p.seq_q;
    a.seq_kv = p.seq_kv;
    a.scale = effective_scale(d);
    a.causal = p.causal != 0;
    const ElemType t = elem_type(d.dtype);
    // Scores in f32 whatever the inputs: the softmax then sees the GEMM's f32
    // accumulator rather than a rounded bf16/f16 copy.
    // Grouped-query: the `group` query heads that share a K/V head are
    // consecutive in Q [B,H,Sq,D], so together they are one [group*Sq, D]
    // matrix, and their scores and outputs are consecutive too. One GEMM per
    // K/V head (batch B*kv_heads, M = group*Sq) then reads each K/V head
    // once, with plain strided batches. group = 1 is ordinary attention.
    const int64_t gemm_batch = p.batch * a.kv_heads, rows = a.group * p.seq_q;
    a.scores =
        plan_gemm(gemm_batch, rows, p.seq_kv, p.head_dim, false, true, false, t, ElemType::F32, ComputeType::F32);
    a.output = plan_gemm(gemm_batch, rows, p.head_dim, p.seq_kv, false, false, false, t, t, ComputeType::F32);
    const uint64_t elems = static_cast<uint64_t>(a.bh) * p.seq_q * p.seq_kv;
    a.scores_bytes = elems * 4;
    a.probs_in_place = d.dtype == OPB_DTYPE_F32;
    a.probs_bytes = a.probs_in_place ? 0 : elems * dtype_size(d.dtype);
    return a;
}

Int8Plan plan_int8_matmul(const opb_op_desc &d) {
    const auto &p = d.p.matmul;
    Int8Plan q;
    q.gemm = plan_gemm(p.batch, p.m, p.n, p.k, p.trans_a != 0, p.trans_b != 0, false, ElemType::F32, ElemType::F32,
                       ComputeType::F32);
    q.shift_activations = p.act_dtype == OPB_DTYPE_U8;
    q.shift = int8_zero_point_shift(p.act_dtype, p.act_zero_point);
    const uint64_t batch = static_cast<uint64_t>(p.batch);
    q.shifted_bytes = q.shift_activations ? batch * p.m * p.k : 0;
    q.column_sums_bytes = q.shift != 0 ? batch * p.n * 4 : 0;
    q.acc_bytes = batch * p.m * p.n * 4;
    return q;
}

Fp8Plan plan_fp8_matmul(const opb_op_desc &d) {
    const auto &p = d.p.matmul;
    Fp8Plan f;
    f.gemm = plan_gemm(p.batch, p.m, p.n, p.k, p.trans_a != 0, p.trans_b != 0, p.has_bias != 0, ElemType::E4M3,
                       elem_type(p.out_dtype), ComputeType::F32);
    f.gemm.bias_type = ElemType::BF16;
    f.second_scale_tensor = 2; // a_scale: the A buffer is cuBLASLt's second operand
    f.first_scale_tensor = 3;  // b_scale: the B buffer is its first
    f.bias_tensor = p.has_bias ? 4 : -1;
    f.bias_bf16_bytes = p.has_bias ? uint64_t(p.n) * 2 : 0;
    return f;
}

std::string fp8_unsupported_reason(const opb_op_desc &d, int cc_major, int cc_minor) {
    const auto &p = d.p.matmul;
    if (cc_major > 0 && cc_major * 10 + cc_minor < 89)
        return "FP8 tensor cores start at sm_89 (Ada, Hopper, Blackwell: cuBLASLt FP8); this GPU is sm_" +
               std::to_string(cc_major) + std::to_string(cc_minor) + " (run it on naive, the reference)";
    if (p.trans_a || !p.trans_b)
        return "cuBLASLt's FP8 GEMM takes the TN layout only: weights stored [N, K] (trans_b = true) and "
               "activations [M, K] (trans_a = false), as a linear layer stores them; got trans_a = " +
               std::to_string(p.trans_a) + ", trans_b = " + std::to_string(p.trans_b);
    if (p.k % 16 != 0 || p.n % 16 != 0)
        return "cuBLASLt's FP8 GEMM needs K and N multiples of 16 (16-byte aligned rows of E4M3 operands); got K = " +
               std::to_string(p.k) + ", N = " + std::to_string(p.n);
    return {};
}

RopeShape rope_shape(const opb_op_desc &d) {
    const auto &p = d.p.rope;
    RopeShape s;
    s.rows_q = p.batch * p.heads * p.seq;
    s.rows_k = p.batch * rope_kv_heads(p) * p.seq;
    s.seq = p.seq;
    s.head_dim = p.head_dim;
    s.rotary_dim = rope_rotary_dim(p);
    s.position = p.position;
    s.theta = p.theta;
    s.variant = d.variant;
    return s;
}

// ---- attention fused: cuDNN SDPA graph ------------------------------------------

const char *sdpa_type_name(SdpaType t) {
    switch (t) {
    case SdpaType::Half: return "half";
    case SdpaType::BFloat16: return "bfloat16";
    case SdpaType::Float: return "float";
    case SdpaType::Int32: return "int32";
    case SdpaType::Boolean: return "boolean";
    case SdpaType::Fp8E4M3: return "fp8_e4m3";
    }
    return "?";
}

const char *sdpa_pw_name(SdpaPw m) {
    switch (m) {
    case SdpaPw::Mul: return "MUL";
    case SdpaPw::Add: return "ADD";
    case SdpaPw::Sub: return "SUB";
    case SdpaPw::Exp: return "EXP";
    case SdpaPw::Log: return "LOG";
    case SdpaPw::Div: return "DIV";
    case SdpaPw::GenIndex: return "GEN_INDEX";
    case SdpaPw::CmpGe: return "CMP_GE";
    case SdpaPw::BinarySelect: return "BINARY_SELECT";
    }
    return "?";
}

const SdpaTensor *SdpaGraph::find(int64_t uid) const {
    for (const auto &t : tensors)
        if (t.uid == uid) return &t;
    return nullptr;
}

std::vector<int64_t> SdpaGraph::bound_uids() const {
    std::vector<int64_t> u;
    for (const auto &t : tensors)
        if (!t.is_virtual) u.push_back(t.uid);
    return u;
}

SdpaBinding SdpaGraph::binding(int64_t uid) const {
    const SdpaTensor *t = find(uid);
    if (!t || t->is_virtual) return {};
    if (t->by_value) return {SdpaBinding::ByValue, 0};
    // Execute's order: Q, K, V, O; FP8: Q, K, V, q_scale, k_scale, v_scale, o_scale, O.
    switch (uid) {
    case kSdpaQ: return {SdpaBinding::ExecuteTensor, 0};
    case kSdpaK: return {SdpaBinding::ExecuteTensor, 1};
    case kSdpaV: return {SdpaBinding::ExecuteTensor, 2};
    case kSdpaO: return {SdpaBinding::ExecuteTensor, fp8 ? 7 : 3};
    case kSdpaDescaleQ: return {SdpaBinding::ExecuteTensor, 3};
    case kSdpaDescaleK: return {SdpaBinding::ExecuteTensor, 4};
    case kSdpaDescaleV: return {SdpaBinding::ExecuteTensor, 5};
    case kSdpaScaleO: return {SdpaBinding::ExecuteTensor, 6};
    case kSdpaStats: return {SdpaBinding::Stats, 0};
    case kSdpaScaleS: return {SdpaBinding::Fp8Scalar, 0};
    case kSdpaDescaleS: return {SdpaBinding::Fp8Scalar, 1};
    case kSdpaAmaxS: return {SdpaBinding::Fp8Scalar, 2};
    case kSdpaAmaxO: return {SdpaBinding::Fp8Scalar, 3};
    default: return {};
    }
}

namespace {
// FP8's own limits (cudnn-frontend, include/cudnn_frontend/node/
// sdpa_support_surface.h: its FP8 branch); empty when none applies.
std::string fp8_sdpa_unsupported_reason(const opb_op_desc &d, const SdpaEnv &env) {
    const auto &p = d.p.attention;
    if (p.head_dim % 16 != 0 || p.head_dim > 256)
        return "head_dim " + std::to_string(p.head_dim) +
               " is not a multiple of 16 up to 256 (cuDNN FP8 flash attention requirement)";
    if (p.causal && p.seq_q != p.seq_kv)
        return "causal with seq_q " + std::to_string(p.seq_q) + " != seq_kv " + std::to_string(p.seq_kv) +
               ": cuDNN's FP8 flash attention has the bottom-right causal mask on Blackwell (cuDNN 9.7+) only";
    const uint64_t v = env.cudnn_version;
    if (v != 0 && v < 90100)
        return "cuDNN " + library_version_string(v) + " is loaded; FP8 flash attention needs cuDNN 9.1 or newer";
    if (v == 91000) return "cuDNN 9.10.0 is loaded, whose FP8 flash attention forward is broken (use 9.10.1+)";
    if (env.cc_major != 0) {
        const std::string sm = "sm_" + std::to_string(env.cc_major) + std::to_string(env.cc_minor);
        if (env.cc_major < 9) return "cuDNN FP8 flash attention needs sm_90 (Hopper) or newer; this GPU is " + sm;
        if (env.cc_major >= 10 && p.head_dim > 128)
            return "head_dim " + std::to_string(p.head_dim) + " > 128: cuDNN FP8 flash attention on " + sm +
                   " takes at most 128";
    }
    return {};
}
} // namespace

std::string sdpa_unsupported_reason(const opb_op_desc &d, const SdpaEnv &env) {
    const auto &p = d.p.attention;
    if (d.dtype == OPB_DTYPE_F8_E4M3) {
        if (auto why = fp8_sdpa_unsupported_reason(d, env); !why.empty()) return why;
    } else if (d.dtype != OPB_DTYPE_BF16 && d.dtype != OPB_DTYPE_F16) {
        return "cuDNN's flash attention (SDPA) fuses bf16, f16 and f8e4m3 only, not " +
               std::string(dtype_name(d.dtype)) + " (variant composed runs it)";
    }
    if (p.head_dim % 8 != 0)
        return "head_dim " + std::to_string(p.head_dim) + " is not a multiple of 8 (cuDNN flash attention requirement)";
    if (p.head_dim > 256)
        return "head_dim " + std::to_string(p.head_dim) +
               " exceeds 256, the largest cuDNN flash attention supports for bf16/f16";
    constexpr int64_t i32max = std::numeric_limits<int32_t>::max();
    if (p.seq_q > i32max || p.seq_kv > i32max)
        return "seq_q " + std::to_string(p.seq_q) + " / seq_kv " + std::to_string(p.seq_kv) +
               " exceed int32 (the graph's row/column indices are int32)";
    const bool shift = p.causal && p.seq_q != p.seq_kv;
    if (p.causal && p.seq_q > p.seq_kv)
        return "causal with seq_q " + std::to_string(p.seq_q) + " > seq_kv " + std::to_string(p.seq_kv) +
               ": cuDNN's bottom-right causal mask requires seq_q <= seq_kv (the first " +
               std::to_string(p.seq_q - p.seq_kv) + " query rows would see no key)";
    if (env.cudnn_version != 0) {
        const uint64_t v = env.cudnn_version;
        if (v < 90000)
            return "cuDNN " + library_version_string(v) + " is loaded; this plugin builds the SDPA graph for cuDNN 9";
        if (d.dtype != OPB_DTYPE_F8_E4M3 && (v == 91000 || v == 91001))
            return "cuDNN " + library_version_string(v) + " has known bugs in bf16/f16 SDPA forward (fixed in 9.10.2)";
        if (shift && v < 90600 && (p.seq_q % 64 != 0 || p.seq_kv % 64 != 0))
            return "causal with seq_q != seq_kv (bottom-right) needs seq_q and seq_kv multiples of "
                   "64 before cuDNN 9.6; loaded cuDNN is " +
                   library_version_string(v);
    }
    if (env.cc_major != 0) {
        const std::string sm = "sm_" + std::to_string(env.cc_major) + std::to_string(env.cc_minor);
        if (env.cc_major < 8) return "cuDNN flash attention needs sm_80 (Ampere) or newer; this GPU is " + sm;
        const uint64_t v = env.cudnn_version;
        if (p.head_dim > 128 && v != 0 && ((env.cc_major == 8 && v < 91000) || (env.cc_major == 10 && v < 90900)))
            return "head_dim " + std::to_string(p.head_dim) + " > 128 on " + sm + " needs cuDNN " +
                   (env.cc_major == 8 ? "9.10" : "9.9") + " or newer; loaded cuDNN is " + library_version_string(v);
    }
    return {};
}

namespace {
SdpaTensor sdpa_tensor(int64_t uid, const char *name, SdpaType type, const int64_t (&dims)[4],
                       const int64_t (&strides)[4], bool is_virtual, bool by_value = false) {
    SdpaTensor t;
    t.uid = uid;
    t.name = name;
    t.type = type;
    for (int i = 0; i < 4; ++i) {
        t.dims[i] = dims[i];
        t.strides[i] = strides[i];
    }
    t.is_virtual = is_virtual;
    t.by_value = by_value;
    return t;
}
} // namespace

SdpaGraph plan_sdpa(const opb_op_desc &d) {
    const auto &p = d.p.attention;
    const int64_t B = p.batch, H = p.heads, KVH = attention_kv_heads(p), Sq = p.seq_q, Skv = p.seq_kv, D = p.head_dim;
    SdpaGraph g;
    g.fp8 = d.dtype == OPB_DTYPE_F8_E4M3;
    const SdpaType io = g.fp8 ? SdpaType::Fp8E4M3 : d.dtype == OPB_DTYPE_BF16 ? SdpaType::BFloat16 : SdpaType::Half;
    g.scale = effective_scale(d);
    g.causal = p.causal != 0;
    g.bottom_right_shift = g.causal && Sq != Skv && !g.fp8; // FP8: refused (sdpa_unsupported_reason)
    g.fp8_scalar_bytes = g.fp8 ? kSdpaFp8Scalars * 4 : 0;
    g.seq_q = static_cast<int32_t>(Sq);
    g.seq_kv = static_cast<int32_t>(Skv);
    g.mask_fill = std::numeric_limits<float>::lowest();
    g.stats_bytes = static_cast<uint64_t>(B * H * Sq) * 4;

    // Row-major opbench layouts (plugin.h): Q, O [B,H,Sq,D]; K, V [B,KVH,Skv,D].
    // K^T is the K buffer seen as [B,KVH,D,Skv]: swap the last two strides.
    // Grouped-query: K and V keep their KVH heads; the SDPA graph's matmuls
    // map query head h to K/V head h / (H / KVH), as cudnn_frontend's SDPA
    // node documents for GQA/MQA (H a multiple of KVH).
    const int64_t one[4] = {1, 1, 1, 1};
    g.tensors.push_back(sdpa_tensor(kSdpaQ, "Q", io, {B, H, Sq, D}, {H * Sq * D, Sq * D, D, 1}, false));
    g.tensors.push_back(sdpa_tensor(kSdpaK, "K^T", io, {B, KVH, D, Skv}, {KVH * Skv * D, Skv * D, 1, D}, false));
    g.tensors.push_back(sdpa_tensor(kSdpaV, "V", io, {B, KVH, Skv, D}, {KVH * Skv * D, Skv * D, D, 1}, false));
    g.tensors.push_back(sdpa_tensor(kSdpaO, "O", io, {B, H, Sq, D}, {H * Sq * D, Sq * D, D, 1}, false));
    g.tensors.push_back(sdpa_tensor(kSdpaStats, "stats", SdpaType::Float, {B, H, Sq, 1}, {H * Sq, Sq, 1, 1}, false));
    g.tensors.push_back(sdpa_tensor(kSdpaScale, "scale", SdpaType::Float, one, one, false, true));

    int64_t next = kSdpaFirstVirtualUid;
    const int64_t sdims[4] = {B, H, Sq, Skv}, sstr[4] = {H * Sq * Skv, Sq * Skv, Skv, 1};
    const int64_t rdims[4] = {B, H, Sq, 1}, rstr[4] = {H * Sq, Sq, 1, 1};
    auto scores = [&](const char *name, SdpaType t = SdpaType::Float) {
        g.tensors.push_back(sdpa_tensor(next, name, t, sdims, sstr, true));
        return next++;
    };
    auto rowwise = [&](const char *name) {
        g.tensors.push_back(sdpa_tensor(next, name, SdpaType::Float, rdims, rstr, true));
        return next++;
    };
    auto matmul = [&](const char *name, int64_t a, int64_t b, int64_t c) {
        SdpaOp o;
        o.kind = SdpaOpKind::Matmul;
        o.name = name;
        o.x = a, o.b = b, o.y = c;
        g.ops.push_back(o);
    };
    auto pw = [&](const char *name, SdpaPw m, int64_t x, int64_t b, int64_t y, SdpaType compute = SdpaType::Float,
                  int64_t t = 0, int64_t axis = -1) {
        SdpaOp o;
        o.kind = SdpaOpKind::Pointwise;
        o.name = name;
        o.pw = m;
        o.compute = compute;
        o.x = x, o.b = b, o.t = t, o.y = y, o.axis = axis;
        g.ops.push_back(o);
    };
    auto reduce = [&](const char *name, SdpaReduce r, int64_t x, int64_t y) {
        SdpaOp o;
        o.kind = SdpaOpKind::Reduction;
        o.name = name;
        o.reduce = r;
        o.x = x, o.y = y;
        g.ops.push_back(o);
    };

    const int64_t s = scores("S = Q.K^T");
    matmul("bmm1 Q.K^T", kSdpaQ, kSdpaK, s);
    int64_t cur = scores("S * scale");
    pw("scale", SdpaPw::Mul, s, kSdpaScale, cur);
    if (g.fp8) { // the per-tensor scales of the e4m3 scores' factors
        for (auto [uid, name] : {std::pair<int64_t, const char *>{kSdpaDescaleQ, "descale_q"},
                                 {kSdpaDescaleK, "descale_k"},
                                 {kSdpaDescaleV, "descale_v"},
                                 {kSdpaScaleO, "scale_o"},
                                 {kSdpaScaleS, "scale_s"},
                                 {kSdpaDescaleS, "descale_s"}})
            g.tensors.push_back(sdpa_tensor(uid, name, SdpaType::Float, one, one, false));
        for (auto [uid, name] : {std::pair<int64_t, const char *>{kSdpaAmaxS, "amax_s"}, {kSdpaAmaxO, "amax_o"}})
            g.tensors.push_back(sdpa_tensor(uid, name, SdpaType::Float, one, one, false));
        const int64_t dq = scores("S * descale_q");
        pw("descale_q", SdpaPw::Mul, cur, kSdpaDescaleQ, dq);
        cur = scores("S * descale_k");
        pw("descale_k", SdpaPw::Mul, dq, kSdpaDescaleK, cur);
    }

    if (g.causal) {
        g.tensors.push_back(sdpa_tensor(kSdpaMaskFill, "mask fill", SdpaType::Float, one, one, false, true));
        int64_t row = scores("row index", SdpaType::Int32);
        pw("gen row index", SdpaPw::GenIndex, cur, 0, row, SdpaType::Float, 0, 2);
        const int64_t col = scores("column index", SdpaType::Int32);
        pw("gen column index", SdpaPw::GenIndex, cur, 0, col, SdpaType::Float, 0, 3);
        if (g.bottom_right_shift) {
            g.tensors.push_back(sdpa_tensor(kSdpaSeqKv, "seq_kv", SdpaType::Int32, one, one, false, true));
            g.tensors.push_back(sdpa_tensor(kSdpaSeqQ, "seq_q", SdpaType::Int32, one, one, false, true));
            const int64_t r1 = scores("row + seq_kv", SdpaType::Int32);
            pw("row + seq_kv", SdpaPw::Add, row, kSdpaSeqKv, r1, SdpaType::Int32);
            const int64_t r2 = scores("row + seq_kv - seq_q", SdpaType::Int32);
            pw("row + seq_kv - seq_q", SdpaPw::Sub, r1, kSdpaSeqQ, r2, SdpaType::Int32);
            row = r2;
        }
        const int64_t keep = scores("row >= column", SdpaType::Boolean);
        pw("row >= column", SdpaPw::CmpGe, row, col, keep, SdpaType::Boolean);
        const int64_t masked = scores("masked S");
        pw("causal select", SdpaPw::BinarySelect, cur, kSdpaMaskFill, masked, SdpaType::Float, keep);
        cur = masked;
    }

    const int64_t mx = rowwise("row max");
    reduce("softmax max", SdpaReduce::Max, cur, mx);
    const int64_t sub = scores("S - max");
    pw("softmax sub", SdpaPw::Sub, cur, mx, sub);
    const int64_t e = scores("exp(S - max)");
    pw("softmax exp", SdpaPw::Exp, sub, 0, e);
    const int64_t z = rowwise("row sum");
    reduce("softmax sum", SdpaReduce::Add, e, z);
    const int64_t lz = rowwise("log(sum)");
    pw("softmax log", SdpaPw::Log, z, 0, lz);
    pw("softmax stats", SdpaPw::Add, mx, lz, kSdpaStats);
    // P in the I/O type: cuDNN's flash-attention engines take the second
    // matmul's A and B in one data type (cuDNN 9.14 on an H100 refused every
    // configuration with P as float: "A and B need to have the same datatype").
    // FP8: P in f32, then scaled by scale_s into e4m3 (below).
    const int64_t prob = scores("P", g.fp8 ? SdpaType::Float : io);
    pw("softmax div", SdpaPw::Div, e, z, prob);
    if (!g.fp8) {
        matmul("bmm2 P.V", prob, kSdpaV, kSdpaO);
        return g;
    }
    // FP8 (cudnn_frontend's sdpa_fp8 and matmul_fp8 nodes): amax of P, P *
    // scale_s cast to e4m3, P8.V in f32, descale_s, descale_v, amax of that,
    // scale_o cast to e4m3 into O.
    reduce("amax_s", SdpaReduce::Amax, prob, kSdpaAmaxS);
    const int64_t p8 = scores("P * scale_s (e4m3)", SdpaType::Fp8E4M3);
    pw("scale_s", SdpaPw::Mul, prob, kSdpaScaleS, p8);
    const int64_t odims[4] = {B, H, Sq, D}, ostr[4] = {H * Sq * D, Sq * D, D, 1};
    auto out = [&](const char *name) {
        g.tensors.push_back(sdpa_tensor(next, name, SdpaType::Float, odims, ostr, true));
        return next++;
    };
    const int64_t o1 = out("O = P8.V");
    matmul("bmm2 P8.V", p8, kSdpaV, o1);
    const int64_t o2 = out("O * descale_s");
    pw("descale_s", SdpaPw::Mul, o1, kSdpaDescaleS, o2);
    const int64_t o3 = out("O * descale_v");
    pw("descale_v", SdpaPw::Mul, o2, kSdpaDescaleV, o3);
    reduce("amax_o", SdpaReduce::Amax, o3, kSdpaAmaxO);
    pw("scale_o", SdpaPw::Mul, o3, kSdpaScaleO, kSdpaO);
    return g;
}

uint64_t cublaslt_workspace_limit(int cc_major) { return cc_major >= 9 ? (uint64_t{32} << 20) : (uint64_t{4} << 20); }

Launch row_launch(int64_t rows, int64_t cols) {
    Launch l;
    l.grid = static_cast<uint32_t>(rows);
    int64_t threads = (cols + 31) / 32 * 32;
    if (threads > 512) threads = 512;
    l.block = static_cast<uint32_t>(threads);
    return l;
}

Launch eltwise_launch(int64_t elements) {
    Launch l;
    l.block = 256;
    int64_t blocks = (elements + 255) / 256;
    if (blocks < 1) blocks = 1;
    if (blocks > kMaxEltwiseBlocks) blocks = kMaxEltwiseBlocks;
    l.grid = static_cast<uint32_t>(blocks);
    return l;
}

std::string cuda_version_string(int v) { return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10); }

std::string library_version_string(uint64_t v) {
    return std::to_string(v / 10000) + "." + std::to_string((v % 10000) / 100) + "." + std::to_string(v % 100);
}

std::string unavailable_reason(int driver_version, int runtime_version, int count_error, const char *error_name,
                               const char *error_text, int device_count) {
    const std::string err = count_error == 0
                                ? std::string()
                                : std::string(error_name ? error_name : "?") + ": " + (error_text ? error_text : "?");
    if (driver_version == 0)
        return "no CUDA driver: the runtime found no installed driver (libcuda.so.1); cudaGetDeviceCount: " +
               (err.empty() ? std::string("no error reported") : err);
    // An older driver is only fatal when the runtime refused it: within a
    // major version, CUDA's minor-version compatibility lets e.g. a 13.0
    // driver run a 13.1 runtime.
    if (driver_version < runtime_version && count_error != 0)
        return "driver older than runtime: the driver supports CUDA " + cuda_version_string(driver_version) +
               ", this plugin's runtime is CUDA " + cuda_version_string(runtime_version) +
               " (update the NVIDIA driver)";
    // cudaErrorNoDevice is 100 in every CUDA release.
    if (count_error == 100 || (count_error == 0 && device_count == 0))
        return "no CUDA device: the driver (CUDA " + cuda_version_string(driver_version) + ") reports no GPU" +
               (err.empty() ? std::string() : " (" + err + ")");
    if (count_error != 0) return "CUDA device query failed: " + err;
    return {};
}

std::string uuid_string(const unsigned char b[16]) {
    char s[64];
    std::snprintf(s, sizeof s, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0], b[1],
                  b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
    return s;
}

int fp32_lanes_per_sm(int major, int minor) {
    switch (major) {
    case 6: return minor == 0 ? 64 : 128; // P100: 64; Pascal consumer: 128
    case 7: return 64;                    // Volta, Turing
    case 8: return minor == 0 ? 64 : 128; // A100: 64; GA10x, Ada: 128
    case 9: return 128;                   // Hopper
    case 10:
    case 11:
    case 12: return 128; // Blackwell
    default: return 0;
    }
}

DevicePeaks theoretical_peaks(int major, int minor, int sm_count, int sm_clock_khz, int memory_clock_khz,
                              int bus_width_bits) {
    DevicePeaks p;
    const int lanes = fp32_lanes_per_sm(major, minor);
    if (lanes > 0 && sm_count > 0 && sm_clock_khz > 0)
        p.f32_gflops = double(sm_count) * lanes * 2.0 * double(sm_clock_khz) * 1e3 / 1e9;
    if (memory_clock_khz > 0 && bus_width_bits > 0)
        p.bandwidth_gbps = 2.0 * double(memory_clock_khz) * 1e3 * (double(bus_width_bits) / 8.0) / 1e9;
    return p;
}

} // namespace opbench::cuda
