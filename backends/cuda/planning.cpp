// CUDA backend — host-side planning (see planning.hpp). No CUDA headers here.
#include "planning.hpp"

#include "opbench/ops.hpp"

#include <cstdio>
#include <limits>

namespace opbench::cuda {

ImplChoice choose_impl(const opb_op_desc &d) {
    switch (d.op) {
    case OPB_OP_MATMUL:
        if (d.variant == OPB_MATMUL_TF32 && d.dtype != OPB_DTYPE_F32)
            return {Impl::Unsupported,
                    "matmul tf32: the TF32 variant applies to f32 inputs only, got " +
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
    case OPB_OP_ADD:
        return {Impl::OwnKernel, {}};
    case OPB_OP_ATTENTION:
        if (d.variant == OPB_ATTENTION_COMPOSED) return {Impl::ComposedGemmSoftmax, {}};
        if (d.dtype == OPB_DTYPE_F32)
            return {Impl::Unsupported,
                    "attention fused: cuDNN's flash attention (SDPA) takes bf16/f16 only, not f32"};
        return {Impl::Unsupported,
                "attention fused (" + std::string(dtype_name(d.dtype)) +
                    "): the cuDNN 9 SDPA graph is not implemented in this plugin yet (it could not be "
                    "written and verified without a GPU); use variant composed"};
    }
    return {Impl::Unsupported, "unknown op " + std::to_string(d.op)};
}

std::string check_device_limits(const opb_op_desc &d) {
    constexpr int64_t i32max = std::numeric_limits<int32_t>::max();
    auto too_big = [](const char *what, int64_t v, int64_t limit) {
        return std::string(what) + " = " + std::to_string(v) + " exceeds the CUDA limit of " +
               std::to_string(limit);
    };
    switch (d.op) {
    case OPB_OP_MATMUL:
        if (d.p.matmul.batch > i32max)
            return too_big("matmul batch (cuBLASLt batch count)", d.p.matmul.batch, i32max);
        break;
    case OPB_OP_SOFTMAX:
        if (d.p.softmax.batch * d.p.softmax.rows > i32max)
            return too_big("softmax batch*rows (grid size)", d.p.softmax.batch * d.p.softmax.rows,
                           i32max);
        break;
    case OPB_OP_LAYERNORM:
    case OPB_OP_RMSNORM:
        if (d.p.norm.rows > i32max) return too_big("norm rows (grid size)", d.p.norm.rows, i32max);
        break;
    case OPB_OP_ATTENTION: {
        const auto &p = d.p.attention;
        if (p.batch * p.heads > i32max)
            return too_big("attention batch*heads (cuBLASLt batch count)", p.batch * p.heads, i32max);
        if (p.batch * p.heads * p.seq_q > i32max)
            return too_big("attention batch*heads*seq_q (softmax grid size)",
                           p.batch * p.heads * p.seq_q, i32max);
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
    default: return ElemType::F32;
    }
}

GemmPlan plan_gemm(int64_t batch, int64_t m, int64_t n, int64_t k, bool trans_a, bool trans_b,
                   bool bias, ElemType ab, ElemType d_type, ComputeType compute) {
    GemmPlan g;
    g.batch = static_cast<int32_t>(batch);
    g.bias = bias;
    g.ab_type = ab;
    g.d_type = d_type;
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
    const ComputeType c =
        d.variant == OPB_MATMUL_TF32 ? ComputeType::F32_FAST_TF32 : ComputeType::F32;
    return plan_gemm(p.batch, p.m, p.n, p.k, p.trans_a != 0, p.trans_b != 0, p.has_bias != 0, t, t,
                     c);
}

AttentionPlan plan_attention(const opb_op_desc &d) {
    const auto &p = d.p.attention;
    AttentionPlan a;
    a.bh = p.batch * p.heads;
    a.seq_q = p.seq_q;
    a.seq_kv = p.seq_kv;
    a.scale = effective_scale(d);
    a.causal = p.causal != 0;
    const ElemType t = elem_type(d.dtype);
    // Scores in f32 whatever the inputs: the softmax then sees the GEMM's f32
    // accumulator rather than a rounded bf16/f16 copy.
    a.scores = plan_gemm(a.bh, p.seq_q, p.seq_kv, p.head_dim, false, true, false, t,
                         ElemType::F32, ComputeType::F32);
    a.output = plan_gemm(a.bh, p.seq_q, p.head_dim, p.seq_kv, false, false, false, t, t,
                         ComputeType::F32);
    const uint64_t elems = static_cast<uint64_t>(a.bh) * p.seq_q * p.seq_kv;
    a.scores_bytes = elems * 4;
    a.probs_in_place = d.dtype == OPB_DTYPE_F32;
    a.probs_bytes = a.probs_in_place ? 0 : elems * dtype_size(d.dtype);
    return a;
}

uint64_t cublaslt_workspace_limit(int cc_major) {
    return cc_major >= 9 ? (uint64_t{32} << 20) : (uint64_t{4} << 20);
}

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

std::string cuda_version_string(int v) {
    return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}

std::string library_version_string(uint64_t v) {
    return std::to_string(v / 10000) + "." + std::to_string((v % 10000) / 100) + "." +
           std::to_string(v % 100);
}

std::string unavailable_reason(int driver_version, int runtime_version, int count_error,
                               const char *error_name, const char *error_text, int device_count) {
    const std::string err = count_error == 0
                                ? std::string()
                                : std::string(error_name ? error_name : "?") + ": " +
                                      (error_text ? error_text : "?");
    if (driver_version == 0)
        return "no CUDA driver: the runtime found no installed driver (libcuda.so.1); cudaGetDeviceCount: " +
               (err.empty() ? std::string("no error reported") : err);
    // An older driver is only fatal when the runtime refused it: within a
    // major version, CUDA's minor-version compatibility lets e.g. a 13.0
    // driver run a 13.1 runtime.
    if (driver_version < runtime_version && count_error != 0)
        return "driver older than runtime: the driver supports CUDA " +
               cuda_version_string(driver_version) + ", this plugin's runtime is CUDA " +
               cuda_version_string(runtime_version) + " (update the NVIDIA driver)";
    // cudaErrorNoDevice is 100 in every CUDA release.
    if (count_error == 100 || (count_error == 0 && device_count == 0))
        return "no CUDA device: the driver (CUDA " + cuda_version_string(driver_version) +
               ") reports no GPU" + (err.empty() ? std::string() : " (" + err + ")");
    if (count_error != 0) return "CUDA device query failed: " + err;
    return {};
}

std::string uuid_string(const unsigned char b[16]) {
    char s[64];
    std::snprintf(s, sizeof s,
                  "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0],
                  b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13],
                  b[14], b[15]);
    return s;
}

} // namespace opbench::cuda
