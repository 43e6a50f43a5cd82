// cuda-direct-bench: cuBLASLt and cuDNN called directly, on opbench's shapes
// and with the cuda backend's timing, so that opbench/direct per shape says
// whether the plugin and the harness add anything (issue 41 item 5; as
// backends/onednn/bench does for oneDNN). README.md beside the backend says
// how to run it; scripts/cuda-direct-compare.sh runs it beside opbench.
//
// Timing, as the plugin's (backends/cuda/backend.cpp) under opbench's recipe
// (harness/measure/recipe.cpp): one non-blocking stream; per sample, when
// cold, a cudaMemsetAsync over a buffer of twice the L2 (flush_cache), then a
// start event, the call(s), a stop event, cudaEventSynchronize; the untimed
// calls first are one checked call plus --warmup. Two orders of the stop
// event: canonical (right after the launches) and opbench-order (after a
// cudaStreamSynchronize, which is where the recipe records it today).
//
// Host code only (g++): the CUDA runtime, cuBLASLt and cuDNN are C APIs.
// Everything that needs no GPU lives in direct_cases.cpp (unit-tested).
#include "direct_cases.hpp"

#include <cublasLt.h>
#include <cuda_runtime_api.h>
#include <cudnn.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>
#include <limits>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

namespace {

using namespace opbench::cuda_direct;

// A case that cannot go on: status "skipped" (the library refuses the
// problem on this device: a fact, with its reason) or "failed".
struct Stop {
    std::string status, reason;
};

void cuda_ok(cudaError_t e, const std::string &what) {
    if (e != cudaSuccess) {
        cudaGetLastError();
        throw Stop{"failed", what + ": " + cudaGetErrorName(e) + ": " + cudaGetErrorString(e)};
    }
}
void lt_ok(cublasStatus_t s, const std::string &what, const char *status = "failed") {
    if (s != CUBLAS_STATUS_SUCCESS)
        throw Stop{status, what + ": " + cublasLtGetStatusName(s) + ": " + cublasLtGetStatusString(s)};
}
void dnn_ok(cudnnStatus_t s, const std::string &what, const char *status = "skipped") {
    if (s == CUDNN_STATUS_SUCCESS) return;
    char detail[512] = {0};
    cudnnGetLastErrorString(detail, sizeof detail);
    std::string e = what + ": " + cudnnGetErrorString(s);
    if (detail[0]) e += " (" + std::string(detail) + ")";
    throw Stop{status, e};
}

struct DeviceBuffer {
    void *p = nullptr;
    std::size_t bytes = 0;
    DeviceBuffer() = default;
    DeviceBuffer(const DeviceBuffer &) = delete;
    DeviceBuffer &operator=(const DeviceBuffer &) = delete;
    ~DeviceBuffer() {
        if (p) cudaFree(p);
    }
    void alloc(std::size_t n, const char *what) {
        cuda_ok(cudaMalloc(&p, n ? n : 1), std::string("cudaMalloc ") + what + " (" + std::to_string(n) + " bytes)");
        bytes = n;
    }
    void upload(const std::vector<uint8_t> &host, const char *what) {
        alloc(host.size(), what);
        cuda_ok(cudaMemcpy(p, host.data(), host.size(), cudaMemcpyHostToDevice), std::string("upload ") + what);
    }
};

// Host bytes of n values input_value(seed, i, t) in the element type `bytes` wide.
std::vector<uint8_t> host_values(uint64_t seed, std::size_t n, Dtype t, int bytes) {
    std::vector<uint8_t> out(n * bytes);
    for (std::size_t i = 0; i < n; ++i) {
        if (bytes == 1) {
            out[i] = input_e4m3(seed, i);
        } else if (bytes == 2) {
            const uint16_t b = to_bf16_bits(static_cast<float>(input_value(seed, i, Dtype::Bf16)));
            std::memcpy(&out[i * 2], &b, 2);
        } else {
            const float f = static_cast<float>(input_value(seed, i, t));
            std::memcpy(&out[i * 4], &f, 4);
        }
    }
    return out;
}
double read_value(const std::vector<uint8_t> &host, std::size_t i, int bytes) {
    if (bytes == 2) {
        uint16_t b;
        std::memcpy(&b, &host[i * 2], 2);
        return from_bf16_bits(b);
    }
    float f;
    std::memcpy(&f, &host[i * 4], 4);
    return f;
}

struct Env {
    cudaDeviceProp prop{};
    cudaStream_t stream = nullptr;
    cudaEvent_t start = nullptr, stop = nullptr;
    cublasLtHandle_t lt = nullptr;
    cudnnHandle_t dnn = nullptr;
    std::string dnn_unavailable;
    DeviceBuffer flush;
    uint64_t lt_workspace_limit = 0;
};

// One prepared problem: launch() enqueues one call on the stream.
class Runner {
public:
    virtual ~Runner() = default;
    virtual void launch() = 0;
    // After one launch and a synchronize: the largest scaled error of a
    // sampled check against float64 (throws Stop "failed" past the tolerance).
    virtual double check() = 0;
    std::string kernel;
    uint64_t workspace_bytes = 0;
};

// ---- cuBLASLt matmul -----------------------------------------------------------------

// Row-major C[M,N] = op(A) . op(B) (+ bias) as the column-major
// C^T = op(B)^T . op(A)^T: cuBLASLt's first operand is the B buffer, its
// second the A buffer (the same mapping as the plugin's planning.cpp, written
// out again here so that this program shares no code with it).
class LtMatmul final : public Runner {
public:
    LtMatmul(Env &env, const Case &c) : env_(env), c_(c) {
        const MatmulShape &s = c.mm;
        const int cc = env.prop.major * 10 + env.prop.minor;
        if (c.dtype == Dtype::Fp8 && cc < 89)
            throw Stop{"skipped", "fp8 e4m3 GEMMs need sm_89 or newer; this GPU is sm_" + std::to_string(cc)};
        if (c.dtype == Dtype::Fp8 && (s.trans_a || !s.trans_b))
            throw Stop{"skipped", "fp8: cuBLASLt's FP8 layout is TN (B stored [N, K], A not transposed)"};
        const cudaDataType_t ab = c.dtype == Dtype::Bf16  ? CUDA_R_16BF
                                  : c.dtype == Dtype::Fp8 ? CUDA_R_8F_E4M3
                                                          : CUDA_R_32F;
        const cudaDataType_t out = output_bytes(c.dtype) == 2 ? CUDA_R_16BF : CUDA_R_32F;
        const cublasComputeType_t compute = c.dtype == Dtype::Tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
        lt_ok(cublasLtMatmulDescCreate(&desc_.d, compute, CUDA_R_32F), "cublasLtMatmulDescCreate");
        const cublasOperation_t ta = s.trans_b ? CUBLAS_OP_T : CUBLAS_OP_N;
        const cublasOperation_t tb = s.trans_a ? CUBLAS_OP_T : CUBLAS_OP_N;
        lt_ok(cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta), "set TRANSA");
        lt_ok(cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb), "set TRANSB");

