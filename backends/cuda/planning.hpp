// CUDA backend — host-side planning that needs no device.
//
// Everything here is plain C++ (no CUDA header) so it is unit-tested on
// machines without a GPU: how a row-major opbench matmul maps onto cuBLASLt's
// column-major layouts, the compute type per dtype/variant, workspace sizes,
// kernel launch geometry, which library runs each op, and the wording of the
// "why this backend cannot run here" reason.
#ifndef OPBENCH_CUDA_PLANNING_HPP
#define OPBENCH_CUDA_PLANNING_HPP

#include "rope_quant_math.hpp"

#include "opbench/plugin.h"

#include <cstdint>
#include <string>
#include <vector>

namespace opbench::cuda {

// ---- which implementation runs an op ---------------------------------------

enum class Impl {
    CublasLt,            // matmul
    OwnKernel,           // softmax, layernorm, rmsnorm, gelu, silu, add, rope, quantize
    ComposedGemmSoftmax, // attention composed: cuBLASLt GEMM, own softmax kernel, cuBLASLt GEMM
    CudnnSdpa,           // attention fused: cuDNN 9 backend-API SDPA (flash attention) graph
    CublasLtInt8,        // matmul dtype s8: u8 shift, cuBLASLt s8 GEMM (s32), dequantising pass
    CublasLtFp8,         // matmul dtype f8e4m3: cuBLASLt FP8 GEMM with per-tensor scale pointers (sm_89+)
    Unsupported,
    UnknownOp, // an op this backend has no code for: sdk::unsupported_op answers it (a skip)
};

struct ImplChoice {
    Impl impl = Impl::Unsupported;
    std::string reason; // why unsupported (empty otherwise)
};

// The implementation for a description (assumed validated by validate_desc),
// or Unsupported with the reason the host should record.
ImplChoice choose_impl(const opb_op_desc &d);

// Checks beyond ops.hpp's validate_desc that come from CUDA/cuBLASLt limits
// (32-bit batch counts, grid sizes). Empty when fine.
std::string check_device_limits(const opb_op_desc &d);

// Tensors execute expects for the description (inputs then outputs).
int expected_tensor_count(const opb_op_desc &d);

// ---- cuBLASLt matmul mapping --------------------------------------------------

// Element type of a cuBLASLt matrix / compute type, without cuBLAS headers;
// backend.cpp maps these to cudaDataType_t / cublasComputeType_t.
enum class ElemType { F32, BF16, F16, E4M3 }; // E4M3: CUDA_R_8F_E4M3
enum class ComputeType { F32, F32_FAST_TF32 };

ElemType elem_type(int dtype);

struct MatrixLayout {
    uint64_t rows = 0, cols = 0; // column-major, as cuBLASLt sees it
    int64_t ld = 0;              // leading dimension (elements)
    int64_t batch_stride = 0;    // elements between consecutive batch matrices
};

// One cuBLASLt call, D = op(first) . op(second) (+ bias), column-major.
// A row-major C[M,N] = A.B is the column-major C^T[N,M] = B^T . A^T, so the
// "first" cuBLASLt operand is the opbench B buffer and the "second" the A
// buffer; transposes follow from the stored layouts.
struct GemmPlan {
    int32_t batch = 1;
    bool trans_first = false;  // CUBLASLT_MATMUL_DESC_TRANSA
    bool trans_second = false; // CUBLASLT_MATMUL_DESC_TRANSB
    MatrixLayout first, second, d;
    bool bias = false; // epilogue BIAS: vector of length d.rows (= N), shared by all batches
    ElemType ab_type = ElemType::F32, d_type = ElemType::F32;
    ElemType bias_type = ElemType::F32; // the bias vector's type (plan_gemm: d_type; FP8: BF16)
    ComputeType compute = ComputeType::F32;
};

// Plan for row-major C[b] = op(A[b]) . op(B[b]) (+ bias) with the given
// input and output element types.
GemmPlan plan_gemm(int64_t batch, int64_t m, int64_t n, int64_t k, bool trans_a, bool trans_b, bool bias, ElemType ab,
                   ElemType d, ComputeType compute);

// The matmul plan of an OPB_OP_MATMUL description.
GemmPlan plan_matmul(const opb_op_desc &d);

// Attention composed: S = Q.K^T (scores, f32) then O = P.V (P in the op's dtype).
// Grouped-query (kv_heads < heads): the GEMMs batch over B*kv_heads, each
// with M = group*Sq rows (the query heads sharing one K/V head are adjacent).
struct AttentionPlan {
    GemmPlan scores;                       // [B*kv_heads, group*Sq, Skv] f32 from Q, K (= [B*H, Sq, Skv])
    GemmPlan output;                       // [B*kv_heads, group*Sq, D] from P, V (= [B*H, Sq, D])
    int64_t bh = 0, seq_q = 0, seq_kv = 0; // the softmax runs over bh*seq_q rows
    int64_t kv_heads = 0, group = 1;       // group = heads / kv_heads query heads per K/V head
    float scale = 1.0f;
    bool causal = false;
    bool probs_in_place = false; // f32: softmax overwrites the scores
    uint64_t scores_bytes = 0;   // f32 scores
    uint64_t probs_bytes = 0;    // probabilities in the op's dtype (0 when in place)
};
AttentionPlan plan_attention(const opb_op_desc &d);

// int8 linear (matmul dtype s8) through cuBLASLt's s8 x s8 -> s32 GEMM
// (rope_quant_math.hpp): u8 activations are shifted to s8 into a scratch
// buffer, the GEMM sums them against the weights, and a dequantising pass
// adds (128 - zero point) x the weights' column sums and applies the scales.
struct Int8Plan {
    GemmPlan gemm;                  // geometry as plan_gemm (element types are s8 in, s32 out)
    bool shift_activations = false; // u8 activations: a XOR 0x80 before the GEMM
    int32_t shift = 0;              // int8_zero_point_shift: 128 - zero point (u8), 0 (s8)
    uint64_t shifted_bytes = 0;     // the shifted activations (0 when not shifted)
    uint64_t column_sums_bytes = 0; // s32 [batch, N] weight column sums (0 when shift is 0)
    uint64_t acc_bytes = 0;         // s32 [batch, M, N] GEMM output
};
Int8Plan plan_int8_matmul(const opb_op_desc &d);

// FP8 (matmul dtype f8e4m3) through cuBLASLt's FP8 GEMM (CUDA_R_8F_E4M3
// operands, f32 compute and scale type, D in f32 or bf16). C = a_scale *
// b_scale * A.B (+ bias) is D = alpha * (scale_first * first) . (scale_second
// * second) with alpha = 1: the scales go in by device pointer, and since the
// first cuBLASLt operand is opbench's B buffer, CUBLASLT_MATMUL_DESC_A_SCALE_
// POINTER is b_scale and B_SCALE_POINTER a_scale. cuBLASLt's FP8 kernels take
// the bias in bf16 for f32 and bf16 outputs alike, so a pass converts
// opbench's f32 bias (round to nearest even) into a plan buffer first.
struct Fp8Plan {
    GemmPlan gemm;                // E4M3 x E4M3 -> out_dtype, bias_type BF16
    int first_scale_tensor = 3;   // execute's tensor index behind A_SCALE_POINTER (b_scale)
    int second_scale_tensor = 2;  // behind B_SCALE_POINTER (a_scale)
    int bias_tensor = -1;         // f32 bias in execute's order; -1 when none
    uint64_t bias_bf16_bytes = 0; // the converted bias (0 when none)
};
Fp8Plan plan_fp8_matmul(const opb_op_desc &d);

// Empty when cuBLASLt's FP8 GEMM can run the description on a device of
// compute capability cc_major.cc_minor (0.0: not known, host-only checks),
// else why not: FP8 tensor cores from sm_89 (Ada, Hopper, Blackwell); the
// TN layout only (weights stored [N, K]: trans_b; activations [M, K]: no
// trans_a), as cuBLASLt's FP8 kernels on sm_89/sm_90 require; K and N
// multiples of 16 (16-byte aligned leading dimensions of E4M3 operands).
std::string fp8_unsupported_reason(const opb_op_desc &d, int cc_major, int cc_minor);

// Largest K for which cuBLASLt's s32 sum of s8 x s8 products cannot
// overflow: K * 128 * 128 <= 2^31 - 1.
inline constexpr int64_t kMaxInt8K = 131071;

// The rope kernel's shape (rope_quant_math.hpp) of an OPB_OP_ROPE description.
RopeShape rope_shape(const opb_op_desc &d);

// Upper bound on the cuBLASLt workspace offered to the heuristic, per
// NVIDIA's guidance: 32 MiB on Hopper (sm_90) and newer, 4 MiB before.
uint64_t cublaslt_workspace_limit(int cc_major);

// ---- attention fused: the cuDNN SDPA operation graph ----------------------------
//
// The graph cuDNN's fused flash-attention engine recognises (the pattern
// cudnn_frontend lowers its SDPA node to for cuDNN 9), described here without
// cuDNN headers so it is unit-tested (and executed by a host interpreter in
// cuda_planning_test); backend.cpp turns each entry into backend descriptors.
//
//   S = Q . K^T                         matmul, f32 accumulate, S virtual f32
//   S = S * scale                       pointwise MUL, scale a by-value f32
//   causal only:
//     r = gen_index(S, axis 2)          query row, int32
//     c = gen_index(S, axis 3)          key column, int32
//     r = r + seq_kv - seq_q            only when seq_q != seq_kv: bottom-right alignment
//     m = r >= c                        boolean
//     S = m ? S : lowest float          pointwise BINARY_SELECT
//   softmax: M = max(S), E = exp(S - M), Z = sum(E), stats = M + log Z, P = E / Z
//   O = P . V                           matmul, f32 accumulate, O in the op's dtype
//
// FP8 (dtype f8e4m3, ABI 1.7): the lowering of cudnn_frontend's sdpa_fp8
// node for cuDNN 9 on Hopper (NVIDIA/cudnn-frontend,
// include/cudnn_frontend/node/sdpa_fp8.h, and node/matmul_fp8.h for bmm2):
//   S = Q . K^T                         Q, K e4m3; f32 accumulate
//   S = S * scale * descale_q * descale_k   descale_q/k: opbench's q_scale, k_scale
//   causal as above (top-left only: seq_q == seq_kv, see sdpa_unsupported_reason)
//   softmax as above, P in f32
//   amax_s = amax(P)                    reduction AMAX, f32 [1,1,1,1] output
//   P8 = P * scale_s                    e4m3 (the cast): scale_s = 448
//   O' = P8 . V                         V e4m3; f32 accumulate
//   O' = O' * descale_s * descale_v     descale_s = 1/448, descale_v: v_scale
//   amax_o = amax(O')                   reduction AMAX, f32 [1,1,1,1] output
//   O = O' * scale_o                    e4m3 (the cast); scale_o: opbench's o_scale
// scale_s and descale_s are device tensors like the rest (as the frontend
// passes them), held with amax_s and amax_o in a plan buffer (kSdpaFp8Scalars).

// cuDNN data types of the graph's tensors (mapped to cudnnDataType_t in backend.cpp).
enum class SdpaType { Half, BFloat16, Float, Int32, Boolean, Fp8E4M3 };
const char *sdpa_type_name(SdpaType t);

struct SdpaTensor {
    int64_t uid = 0;
    const char *name = "";
    SdpaType type = SdpaType::Float;
    int64_t dims[4] = {1, 1, 1, 1};
    int64_t strides[4] = {1, 1, 1, 1}; // elements
    bool is_virtual = false;           // lives only inside the fused kernel
    bool by_value = false;             // a host scalar passed through the variant pack
};

enum class SdpaOpKind { Matmul, Pointwise, Reduction };
enum class SdpaPw { Mul, Add, Sub, Exp, Log, Div, GenIndex, CmpGe, BinarySelect };
enum class SdpaReduce { Max, Add, Amax };
const char *sdpa_pw_name(SdpaPw m);

// One backend operation. Matmul: C(y) = A(x) . B(b). Pointwise: y = f(x[, b][, t]).
// Reduction: y = reduce(x) over the dimensions where y has extent 1.
// Operands are tensor uids; 0 = none.
struct SdpaOp {
    SdpaOpKind kind = SdpaOpKind::Pointwise;
    const char *name = "";
    SdpaPw pw = SdpaPw::Mul;
    SdpaReduce reduce = SdpaReduce::Max;
    SdpaType compute = SdpaType::Float; // matmul/reduction compute type, pointwise math precision
    int64_t axis = -1;                  // GEN_INDEX only
    int64_t x = 0, b = 0, t = 0, y = 0;
};

// Fixed uids of the tensors execute binds (the rest are virtual, kSdpaFirstVirtualUid and up).
enum : int64_t {
    kSdpaQ = 1,
    kSdpaK = 2,
    kSdpaV = 3,
    kSdpaO = 4,
    kSdpaStats = 5,
    kSdpaScale = 6,
    kSdpaMaskFill = 7,
    kSdpaSeqKv = 8,
    kSdpaSeqQ = 9,
    // FP8 only: execute's scale tensors (opbench q/k/v/o_scale), then the plan's scalars.
    kSdpaDescaleQ = 10,
    kSdpaDescaleK = 11,
    kSdpaDescaleV = 12,
    kSdpaScaleO = 13,
    kSdpaScaleS = 14,
    kSdpaDescaleS = 15,
    kSdpaAmaxS = 16,
    kSdpaAmaxO = 17,
    kSdpaFirstVirtualUid = 100
};

// FP8: P's quantisation scale (e4m3's largest finite value, so P <= 1 spans
// its range) and its inverse, applied after P.V.
inline constexpr float kSdpaFp8ScaleS = 448.0f;
inline constexpr float kSdpaFp8DescaleS = 1.0f / 448.0f;
// The FP8 plan buffer: f32 scale_s, descale_s (written once at prepare),
// amax_s, amax_o (written by every run; nobody reads them).
inline constexpr int kSdpaFp8Scalars = 4;

// Where run_sdpa_plan finds the data of a bound uid.
struct SdpaBinding {
    enum Source { ExecuteTensor, Stats, Fp8Scalar, ByValue, None } source = None;
    int index = 0; // ExecuteTensor: execute's tensor index; Fp8Scalar: float index in the plan buffer
};

struct SdpaGraph {
    std::vector<SdpaTensor> tensors; // in creation order
    std::vector<SdpaOp> ops;         // in graph order (producers before consumers)
    float scale = 1.0f;              // value of the by-value kSdpaScale
    float mask_fill = 0.0f;          // value of kSdpaMaskFill (lowest float), causal only
    int32_t seq_q = 0, seq_kv = 0;   // values of kSdpaSeqQ / kSdpaSeqKv, bottom-right shift only
    bool causal = false;
    bool bottom_right_shift = false; // causal and seq_q != seq_kv
    bool fp8 = false;                // dtype f8e4m3: the FP8 graph (above)
    uint64_t stats_bytes = 0;        // f32 [batch, heads, seq_q, 1], held by the plan as workspace
    uint64_t fp8_scalar_bytes = 0;   // FP8: kSdpaFp8Scalars f32, held by the plan as workspace

