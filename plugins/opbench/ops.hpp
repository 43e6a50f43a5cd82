// opbench SDK — C++ helpers shared by the harness and plugin authors.
//
// The one place where each op's tensors, FLOP count and byte count are
// defined, plus names for ops, dtypes and variants, description validation,
// and bf16/f16 conversions. Header-only; depends on the standard library and
// plugin.h only.
#ifndef OPBENCH_OPS_HPP
#define OPBENCH_OPS_HPP

#include "plugin.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace opbench {

// ---- names ----------------------------------------------------------------

inline constexpr std::string_view kOpNames[OPB_OP_COUNT] = {
    "matmul", "softmax", "layernorm", "rmsnorm", "gelu", "silu", "add", "attention"};

inline constexpr std::string_view kDtypeNames[] = {"f32", "bf16", "f16"};

inline std::string_view op_name(int op) {
    return (op >= 0 && op < OPB_OP_COUNT) ? kOpNames[op] : std::string_view("?");
}
inline std::string_view dtype_name(int dt) {
    return (dt >= 0 && dt < 3) ? kDtypeNames[dt] : std::string_view("?");
}
inline std::optional<int> op_from_name(std::string_view s) {
    for (int i = 0; i < OPB_OP_COUNT; ++i)
        if (kOpNames[i] == s) return i;
    return std::nullopt;
}
inline std::optional<int> dtype_from_name(std::string_view s) {
    for (int i = 0; i < 3; ++i)
        if (kDtypeNames[i] == s) return i;
    return std::nullopt;
}

inline std::size_t dtype_size(int dt) { return dt == OPB_DTYPE_F32 ? 4 : 2; }

// Variant names per op; index = variant constant. Ops with one form: {"default"}.
inline std::vector<std::string_view> variant_names(int op) {
    switch (op) {
    case OPB_OP_MATMUL: return {"default", "tf32"};
    case OPB_OP_GELU: return {"erf", "tanh"};
    case OPB_OP_ATTENTION: return {"composed", "fused"};
    default: return {"default"};
    }
}
inline std::string_view variant_name(int op, int variant) {
    auto names = variant_names(op);
    return (variant >= 0 && variant < static_cast<int>(names.size())) ? names[variant]
                                                                      : std::string_view("?");
}
inline std::optional<int> variant_from_name(int op, std::string_view s) {
    auto names = variant_names(op);
    for (std::size_t i = 0; i < names.size(); ++i)
        if (names[i] == s) return static_cast<int>(i);
    return std::nullopt;
}

// ---- descriptions -----------------------------------------------------------

inline opb_op_desc make_desc(int op, int dtype, int variant = 0) {
    opb_op_desc d;
    std::memset(&d, 0, sizeof d);
    d.struct_size = sizeof d;
    d.abi_version = OPB_ABI_VERSION;
    d.op = op;
    d.dtype = dtype;
    d.variant = variant;
    return d;
}