        const std::size_t na = s.batch * s.m * s.k, nb = s.batch * s.k * s.n, nd = s.batch * s.m * s.n;
        a_.upload(host_values(1, na, c.dtype, operand_bytes(c.dtype)), "A");
        b_.upload(host_values(2, nb, c.dtype, operand_bytes(c.dtype)), "B");
        d_.alloc(nd * output_bytes(c.dtype), "C");
        if (s.bias) {
            bias_host_ = host_values(3, s.n, c.dtype == Dtype::Tf32 ? Dtype::F32 : c.dtype, output_bytes(c.dtype));
            bias_.upload(bias_host_, "bias");
            const cublasLtEpilogue_t epi = CUBLASLT_EPILOGUE_BIAS;
            const int64_t bias_stride = 0; // one bias vector for every batch
            void *bias_ptr = bias_.p;
            lt_ok(cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof epi),
                  "set EPILOGUE");
            lt_ok(cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &out, sizeof out),
                  "set BIAS_DATA_TYPE");
            lt_ok(cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_BIAS_BATCH_STRIDE, &bias_stride,
                                                 sizeof bias_stride),
                  "set BIAS_BATCH_STRIDE");
            lt_ok(cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias_ptr, sizeof bias_ptr),
                  "set BIAS_POINTER");
        }
        auto layout = [&](Layout &holder, cudaDataType_t t, uint64_t rows, uint64_t cols, int64_t ld, int64_t stride,
                          const char *what) {
            lt_ok(cublasLtMatrixLayoutCreate(&holder.l, t, rows, cols, ld), std::string("layout ") + what);
            cublasLtMatrixLayout_t l = holder.l;
            if (s.batch > 1) {
                const int32_t count = static_cast<int32_t>(s.batch);
                lt_ok(cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, sizeof count),
                      "set BATCH_COUNT");
                lt_ok(cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride,
                                                       sizeof stride),
                      "set STRIDED_BATCH_OFFSET");
            }
        };
        layout(first_, ab, s.trans_b ? s.k : s.n, s.trans_b ? s.n : s.k, s.trans_b ? s.k : s.n, s.k * s.n, "B");
        layout(second_, ab, s.trans_a ? s.m : s.k, s.trans_a ? s.k : s.m, s.trans_a ? s.m : s.k, s.m * s.k, "A");
        layout(dl_, out, s.n, s.m, s.n, s.m * s.n, "C");

        cublasLtMatmulPreference_t pref = nullptr;
        lt_ok(cublasLtMatmulPreferenceCreate(&pref), "cublasLtMatmulPreferenceCreate");
        const uint64_t limit = env.lt_workspace_limit;
        cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &limit, sizeof limit);
        cublasLtMatmulHeuristicResult_t result{};
        int found = 0;
        const cublasStatus_t hs =
            cublasLtMatmulAlgoGetHeuristic(env.lt, desc_, first_, second_, dl_, dl_, pref, 1, &result, &found);
        cublasLtMatmulPreferenceDestroy(pref);
        lt_ok(hs, "cublasLtMatmulAlgoGetHeuristic", "skipped");
        if (found == 0) throw Stop{"skipped", "cuBLASLt's heuristic offers no algorithm for this shape and type"};
        algo_ = result.algo;
        if (result.workspaceSize > 0) ws_.alloc(result.workspaceSize, "cuBLASLt workspace");
        workspace_bytes = result.workspaceSize;
        int id = -1, tile = -1, stages = -1, splitk = -1;
        std::size_t got = 0;
        cublasLtMatmulAlgoConfigGetAttribute(&algo_, CUBLASLT_ALGO_CONFIG_ID, &id, sizeof id, &got);
        cublasLtMatmulAlgoConfigGetAttribute(&algo_, CUBLASLT_ALGO_CONFIG_TILE_ID, &tile, sizeof tile, &got);
        cublasLtMatmulAlgoConfigGetAttribute(&algo_, CUBLASLT_ALGO_CONFIG_STAGES_ID, &stages, sizeof stages, &got);
        cublasLtMatmulAlgoConfigGetAttribute(&algo_, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, &splitk, sizeof splitk, &got);
        kernel = "cuBLASLt algo " + std::to_string(id) + " tile " + std::to_string(tile) + " stages " +
                 std::to_string(stages) + " splitK " + std::to_string(splitk) + " workspace " +
                 std::to_string(result.workspaceSize);
    }
    void launch() override {
        const float alpha = 1.0f, beta = 0.0f;
        lt_ok(cublasLtMatmul(env_.lt, desc_, &alpha, b_.p, first_, a_.p, second_, &beta, d_.p, dl_, d_.p, dl_, &algo_,
                             ws_.p, ws_.bytes, env_.stream),
              "cublasLtMatmul");
    }

    double check() override {
        const MatmulShape &s = c_.mm;
        const int ob = output_bytes(c_.dtype);
        std::vector<uint8_t> host(d_.bytes);
        cuda_ok(cudaMemcpy(host.data(), d_.p, d_.bytes, cudaMemcpyDeviceToHost), "download C");
        const Dtype in = c_.dtype;
        auto a = [&](int64_t i) { return input_value(1, i, in); };
        auto b = [&](int64_t i) { return input_value(2, i, in); };
        auto bias = [&](int64_t j) { return read_value(bias_host_, j, ob); };
        double worst = 0;
        for (int t = 0; t < 16; ++t) { // corners, then a spread of elements
            const int64_t bi = t % s.batch, i = (t * 7919 + (t & 1) * (s.m - 1)) % s.m,
                          j = (t * 104729 + (t & 2) * (s.n - 1)) % s.n;
            const RefValue r = matmul_ref(s, bi, i, j, a, b, bias);
            const double got = read_value(host, (bi * s.m + i) * s.n + j, ob);
            const double err = std::fabs(got - r.value) / (r.abs_sum + std::fabs(r.value) + 1e-30);
            if (!(err <= matmul_tolerance(c_.dtype)))
                throw Stop{"failed", "output check: C[" + std::to_string(bi) + "," + std::to_string(i) + "," +
                                         std::to_string(j) + "] = " + std::to_string(got) + ", float64 " +
                                         std::to_string(r.value) + " (scaled error " + std::to_string(err) + " > " +
                                         std::to_string(matmul_tolerance(c_.dtype)) + ")"};
            worst = std::max(worst, err);
        }
        return worst;
    }