    const SdpaTensor *find(int64_t uid) const;
    // The non-virtual tensors (device buffers and by-value scalars) the variant pack binds.
    std::vector<int64_t> bound_uids() const;
    // Where a bound uid's data is (None: not a bound uid of this graph).
    SdpaBinding binding(int64_t uid) const;
};

// The graph for a fused bf16/f16/f8e4m3 attention description (assumed supported).
SdpaGraph plan_sdpa(const opb_op_desc &d);

// What a device adds to the support decision: the loaded cuDNN's version
// (cudnnGetVersion, e.g. 91900) and the GPU's compute capability. 0 = unknown
// (host-only decisions: choose_impl).
struct SdpaEnv {
    uint64_t cudnn_version = 0;
    int cc_major = 0, cc_minor = 0;
};

// Empty when cuDNN's SDPA graph can run the description (fused attention),
// otherwise why not. FP8 (f8e4m3; cudnn-frontend's sdpa_support_surface.h):
// sm_90 or newer, cuDNN 9.1 or newer but not 9.10.0, head_dim a multiple of
// 16 and at most 256 (128 on Blackwell), causal only with seq_q == seq_kv
// (FP8's bottom-right mask needs Blackwell and cuDNN 9.7). Otherwise: dtype
// (bf16/f16/f8e4m3), head_dim (multiple of 8, at most
// 256; 128 on Ampere before cuDNN 9.10 and on Blackwell before 9.9), causal
// with seq_q > seq_kv (rows that see no key: the bottom-right mask is not
// defined there for cuDNN), bottom-right shift on cuDNN < 9.6 unless both
// lengths are multiples of 64, int32 sequence lengths, GPUs before sm_80,
// cuDNN 9.10.0/9.10.1 (known SDPA bugs).
std::string sdpa_unsupported_reason(const opb_op_desc &d, const SdpaEnv &env);

// ---- launch geometry ------------------------------------------------------------

struct Launch {
    uint32_t grid = 1;
    uint32_t block = 1;
};

// One block per row, threads striding over the columns; block a multiple of
// the warp size, at most 512 threads (enough to keep loads coalesced without
// idling threads on short rows).
Launch row_launch(int64_t rows, int64_t cols);

// Grid-stride elementwise launch: 256 threads, at most kMaxEltwiseBlocks blocks.
inline constexpr uint32_t kMaxEltwiseBlocks = 1u << 16;
Launch eltwise_launch(int64_t elements);

// ---- usability and versions ------------------------------------------------------

// Why the backend cannot run, from what the runtime answered. driver_version
// is cudaDriverGetVersion's value (0: no driver), runtime_version
// cudaRuntimeGetVersion's, count_error cudaGetDeviceCount's cudaError_t value
// (0 = success) with its name and text, device_count the count it gave.
// Empty when the device is usable.
std::string unavailable_reason(int driver_version, int runtime_version, int count_error, const char *error_name,
                               const char *error_text, int device_count);

// 13000 -> "13.0" (CUDA driver/runtime encoding: 1000*major + 10*minor).
std::string cuda_version_string(int v);
// 130100 -> "13.1.0", 91900 -> "9.19.0" (cuBLASLt / cuDNN: major*10000 + minor*100 + patch).
std::string library_version_string(uint64_t v);

// 16 UUID bytes -> "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx", as nvidia-smi prints it.
std::string uuid_string(const unsigned char bytes[16]);

// ---- device peaks for the host's roofline ----------------------------------

// FP32 FMA lanes per SM for a compute capability; 0 when not known.
int fp32_lanes_per_sm(int cc_major, int cc_minor);

// Theoretical peaks from the device's properties, reported in info()
// (peak_f32_gflops, peak_bandwidth_gbps) so the host judges a GPU case
// against the GPU's roofs: FP32 = SMs x lanes x 2 (FMA) x SM clock; DRAM =
// 2 (double data rate) x memory clock x bus width / 8. 0 where unknown.
struct DevicePeaks {
    double f32_gflops = 0;
    double bandwidth_gbps = 0;
};
DevicePeaks theoretical_peaks(int cc_major, int cc_minor, int sm_count, int sm_clock_khz, int memory_clock_khz,
                              int bus_width_bits);

} // namespace opbench::cuda

#endif // OPBENCH_CUDA_PLANNING_HPP