// The attention/softmax scale actually applied: 0 in a description means the
// op's default (1/sqrt(head_dim) for attention, 1 for softmax).
inline float effective_scale(const opb_op_desc &d) {
    if (d.op == OPB_OP_ATTENTION)
        return d.p.attention.scale != 0.0f
                   ? d.p.attention.scale
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

// Number of (row, col) pairs a (possibly causal) rows x cols score matrix keeps.
inline int64_t visible_pairs(int64_t rows, int64_t cols, bool causal) {
    if (!causal) return rows * cols;
    int64_t n = 0;
    for (int64_t r = 0; r < rows; ++r) n += causal_visible(r, rows, cols);
    return n;
}

// Empty when the description is well-formed; otherwise what is wrong.
inline std::string validate_desc(const opb_op_desc &d) {
    auto positive = [](const char *name, int64_t v) -> std::string {
        return v > 0 ? std::string() : std::string(name) + " must be > 0, got " + std::to_string(v);
    };
    if (d.op < 0 || d.op >= OPB_OP_COUNT) return "unknown op " + std::to_string(d.op);
    if (d.dtype < 0 || d.dtype > 2) return "unknown dtype " + std::to_string(d.dtype);
    if (d.variant < 0 || d.variant >= static_cast<int>(variant_names(d.op).size()))
        return "unknown variant " + std::to_string(d.variant) + " for " + std::string(op_name(d.op));
    if (d.threads < 0) return "threads must be >= 0 (0 = backend default)";
    std::string e;
    switch (d.op) {
    case OPB_OP_MATMUL: {
        const auto &p = d.p.matmul;
        for (auto [n, v] : {std::pair{"batch", p.batch}, {"M", p.m}, {"N", p.n}, {"K", p.k}})
            if (!(e = positive(n, v)).empty()) return e;
        break;
    }
    case OPB_OP_SOFTMAX: {
        const auto &p = d.p.softmax;
        for (auto [n, v] : {std::pair{"batch", p.batch}, {"rows", p.rows}, {"cols", p.cols}})
            if (!(e = positive(n, v)).empty()) return e;
        if (!std::isfinite(p.scale)) return "scale must be finite";
        break;
    }
    case OPB_OP_LAYERNORM:
    case OPB_OP_RMSNORM: {
        const auto &p = d.p.norm;
        for (auto [n, v] : {std::pair{"rows", p.rows}, {"cols", p.cols}})
            if (!(e = positive(n, v)).empty()) return e;
        if (!(p.eps > 0.0f) || !std::isfinite(p.eps)) return "eps must be > 0";
        break;
    }
    case OPB_OP_GELU:
    case OPB_OP_SILU:
    case OPB_OP_ADD: {
        const auto &p = d.p.eltwise;
        for (auto [n, v] : {std::pair{"rows", p.rows}, {"cols", p.cols}})
            if (!(e = positive(n, v)).empty()) return e;
        break;
    }
    case OPB_OP_ATTENTION: {
        const auto &p = d.p.attention;
        for (auto [n, v] : {std::pair{"batch", p.batch}, {"heads", p.heads}, {"seq_q", p.seq_q},
                            {"seq_kv", p.seq_kv}, {"head_dim", p.head_dim}})
            if (!(e = positive(n, v)).empty()) return e;
        if (!std::isfinite(p.scale)) return "scale must be finite";
        break;
    }
    }
    return {};
}

// ---- tensors of an op -------------------------------------------------------

struct TensorSpec {
    std::string name;
    std::vector<int64_t> shape;
    bool is_output = false;
    int64_t elements() const {
        int64_t n = 1;
        for (auto s : shape) n *= s;
        return n;
    }
};

// The op's tensors in execute's order (inputs, then outputs), as plugin.h documents.
inline std::vector<TensorSpec> op_tensors(const opb_op_desc &d) {
    switch (d.op) {
    case OPB_OP_MATMUL: {
        const auto &p = d.p.matmul;
        std::vector<TensorSpec> t;
        t.push_back({"A", p.trans_a ? std::vector<int64_t>{p.batch, p.k, p.m}
                                    : std::vector<int64_t>{p.batch, p.m, p.k}});
        t.push_back({"B", p.trans_b ? std::vector<int64_t>{p.batch, p.n, p.k}
                                    : std::vector<int64_t>{p.batch, p.k, p.n}});
        if (p.has_bias) t.push_back({"bias", {p.n}});
        t.push_back({"C", {p.batch, p.m, p.n}, true});
        return t;
    }
    case OPB_OP_SOFTMAX: {
        const auto &p = d.p.softmax;
        return {{"x", {p.batch, p.rows, p.cols}}, {"y", {p.batch, p.rows, p.cols}, true}};
    }
    case OPB_OP_LAYERNORM: {
        const auto &p = d.p.norm;
        return {{"x", {p.rows, p.cols}}, {"gamma", {p.cols}}, {"beta", {p.cols}},
                {"y", {p.rows, p.cols}, true}};
    }
    case OPB_OP_RMSNORM: {
        const auto &p = d.p.norm;
        return {{"x", {p.rows, p.cols}}, {"gamma", {p.cols}}, {"y", {p.rows, p.cols}, true}};
    }
    case OPB_OP_GELU:
    case OPB_OP_SILU: {
        const auto &p = d.p.eltwise;
        return {{"x", {p.rows, p.cols}}, {"y", {p.rows, p.cols}, true}};
    }
    case OPB_OP_ADD: {
        const auto &p = d.p.eltwise;
        return {{"a", {p.rows, p.cols}}, {"b", {p.rows, p.cols}}, {"y", {p.rows, p.cols}, true}};
    }
    case OPB_OP_ATTENTION: {
        const auto &p = d.p.attention;
        return {{"Q", {p.batch, p.heads, p.seq_q, p.head_dim}},
                {"K", {p.batch, p.heads, p.seq_kv, p.head_dim}},
                {"V", {p.batch, p.heads, p.seq_kv, p.head_dim}},
                {"O", {p.batch, p.heads, p.seq_q, p.head_dim}, true}};
    }
    }
    return {};
}

// ---- work and traffic ---------------------------------------------------------
//
// FLOPs count multiply and add separately; exp, erf, tanh, sqrt and division
// count as one each; the per-element counts are written beside each op below.
// They are conventions, stated once, so that GFLOP/s figures are comparable
// across backends: every backend is credited with the same work for the same
// description. Masked (causal) elements are not counted.
//
// Bytes are the minimum an ideal implementation must move between memory and
// the chip: every input read once, every output written once. Attention counts
// Q, K, V and O only, for both variants, so that its arithmetic intensity is a
// property of the op and a composed run shows up as lower GB/s efficiency.

inline double op_flops(const opb_op_desc &d) {
    switch (d.op) {
    case OPB_OP_MATMUL: {
        const auto &p = d.p.matmul;
        double mnk = double(p.batch) * p.m * p.n * p.k;
        return 2.0 * mnk + (p.has_bias ? double(p.batch) * p.m * p.n : 0.0);
    }
    case OPB_OP_SOFTMAX: {
        // per kept element: scale, max, subtract, exp, sum, divide
        const auto &p = d.p.softmax;
        return 6.0 * double(p.batch) * double(visible_pairs(p.rows, p.cols, p.causal));
    }
    case OPB_OP_LAYERNORM:
        // per element: sum, subtract mean, square, sum, normalise (mul), gamma (mul), beta (add)
        return 7.0 * double(d.p.norm.rows) * d.p.norm.cols;
    case OPB_OP_RMSNORM:
        // per element: square, sum, normalise (mul), gamma (mul)
        return 4.0 * double(d.p.norm.rows) * d.p.norm.cols;
    case OPB_OP_GELU:
        // erf: divide, erf, add, 2 mul = 5; tanh: cube (2), fma (2), scale, tanh, add, 2 mul = 9
        return (d.variant == OPB_GELU_TANH ? 9.0 : 5.0) * double(d.p.eltwise.rows) *
               d.p.eltwise.cols;
    case OPB_OP_SILU:
        // negate, exp, add, divide
        return 4.0 * double(d.p.eltwise.rows) * d.p.eltwise.cols;
    case OPB_OP_ADD:
        return double(d.p.eltwise.rows) * d.p.eltwise.cols;
    case OPB_OP_ATTENTION: {
        // per kept score: QK^T dot (2D), softmax (6), P.V (2D)
        const auto &p = d.p.attention;
        double pairs = double(visible_pairs(p.seq_q, p.seq_kv, p.causal));
        return double(p.batch) * p.heads * pairs * (4.0 * p.head_dim + 6.0);
    }
    }
    return 0.0;
}

inline double op_bytes(const opb_op_desc &d) {
    double total = 0.0;
    for (const auto &t : op_tensors(d)) total += double(t.elements());
    return total * double(dtype_size(d.dtype));
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
    if (absu > 0x7f800000u) return uint16_t(sign | 0x7e00u); // NaN
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

// Element i of a buffer of dtype `dt`, as f32.
inline float load_as_f32(const void *buf, int dt, int64_t i) {
    switch (dt) {
    case OPB_DTYPE_BF16: return bf16_to_f32(static_cast<const uint16_t *>(buf)[i]);
    case OPB_DTYPE_F16: return f16_to_f32(static_cast<const uint16_t *>(buf)[i]);
    default: return static_cast<const float *>(buf)[i];
    }
}
// Store f32 value v as element i of a buffer of dtype `dt`.
inline void store_from_f32(void *buf, int dt, int64_t i, float v) {
    switch (dt) {
    case OPB_DTYPE_BF16: static_cast<uint16_t *>(buf)[i] = f32_to_bf16(v); break;
    case OPB_DTYPE_F16: static_cast<uint16_t *>(buf)[i] = f32_to_f16(v); break;
    default: static_cast<float *>(buf)[i] = v; break;
    }
}

} // namespace opbench

#endif // OPBENCH_OPS_HPP