private:
    // Destroyed by their holders, also when the constructor throws.
    struct Desc {
        cublasLtMatmulDesc_t d = nullptr;
        ~Desc() {
            if (d) cublasLtMatmulDescDestroy(d);
        }
        operator cublasLtMatmulDesc_t() const { return d; }
    };
    struct Layout {
        cublasLtMatrixLayout_t l = nullptr;
        ~Layout() {
            if (l) cublasLtMatrixLayoutDestroy(l);
        }
        operator cublasLtMatrixLayout_t() const { return l; }
    };
    Env &env_;
    Case c_;
    Desc desc_;
    Layout first_, second_, dl_;
    cublasLtMatmulAlgo_t algo_{};
    DeviceBuffer a_, b_, d_, bias_, ws_;
    std::vector<uint8_t> bias_host_;
};

// ---- cuDNN SDPA graph (backend API) -----------------------------------------------------

// The flash-attention pattern cuDNN 9's runtime-fusion engines recognise (the
// graph cudnn_frontend lowers its SDPA node to): S = Q.K^T, S *= scale,
// causal mask (gen_index row and column, row >= column, select), softmax as
// max / sub / exp / sum / div with the stats M + log Z, O = P.V with P in
// bf16. Written here from the cuDNN documentation; the plugin's own graph is
// planning.cpp plan_sdpa.
class CudnnSdpa final : public Runner {
public:
    CudnnSdpa(Env &env, const Case &c, bool stats) : env_(env), c_(c), stats_(stats) {
        const AttentionShape &s = c.at;
        if (!env.dnn) throw Stop{"skipped", "no cuDNN handle: " + env.dnn_unavailable};
        if (env.prop.major < 8) throw Stop{"skipped", "cuDNN flash attention needs sm_80 or newer"};
        if (s.seq_q != s.seq_kv)
            throw Stop{"skipped", "seq_q != seq_kv (a bottom-right causal shift) is not built in this program"};
        const int64_t B = s.batch, H = s.heads, KVH = s.kv_heads > 0 ? s.kv_heads : s.heads, Sq = s.seq_q,
                      Skv = s.seq_kv, D = s.head_dim;
        scale_ = 1.0f / std::sqrt(static_cast<float>(D));
        q_.upload(host_values(11, B * H * Sq * D, Dtype::Bf16, 2), "Q");
        k_.upload(host_values(12, B * KVH * Skv * D, Dtype::Bf16, 2), "K");
        v_.upload(host_values(13, B * KVH * Skv * D, Dtype::Bf16, 2), "V");
        o_.alloc(B * H * Sq * D * 2, "O");
        stats_buf_.alloc(B * H * Sq * 4, "softmax stats");

        enum : int64_t { kQ = 1, kK, kV, kO, kStats, kScale, kFill };
        int64_t next_uid = 100;
        const int64_t one[4] = {1, 1, 1, 1};
        const int64_t sd[4] = {B, H, Sq, Skv}, ss[4] = {H * Sq * Skv, Sq * Skv, Skv, 1};
        const int64_t rd[4] = {B, H, Sq, 1}, rs[4] = {H * Sq, Sq, 1, 1};
        auto Q = tensor(kQ, CUDNN_DATA_BFLOAT16, {B, H, Sq, D}, {H * Sq * D, Sq * D, D, 1});
        auto Kt = tensor(kK, CUDNN_DATA_BFLOAT16, {B, KVH, D, Skv}, {KVH * Skv * D, Skv * D, 1, D}); // K seen as K^T
        auto V = tensor(kV, CUDNN_DATA_BFLOAT16, {B, KVH, Skv, D}, {KVH * Skv * D, Skv * D, D, 1});
        auto O = tensor(kO, CUDNN_DATA_BFLOAT16, {B, H, Sq, D}, {H * Sq * D, Sq * D, D, 1});
        auto scale = tensor(kScale, CUDNN_DATA_FLOAT, one, one, false, true);
        auto scores = [&](cudnnDataType_t t = CUDNN_DATA_FLOAT) { return tensor(next_uid++, t, sd, ss, true); };
        auto rowwise = [&]() { return tensor(next_uid++, CUDNN_DATA_FLOAT, rd, rs, true); };

        auto S = scores();
        matmul(Q, Kt, S);
        auto cur = scores();
        pointwise(CUDNN_POINTWISE_MUL, S, scale, cur);
        if (s.causal) {
            auto fill = tensor(kFill, CUDNN_DATA_FLOAT, one, one, false, true);
            auto row = scores(CUDNN_DATA_INT32), col = scores(CUDNN_DATA_INT32);
            pointwise(CUDNN_POINTWISE_GEN_INDEX, cur, nullptr, row, CUDNN_DATA_FLOAT, 2);
            pointwise(CUDNN_POINTWISE_GEN_INDEX, cur, nullptr, col, CUDNN_DATA_FLOAT, 3);
            auto keep = scores(CUDNN_DATA_BOOLEAN);
            pointwise(CUDNN_POINTWISE_CMP_GE, row, col, keep, CUDNN_DATA_BOOLEAN);
            auto masked = scores();
            pointwise(CUDNN_POINTWISE_BINARY_SELECT, cur, fill, masked, CUDNN_DATA_FLOAT, -1, keep);
            cur = masked;
        }
        auto mx = rowwise();
        reduction(CUDNN_REDUCE_TENSOR_MAX, cur, mx);
        auto sub = scores();
        pointwise(CUDNN_POINTWISE_SUB, cur, mx, sub);
        auto e = scores();
        pointwise(CUDNN_POINTWISE_EXP, sub, nullptr, e);
        auto z = rowwise();
        reduction(CUDNN_REDUCE_TENSOR_ADD, e, z);
        if (stats_) {
            auto st = tensor(kStats, CUDNN_DATA_FLOAT, rd, rs);
            auto lz = rowwise();
            pointwise(CUDNN_POINTWISE_LOG, z, nullptr, lz);
            pointwise(CUDNN_POINTWISE_ADD, mx, lz, st);
        }
        auto P = scores(CUDNN_DATA_BFLOAT16);
        pointwise(CUDNN_POINTWISE_DIV, e, z, P);
        matmul(P, V, O);
        finalize_plan();

        // The variant pack, once: the device pointers and by-value scalars never change.
        std::vector<int64_t> uids{kQ, kK, kV, kO, kScale};
        std::vector<void *> ptrs{q_.p, k_.p, v_.p, o_.p, &scale_};
        if (s.causal) uids.push_back(kFill), ptrs.push_back(&fill_);
        if (stats_) uids.push_back(kStats), ptrs.push_back(stats_buf_.p);
        pack_ = create(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR, "variant pack");
        void *ws = ws_.p;
        set(pack_, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, int64_t(uids.size()), uids.data(),
            "variant pack");
        set(pack_, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, int64_t(ptrs.size()), ptrs.data(),
            "variant pack");
        set(pack_, CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1, &ws, "variant pack");
        dnn_ok(cudnnBackendFinalize(pack_), "finalize variant pack", "failed");
    }
    void launch() override { dnn_ok(cudnnBackendExecute(env_.dnn, plan_, pack_), "cudnnBackendExecute", "failed"); }

