// opbench SDK — C++ helpers shared by the harness and plugin authors.
//
// The op table (kOps: one OpInfo row per op, holding its name, variants,
// parameters, tensors, FLOP count, validation and verification tolerance),
// thin functions over it (op_name, op_tensors, op_flops, validate_desc, ...),
// and bf16/f16 conversions. Header-only; depends on the standard library and
// plugin.h only.
#ifndef OPBENCH_OPS_HPP
#define OPBENCH_OPS_HPP

#include "plugin.h"

#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <initializer_list>
#include <optional>
#include <string>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

namespace opbench {

// ---- dtypes -----------------------------------------------------------------

// Index = opb_dtype. s8 as an op's dtype means int8 weights (matmul only);
// u8 is an int8 matmul's activation type (and a quantize op's output), never
// an op's dtype. f8e4m3 (ABI 1.5; OCP FP8 e4m3, one byte) as an op's dtype is
// an FP8 matmul with per-tensor scales (see kMatmulParams) or (ABI 1.7) FP8
// attention (see attention_tensors).
inline constexpr std::string_view kDtypeNames[] = {"f32", "bf16", "f16", "s8", "u8", "f8e4m3"};
inline constexpr int kDtypeCount = 6;

inline std::string_view dtype_name(int dt) {
    return (dt >= 0 && dt < kDtypeCount) ? kDtypeNames[dt] : std::string_view("?");
}
inline std::optional<int> dtype_from_name(std::string_view s) {
    for (int i = 0; i < kDtypeCount; ++i)
        if (kDtypeNames[i] == s) return i;
    return std::nullopt;
}

inline std::size_t dtype_size(int dt) {
    switch (dt) {
    case OPB_DTYPE_F32: return 4;
    case OPB_DTYPE_S8:
    case OPB_DTYPE_U8:
    case OPB_DTYPE_F8_E4M3: return 1;
    default: return 2;
    }
}
inline bool is_int8_dtype(int dt) { return dt == OPB_DTYPE_S8 || dt == OPB_DTYPE_U8; }

// "" when `op` takes `dtype` as its dtype, else why not and what would be valid.
inline std::string dtype_error(int op, int dtype) {
    if ((is_int8_dtype(dtype) || dtype == OPB_DTYPE_F8_E4M3) && op == OPB_OP_QUANTIZE)
        return "a quantize op's dtype is its input's (f32, bf16 or f16); its output type is out_dtype = \"u8\", "
               "\"s8\" or \"f8e4m3\"";
    if (dtype == OPB_DTYPE_U8)
        return "u8 is an activation type, not an op's dtype: for an int8 linear layer give dtype = \"s8\" "
               "(int8 weights) with activations = \"u8\"";
    if (dtype == OPB_DTYPE_S8 && op != OPB_OP_MATMUL)
        return "dtype s8 (int8 weights) is for matmul only; this op takes f32, bf16 or f16";
    if (dtype == OPB_DTYPE_F8_E4M3 && op != OPB_OP_MATMUL && op != OPB_OP_ATTENTION)
        return "dtype f8e4m3 (FP8 with per-tensor scales) is for matmul (and linear layers) and attention only; "
               "this op takes f32, bf16 or f16";
    return {};
}

// ---- descriptions -----------------------------------------------------------

// An int8 matmul's activation quantisation when a suite does not choose:
// u8 with zero point 128 (A - 128 spans [-128, 127]) and scale 1/128, so the
// activations the host generates read as values in [-1, 1).
inline constexpr float kDefaultActScale = 1.0f / 128.0f;
inline constexpr int32_t kDefaultU8ZeroPoint = 128;

inline opb_op_desc make_desc(int op, int dtype, int variant = 0) {
    opb_op_desc d;
    std::memset(&d, 0, sizeof d);
    d.struct_size = sizeof d;
    d.abi_version = OPB_ABI_VERSION;
    d.op = op;
    d.dtype = dtype;
    d.variant = variant;
    if (op == OPB_OP_MATMUL && dtype == OPB_DTYPE_S8) {
        d.p.matmul.act_dtype = OPB_DTYPE_U8;
        d.p.matmul.act_scale = kDefaultActScale;
        d.p.matmul.act_zero_point = kDefaultU8ZeroPoint;
        d.p.matmul.out_dtype = OPB_DTYPE_F32;
    }
    if (op == OPB_OP_MATMUL && dtype == OPB_DTYPE_F8_E4M3) d.p.matmul.out_dtype = OPB_DTYPE_F32;
    if (op == OPB_OP_QUANTIZE) { // the matching int8 matmul activations
        d.p.quantize.scale = kDefaultActScale;
        d.p.quantize.zero_point = kDefaultU8ZeroPoint;
        d.p.quantize.out_dtype = OPB_DTYPE_U8;
    }
    return d;
}

// The attention/softmax scale actually applied: 0 in a description means the
// op's default (1/sqrt(head_dim) for attention, 1 for softmax).
inline float effective_scale(const opb_op_desc &d) {
    if (d.op == OPB_OP_ATTENTION)
        return d.p.attention.scale != 0.0f ? d.p.attention.scale
                                           : 1.0f / std::sqrt(static_cast<float>(d.p.attention.head_dim));
    if (d.op == OPB_OP_SOFTMAX) return d.p.softmax.scale != 0.0f ? d.p.softmax.scale : 1.0f;
    return 1.0f;
}

// Columns visible to `row` under the bottom-right aligned causal mask of a
// rows x cols score matrix (see plugin.h): c <= row + (cols - rows).
inline int64_t causal_visible(int64_t row, int64_t rows, int64_t cols) {
    int64_t last = row + (cols - rows); // last visible column index
    if (last < 0) return 0;
    return last + 1 < cols ? last + 1 : cols;
}

// K/V heads of grouped-query attention: 0 in a description (an ABI 1.0/1.1
// writer's, or a suite that did not give kv_heads) means heads.
inline int64_t attention_kv_heads(const opb_attention_params &p) { return p.kv_heads > 0 ? p.kv_heads : p.heads; }
// The K/V slice (batch * kv_heads + kv head) that the query slice
// bh = batch * heads + head reads: query head h uses K/V head h / group.
inline int64_t attention_kv_slice(const opb_attention_params &p, int64_t bh) {
    const int64_t kvh = attention_kv_heads(p), b = bh / p.heads, h = bh % p.heads;
    return b * kvh + h / (p.heads / kvh);
}
inline int64_t rope_kv_heads(const opb_rope_params &p) { return p.kv_heads > 0 ? p.kv_heads : p.heads; }
// Elements of each head that RoPE rotates: 0 means all of head_dim.
inline int64_t rope_rotary_dim(const opb_rope_params &p) { return p.rotary_dim > 0 ? p.rotary_dim : p.head_dim; }

// A quantize op to FP8 (ABI 1.7): the input of an FP8 matmul.
inline bool is_fp8_quantize(const opb_op_desc &d) {
    return d.op == OPB_OP_QUANTIZE && d.p.quantize.out_dtype == OPB_DTYPE_F8_E4M3;
}
// FP8 attention (ABI 1.7): e4m3 Q, K, V and O with per-tensor scales.
inline bool is_fp8_attention(const opb_op_desc &d) { return d.op == OPB_OP_ATTENTION && d.dtype == OPB_DTYPE_F8_E4M3; }
// The oldest plugin ABI minor that can read `d` as meant: 7 for a quantize op
// to FP8 (an older plugin may read any out_dtype but u8 as s8) and for FP8
// attention (an ABI 1.5/1.6 plugin knows the dtype but not the op's four
// scale tensors), 5 for FP8 matmul
// (dtype f8e4m3), 4 for the quantize op, 3 for int8 weights (dtype s8, whose fields an ABI 1.2 plugin does not
// know), 2 for a rope op or grouped-query attention (kv_heads != heads, a
// field an ABI 1.1 plugin does not know and would read as heads), else 0.
inline uint32_t desc_needs_abi_minor(const opb_op_desc &d) {
    if (is_fp8_quantize(d) || is_fp8_attention(d)) return 7;
    if (d.dtype == OPB_DTYPE_F8_E4M3) return 5;
    if (d.op == OPB_OP_QUANTIZE) return 4;
    if (d.dtype == OPB_DTYPE_S8) return 3;
    if (d.op == OPB_OP_ROPE) return 2;
    if (d.op == OPB_OP_ATTENTION && attention_kv_heads(d.p.attention) != d.p.attention.heads) return 2;
    return 0;
}
// "" when a plugin of ABI `plugin_abi` reads `d` as meant, else why not (the
// host then skips the case with this reason instead of calling the plugin).
inline std::string plugin_abi_gap(const opb_op_desc &d, uint32_t plugin_abi) {
    const uint32_t need = desc_needs_abi_minor(d);
    if (OPB_ABI_MINOR(plugin_abi) >= need) return {};
    return "the plugin was built against opbench ABI 1." + std::to_string(OPB_ABI_MINOR(plugin_abi)) +
           ", which predates " +
           (is_fp8_quantize(d)              ? "the quantize op to FP8 (out_dtype f8e4m3)"
            : is_fp8_attention(d)          ? "FP8 attention (dtype f8e4m3)"
            : d.dtype == OPB_DTYPE_F8_E4M3 ? "FP8 matmul (dtype f8e4m3)"
            : d.op == OPB_OP_QUANTIZE   ? "the quantize op"
            : d.dtype == OPB_DTYPE_S8 ? "int8 matmul (dtype s8)"
            : d.op == OPB_OP_ROPE     ? "the rope op"
                                    : "kv_heads (grouped-query attention)") +
           " (ABI 1." + std::to_string(need) + "); rebuild it against this SDK";
}

// Number of (row, col) pairs a (possibly causal) rows x cols score matrix keeps.
inline int64_t visible_pairs(int64_t rows, int64_t cols, bool causal) {
    if (!causal) return rows * cols;
    int64_t n = 0;
    for (int64_t r = 0; r < rows; ++r) n += causal_visible(r, rows, cols);
    return n;
}

// ---- tensors of an op -------------------------------------------------------

struct TensorSpec {
    std::string name;
    std::vector<int64_t> shape;
    bool is_output = false;
    int dtype = OPB_DTYPE_F32; // opb_dtype of the elements (the op's, but for int8 matmul's)
    int64_t elements() const {
        int64_t n = 1;
        for (auto s : shape) n *= s;
        return n;
    }
};

// The same, without allocating: what a backend's execute may use.
inline constexpr int kMaxTensorRank = 4;
inline constexpr int kMaxOpTensors = 8;
struct TensorShape {
    const char *name = "";
    int rank = 0;
    int64_t dims[kMaxTensorRank] = {};
    bool is_output = false;
    int dtype = -1; // opb_dtype; a row leaves -1 for the op's, which op_tensor_list fills in
    int64_t elements() const {
        int64_t n = 1;
        for (int i = 0; i < rank; ++i) n *= dims[i];
        return n;
    }
};
struct TensorList {
    TensorShape items[kMaxOpTensors];
    int count = 0;
    void add(const char *name, std::initializer_list<int64_t> shape, bool is_output = false, int dtype = -1) {
        TensorShape &t = items[count++];
        t.name = name;
        t.is_output = is_output;
        t.dtype = dtype;
        for (int64_t s : shape) t.dims[t.rank++] = s;
    }
    const TensorShape *begin() const { return items; }
    const TensorShape *end() const { return items + count; }
};

// ---- the op table -------------------------------------------------------------
//
// Each op is one OpInfo row in kOps (index = opb_op_kind). The harness (suite
// parser, benchmark names, result fields, verification) and the naive backend
// read these rows and know no op by name. Adding an op: its enum value and
// parameter struct in plugin.h (inside the union), a row here, a naive kernel
// in backends/naive/kernels.cpp, and tests (docs/extending.md, "Adding an op").

// What a parameter's suite values must be.
enum class ParamKind {
    Dim,     // integer > 0
    Flag,    // boolean
    Scale,   // finite number; 0 = the op's default
    PosReal, // number > 0
    Choice,  // one of ParamInfo::choices (a string); the value is its index
};

// One checked suite value of a parameter; the member of its kind is set.
struct ParamValue {
    int64_t i = 0;  // Dim; Choice: the index
    double f = 0;   // Scale, PosReal
    bool b = false; // Flag
};

// When a parameter shows in a benchmark name ("/M:64").
enum class NameRule {
    Never,
    Always,
    IfNonzero, // flags when true, numbers when not 0
};

struct ParamInfo {
    const char *key; // suite key: "m"
    ParamKind kind;
    bool required;              // a case must give it (rules across keys: OpInfo::check_keys)
    bool has_default;           // when not given, default_value is written; otherwise the field stays 0
    double default_value;       // a Flag's default is 0 or 1
    const char *conflicts_with; // a key that may not be given with this one; nullptr
    // Writes a value into the description; returns "" or what is wrong with it.
    // Parameters are written in row order, so a write may read earlier ones
    // (hidden reads heads).
    std::string (*write)(opb_op_desc &d, const ParamValue &v);
    const char *label; // benchmark-name label: "M" gives "/M:64"; nullptr = never named
    NameRule name_rule;
    const char *field; // key in a result's "params" object; nullptr = not a field
    // The value as the description holds it (flags 0/1), for names and fields.
    double (*value)(const opb_op_desc &d);
    // The value for the name when it differs from value(); nullptr = value().
    double (*name_value)(const opb_op_desc &d);
    std::span<const std::string_view> choices = {}; // Choice: the names, index = value
    // Whether the description has this parameter at all (int8 matmul's
    // activations only for dtype s8): nullptr = always. Where it has not,
    // the parameter is neither named nor a result field, and a suite giving
    // it is refused by `write`.
    bool (*applies)(const opb_op_desc &d) = nullptr;
};

struct VariantInfo {
    const char *name; // suite and result name: "tf32"
    int value;        // the variant constant in plugin.h (= its index in the row)
    // The profiling scopes the in-tree backends open inside one call of this
    // variant, in the order they run (opbench analyze shows their shares).
    // Empty: none named.
    std::span<const char *const> components = {};
    // What helps this variant when it is memory-bound near the roof (opbench
    // analyze's advice); nullptr: the op's (OpInfo::fewer_bytes).
    const char *fewer_bytes = nullptr;
};

// The largest errors verification accepts against the reference, and why:
// the normalised mean squared error over the whole output, and the largest
// point-wise error of one element (PointwiseRule below).
struct Tolerance {
    double max_nmse;
    const char *why;
    double max_pointwise = 0.0;
    const char *pointwise_why = "";
};

// The point-wise error of one element is |out - ref| / (|ref| + s), where s is
// the root mean square of the reference's row (its last axis), floored at
// kRowScaleFloor of the whole output's: relative for elements of ordinary
// size, and judged on the row's own scale where cancellation makes an element
// small (there, summation-order differences are absolute, not relative).
// The bound is the largest such error accepted, in the spirit of benchdnn's
// per-dtype thresholds: a few units of the dtype's rounding (2^-8 bf16, 2^-11
// f16, 2^-24 f32), more where implementations may round intermediates
// (attention's scores and probabilities, softmax's exp).
inline constexpr double kRowScaleFloor = 1e-3;

struct PointwiseRule {
    double max_error;
    const char *why;
};
inline PointwiseRule pointwise_tolerance(int dtype, bool rounded_intermediates, bool tf32_inputs) {
    if (tf32_inputs) return {1e-2, "tf32 rounds inputs to 11 significant bits"};
    switch (dtype) {
    case OPB_DTYPE_BF16:
        return rounded_intermediates ? PointwiseRule{0.0625, "bf16 output, bf16 intermediates (16 units of 2^-8)"}
                                     : PointwiseRule{0.0156, "bf16 output rounding (4 units of 2^-8)"};
    case OPB_DTYPE_F16:
        return rounded_intermediates ? PointwiseRule{0.0078, "f16 output, f16 intermediates (16 units of 2^-11)"}
                                     : PointwiseRule{0.002, "f16 output rounding (4 units of 2^-11)"};
    default: return {1e-5, "f32: summation order and transcendental approximations"};
    }
}

// Optional fast verification (fast_checks.hpp): judges a backend's output
// from host copies of all tensors, in execute's order (inputs, then the
// backend's outputs), far more cheaply than the reference (Freivalds' check
// for matmul, sampled exact rows for attention). The harness uses it in
// `--verify fast` and never runs the reference for such an op.
struct FastCheckArgs;
struct FastCheckResult;
using FastCheckFn = FastCheckResult (*)(const FastCheckArgs &);
inline FastCheckResult freivalds_matmul(const FastCheckArgs &a);  // defined in fast_checks.hpp
inline FastCheckResult sampled_attention(const FastCheckArgs &a); // defined in fast_checks.hpp

// Tells whether the case gave a key (used by OpInfo::check_keys).
using KeyGiven = std::function<bool(std::string_view key)>;

struct OpInfo {
    int op;                                // opb_op_kind: the row's index in kOps
    const char *name;                      // "matmul"
    std::span<const VariantInfo> variants; // index = variant constant; [0] is the default
    // Parameters in the order the suite README lists them; benchmark names
    // show them in this order. Sweep order: kParamSweepOrder.
    std::span<const ParamInfo> params;
    // Rules across keys beyond ParamInfo::required; "" when the given keys
    // are enough, else the message. nullptr: none.
    std::string (*check_keys)(const KeyGiven &given);
    // The tensors in execute's order (inputs, then outputs), as plugin.h
    // documents; allocates nothing.
    void (*tensors)(const opb_op_desc &d, TensorList &out);
    double (*flops)(const opb_op_desc &d); // conventions: "work and traffic" below
    // The op's own parameters: "" when well-formed, else what is wrong.
    // (validate_desc checks op, dtype, variant and threads first.)
    std::string (*validate)(const opb_op_desc &d);
    Tolerance (*tolerance)(const opb_op_desc &d);
    FastCheckFn fast_check; // nullptr: verification always compares with the reference
    // What helps the op when it is memory-bound near the roof (opbench
    // analyze's advice); nullptr: reuse data in cache, or a smaller dtype.
    const char *fewer_bytes = nullptr;
    // Bytes of the largest intermediate a backend may hold beyond the op's
    // tensors and count as workspace (composed attention's scores), for the
    // memory estimate before a case runs; nullptr: none.
    double (*workspace_bound)(const opb_op_desc &d) = nullptr;
};

// Parameter keys in sweep order: an earlier key varies more slowly than a
// later one (suites/README.md, "Expansion order"). A key missing here sweeps
// after all of these, in its row's order.
inline constexpr std::string_view kParamSweepOrder[] = {
    "batch",    "heads",  "kv_heads", "m",       "n",    "k",      "rows",  "cols", "seq",        "seq_q", "seq_kv",
    "head_dim", "hidden", "trans_a",  "trans_b", "bias", "causal", "scale", "eps",  "rotary_dim", "theta",
    "activations", "out_dtype"};

namespace op_rows {

// The advice for a streaming op that is memory-bound near the roof.
inline constexpr const char *kFuseAdvice =
    "fuse it into the neighbouring op (one pass over the tensor instead of two) or use a "
    "smaller dtype (bf16 halves the bytes)";

// Tolerances. Differences between correct implementations come from summation
// order (matmul, norms, softmax sums) and from where intermediates are rounded.
// An f32 result carries ~2^-24 relative error per element (NMSE ~1e-14); long
// reductions and exp/erf approximations add a few orders.
// `rounded_intermediates`: implementations may round intermediates (attention
// scores, softmax probabilities) to the low-precision dtype.
inline Tolerance dtype_tolerance(int dtype, bool rounded_intermediates) {
    Tolerance t{};
    switch (dtype) {
    case OPB_DTYPE_BF16:
        // bf16 keeps 8 mantissa bits: rounding the output alone gives NMSE
        // ~1e-5; rounded intermediates add up to ~1e-4.
        t = rounded_intermediates ? Tolerance{2e-3, "bf16 (8-bit mantissa), intermediates may be bf16"}
                                  : Tolerance{5e-4, "bf16 (8-bit mantissa) output rounding"};
        break;
    case OPB_DTYPE_F16:
        t = rounded_intermediates ? Tolerance{1e-4, "f16 (11-bit mantissa), intermediates may be f16"}
                                  : Tolerance{2e-5, "f16 (11-bit mantissa) output rounding"};
        break;
    default: t = {1e-8, "f32: summation order and transcendental approximations only"};
    }
    const PointwiseRule rule = pointwise_tolerance(dtype, rounded_intermediates, false);
    t.max_pointwise = rule.max_error;
    t.pointwise_why = rule.why;
    return t;
}
inline Tolerance output_rounding(const opb_op_desc &d) { return dtype_tolerance(d.dtype, false); }
inline Tolerance rounded_intermediates(const opb_op_desc &d) { return dtype_tolerance(d.dtype, true); }

inline std::string positive(const char *name, int64_t v) {
    return v > 0 ? std::string() : std::string(name) + " must be > 0, got " + std::to_string(v);
}
inline std::string positives(std::initializer_list<std::pair<const char *, int64_t>> dims) {
    for (auto [n, v] : dims)
        if (auto e = positive(n, v); !e.empty()) return e;
    return {};
}

// heads must be a whole number of K/V heads' groups.
inline std::string kv_heads_error(int64_t heads, int64_t kv_heads) {
    if (kv_heads > 0 && heads % kv_heads == 0) return {};
    return "heads " + std::to_string(heads) + " is not a multiple of kv_heads " + std::to_string(kv_heads) +
           " (each K/V head serves heads / kv_heads query heads: kv_heads must divide heads, e.g. 1 or " +
           std::to_string(heads) + ")";
}

// Shorthands for rows: a parameter written straight into one description field.
#define OPB_ROW_DIM(FIELD)                                                                                             \
    [](opb_op_desc &d, const ParamValue &v) {                                                                          \
        d.p.FIELD = v.i;                                                                                               \
        return std::string();                                                                                          \
    },                                                                                                                 \
        [](const opb_op_desc &d) { return double(d.p.FIELD); }
#define OPB_ROW_FLAG(FIELD)                                                                                            \
    [](opb_op_desc &d, const ParamValue &v) {                                                                          \
        d.p.FIELD = v.b ? 1 : 0;                                                                                       \
        return std::string();                                                                                          \
    },                                                                                                                 \
        [](const opb_op_desc &d) { return d.p.FIELD ? 1.0 : 0.0; }
#define OPB_ROW_REAL(FIELD)                                                                                            \
    [](opb_op_desc &d, const ParamValue &v) {                                                                          \
        d.p.FIELD = static_cast<float>(v.f);                                                                           \
        return std::string();                                                                                          \
    },                                                                                                                 \
        [](const opb_op_desc &d) { return double(d.p.FIELD); }

// Each ParamInfo below reads: {key, kind, required, has_default, default,
// conflicts_with, write, label, name_rule, field, value, name_value}; the
// OPB_ROW_* shorthands expand to `write` (and `value`, written after `field`
// through the helpers below).
struct P {
    const char *key;
    ParamKind kind;
    bool required;
    bool has_default;
    double default_value;
    const char *conflicts_with;
    std::string (*write)(opb_op_desc &, const ParamValue &);
    double (*value)(const opb_op_desc &);
    const char *label;
    NameRule name_rule;
    const char *field;
    double (*name_value)(const opb_op_desc &) = nullptr;
    std::span<const std::string_view> choices = {};
    bool (*applies)(const opb_op_desc &) = nullptr;
    constexpr operator ParamInfo() const {
        return {key,   kind,  required,  has_default, default_value, conflicts_with, write,
                label, name_rule, field, value,       name_value,    choices,        applies};
    }
};

// ---- matmul
// int8 weights (dtype s8): the activations' type and the output's are
// parameters of such a description only (ParamInfo::applies).
inline bool is_int8_matmul(const opb_op_desc &d) { return d.op == OPB_OP_MATMUL && d.dtype == OPB_DTYPE_S8; }
// FP8 (dtype f8e4m3, ABI 1.5): the tensors, in execute's order, are
//     in  A: f8e4m3 (shaped as for any matmul), in B: f8e4m3,
//     in  a_scale: f32 [1], in b_scale: f32 [1] (per-tensor scales, > 0),
//     in  bias: f32 [N] (only when has_bias), out C: out_dtype (f32 or bf16)
//     C[m, n] = a_scale * b_scale * sum_k A[m, k] * B[k, n] (+ bias[n]),
// the products exact, the sum and the rest in f32 or better. The scales are
// tensors, not parameters, so that a device backend reads them from device
// memory (cuBLASLt's A/B scale pointers). out_dtype is read as for int8.
inline bool is_fp8_matmul(const opb_op_desc &d) { return d.op == OPB_OP_MATMUL && d.dtype == OPB_DTYPE_F8_E4M3; }
inline bool has_out_dtype(const opb_op_desc &d) { return is_int8_matmul(d) || is_fp8_matmul(d); }
inline constexpr std::string_view kActivationChoices[] = {"u8", "s8"};
inline constexpr std::string_view kOutDtypeChoices[] = {"f32", "bf16"};
inline std::string int8_only(const opb_op_desc &d, const char *key) {
    return std::string("'") + key + "' is a setting of int8 weights (dtype = \"s8\"); this case's dtype is " +
           std::string(dtype_name(d.dtype));
}
inline constexpr VariantInfo kMatmulVariants[] = {{"default", OPB_MATMUL_DEFAULT}, {"tf32", OPB_MATMUL_TF32}};
inline constexpr ParamInfo kMatmulParams[] = {
    P{"batch", ParamKind::Dim, false, true, 1, nullptr, OPB_ROW_DIM(matmul.batch), "B", NameRule::Always, "B"},
    P{"m", ParamKind::Dim, true, false, 0, nullptr, OPB_ROW_DIM(matmul.m), "M", NameRule::Always, "M"},
    P{"n", ParamKind::Dim, true, false, 0, nullptr, OPB_ROW_DIM(matmul.n), "N", NameRule::Always, "N"},
    P{"k", ParamKind::Dim, true, false, 0, nullptr, OPB_ROW_DIM(matmul.k), "K", NameRule::Always, "K"},
    P{"trans_a", ParamKind::Flag, false, true, 0, nullptr, OPB_ROW_FLAG(matmul.trans_a), "tA", NameRule::IfNonzero,
      "trans_a"},
    P{"trans_b", ParamKind::Flag, false, true, 0, nullptr, OPB_ROW_FLAG(matmul.trans_b), "tB", NameRule::IfNonzero,
      "trans_b"},
    P{"bias", ParamKind::Flag, false, true, 0, nullptr, OPB_ROW_FLAG(matmul.has_bias), "bias", NameRule::IfNonzero,
      "bias"},
    // u8 (zero point 128) or s8 (zero point 0), both with scale 1/128; named when s8.
    P{"activations", ParamKind::Choice, false, false, 0, nullptr,
      [](opb_op_desc &d, const ParamValue &v) {
          if (d.dtype != OPB_DTYPE_S8) return int8_only(d, "activations");
          d.p.matmul.act_dtype = v.i == 0 ? OPB_DTYPE_U8 : OPB_DTYPE_S8;
          d.p.matmul.act_zero_point = v.i == 0 ? kDefaultU8ZeroPoint : 0;
          return std::string();
      },
      [](const opb_op_desc &d) { return d.p.matmul.act_dtype == OPB_DTYPE_S8 ? 1.0 : 0.0; }, "act",
      NameRule::IfNonzero, "activations", nullptr, kActivationChoices, is_int8_matmul},
    // C's dtype; named when bf16.
    P{"out_dtype", ParamKind::Choice, false, false, 0, nullptr,
      [](opb_op_desc &d, const ParamValue &v) {
          if (d.dtype != OPB_DTYPE_S8 && d.dtype != OPB_DTYPE_F8_E4M3)
              return std::string("'out_dtype' is a setting of int8 weights (dtype = \"s8\") and FP8 (dtype = "
                                 "\"f8e4m3\"); this case's dtype is ") +
                     std::string(dtype_name(d.dtype));
          d.p.matmul.out_dtype = v.i == 0 ? OPB_DTYPE_F32 : OPB_DTYPE_BF16;
          return std::string();
      },
      [](const opb_op_desc &d) { return d.p.matmul.out_dtype == OPB_DTYPE_BF16 ? 1.0 : 0.0; }, "out",
      NameRule::IfNonzero, "out_dtype", nullptr, kOutDtypeChoices, has_out_dtype},
};
inline void matmul_tensors(const opb_op_desc &d, TensorList &t) {
    const auto &p = d.p.matmul;
    // int8 weights: each tensor has its own dtype (plugin.h); else all the op's (-1).
    const bool q = is_int8_matmul(d);
    const int a_dt = q ? p.act_dtype : -1, b_dt = q ? int(OPB_DTYPE_S8) : -1, f32 = q ? int(OPB_DTYPE_F32) : -1;
    if (p.trans_a)
        t.add("A", {p.batch, p.k, p.m}, false, a_dt);
    else
        t.add("A", {p.batch, p.m, p.k}, false, a_dt);
    if (p.trans_b)
        t.add("B", {p.batch, p.n, p.k}, false, b_dt);
    else
        t.add("B", {p.batch, p.k, p.n}, false, b_dt);
    if (q) t.add("w_scale", {p.n}, false, f32);
    if (is_fp8_matmul(d)) { // A and B are the op's dtype (-1); per-tensor scales and bias in f32
        t.add("a_scale", {1}, false, OPB_DTYPE_F32);
        t.add("b_scale", {1}, false, OPB_DTYPE_F32);
        if (p.has_bias) t.add("bias", {p.n}, false, OPB_DTYPE_F32);
        t.add("C", {p.batch, p.m, p.n}, true, p.out_dtype);
        return;
    }
    if (p.has_bias) t.add("bias", {p.n}, false, f32);
    t.add("C", {p.batch, p.m, p.n}, true, q ? p.out_dtype : -1);
}
// int8: the integer multiply-adds count as f32's do (one multiply and one add
// per MAC), so GFLOP/s reads as GOP/s; the dequantisation is not counted.
inline double matmul_flops(const opb_op_desc &d) {
    const auto &p = d.p.matmul;
    double mnk = double(p.batch) * p.m * p.n * p.k;
    return 2.0 * mnk + (p.has_bias ? double(p.batch) * p.m * p.n : 0.0);
}
inline std::string int8_matmul_validate(const opb_op_desc &d) {
    const auto &p = d.p.matmul;
    if (d.variant != OPB_MATMUL_DEFAULT) return "int8 weights (dtype s8) have variant default only";
    if (p.act_dtype != OPB_DTYPE_U8 && p.act_dtype != OPB_DTYPE_S8)
        return "act_dtype must be u8 or s8, got " + std::string(dtype_name(p.act_dtype));
    if (!(p.act_scale > 0.0f) || !std::isfinite(p.act_scale)) return "act_scale must be > 0 and finite";
    if (p.act_dtype == OPB_DTYPE_U8 ? (p.act_zero_point < 0 || p.act_zero_point > 255) : p.act_zero_point != 0)
        return "act_zero_point must be in 0..255 for u8 activations and 0 for s8, got " +
               std::to_string(p.act_zero_point);
    if (p.out_dtype != OPB_DTYPE_F32 && p.out_dtype != OPB_DTYPE_BF16)
        return "out_dtype must be f32 or bf16, got " + std::string(dtype_name(p.out_dtype));
    return {};
}
inline std::string fp8_matmul_validate(const opb_op_desc &d) {
    if (d.variant != OPB_MATMUL_DEFAULT) return "FP8 (dtype f8e4m3) has variant default only";
    if (d.p.matmul.out_dtype != OPB_DTYPE_F32 && d.p.matmul.out_dtype != OPB_DTYPE_BF16)
        return "out_dtype must be f32 or bf16, got " + std::string(dtype_name(d.p.matmul.out_dtype));
    return {};
}
inline std::string matmul_validate(const opb_op_desc &d) {
    const auto &p = d.p.matmul;
    if (auto e = positives({{"batch", p.batch}, {"M", p.m}, {"N", p.n}, {"K", p.k}}); !e.empty()) return e;
    if (is_fp8_matmul(d)) return fp8_matmul_validate(d);
    return is_int8_matmul(d) ? int8_matmul_validate(d) : std::string();
}
// int8: the integer sum is exact in every correct implementation; what
// differs is the f32 dequantisation (a few roundings) and the output's own.
inline Tolerance int8_matmul_tolerance(const opb_op_desc &d) {
    Tolerance t = dtype_tolerance(d.p.matmul.out_dtype, false);
    t.why = d.p.matmul.out_dtype == OPB_DTYPE_BF16 ? "int8: exact s32 sum, f32 dequantisation, bf16 output rounding"
                                                   : "int8: exact s32 sum, f32 dequantisation rounding";
    return t;
}
// FP8: every implementation reads the same e4m3 bytes and scales, and each
// product of two e4m3 numbers is exact in f32; what differs is accumulation.
// Hopper's FP8 tensor cores accumulate with fewer bits than f32 (about 14
// significant bits between their f32 flushes; DeepSeek-V3 measured it), so
// the bound is 2^-7 of the row's scale point-wise (16 units of 2^-11) and
// NMSE 1e-5 (errors of 2^-14 relative, growing like sqrt(K), stay below 1e-7
// at K = 16384); a bf16 output adds its own rounding (the bf16 bounds).
inline Tolerance fp8_matmul_tolerance(const opb_op_desc &d) {
    if (d.p.matmul.out_dtype == OPB_DTYPE_BF16) {
        Tolerance t = dtype_tolerance(OPB_DTYPE_BF16, false);
        t.why = "fp8: the same e4m3 inputs, reduced-precision accumulation, bf16 output rounding";
        return t;
    }
    return {1e-5, "fp8: the same e4m3 inputs; accumulation may keep ~14 bits (FP8 tensor cores)", 0.0078125,
            "fp8: reduced-precision accumulation (16 units of 2^-11 of the row's scale)"};
}
inline Tolerance matmul_tolerance(const opb_op_desc &d) {
    if (is_int8_matmul(d)) return int8_matmul_tolerance(d);
    if (is_fp8_matmul(d)) return fp8_matmul_tolerance(d);
    if (d.variant == OPB_MATMUL_TF32) {
        const PointwiseRule rule = pointwise_tolerance(d.dtype, false, true);
        return {1e-5, "tf32 rounds inputs to a 10-bit mantissa (~1e-3 relative)", rule.max_error, rule.why};
    }
    Tolerance t = output_rounding(d);
    // An f32 matmul's summation-order error grows like sqrt(K) (onednn at
    // K = 4096 reached 2.9e-6 of the row's scale on this project's machine).
    if (d.dtype == OPB_DTYPE_F32 && d.p.matmul.k > 1024) {
        t.max_pointwise *= std::sqrt(double(d.p.matmul.k) / 1024.0);
        t.pointwise_why = "f32: summation order, growing like sqrt(K)";
    }
    return t;
}

// ---- softmax
inline constexpr VariantInfo kDefaultVariant[] = {{"default", 0}};
inline constexpr ParamInfo kSoftmaxParams[] = {
    P{"batch", ParamKind::Dim, false, true, 1, nullptr, OPB_ROW_DIM(softmax.batch), "B", NameRule::Always, "B"},
    P{"rows", ParamKind::Dim, true, false, 0, nullptr, OPB_ROW_DIM(softmax.rows), "R", NameRule::Always, "R"},
    P{"cols", ParamKind::Dim, true, false, 0, nullptr, OPB_ROW_DIM(softmax.cols), "C", NameRule::Always, "C"},
    // The field is the scale applied; the name shows the scale written, when one was.
    P{"scale", ParamKind::Scale, false, true, 0, nullptr,
      [](opb_op_desc &d, const ParamValue &v) {
          d.p.softmax.scale = static_cast<float>(v.f);
          return std::string();
      },
      [](const opb_op_desc &d) { return double(effective_scale(d)); }, "scale", NameRule::IfNonzero, "scale",
      [](const opb_op_desc &d) { return double(d.p.softmax.scale); }},
    P{"causal", ParamKind::Flag, false, true, 0, nullptr, OPB_ROW_FLAG(softmax.causal), "causal", NameRule::IfNonzero,
      "causal"},
};
inline void softmax_tensors(const opb_op_desc &d, TensorList &t) {
    const auto &p = d.p.softmax;
    t.add("x", {p.batch, p.rows, p.cols});
    t.add("y", {p.batch, p.rows, p.cols}, true);
}
inline double softmax_flops(const opb_op_desc &d) {
    // per kept element: scale, max, subtract, exp, sum, divide
    const auto &p = d.p.softmax;
    return 6.0 * double(p.batch) * double(visible_pairs(p.rows, p.cols, p.causal));
}
inline std::string softmax_validate(const opb_op_desc &d) {
    const auto &p = d.p.softmax;
    if (auto e = positives({{"batch", p.batch}, {"rows", p.rows}, {"cols", p.cols}}); !e.empty()) return e;
    return std::isfinite(p.scale) ? std::string() : std::string("scale must be finite");
}

// ---- layernorm, rmsnorm (PyTorch's LayerNorm eps; Llama's RMSNorm eps)
inline constexpr ParamInfo kLayernormParams[] = {
    P{"rows", ParamKind::Dim, true, false, 0, nullptr, OPB_ROW_DIM(norm.rows), "R", NameRule::Always, "R"},
    P{"cols", ParamKind::Dim, true, false, 0, nullptr, OPB_ROW_DIM(norm.cols), "C", NameRule::Always, "C"},
    P{"eps", ParamKind::PosReal, false, true, 1e-5, nullptr, OPB_ROW_REAL(norm.eps), nullptr, NameRule::Never, "eps"},
};
inline constexpr ParamInfo kRmsnormParams[] = {
    kLayernormParams[0],
    kLayernormParams[1],
    P{"eps", ParamKind::PosReal, false, true, 1e-6, nullptr, OPB_ROW_REAL(norm.eps), nullptr, NameRule::Never, "eps"},
};
inline void layernorm_tensors(const opb_op_desc &d, TensorList &t) {
    const auto &p = d.p.norm;
    t.add("x", {p.rows, p.cols});
    t.add("gamma", {p.cols});
    t.add("beta", {p.cols});
    t.add("y", {p.rows, p.cols}, true);
}
inline void rmsnorm_tensors(const opb_op_desc &d, TensorList &t) {
    const auto &p = d.p.norm;
    t.add("x", {p.rows, p.cols});
    t.add("gamma", {p.cols});
    t.add("y", {p.rows, p.cols}, true);
}
inline double layernorm_flops(const opb_op_desc &d) {
    // per element: sum, subtract mean, square, sum, normalise (mul), gamma (mul), beta (add)
    return 7.0 * double(d.p.norm.rows) * d.p.norm.cols;
}
inline double rmsnorm_flops(const opb_op_desc &d) {
    // per element: square, sum, normalise (mul), gamma (mul)
    return 4.0 * double(d.p.norm.rows) * d.p.norm.cols;
}
inline std::string norm_validate(const opb_op_desc &d) {
    const auto &p = d.p.norm;
    if (auto e = positives({{"rows", p.rows}, {"cols", p.cols}}); !e.empty()) return e;
    return (p.eps > 0.0f) && std::isfinite(p.eps) ? std::string() : std::string("eps must be > 0");
}

// ---- gelu, silu, add
inline constexpr VariantInfo kGeluVariants[] = {{"erf", OPB_GELU_ERF}, {"tanh", OPB_GELU_TANH}};
inline constexpr ParamInfo kEltwiseParams[] = {
    P{"rows", ParamKind::Dim, true, false, 0, nullptr, OPB_ROW_DIM(eltwise.rows), "R", NameRule::Always, "R"},
    P{"cols", ParamKind::Dim, true, false, 0, nullptr, OPB_ROW_DIM(eltwise.cols), "C", NameRule::Always, "C"},
};
inline void unary_tensors(const opb_op_desc &d, TensorList &t) {
    const auto &p = d.p.eltwise;
    t.add("x", {p.rows, p.cols});
    t.add("y", {p.rows, p.cols}, true);
}
inline void add_tensors(const opb_op_desc &d, TensorList &t) {
    const auto &p = d.p.eltwise;
    t.add("a", {p.rows, p.cols});
    t.add("b", {p.rows, p.cols});
    t.add("y", {p.rows, p.cols}, true);
}
inline double gelu_flops(const opb_op_desc &d) {
    // erf: divide, erf, add, 2 mul = 5; tanh: cube (2), fma (2), scale, tanh, add, 2 mul = 9
    return (d.variant == OPB_GELU_TANH ? 9.0 : 5.0) * double(d.p.eltwise.rows) * d.p.eltwise.cols;
}
inline double silu_flops(const opb_op_desc &d) {
    // negate, exp, add, divide
    return 4.0 * double(d.p.eltwise.rows) * d.p.eltwise.cols;
}
inline double add_flops(const opb_op_desc &d) { return double(d.p.eltwise.rows) * d.p.eltwise.cols; }
inline std::string eltwise_validate(const opb_op_desc &d) {
    return positives({{"rows", d.p.eltwise.rows}, {"cols", d.p.eltwise.cols}});
}

// ---- attention
// Composed attention's steps, as the in-tree backends scope them.
inline constexpr const char *kComposedAttentionComponents[] = {"qk", "mask", "softmax", "pv"};
inline constexpr VariantInfo kAttentionVariants[] = {
    {"composed", OPB_ATTENTION_COMPOSED, kComposedAttentionComponents,
     "use the fused variant, which never writes the seq_q x seq_kv scores to memory"},
    {"fused", OPB_ATTENTION_FUSED}};
// Composed attention may hold the seq_q x seq_kv scores in f32 and the
// probabilities beside them: twice the f32 score matrix.
inline double attention_workspace_bound(const opb_op_desc &d) {
    if (d.variant != OPB_ATTENTION_COMPOSED) return 0;
    const auto &p = d.p.attention;
    return 2.0 * 4.0 * double(p.batch) * double(p.heads) * double(p.seq_q) * double(p.seq_kv);
}
// seq sets both lengths; seq_q / seq_kv, written after it, win (decoding: seq_q = 1).
// Names show S when the lengths are equal, else Sq and Skv.
inline constexpr ParamInfo kAttentionParams[] = {
    P{"batch", ParamKind::Dim, false, true, 1, nullptr, OPB_ROW_DIM(attention.batch), "B", NameRule::Always, "B"},
    P{"heads", ParamKind::Dim, true, false, 0, nullptr, OPB_ROW_DIM(attention.heads), "H", NameRule::Always, "H"},
    // Not given: 0, read as heads. Named only when it differs from heads, so
    // multi-head cases keep their names; the field is always the K/V heads used.
    P{"kv_heads", ParamKind::Dim, false, false, 0, nullptr,
      [](opb_op_desc &d, const ParamValue &v) {
          auto &p = d.p.attention;
          if (auto e = kv_heads_error(p.heads, v.i); !e.empty()) return e;
          p.kv_heads = v.i;
          return std::string();
      },
      [](const opb_op_desc &d) { return double(attention_kv_heads(d.p.attention)); }, "KVH", NameRule::IfNonzero, "KVH",
      [](const opb_op_desc &d) {
          const auto &p = d.p.attention;
          return attention_kv_heads(p) != p.heads ? double(p.kv_heads) : 0.0;
      }},
    P{"seq", ParamKind::Dim, false, false, 0, nullptr,
      [](opb_op_desc &d, const ParamValue &v) {
          d.p.attention.seq_q = d.p.attention.seq_kv = v.i;
          return std::string();
      },
      [](const opb_op_desc &d) { return double(d.p.attention.seq_q); }, "S", NameRule::IfNonzero, nullptr,
      [](const opb_op_desc &d) {
          const auto &p = d.p.attention;
          return p.seq_q == p.seq_kv ? double(p.seq_q) : 0.0;
      }},
    P{"seq_q", ParamKind::Dim, false, false, 0, nullptr, OPB_ROW_DIM(attention.seq_q), "Sq", NameRule::IfNonzero, "Sq",
      [](const opb_op_desc &d) {
          const auto &p = d.p.attention;
          return p.seq_q != p.seq_kv ? double(p.seq_q) : 0.0;
      }},
    P{"seq_kv", ParamKind::Dim, false, false, 0, nullptr, OPB_ROW_DIM(attention.seq_kv), "Skv", NameRule::IfNonzero,
      "Skv",
      [](const opb_op_desc &d) {
          const auto &p = d.p.attention;
          return p.seq_q != p.seq_kv ? double(p.seq_kv) : 0.0;
      }},
    P{"head_dim", ParamKind::Dim, false, false, 0, nullptr, OPB_ROW_DIM(attention.head_dim), "D", NameRule::Always,
      "D"},
    P{"hidden", ParamKind::Dim, false, false, 0, "head_dim",
      [](opb_op_desc &d, const ParamValue &v) {
          auto &p = d.p.attention;
          if (v.i % p.heads != 0)
              return "hidden " + std::to_string(v.i) + " is not divisible by heads " + std::to_string(p.heads) +
                     " (head_dim = hidden / heads)";
          p.head_dim = v.i / p.heads;
          return std::string();
      },
      [](const opb_op_desc &d) { return double(d.p.attention.head_dim * d.p.attention.heads); }, nullptr,
      NameRule::Never, nullptr},
    P{"causal", ParamKind::Flag, false, true, 0, nullptr, OPB_ROW_FLAG(attention.causal), "causal", NameRule::Always,
      "causal"},
    P{"scale", ParamKind::Scale, false, true, 0, nullptr,
      [](opb_op_desc &d, const ParamValue &v) {
          d.p.attention.scale = static_cast<float>(v.f);
          return std::string();
      },
      [](const opb_op_desc &d) { return double(effective_scale(d)); }, nullptr, NameRule::Never, "scale"},
};
inline std::string attention_check_keys(const KeyGiven &given) {
    if (!given("seq") && !(given("seq_q") && given("seq_kv")))
        return "op attention needs 'seq' (or both 'seq_q' and 'seq_kv')";
    if (!given("head_dim") && !given("hidden"))
        return "op attention needs 'head_dim' or 'hidden' (head_dim = hidden / heads)";
    return {};
}
// FP8 (dtype f8e4m3, ABI 1.7): the tensors, in execute's order, are
//     in  Q, K, V: f8e4m3 (shaped as for any attention),
//     in  q_scale, k_scale, v_scale: f32 [1] (per-tensor dequantisation
//         scales, > 0: a value is its scale times its stored e4m3 number),
//     in  o_scale: f32 [1] (> 0: O's quantisation scale, the multiplier
//         that brings O into e4m3's range; 1 / o_scale dequantises O),
//     out O: f8e4m3
//     O = e4m3(o_scale * softmax(scale * (q_scale Q)(k_scale K)^T (+ causal)) (v_scale V)),
// the result rounded to f32, then to e4m3 (nearest, ties to even, saturated
// to +-448), as the quantize op does. O is e4m3, not bf16, because cuDNN's
// FP8 SDPA on Hopper writes FP8 only (a bf16/f16 O needs Blackwell and cuDNN
// 9.13: cudnn-frontend, include/cudnn_frontend/node/sdpa_support_surface.h).
// An implementation may quantise the probabilities P to e4m3 before P.V
// (cuDNN does: P * 448 in e4m3, descaled by 1/448 after the matmul) and
// accumulate with fewer bits than f32 (FP8 tensor cores); the reference
// does neither. The scales are tensors so that a device reads them from
// device memory, as FP8 matmul's a_scale and b_scale. o_scale multiplies
// (cuDNN's scale_o, TransformerEngine's scale) so that the device applies it
// as given: a divisor would cost a kernel per call for its reciprocal.
inline void attention_tensors(const opb_op_desc &d, TensorList &t) {
    const auto &p = d.p.attention;
    t.add("Q", {p.batch, p.heads, p.seq_q, p.head_dim});
    const int64_t kvh = attention_kv_heads(p); // K and V counted once per K/V head
    t.add("K", {p.batch, kvh, p.seq_kv, p.head_dim});
    t.add("V", {p.batch, kvh, p.seq_kv, p.head_dim});
    if (is_fp8_attention(d))
        for (const char *name : {"q_scale", "k_scale", "v_scale", "o_scale"}) t.add(name, {1}, false, OPB_DTYPE_F32);
    t.add("O", {p.batch, p.heads, p.seq_q, p.head_dim}, true);
}
inline double attention_flops(const opb_op_desc &d) {
    // per kept score: QK^T dot (2D), softmax (6), P.V (2D)
    const auto &p = d.p.attention;
    double pairs = double(visible_pairs(p.seq_q, p.seq_kv, p.causal));
    return double(p.batch) * p.heads * pairs * (4.0 * p.head_dim + 6.0);
}
inline std::string attention_validate(const opb_op_desc &d) {
    const auto &p = d.p.attention;
    if (auto e = positives({{"batch", p.batch},
                            {"heads", p.heads},
                            {"seq_q", p.seq_q},
                            {"seq_kv", p.seq_kv},
                            {"head_dim", p.head_dim}});
        !e.empty())
        return e;
    if (p.kv_heads < 0) return "kv_heads must be >= 0 (0 = heads), got " + std::to_string(p.kv_heads);
    if (auto e = kv_heads_error(p.heads, attention_kv_heads(p)); !e.empty()) return e;
    return std::isfinite(p.scale) ? std::string() : std::string("scale must be finite");
}
// FP8: every implementation reads the same e4m3 bytes and scales; O is
// e4m3, so two correct results differ by whole e4m3 steps (2^-4..2^-3 of
// the value) where a small difference carries an element across a rounding
// boundary. The differences come from P quantised to e4m3 (at 448, each
// probability within 2^-4 of itself) and from FP8 tensor cores' shorter
// accumulation. An emulation of the cuDNN FP8 graph (f32 scores and
// softmax, P * 448 in e4m3, f32 P.V, O cast to e4m3; cuda_planning_test
// interprets the graph itself) against the exact reference, S 1..512, D 64
// and 128, causal and not: NMSE at most 2.0e-3 (1.4e-3 typical, 0 at S = 1),
// point-wise at most 0.121 (one step). The bounds: 2.5 times that NMSE and
// two steps, leaving room for the tensor cores' shorter sums (2^-14).
inline Tolerance fp8_attention_tolerance(const opb_op_desc &) {
    return {5e-3, "fp8: e4m3 O (steps of 2^-3), P may be quantised to e4m3 (emulated NMSE <= 2.0e-3)", 0.25,
            "fp8: two e4m3 steps of O (2^-3 each): P's e4m3 rounding may carry O across a step"};
}
inline Tolerance attention_tolerance(const opb_op_desc &d) {
    return is_fp8_attention(d) ? fp8_attention_tolerance(d) : rounded_intermediates(d);
}

// ---- rope
inline constexpr VariantInfo kRopeVariants[] = {{"half_split", OPB_ROPE_HALF_SPLIT},
                                                {"interleaved", OPB_ROPE_INTERLEAVED}};
inline constexpr ParamInfo kRopeParams[] = {
    P{"batch", ParamKind::Dim, false, true, 1, nullptr, OPB_ROW_DIM(rope.batch), "B", NameRule::Always, "B"},
    P{"heads", ParamKind::Dim, true, false, 0, nullptr, OPB_ROW_DIM(rope.heads), "H", NameRule::Always, "H"},
    P{"kv_heads", ParamKind::Dim, false, false, 0, nullptr,
      [](opb_op_desc &d, const ParamValue &v) {
          auto &p = d.p.rope;
          if (auto e = kv_heads_error(p.heads, v.i); !e.empty()) return e;
          p.kv_heads = v.i;
          return std::string();
      },
      [](const opb_op_desc &d) { return double(rope_kv_heads(d.p.rope)); }, "KVH", NameRule::IfNonzero, "KVH",
      [](const opb_op_desc &d) {
          const auto &p = d.p.rope;
          return rope_kv_heads(p) != p.heads ? double(p.kv_heads) : 0.0;
      }},
    P{"seq", ParamKind::Dim, true, false, 0, nullptr, OPB_ROW_DIM(rope.seq), "S", NameRule::Always, "S"},
    P{"head_dim", ParamKind::Dim, true, false, 0, nullptr, OPB_ROW_DIM(rope.head_dim), "D", NameRule::Always, "D"},
    // Not given: 0, read as head_dim (every element rotated). Named when partial.
    P{"rotary_dim", ParamKind::Dim, false, false, 0, nullptr,
      [](opb_op_desc &d, const ParamValue &v) {
          d.p.rope.rotary_dim = v.i;
          return std::string();
      },
      [](const opb_op_desc &d) { return double(rope_rotary_dim(d.p.rope)); }, "R", NameRule::IfNonzero, "rotary_dim",
      [](const opb_op_desc &d) {
          const auto &p = d.p.rope;
          return rope_rotary_dim(p) != p.head_dim ? double(p.rotary_dim) : 0.0;
      }},
    P{"theta", ParamKind::PosReal, false, true, 10000, nullptr, OPB_ROW_REAL(rope.theta), "theta", NameRule::Always,
      "theta"},
};
inline void rope_tensors(const opb_op_desc &d, TensorList &t) {
    const auto &p = d.p.rope;
    const int64_t kvh = rope_kv_heads(p);
    t.add("Q", {p.batch, p.heads, p.seq, p.head_dim});
    t.add("K", {p.batch, kvh, p.seq, p.head_dim});
    t.add("Qr", {p.batch, p.heads, p.seq, p.head_dim}, true);
    t.add("Kr", {p.batch, kvh, p.seq, p.head_dim}, true);
}
inline double rope_flops(const opb_op_desc &d) {
    // per rotated pair: x0 cos - x1 sin, x1 cos + x0 sin = 4 mul + 2 add; the
    // angles' cos/sin are a table an implementation may precompute (not
    // counted), and the copied elements past rotary_dim are no arithmetic.
    const auto &p = d.p.rope;
    const double rows = double(p.batch) * double(p.heads + rope_kv_heads(p)) * double(p.seq);
    return rows * double(rope_rotary_dim(p) / 2) * 6.0;
}
inline std::string rope_validate(const opb_op_desc &d) {
    const auto &p = d.p.rope;
    if (auto e = positives({{"batch", p.batch}, {"heads", p.heads}, {"seq", p.seq}, {"head_dim", p.head_dim}});
        !e.empty())
        return e;
    if (p.kv_heads < 0) return "kv_heads must be >= 0 (0 = heads), got " + std::to_string(p.kv_heads);
    if (auto e = kv_heads_error(p.heads, rope_kv_heads(p)); !e.empty()) return e;
    if (p.position < 0) return "position must be >= 0, got " + std::to_string(p.position);
    const int64_t r = rope_rotary_dim(p);
    if (r < 0 || r > p.head_dim || r % 2 != 0)
        return "rotary_dim must be even and in 2.." + std::to_string(p.head_dim) + " (head_dim), got " +
               std::to_string(r);
    return (p.theta > 0.0f && std::isfinite(p.theta)) ? std::string() : std::string("theta must be > 0");
}

// ---- quantize (the activations of an int8 or FP8 linear layer)
// u8 with zero point 128 or s8 with zero point 0, both at scale 1/128, as an
// int8 matmul's activations; f8e4m3 (ABI 1.7) at the same scale, zero point
// 0 (inputs in [-1, 1) span e4m3's exponents down to its subnormals); the
// decoder workload sets its own scales.
inline constexpr std::string_view kQuantizeOutChoices[] = {"u8", "s8", "f8e4m3"};
inline constexpr int kQuantizeOutDtypes[] = {OPB_DTYPE_U8, OPB_DTYPE_S8, OPB_DTYPE_F8_E4M3};
inline constexpr ParamInfo kQuantizeParams[] = {
    P{"rows", ParamKind::Dim, true, false, 0, nullptr, OPB_ROW_DIM(quantize.rows), "R", NameRule::Always, "R"},
    P{"cols", ParamKind::Dim, true, false, 0, nullptr, OPB_ROW_DIM(quantize.cols), "C", NameRule::Always, "C"},
    // y's dtype; named when not u8.
    P{"out_dtype", ParamKind::Choice, false, false, 0, nullptr,
      [](opb_op_desc &d, const ParamValue &v) {
          d.p.quantize.out_dtype = kQuantizeOutDtypes[v.i];
          d.p.quantize.zero_point = v.i == 0 ? kDefaultU8ZeroPoint : 0;
          return std::string();
      },
      [](const opb_op_desc &d) {
          for (int i = 0; i < int(std::size(kQuantizeOutDtypes)); ++i)
              if (kQuantizeOutDtypes[i] == d.p.quantize.out_dtype) return double(i);
          return 0.0;
      },
      "out",
      NameRule::IfNonzero, "out_dtype", nullptr, kQuantizeOutChoices},
};
inline void quantize_tensors(const opb_op_desc &d, TensorList &t) {
    const auto &p = d.p.quantize;
    t.add("x", {p.rows, p.cols});
    t.add("y", {p.rows, p.cols}, true, p.out_dtype);
}
// per element: scale and shift (the rounding and saturation are not counted)
inline double quantize_flops(const opb_op_desc &d) { return 2.0 * double(d.p.quantize.rows) * d.p.quantize.cols; }
inline std::string quantize_validate(const opb_op_desc &d) {
    const auto &p = d.p.quantize;
    if (auto e = positives({{"rows", p.rows}, {"cols", p.cols}}); !e.empty()) return e;
    if (p.out_dtype != OPB_DTYPE_U8 && p.out_dtype != OPB_DTYPE_S8 && p.out_dtype != OPB_DTYPE_F8_E4M3)
        return "out_dtype must be u8, s8 or f8e4m3, got " + std::string(dtype_name(p.out_dtype));
    if (!(p.scale > 0.0f) || !std::isfinite(p.scale)) return "scale must be > 0 and finite";
    if (p.out_dtype == OPB_DTYPE_U8 ? (p.zero_point < 0 || p.zero_point > 255) : p.zero_point != 0)
        return "zero_point must be in 0..255 for u8 and 0 for s8 and f8e4m3, got " + std::to_string(p.zero_point);
    return {};
}
// x / scale may be computed as x * (1 / scale), and a product that lands
// on a rounding tie either way: one step either side of the reference, on
// rare elements. One step of a row of typical size (RMS >= ~64 steps) is a
// point-wise error <= 1/64.
// FP8: the same, with e4m3's step, at most 2^-3 of the value (3 mantissa
// bits): the point-wise error |out - ref| / (|ref| + s) stays below it.
inline Tolerance quantize_tolerance(const opb_op_desc &d) {
    if (is_fp8_quantize(d))
        return {1e-4, "fp8: a quotient at a rounding tie may land one e4m3 step either side", 0.125,
                "fp8: one e4m3 step (2^-3 of the value)"};
    return {1e-4, "int8: a value at a rounding tie may land one step either side", 0.02,
            "int8: one quantisation step"};
}

#undef OPB_ROW_DIM
#undef OPB_ROW_FLAG
#undef OPB_ROW_REAL

} // namespace op_rows

// The table: one row per op, index = opb_op_kind.
// Fields: op, name, variants, params, check_keys, tensors, flops, validate,
// tolerance, fast_check.
inline constexpr OpInfo kOps[] = {
    {OPB_OP_MATMUL, "matmul", op_rows::kMatmulVariants, op_rows::kMatmulParams, nullptr, op_rows::matmul_tensors,
     op_rows::matmul_flops, op_rows::matmul_validate, op_rows::matmul_tolerance, freivalds_matmul, nullptr, nullptr},
    {OPB_OP_SOFTMAX, "softmax", op_rows::kDefaultVariant, op_rows::kSoftmaxParams, nullptr, op_rows::softmax_tensors,
     op_rows::softmax_flops, op_rows::softmax_validate, op_rows::rounded_intermediates, nullptr, op_rows::kFuseAdvice,
     nullptr},
    {OPB_OP_LAYERNORM, "layernorm", op_rows::kDefaultVariant, op_rows::kLayernormParams, nullptr,
     op_rows::layernorm_tensors, op_rows::layernorm_flops, op_rows::norm_validate, op_rows::output_rounding, nullptr,
     op_rows::kFuseAdvice, nullptr},
    {OPB_OP_RMSNORM, "rmsnorm", op_rows::kDefaultVariant, op_rows::kRmsnormParams, nullptr, op_rows::rmsnorm_tensors,
     op_rows::rmsnorm_flops, op_rows::norm_validate, op_rows::output_rounding, nullptr, op_rows::kFuseAdvice, nullptr},
    {OPB_OP_GELU, "gelu", op_rows::kGeluVariants, op_rows::kEltwiseParams, nullptr, op_rows::unary_tensors,
     op_rows::gelu_flops, op_rows::eltwise_validate, op_rows::output_rounding, nullptr, op_rows::kFuseAdvice, nullptr},
    {OPB_OP_SILU, "silu", op_rows::kDefaultVariant, op_rows::kEltwiseParams, nullptr, op_rows::unary_tensors,
     op_rows::silu_flops, op_rows::eltwise_validate, op_rows::output_rounding, nullptr, op_rows::kFuseAdvice, nullptr},
    {OPB_OP_ADD, "add", op_rows::kDefaultVariant, op_rows::kEltwiseParams, nullptr, op_rows::add_tensors,
     op_rows::add_flops, op_rows::eltwise_validate, op_rows::output_rounding, nullptr, op_rows::kFuseAdvice, nullptr},
    {OPB_OP_ATTENTION, "attention", op_rows::kAttentionVariants, op_rows::kAttentionParams,
     op_rows::attention_check_keys, op_rows::attention_tensors, op_rows::attention_flops, op_rows::attention_validate,
     op_rows::attention_tolerance, sampled_attention, nullptr, op_rows::attention_workspace_bound},
    {OPB_OP_ROPE, "rope", op_rows::kRopeVariants, op_rows::kRopeParams, nullptr, op_rows::rope_tensors,
     op_rows::rope_flops, op_rows::rope_validate, op_rows::output_rounding, nullptr, op_rows::kFuseAdvice, nullptr},
    {OPB_OP_QUANTIZE, "quantize", op_rows::kDefaultVariant, op_rows::kQuantizeParams, nullptr,
     op_rows::quantize_tensors, op_rows::quantize_flops, op_rows::quantize_validate, op_rows::quantize_tolerance,
     nullptr, op_rows::kFuseAdvice, nullptr},
};
static_assert(std::size(kOps) == OPB_OP_COUNT, "one kOps row per opb_op_kind");
static_assert(
    [] {
        for (int i = 0; i < OPB_OP_COUNT; ++i) {
            if (kOps[i].op != i) return false;
            for (std::size_t v = 0; v < kOps[i].variants.size(); ++v)
                if (kOps[i].variants[v].value != static_cast<int>(v)) return false;
        }
        return true;
    }(),
    "kOps rows are in opb_op_kind order, and each row's variants in constant order");

// The row of `op`, or nullptr for an op this SDK does not know.
inline const OpInfo *op_info(int op) { return (op >= 0 && op < OPB_OP_COUNT) ? &kOps[op] : nullptr; }
// Whether the op's work is products of matrices, the work a device's matrix
// units (tensor cores, AMX) take: what a device roof is chosen by
// (harness/machine/device_roofs.cpp), the rest being bound by memory.
inline bool runs_on_matrix_units(int op) { return op == OPB_OP_MATMUL || op == OPB_OP_ATTENTION; }

// The row's parameter `key`, or nullptr.
inline const ParamInfo *param_info(const OpInfo &row, std::string_view key) {
    for (const auto &p : row.params)
        if (key == p.key) return &p;
    return nullptr;
}

// The smallest op there is, a 1x1 f32 add: what the harness runs to measure
// a backend's fixed cost per call.
inline opb_op_desc call_overhead_desc() {
    opb_op_desc d = make_desc(OPB_OP_ADD, OPB_DTYPE_F32);
    d.p.eltwise.rows = 1;
    d.p.eltwise.cols = 1;
    return d;
}

// ---- names (thin wrappers over kOps) -------------------------------------------

inline constexpr auto kOpNames = [] {
    std::array<std::string_view, OPB_OP_COUNT> names{};
    for (int i = 0; i < OPB_OP_COUNT; ++i) names[i] = kOps[i].name;
    return names;
}();

inline std::string_view op_name(int op) {
    const OpInfo *row = op_info(op);
    return row ? std::string_view(row->name) : std::string_view("?");
}
inline std::optional<int> op_from_name(std::string_view s) {
    for (const auto &row : kOps)
        if (s == row.name) return row.op;
    return std::nullopt;
}

// Variant names per op; index = variant constant. Ops with one form: {"default"}.
inline std::vector<std::string_view> variant_names(int op) {
    const OpInfo *row = op_info(op);
    if (!row) return {"default"};
    std::vector<std::string_view> names;
    for (const auto &v : row->variants) names.push_back(v.name);
    return names;
}
inline std::string_view variant_name(int op, int variant) {
    const OpInfo *row = op_info(op);
    if (!row || variant < 0 || variant >= static_cast<int>(row->variants.size()))
        return row || variant != 0 ? std::string_view("?") : std::string_view("default");
    return row->variants[variant].name;
}
inline std::optional<int> variant_from_name(int op, std::string_view s) {
    auto names = variant_names(op);
    for (std::size_t i = 0; i < names.size(); ++i)
        if (names[i] == s) return static_cast<int>(i);
    return std::nullopt;
}

// ---- validation ---------------------------------------------------------------

// Empty when the description is well-formed; otherwise what is wrong.
inline std::string validate_desc(const opb_op_desc &d) {
    const OpInfo *row = op_info(d.op);
    if (!row) return "unknown op " + std::to_string(d.op);
    if (d.dtype < 0 || d.dtype >= kDtypeCount) return "unknown dtype " + std::to_string(d.dtype);
    if (auto e = dtype_error(d.op, d.dtype); !e.empty()) return e;
    if (d.variant < 0 || d.variant >= static_cast<int>(row->variants.size()))
        return "unknown variant " + std::to_string(d.variant) + " for " + row->name;
    if (d.threads < 0) return "threads must be >= 0 (0 = backend default)";
    return row->validate(d);
}

// ---- tensors, work and traffic (wrappers over kOps) -------------------------------
//
// FLOPs count multiply and add separately; exp, erf, tanh, sqrt and division
// count as one each; the per-element counts are written beside each op's row.
// They are conventions, stated once, so that GFLOP/s figures are comparable
// across backends: every backend is credited with the same work for the same
// description. Masked (causal) elements are not counted.
//
// Bytes are the minimum an ideal implementation must move between memory and
// the chip: every input read once, every output written once. Attention counts
// Q, K, V and O only, for both variants, so that its arithmetic intensity is a
// property of the op and a composed run shows up as lower GB/s efficiency.

// The op's tensors in execute's order without allocating (empty for an unknown op).
inline TensorList op_tensor_list(const opb_op_desc &d) {
    TensorList t;
    if (const OpInfo *row = op_info(d.op)) row->tensors(d, t);
    for (int i = 0; i < t.count; ++i)
        if (t.items[i].dtype < 0) t.items[i].dtype = d.dtype;
    return t;
}

// The op's tensors in execute's order (inputs, then outputs), as plugin.h documents.
inline std::vector<TensorSpec> op_tensors(const opb_op_desc &d) {
    std::vector<TensorSpec> out;
    for (const auto &t : op_tensor_list(d))
        out.push_back({t.name, std::vector<int64_t>(t.dims, t.dims + t.rank), t.is_output, t.dtype});
    return out;
}

inline double op_flops(const opb_op_desc &d) {
    const OpInfo *row = op_info(d.op);
    return row ? row->flops(d) : 0.0;
}

// Each tensor in its own dtype (int8 matmul: 1-byte A and B, f32 scales).
inline double op_bytes(const opb_op_desc &d) {
    double total = 0.0;
    for (const auto &t : op_tensor_list(d)) total += double(t.elements()) * double(dtype_size(t.dtype));
    return total;
}

// FLOPs per byte; 0 when the op moves no bytes.
inline double arithmetic_intensity(const opb_op_desc &d) {
    double b = op_bytes(d);
    return b > 0 ? op_flops(d) / b : 0.0;
}

// ---- bf16 / f16 conversions ----------------------------------------------------

inline float bf16_to_f32(uint16_t h) {
    uint32_t u = uint32_t(h) << 16;
    float f;
    std::memcpy(&f, &u, 4);
    return f;
}
// Round to nearest even; NaN stays NaN.
inline uint16_t f32_to_bf16(float f) {
    uint32_t u;
    std::memcpy(&u, &f, 4);
    if ((u & 0x7fffffffu) > 0x7f800000u) return uint16_t((u >> 16) | 0x40);
    u += 0x7fffu + ((u >> 16) & 1u);
    return uint16_t(u >> 16);
}

inline float f16_to_f32(uint16_t h) {
    uint32_t sign = uint32_t(h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1fu;
    uint32_t man = h & 0x3ffu;
    uint32_t u;
    if (exp == 0) {
        if (man == 0) {
            u = sign;
        } else { // subnormal: normalise
            int e = -1;
            do {
                ++e;
                man <<= 1;
            } while ((man & 0x400u) == 0);
            u = sign | uint32_t(127 - 15 - e) << 23 | (man & 0x3ffu) << 13;
        }
    } else if (exp == 0x1f) {
        u = sign | 0x7f800000u | man << 13;
    } else {
        u = sign | (exp + 127 - 15) << 23 | man << 13;
    }
    float f;
    std::memcpy(&f, &u, 4);
    return f;
}
// Round to nearest even, overflow to inf, subnormals kept.
inline uint16_t f32_to_f16(float f) {
    uint32_t u;
    std::memcpy(&u, &f, 4);
    uint32_t sign = (u >> 16) & 0x8000u;
    uint32_t absu = u & 0x7fffffffu;
    if (absu > 0x7f800000u) return uint16_t(sign | 0x7e00u);  // NaN
    if (absu >= 0x477ff000u) return uint16_t(sign | 0x7c00u); // overflow (incl. inf)
    if (absu < 0x38800000u) {                                 // subnormal or zero in f16
        if (absu < 0x33000000u) return uint16_t(sign);        // rounds to zero
        uint32_t e = absu >> 23;
        uint32_t man = (absu & 0x7fffffu) | 0x800000u;
        uint32_t shift = 126 - e; // 14..24
        uint32_t half = man >> shift;
        uint32_t rem = man & ((1u << shift) - 1);
        uint32_t mid = 1u << (shift - 1);
        if (rem > mid || (rem == mid && (half & 1u))) ++half;
        return uint16_t(sign | half);
    }
    uint32_t r = absu + 0xfffu + ((absu >> 13) & 1u) - ((127 - 15) << 23);
    return uint16_t(sign | (r >> 13));
}

// ---- FP8 e4m3 conversions (OCP FP8, "E4M3FN") -------------------------------------
//
// 1 sign, 4 exponent (bias 7), 3 mantissa bits; no infinities; S.1111.111 is
// NaN; the largest finite value is 448 (0x7e), the smallest normal 2^-6 and
// the smallest subnormal 2^-9. f32 -> e4m3 rounds to nearest, ties to even,
// and saturates: a finite value or an infinity beyond +-448 gives +-448 (as
// CUDA's __NV_SATFINITE); NaN gives NaN (0x7f, with the sign).
inline float e4m3_to_f32(uint8_t b) {
    const float sign = (b & 0x80u) ? -1.0f : 1.0f;
    const int e = (b >> 3) & 0xf, m = b & 7;
    if (e == 15 && m == 7) return std::copysign(std::numeric_limits<float>::quiet_NaN(), sign);
    if (e == 0) return sign * std::ldexp(float(m), -9);
    return sign * std::ldexp(float(8 + m), e - 10);
}
inline uint8_t f32_to_e4m3(float f) {
    const uint8_t sign = std::signbit(f) ? 0x80u : 0u;
    const float a = std::fabs(f);
    if (a != a) return uint8_t(sign | 0x7fu);
    if (a >= 448.0f) return uint8_t(sign | 0x7eu);
    if (a < 0x1p-6f) // subnormal: units of 2^-9; 8 units is the smallest normal, whose code is 0x08
        return uint8_t(sign | uint8_t(std::nearbyint(a * 0x1p9f)));
    int ex = 0;
    (void)std::frexp(a, &ex); // a = fr * 2^ex, fr in [0.5, 1): a in [2^(ex-1), 2^ex)
    int e = ex - 1;
    int q = int(std::nearbyint(std::ldexp(a, 3 - e))); // 8..16, exact scaling, ties to even
    if (q == 16) {
        q = 8;
        ++e;
    }
    return uint8_t(sign | uint8_t((e + 7) << 3) | uint8_t(q - 8));
}

// Element i of a buffer of dtype `dt`, as f32 (s8/u8: the integer).
inline float load_as_f32(const void *buf, int dt, int64_t i) {
    switch (dt) {
    case OPB_DTYPE_BF16: return bf16_to_f32(static_cast<const uint16_t *>(buf)[i]);
    case OPB_DTYPE_F16: return f16_to_f32(static_cast<const uint16_t *>(buf)[i]);
    case OPB_DTYPE_S8: return static_cast<const int8_t *>(buf)[i];
    case OPB_DTYPE_U8: return static_cast<const uint8_t *>(buf)[i];
    case OPB_DTYPE_F8_E4M3: return e4m3_to_f32(static_cast<const uint8_t *>(buf)[i]);
    default: return static_cast<const float *>(buf)[i];
    }
}
// An integer dtype's nearest value to v (ties to even), saturated; NaN -> 0.
inline int32_t saturate_int8(float v, int dt) {
    const float lo = dt == OPB_DTYPE_U8 ? 0.0f : -128.0f, hi = dt == OPB_DTYPE_U8 ? 255.0f : 127.0f;
    if (!(v == v)) return 0;
    return static_cast<int32_t>(std::nearbyint(std::fmin(std::fmax(v, lo), hi)));
}
// Store f32 value v as element i of a buffer of dtype `dt`.
inline void store_from_f32(void *buf, int dt, int64_t i, float v) {
    switch (dt) {
    case OPB_DTYPE_BF16: static_cast<uint16_t *>(buf)[i] = f32_to_bf16(v); break;
    case OPB_DTYPE_F16: static_cast<uint16_t *>(buf)[i] = f32_to_f16(v); break;
    case OPB_DTYPE_S8: static_cast<int8_t *>(buf)[i] = static_cast<int8_t>(saturate_int8(v, dt)); break;
    case OPB_DTYPE_U8: static_cast<uint8_t *>(buf)[i] = static_cast<uint8_t>(saturate_int8(v, dt)); break;
    case OPB_DTYPE_F8_E4M3: static_cast<uint8_t *>(buf)[i] = f32_to_e4m3(v); break;
    default: static_cast<float *>(buf)[i] = v; break;
    }
}

} // namespace opbench

// The fast checks the rows point to (they use the helpers above).
#include "fast_checks.hpp"

#endif // OPBENCH_OPS_HPP