    double check() override {
        const AttentionShape &s = c_.at;
        std::vector<uint8_t> host(o_.bytes);
        cuda_ok(cudaMemcpy(host.data(), o_.p, o_.bytes, cudaMemcpyDeviceToHost), "download O");
        auto q = [](int64_t i) { return input_value(11, i, Dtype::Bf16); };
        auto k = [](int64_t i) { return input_value(12, i, Dtype::Bf16); };
        auto v = [](int64_t i) { return input_value(13, i, Dtype::Bf16); };
        double worst = 0;
        const int64_t rows[][3] = {{0, 0, 0},
                                   {s.batch - 1, s.heads - 1, s.seq_q - 1},
                                   {0, s.heads / 2, s.seq_q / 2},
                                   {s.batch / 2, 1 % s.heads, s.seq_q / 3}};
        for (const auto &r : rows) {
            const std::vector<double> ref = attention_row_ref(s, r[0], r[1], r[2], q, k, v);
            for (int64_t d = 0; d < s.head_dim; ++d) {
                const double got = read_value(host, ((r[0] * s.heads + r[1]) * s.seq_q + r[2]) * s.head_dim + d, 2);
                const double err = std::fabs(got - ref[d]); // |V| <= 1: errors are on the scale of 1
                if (!(err <= 2e-2))
                    throw Stop{"failed", "output check: O[" + std::to_string(r[0]) + "," + std::to_string(r[1]) + "," +
                                             std::to_string(r[2]) + "," + std::to_string(d) +
                                             "] = " + std::to_string(got) + ", float64 " + std::to_string(ref[d])};
                worst = std::max(worst, err);
            }
        }
        return worst;
    }

private:
    cudnnBackendDescriptor_t create(cudnnBackendDescriptorType_t type, const std::string &what) {
        cudnnBackendDescriptor_t d = nullptr;
        dnn_ok(cudnnBackendCreateDescriptor(type, &d), "create " + what);
        owned_.push_back(d);
        return d;
    }
    void set(cudnnBackendDescriptor_t d, cudnnBackendAttributeName_t attr, cudnnBackendAttributeType_t type,
             int64_t count, const void *value, const std::string &what) {
        dnn_ok(cudnnBackendSetAttribute(d, attr, type, count, value),
               "set attribute " + std::to_string(int(attr)) + " of " + what);
    }
    cudnnBackendDescriptor_t tensor(int64_t uid, cudnnDataType_t t, const int64_t (&dims)[4],
                                    const int64_t (&strides)[4], bool is_virtual = false, bool by_value = false) {
        const std::string what = "tensor " + std::to_string(uid);
        auto d = create(CUDNN_BACKEND_TENSOR_DESCRIPTOR, what);
        const int64_t alignment = 16;
        set(d, CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &t, what);
        set(d, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, 4, dims, what);
        set(d, CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, 4, strides, what);
        set(d, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &uid, what);
        set(d, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 1, &alignment, what);
        set(d, CUDNN_ATTR_TENSOR_IS_VIRTUAL, CUDNN_TYPE_BOOLEAN, 1, &is_virtual, what);
        if (by_value) set(d, CUDNN_ATTR_TENSOR_IS_BY_VALUE, CUDNN_TYPE_BOOLEAN, 1, &by_value, what);
        dnn_ok(cudnnBackendFinalize(d), "finalize " + what);
        return d;
    }
    void add_op(cudnnBackendDescriptor_t op, const std::string &what) {
        dnn_ok(cudnnBackendFinalize(op), "finalize " + what);
        ops_.push_back(op);
    }
    void matmul(cudnnBackendDescriptor_t a, cudnnBackendDescriptor_t b, cudnnBackendDescriptor_t c) {
        const std::string what = "matmul " + std::to_string(ops_.size());
        const cudnnDataType_t compute = CUDNN_DATA_FLOAT;
        auto mm = create(CUDNN_BACKEND_MATMUL_DESCRIPTOR, what);
        set(mm, CUDNN_ATTR_MATMUL_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &compute, what);
        dnn_ok(cudnnBackendFinalize(mm), "finalize " + what + " descriptor");
        auto op = create(CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR, what);
        set(op, CUDNN_ATTR_OPERATION_MATMUL_ADESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &a, what);
        set(op, CUDNN_ATTR_OPERATION_MATMUL_BDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &b, what);
        set(op, CUDNN_ATTR_OPERATION_MATMUL_CDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &c, what);
        set(op, CUDNN_ATTR_OPERATION_MATMUL_DESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &mm, what);
        add_op(op, what);
    }
    void pointwise(cudnnPointwiseMode_t mode, cudnnBackendDescriptor_t x, cudnnBackendDescriptor_t b,
                   cudnnBackendDescriptor_t y, cudnnDataType_t precision = CUDNN_DATA_FLOAT, int64_t axis = -1,
                   cudnnBackendDescriptor_t t = nullptr) {
        const std::string what = "pointwise " + std::to_string(int(mode)) + " (op " + std::to_string(ops_.size()) + ")";
        auto pw = create(CUDNN_BACKEND_POINTWISE_DESCRIPTOR, what);
        set(pw, CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, 1, &mode, what);
        set(pw, CUDNN_ATTR_POINTWISE_MATH_PREC, CUDNN_TYPE_DATA_TYPE, 1, &precision, what);
        if (axis >= 0) set(pw, CUDNN_ATTR_POINTWISE_AXIS, CUDNN_TYPE_INT64, 1, &axis, what);
        dnn_ok(cudnnBackendFinalize(pw), "finalize " + what + " descriptor");
        auto op = create(CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR, what);
        set(op, CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &pw, what);
        set(op, CUDNN_ATTR_OPERATION_POINTWISE_XDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &x, what);
        if (b) set(op, CUDNN_ATTR_OPERATION_POINTWISE_BDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &b, what);
        if (t) set(op, CUDNN_ATTR_OPERATION_POINTWISE_TDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &t, what);
        set(op, CUDNN_ATTR_OPERATION_POINTWISE_YDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &y, what);
        add_op(op, what);
    }
    void reduction(cudnnReduceTensorOp_t r, cudnnBackendDescriptor_t x, cudnnBackendDescriptor_t y) {
        const std::string what = "reduction " + std::to_string(int(r)) + " (op " + std::to_string(ops_.size()) + ")";
        const cudnnDataType_t compute = CUDNN_DATA_FLOAT;
        auto rd = create(CUDNN_BACKEND_REDUCTION_DESCRIPTOR, what);
        set(rd, CUDNN_ATTR_REDUCTION_OPERATOR, CUDNN_TYPE_REDUCTION_OPERATOR_TYPE, 1, &r, what);
        set(rd, CUDNN_ATTR_REDUCTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &compute, what);
        dnn_ok(cudnnBackendFinalize(rd), "finalize " + what + " descriptor");
        auto op = create(CUDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR, what);
        set(op, CUDNN_ATTR_OPERATION_REDUCTION_XDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &x, what);
        set(op, CUDNN_ATTR_OPERATION_REDUCTION_YDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &y, what);
        set(op, CUDNN_ATTR_OPERATION_REDUCTION_DESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &rd, what);
        add_op(op, what);
    }

    // Operation graph, heuristics (mode A), the first configuration that
    // finalizes as an execution plan, its workspace.
    void finalize_plan() {
        // The handle attributes of the graph and the plan: deprecated names in
        // cuDNN 9.x, still required by early 9.x releases, set by value.
        const auto graph_handle = static_cast<cudnnBackendAttributeName_t>(800);
        const auto plan_handle = static_cast<cudnnBackendAttributeName_t>(400);
        cudnnHandle_t h = env_.dnn;
        auto graph = create(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR, "operation graph");
        set(graph, graph_handle, CUDNN_TYPE_HANDLE, 1, &h, "operation graph");
        set(graph, CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, int64_t(ops_.size()), ops_.data(),
            "operation graph");
        dnn_ok(cudnnBackendFinalize(graph), "finalize operation graph");
        auto heur = create(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR, "heuristics");
        const cudnnBackendHeurMode_t mode = CUDNN_HEUR_MODE_A;
        set(heur, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &graph, "heuristics");
        set(heur, CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1, &mode, "heuristics");
        dnn_ok(cudnnBackendFinalize(heur), "finalize heuristics");
        int64_t count = 0;
        dnn_ok(cudnnBackendGetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, 0, &count,
                                        nullptr),
               "count heuristic results");
        if (count <= 0) throw Stop{"skipped", "cuDNN's heuristics offer no engine configuration for the SDPA graph"};
        std::vector<cudnnBackendDescriptor_t> cfgs;
        for (int64_t i = 0; i < count; ++i) cfgs.push_back(create(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR, "engine config"));
        dnn_ok(cudnnBackendGetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, count,
                                        &count, cfgs.data()),
               "get heuristic results");
        std::string first_refusal;
        for (int64_t i = 0; i < count && !plan_; ++i) {
            cudnnBackendDescriptor_t plan = nullptr;
            cudnnStatus_t st = cudnnBackendCreateDescriptor(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR, &plan);
            if (st == CUDNN_STATUS_SUCCESS) st = cudnnBackendSetAttribute(plan, plan_handle, CUDNN_TYPE_HANDLE, 1, &h);
            if (st == CUDNN_STATUS_SUCCESS)
                st = cudnnBackendSetAttribute(plan, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG,
                                              CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &cfgs[i]);
            if (st == CUDNN_STATUS_SUCCESS) st = cudnnBackendFinalize(plan);
            if (st == CUDNN_STATUS_SUCCESS) {
                plan_ = plan;
                owned_.push_back(plan);
                kernel =
                    "cuDNN engine config " + std::to_string(i) + " of " + std::to_string(count) + engine_of(cfgs[i]);
            } else {
                if (first_refusal.empty()) first_refusal = cudnnGetErrorString(st);
                if (plan) cudnnBackendDestroyDescriptor(plan);
            }
        }
        if (!plan_)
            throw Stop{"skipped", "none of the " + std::to_string(count) +
                                      " engine configurations finalizes as a plan; first: " + first_refusal};
        int64_t n = 0, ws = 0;
        dnn_ok(cudnnBackendGetAttribute(plan_, CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, CUDNN_TYPE_INT64, 1, &n, &ws),
               "get workspace size");
        if (ws > 0) ws_.alloc(static_cast<std::size_t>(ws), "cuDNN workspace");
        workspace_bytes = static_cast<uint64_t>(ws > 0 ? ws : 0) + stats_buf_.bytes;
    }
    std::string engine_of(cudnnBackendDescriptor_t cfg) {
        cudnnBackendDescriptor_t engine = nullptr;
        if (cudnnBackendCreateDescriptor(CUDNN_BACKEND_ENGINE_DESCRIPTOR, &engine) != CUDNN_STATUS_SUCCESS) return "";
        int64_t n = 0, index = -1;
        if (cudnnBackendGetAttribute(cfg, CUDNN_ATTR_ENGINECFG_ENGINE, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &n, &engine) ==
            CUDNN_STATUS_SUCCESS)
            cudnnBackendGetAttribute(engine, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, CUDNN_TYPE_INT64, 1, &n, &index);
        cudnnBackendDestroyDescriptor(engine);
        return index >= 0 ? " (engine " + std::to_string(index) + ")" : "";
    }

    Env &env_;
    Case c_;
    bool stats_;
    float scale_ = 1.0f, fill_ = std::numeric_limits<float>::lowest();
    DeviceBuffer q_, k_, v_, o_, stats_buf_, ws_;
    // Every descriptor created, destroyed in reverse order (also when the constructor throws).
    struct Owned : std::vector<cudnnBackendDescriptor_t> {
        ~Owned() {
            for (auto it = rbegin(); it != rend(); ++it) cudnnBackendDestroyDescriptor(*it);
        }
    } owned_;
    std::vector<cudnnBackendDescriptor_t> ops_;
    cudnnBackendDescriptor_t plan_ = nullptr, pack_ = nullptr;
};

// ---- timing ---------------------------------------------------------------------------

double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

// The repetitions of one (case, cache, timing), after --warmup untimed calls.
void measure(Env &env, Runner &r, const Options &o, Entry &e) {
    for (int i = 0; i < o.warmup; ++i) r.launch();
    cuda_ok(cudaStreamSynchronize(env.stream), "warmup");
    const bool cold = e.cache == Cache::Cold;
    const int calls = cold ? 1 : o.calls;
    e.calls_per_sample = calls;
    for (int rep = 0; rep < o.repetitions; ++rep) {
        std::vector<double> samples;
        double sampled = 0;
        const double wall0 = now();
        do {
            if (cold) cuda_ok(cudaMemsetAsync(env.flush.p, 0, env.flush.bytes, env.stream), "L2 flush (memset)");
            cuda_ok(cudaEventRecord(env.start, env.stream), "cudaEventRecord start");
            for (int k = 0; k < calls; ++k) r.launch();
            if (e.timing == Timing::OpbenchOrder) cuda_ok(cudaStreamSynchronize(env.stream), "cudaStreamSynchronize");
            cuda_ok(cudaEventRecord(env.stop, env.stream), "cudaEventRecord stop");
            cuda_ok(cudaEventSynchronize(env.stop), "cudaEventSynchronize");
            float ms = 0;
            cuda_ok(cudaEventElapsedTime(&ms, env.start, env.stop), "cudaEventElapsedTime");
            samples.push_back(double(ms) * 1e-3 / calls);
            sampled += double(ms) * 1e-3;
        } while (!sampling_done(o, samples.size(), sampled, now() - wall0));
        e.repetition_medians.push_back(median(samples));
        e.samples.push_back(static_cast<int>(samples.size()));
    }
}

std::string version3(int v) { // cuBLASLt / cuDNN: major*10000 + minor*100 + patch
    return std::to_string(v / 10000) + "." + std::to_string(v / 100 % 100) + "." + std::to_string(v % 100);
}
std::string cuda_version(int v) { return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10); }

std::string utc_now() {
    const std::time_t t = std::time(nullptr);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
    return buf;
}

// The device, or why there is none (exit 3).
std::string open_device(Env &env, Device &dev) {
    int driver = 0, runtime = 0, count = 0;
    cudaDriverGetVersion(&driver);
    cudaRuntimeGetVersion(&runtime);
    const cudaError_t ce = cudaGetDeviceCount(&count);
    if (ce != cudaSuccess || count == 0)
        return std::string("no usable GPU: cudaGetDeviceCount: ") + cudaGetErrorName(ce) + ": " +
               cudaGetErrorString(ce) + " (driver CUDA " + cuda_version(driver) + ", runtime " + cuda_version(runtime) +
               ", " + std::to_string(count) + " devices)";
    try {
        cuda_ok(cudaSetDevice(0), "cudaSetDevice(0)");
        cuda_ok(cudaGetDeviceProperties(&env.prop, 0), "cudaGetDeviceProperties");
        cuda_ok(cudaStreamCreateWithFlags(&env.stream, cudaStreamNonBlocking), "cudaStreamCreate");
        cuda_ok(cudaEventCreate(&env.start), "cudaEventCreate");
        cuda_ok(cudaEventCreate(&env.stop), "cudaEventCreate");
        lt_ok(cublasLtCreate(&env.lt), "cublasLtCreate");
        env.flush.alloc(std::max<std::size_t>(2ull * env.prop.l2CacheSize, 1ull << 20), "L2 flush buffer");
    } catch (const Stop &s) {
        return s.reason;
    }
    // cuBLASLt's workspace limit as the plugin's (NVIDIA's guidance): 32 MiB on sm_90+, 4 MiB before.
    env.lt_workspace_limit = env.prop.major >= 9 ? (32ull << 20) : (4ull << 20);
    cudnnStatus_t ds = cudnnCreate(&env.dnn);
    if (ds == CUDNN_STATUS_SUCCESS) ds = cudnnSetStream(env.dnn, env.stream);
    if (ds != CUDNN_STATUS_SUCCESS) {
        env.dnn_unavailable = cudnnGetErrorString(ds);
        if (env.dnn) cudnnDestroy(env.dnn);
        env.dnn = nullptr;
    }
    dev.name = env.prop.name;
    char uuid[64];
    const auto *u = reinterpret_cast<const unsigned char *>(env.prop.uuid.bytes);
    std::snprintf(uuid, sizeof uuid, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0],
                  u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]);
    dev.uuid = uuid;
    dev.cc = std::to_string(env.prop.major) + "." + std::to_string(env.prop.minor);
    dev.sm_count = env.prop.multiProcessorCount;
    dev.l2_bytes = env.prop.l2CacheSize;
    dev.memory_bytes = static_cast<int64_t>(env.prop.totalGlobalMem);
    int khz = 0;
    cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, 0);
    dev.sm_clock_mhz = khz / 1000;
    dev.driver = "CUDA " + cuda_version(driver);
    dev.runtime = cuda_version(runtime);
    dev.cublaslt = version3(static_cast<int>(cublasLtGetVersion()));
    dev.cudnn = version3(static_cast<int>(cudnnGetVersion()));
    return {};
}

} // namespace

int main(int argc, char **argv) {
    std::string error;
    const std::optional<Options> parsed = parse_args(argc, argv, error);
    if (!parsed) {
        std::cerr << "cuda-direct-bench: " << error << "\n" << usage_text();
        return 2;
    }
    const Options &o = *parsed;
    if (o.help) {
        std::cout << usage_text();
        return 0;
    }
    const std::vector<Case> cases = select_cases(default_cases(), o, error);
    if (!error.empty()) {
        std::cerr << "cuda-direct-bench: " << error << "\n";
        return 2;
    }
    if (o.list) {
        for (const Case &c : cases) std::cout << case_name(c, Cache::Cold, Timing::Canonical) << "\n";
        return 0;
    }

    Env env;
    Device dev;
    if (const std::string why = open_device(env, dev); !why.empty()) {
        std::cerr << "cuda-direct-bench: " << why << "\n";
        return 3;
    }
    std::printf("cuda-direct-bench: %s (sm_%s, %d SMs, L2 %lld MiB, %d MHz), %s, runtime %s, cuBLASLt %s, cuDNN %s\n",
                dev.name.c_str(), dev.cc.c_str(), dev.sm_count, static_cast<long long>(dev.l2_bytes >> 20),
                dev.sm_clock_mhz, dev.driver.c_str(), dev.runtime.c_str(), dev.cublaslt.c_str(), dev.cudnn.c_str());
    std::printf("  %zu cases; warmup %d, min_time %g s, max_time %g s, min_samples %d, repetitions %d%s\n",
                cases.size(), o.warmup, o.min_time, o.max_time, o.min_samples, o.repetitions,
                o.sdpa_stats ? "" : ", SDPA without stats");
    std::fflush(stdout);

    std::vector<Entry> entries;
    bool any_failed = false;
    for (const Case &c : cases) {
        std::unique_ptr<Runner> runner;
        Stop stopped;
        double check_error = -1;
        try {
            if (c.op == Op::Matmul)
                runner = std::make_unique<LtMatmul>(env, c);
            else
                runner = std::make_unique<CudnnSdpa>(env, c, o.sdpa_stats);
            runner->launch(); // the checked call: also the first, untimed
            cuda_ok(cudaStreamSynchronize(env.stream), "first call");
            check_error = runner->check();
        } catch (const Stop &s) {
            stopped = s;
            runner.reset();
            cudaStreamSynchronize(env.stream);
            cudaGetLastError();
        }
        for (Cache cache : o.caches)
            for (Timing timing : o.timings) {
                Entry e;
                e.c = c;
                e.cache = cache;
                e.timing = timing;
                e.name = case_name(c, cache, timing);
                e.check_error = check_error;
                if (runner) {
                    e.kernel = runner->kernel;
                    e.workspace_bytes = runner->workspace_bytes;
                    try {
                        measure(env, *runner, o, e);
                    } catch (const Stop &s) {
                        stopped = s; // and the case's remaining entries say so too
                        runner.reset();
                        cudaStreamSynchronize(env.stream);
                        cudaGetLastError();
                    }
                }
                if (!stopped.status.empty()) {
                    e.status = stopped.status;
                    e.reason = stopped.reason;
                    e.repetition_medians.clear();
                }
                any_failed = any_failed || e.status == "failed";
                std::printf("%s\n", console_line(e).c_str());
                std::fflush(stdout);
                entries.push_back(std::move(e));
            }
    }
    if (!o.out.empty()) {
        std::ofstream f(o.out);
        write_json(f, dev, o, entries, utc_now());
        f.close();
        if (!f) {
            std::cerr << "cuda-direct-bench: cannot write " << o.out << "\n";
            return 1;
        }
        std::printf("cuda-direct-bench: wrote %s (%zu entries)\n", o.out.c_str(), entries.size());
    }
    if (env.dnn) cudnnDestroy(env.dnn);
    if (env.lt) cublasLtDestroy(env.lt);
    return any_failed ? 1 : 0;
}
