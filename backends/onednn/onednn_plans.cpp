// oneDNN backend: how each opbench op is expressed in oneDNN 2.6 primitives.
//
// A recipe holds primitive descriptors and memory descriptors only: building
// one is cheap, so supports() builds it to learn whether oneDNN has an
// implementation, and prepare() builds it again and instantiates it.
#include "onednn_backend.hpp"

#include <omp.h>

#include <cmath>
#include <cstring>
#include <limits>

namespace opbench::onednn {

using dnnl::algorithm;
using dnnl::memory;
using dnnl::prop_kind;
using dims = memory::dims;
using dt = memory::data_type;
using tag = memory::format_tag;

void apply_threads(int threads) {
    if (threads > 0 && omp_get_max_threads() != threads) omp_set_num_threads(threads);
}

const char *isa_name(dnnl::cpu_isa isa) {
    switch (isa) {
    case dnnl::cpu_isa::all: return "all";
    case dnnl::cpu_isa::sse41: return "sse41";
    case dnnl::cpu_isa::avx: return "avx";
    case dnnl::cpu_isa::avx2: return "avx2";
    case dnnl::cpu_isa::avx512_mic: return "avx512_mic";
    case dnnl::cpu_isa::avx512_mic_4ops: return "avx512_mic_4ops";
    case dnnl::cpu_isa::avx512_core: return "avx512_core";
    case dnnl::cpu_isa::avx512_core_vnni: return "avx512_core_vnni";
    case dnnl::cpu_isa::avx512_core_bf16: return "avx512_core_bf16";
    case dnnl::cpu_isa::avx512_core_amx: return "avx512_core_amx";
    case dnnl::cpu_isa::avx2_vnni: return "avx2_vnni";
    }
    return "unknown";
}

namespace {

dt to_dt(int dtype) {
    switch (dtype) {
    case OPB_DTYPE_F32: return dt::f32;
    case OPB_DTYPE_BF16: return dt::bf16;
    case OPB_DTYPE_F16: return dt::f16;
    }
    throw std::invalid_argument("unknown dtype " + std::to_string(dtype));
}

dnnl::primitive_attr user_scratchpad() {
    dnnl::primitive_attr attr;
    // The plan owns the scratchpad, so it is counted as workspace and
    // execute never allocates.
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    return attr;
}

// Builds a primitive descriptor; "no implementation" becomes Unsupported
// (with the dtype and the ISA oneDNN dispatches to), other failures propagate.
template <class Make>
auto make_pd(const char *what, const opb_op_desc &d, Make &&make) -> decltype(make()) {
    try {
        return make();
    } catch (const dnnl::error &e) {
        if (e.status == dnnl_unimplemented) {
            const dnnl_version_t *v = dnnl_version();
            throw Unsupported(std::string(what) + " " + std::string(dtype_name(d.dtype)) + ": oneDNN " +
                              std::to_string(v->major) + "." + std::to_string(v->minor) + "." +
                              std::to_string(v->patch) + " has no implementation on this CPU (effective ISA " +
                              isa_name(dnnl::get_effective_cpu_isa()) + ")");
        }
        throw std::runtime_error(std::string(what) + ": oneDNN error: " + e.what());
    }
}

MemRef tensor(int i, const memory::desc &md) { return {MemRef::Tensor, i, md}; }
MemRef buffer(int i, const memory::desc &md) { return {MemRef::Buffer, i, md}; }

int add_buffer(Recipe &r, std::string what, uint64_t bytes, std::function<void(void *)> init = {}) {
    r.buffers.push_back({std::move(what), bytes, std::move(init)});
    return static_cast<int>(r.buffers.size()) - 1;
}

// Additive causal mask [rows, cols] in f32: 0 where visible, -inf where
// masked (bottom-right aligned, as plugin.h defines). Added before the
// softmax, exp(-inf) = 0 removes the masked columns exactly.
std::function<void(void *)> causal_mask_init(int64_t rows, int64_t cols) {
    return [rows, cols](void *p) {
        auto *m = static_cast<float *>(p);
        const float ninf = -std::numeric_limits<float>::infinity();
        for (int64_t r = 0; r < rows; ++r) {
            const int64_t vis = causal_visible(r, rows, cols);
            for (int64_t c = 0; c < cols; ++c) m[r * cols + c] = c < vis ? 0.0f : ninf;
        }
    };
}

void require_all_rows_visible(const char *op, int64_t rows, int64_t cols) {
    if (rows > cols)
        throw Unsupported(std::string(op) + " causal with rows (" + std::to_string(rows) + ") > cols (" +
                          std::to_string(cols) +
                          "): the first rows see no column under the bottom-right aligned "
                          "mask and their softmax is undefined");
}

Recipe matmul_recipe(const Backend &b, const opb_op_desc &d) {
    const auto &p = d.p.matmul;
    if (d.variant == OPB_MATMUL_TF32)
        throw Unsupported("matmul tf32: oneDNN 2.6 has no TF32 math mode (fpmath_mode is "
                          "strict, bf16, f16 or any) and x86 CPUs have no TF32 arithmetic");
    const dt t = to_dt(d.dtype);
    // Transposes are strides on the logical [batch, M, K] / [batch, K, N]
    // views, so no copy is made outside the primitive.
    memory::desc a_md(dims{p.batch, p.m, p.k}, t, p.trans_a ? dims{p.m * p.k, 1, p.m} : dims{p.m * p.k, p.k, 1});
    memory::desc b_md(dims{p.batch, p.k, p.n}, t, p.trans_b ? dims{p.k * p.n, 1, p.k} : dims{p.k * p.n, p.n, 1});
    memory::desc c_md(dims{p.batch, p.m, p.n}, t, tag::abc);
    memory::desc bias_md(dims{1, 1, p.n}, t, tag::abc);

    Recipe r;
    r.tensor_count = p.has_bias ? 4 : 3;
    auto pd = make_pd("matmul", d, [&] {
        auto md = p.has_bias ? dnnl::matmul::desc(a_md, b_md, bias_md, c_md) : dnnl::matmul::desc(a_md, b_md, c_md);
        return dnnl::matmul::primitive_desc(md, user_scratchpad(), b.engine);
    });
    StepSpec s{"matmul", pd, {{DNNL_ARG_SRC, tensor(0, a_md)}, {DNNL_ARG_WEIGHTS, tensor(1, b_md)}}};
    if (p.has_bias) s.args.push_back({DNNL_ARG_BIAS, tensor(2, bias_md)});
    s.args.push_back({DNNL_ARG_DST, tensor(r.tensor_count - 1, c_md)});
    r.steps.push_back(std::move(s));
    return r;
}

// int8 weights (plugin.h, MATMUL dtype S8) in two steps: the per-column
// output scales act_scale * w_scale[n] (eltwise linear on w_scale into a
// buffer, O(N) per call: w_scale is a tensor, known only at execute), then
// the int8 matmul (s32 accumulation) with those as runtime output scales, the
// activations' zero point as a runtime source zero point, and the bias as a
// binary-add post-op: post-ops run after the output scales, so the bias is
// added unscaled, as plugin.h defines C. A bf16 C is a third step, a reorder
// from an f32 buffer: oneDNN 2.6 has only its reference int8 matmul for a
// bf16 destination (ref_int8:any, about 1000x slower here, ONEDNN_VERBOSE).
Recipe int8_matmul_recipe(const Backend &b, const opb_op_desc &d) {
    const auto &p = d.p.matmul;
    const dt a_t = p.act_dtype == OPB_DTYPE_U8 ? dt::u8 : dt::s8;
    memory::desc a_md(dims{p.batch, p.m, p.k}, a_t, p.trans_a ? dims{p.m * p.k, 1, p.m} : dims{p.m * p.k, p.k, 1});
    memory::desc b_md(dims{p.batch, p.k, p.n}, dt::s8, p.trans_b ? dims{p.k * p.n, 1, p.k} : dims{p.k * p.n, p.n, 1});
    memory::desc c_md(dims{p.batch, p.m, p.n}, to_dt(p.out_dtype), tag::abc);
    memory::desc acc_md(dims{p.batch, p.m, p.n}, dt::f32, tag::abc); // the matmul's own destination
    memory::desc n_md(dims{p.n}, dt::f32, tag::a);
    memory::desc bias_md(dims{1, 1, p.n}, dt::f32, tag::abc);
    memory::desc zp_md(dims{1}, dt::s32, tag::a);

    Recipe r;
    r.tensor_count = p.has_bias ? 5 : 4; // A, B, w_scale, [bias], C
    const int scales = add_buffer(r, "output scales", n_md.get_size());
    auto spd = make_pd("int8 matmul (output scales)", d, [&] {
        return dnnl::eltwise_forward::primitive_desc(
            dnnl::eltwise_forward::desc(prop_kind::forward_inference, algorithm::eltwise_linear, n_md, p.act_scale, 0.0f),
            user_scratchpad(), b.engine);
    });
    r.steps.push_back({"output scales", spd, {{DNNL_ARG_SRC, tensor(2, n_md)}, {DNNL_ARG_DST, buffer(scales, n_md)}}});
    auto pd = make_pd("int8 matmul", d, [&] {
        auto attr = user_scratchpad();
        attr.set_output_scales(1 << 2, {DNNL_RUNTIME_F32_VAL}); // per N, the last of [batch, M, N]
        if (p.act_zero_point != 0) attr.set_zero_points(DNNL_ARG_SRC, 0, {DNNL_RUNTIME_S32_VAL});
        if (p.has_bias) {
            dnnl::post_ops po;
            po.append_binary(algorithm::binary_add, bias_md);
            attr.set_post_ops(po);
        }
        return dnnl::matmul::primitive_desc(dnnl::matmul::desc(a_md, b_md, acc_md), attr, b.engine);
    });
    StepSpec s{"int8 matmul",
               pd,
               {{DNNL_ARG_SRC, tensor(0, a_md)},
                {DNNL_ARG_WEIGHTS, tensor(1, b_md)},
                {DNNL_ARG_ATTR_OUTPUT_SCALES, buffer(scales, n_md)}}};
    if (p.act_zero_point != 0) {
        const int zp = add_buffer(r, "source zero point", zp_md.get_size(),
                                  [z = p.act_zero_point](void *q) { *static_cast<int32_t *>(q) = z; });
        s.args.push_back({DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_SRC, buffer(zp, zp_md)});
    }
    if (p.has_bias) s.args.push_back({DNNL_ARG_ATTR_MULTIPLE_POST_OP(0) | DNNL_ARG_SRC_1, tensor(3, bias_md)});
    const MemRef c = tensor(r.tensor_count - 1, c_md);
    if (p.out_dtype == OPB_DTYPE_F32) {
        s.args.push_back({DNNL_ARG_DST, c});
        r.steps.push_back(std::move(s));
        return r;
    }
    const MemRef acc = buffer(add_buffer(r, "f32 result", acc_md.get_size()), acc_md);
    s.args.push_back({DNNL_ARG_DST, acc});
    r.steps.push_back(std::move(s));
    auto rpd = make_pd("int8 matmul (to bf16)", d,
                       [&] { return dnnl::reorder::primitive_desc(b.engine, acc_md, b.engine, c_md, user_scratchpad()); });
    r.steps.push_back({"to bf16", rpd, {{DNNL_ARG_FROM, acc}, {DNNL_ARG_TO, c}}});
    return r;
}

// softmax(scale * x [+ mask]). Plain softmax is one softmax_v2 primitive.
// With a scale or a causal mask, scale * x (+ mask) is first written in f32
// to a workspace, then softmax_v2 reads it and writes y in the op's dtype:
//   f32 + mask:  binary add with a source scale (x, mask -> s)
//   f32, scale:  eltwise linear (x -> s)
//   bf16/f16:    scaling reorder (x -> s, f32), then binary add s += mask
// Each choice keeps oneDNN on its JIT kernels (checked with ONEDNN_VERBOSE):
// binary with mixed bf16/f32 sources falls back to the reference kernel.
Recipe softmax_recipe(const Backend &b, const opb_op_desc &d) {
    const auto &p = d.p.softmax;
    const float scale = effective_scale(d);
    if (p.causal) require_all_rows_visible("softmax", p.rows, p.cols);
    const dt t = to_dt(d.dtype);
    memory::desc x_md(dims{p.batch, p.rows, p.cols}, t, tag::abc);
    memory::desc s_md(dims{p.batch, p.rows, p.cols}, dt::f32, tag::abc);
    memory::desc m_md(dims{1, p.rows, p.cols}, dt::f32, tag::abc);

    Recipe r;
    r.tensor_count = 2;
    MemRef src = tensor(0, x_md);
    if (p.causal || scale != 1.0f) {
        const int s_buf = add_buffer(r, "scaled scores", s_md.get_size());
        src = buffer(s_buf, s_md);
        const int m_buf =
            p.causal ? add_buffer(r, "causal mask", m_md.get_size(), causal_mask_init(p.rows, p.cols)) : -1;
        if (t == dt::f32 && p.causal) {
            auto pd = make_pd("softmax (scale + mask)", d, [&] {
                auto attr = user_scratchpad();
                attr.set_scales(DNNL_ARG_SRC_0, 0, {scale});
                return dnnl::binary::primitive_desc(dnnl::binary::desc(algorithm::binary_add, x_md, m_md, s_md), attr,
                                                    b.engine);
            });
            r.steps.push_back(
                {"scale + causal mask",
                 pd,
                 {{DNNL_ARG_SRC_0, tensor(0, x_md)}, {DNNL_ARG_SRC_1, buffer(m_buf, m_md)}, {DNNL_ARG_DST, src}}});
        } else if (t == dt::f32) {
            auto pd = make_pd("softmax (scale)", d, [&] {
                return dnnl::eltwise_forward::primitive_desc(dnnl::eltwise_forward::desc(prop_kind::forward_inference,
                                                                                         algorithm::eltwise_linear,
                                                                                         x_md, scale, 0.0f),
                                                             user_scratchpad(), b.engine);
            });
            r.steps.push_back({"scale", pd, {{DNNL_ARG_SRC, tensor(0, x_md)}, {DNNL_ARG_DST, src}}});
        } else {
            auto pd = make_pd("softmax (scale to f32)", d, [&] {
                auto attr = user_scratchpad();
                attr.set_output_scales(0, {scale});
                return dnnl::reorder::primitive_desc(b.engine, x_md, b.engine, s_md, attr);
            });
            r.steps.push_back({"scale to f32", pd, {{DNNL_ARG_FROM, tensor(0, x_md)}, {DNNL_ARG_TO, src}}});
            if (p.causal) {
                auto mpd = make_pd("softmax (mask)", d, [&] {
                    return dnnl::binary::primitive_desc(dnnl::binary::desc(algorithm::binary_add, s_md, m_md, s_md),
                                                        user_scratchpad(), b.engine);
                });
                r.steps.push_back(
                    {"causal mask",
                     mpd,
                     {{DNNL_ARG_SRC_0, src}, {DNNL_ARG_SRC_1, buffer(m_buf, m_md)}, {DNNL_ARG_DST, src}}});
            }
        }
    }
    auto pd = make_pd("softmax", d, [&] {
        return dnnl::softmax_v2_forward::primitive_desc(
            dnnl::softmax_v2_forward::desc(prop_kind::forward_inference, algorithm::softmax_accurate, src.md, x_md, 2),
            user_scratchpad(), b.engine);
    });
    r.steps.push_back({"softmax", pd, {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, tensor(1, x_md)}}});
    return r;
}

// oneDNN 2.6 takes layer-norm scale and shift in f32 only: for bf16/f16 the
// gamma/beta tensors are converted by reorders inside execute (2 x cols
// elements, negligible next to rows x cols).
MemRef f32_param(Recipe &r, const Backend &b, const opb_op_desc &d, int tensor_index, int64_t cols, const char *what) {
    memory::desc f32_md(dims{cols}, dt::f32, tag::a);
    if (d.dtype == OPB_DTYPE_F32) return tensor(tensor_index, f32_md);
    memory::desc src_md(dims{cols}, to_dt(d.dtype), tag::a);
    const int buf = add_buffer(r, std::string(what) + " in f32", f32_md.get_size());
    auto pd = make_pd("layernorm parameter conversion", d, [&] {
        return dnnl::reorder::primitive_desc(b.engine, src_md, b.engine, f32_md, user_scratchpad());
    });
    r.steps.push_back({std::string(what) + " to f32",
                       pd,
                       {{DNNL_ARG_FROM, tensor(tensor_index, src_md)}, {DNNL_ARG_TO, buffer(buf, f32_md)}}});
    return buffer(buf, f32_md);
}

Recipe layernorm_recipe(const Backend &b, const opb_op_desc &d) {
    const auto &p = d.p.norm;
    memory::desc x_md(dims{p.rows, p.cols}, to_dt(d.dtype), tag::ab);
    Recipe r;
    r.tensor_count = 4;
    // Check the main primitive first so an unsupported dtype is reported as
    // the layer normalisation, not as a parameter conversion.
    auto pd = make_pd("layernorm", d, [&] {
        return dnnl::layer_normalization_forward::primitive_desc(
            dnnl::layer_normalization_forward::desc(prop_kind::forward_inference, x_md, p.eps,
                                                    dnnl::normalization_flags::use_scale |
                                                        dnnl::normalization_flags::use_shift),
            user_scratchpad(), b.engine);
    });
    MemRef gamma = f32_param(r, b, d, 1, p.cols, "gamma");
    MemRef beta = f32_param(r, b, d, 2, p.cols, "beta");
    StepSpec s{"layernorm",
               pd,
               {{DNNL_ARG_SRC, tensor(0, x_md)},
                {DNNL_ARG_DST, tensor(3, x_md)},
                {DNNL_ARG_SCALE, gamma},
                {DNNL_ARG_SHIFT, beta}}};
    // Inference computes the statistics internally; some implementations
    // still ask for mean/variance memory, which the plan then provides.
    for (auto [arg, md] : {std::pair{DNNL_ARG_MEAN, pd.mean_desc()}, std::pair{DNNL_ARG_VARIANCE, pd.variance_desc()}})
        if (md.get_size() > 0) s.args.push_back({arg, buffer(add_buffer(r, "statistics", md.get_size()), md)});
    r.steps.push_back(std::move(s));
    return r;
}

// rmsnorm in three oneDNN 2.6 primitives, y = x / sqrt(mean(x^2) + eps) * gamma:
//   1. eltwise square: x^2 into a workspace, in the op's dtype;
//   2. reduction mean over each row: mean(x^2) in f32;
//   3. layer_normalization with use_global_stats, mean = 0 (a zero buffer
//      written in prepare) and variance = mean(x^2): (x - 0) / sqrt(var + eps) * gamma.
// A single reduction (norm_lp_power_p_sum, p = 2) would skip step 1, but 2.6
// has only a reference kernel for it (35x slower than square + JIT mean at
// 4096 x 4096). For bf16 the squares are rounded to bf16 before the f32 mean.
Recipe rmsnorm_recipe(const Backend &b, const opb_op_desc &d) {
    const auto &p = d.p.norm;
    memory::desc x_md(dims{p.rows, p.cols}, to_dt(d.dtype), tag::ab);
    memory::desc ms_md(dims{p.rows, 1}, dt::f32, tag::ab);
    memory::desc stat_md(dims{p.rows}, dt::f32, tag::a);
    Recipe r;
    r.tensor_count = 3;
    auto sq_pd = make_pd("rmsnorm (square)", d, [&] {
        return dnnl::eltwise_forward::primitive_desc(
            dnnl::eltwise_forward::desc(prop_kind::forward_inference, algorithm::eltwise_square, x_md, 0.0f, 0.0f),
            user_scratchpad(), b.engine);
    });
    auto red_pd = make_pd("rmsnorm (mean of squares)", d, [&] {
        return dnnl::reduction::primitive_desc(
            dnnl::reduction::desc(algorithm::reduction_mean, x_md, ms_md, 0.0f, 0.0f), user_scratchpad(), b.engine);
    });
    auto ln_pd = make_pd("rmsnorm (normalise)", d, [&] {
        return dnnl::layer_normalization_forward::primitive_desc(
            dnnl::layer_normalization_forward::desc(prop_kind::forward_inference, x_md, stat_md, p.eps,
                                                    dnnl::normalization_flags::use_global_stats |
                                                        dnnl::normalization_flags::use_scale),
            user_scratchpad(), b.engine);
    });
    const int sq = add_buffer(r, "squares", x_md.get_size());
    const int ms = add_buffer(r, "mean of squares", ms_md.get_size());
    const int zero =
        add_buffer(r, "zero mean", stat_md.get_size(), [n = stat_md.get_size()](void *q) { std::memset(q, 0, n); });
    r.steps.push_back({"square", sq_pd, {{DNNL_ARG_SRC, tensor(0, x_md)}, {DNNL_ARG_DST, buffer(sq, x_md)}}});
    r.steps.push_back(
        {"mean of squares", red_pd, {{DNNL_ARG_SRC, buffer(sq, x_md)}, {DNNL_ARG_DST, buffer(ms, ms_md)}}});
    MemRef gamma = f32_param(r, b, d, 1, p.cols, "gamma");
    r.steps.push_back({"normalise",
                       ln_pd,
                       {{DNNL_ARG_SRC, tensor(0, x_md)},
                        {DNNL_ARG_DST, tensor(2, x_md)},
                        {DNNL_ARG_MEAN, buffer(zero, stat_md)},
                        {DNNL_ARG_VARIANCE, buffer(ms, stat_md)},
                        {DNNL_ARG_SCALE, gamma}}});
    return r;
}

Recipe eltwise_recipe(const Backend &b, const opb_op_desc &d) {
    const auto &p = d.p.eltwise;
    memory::desc x_md(dims{p.rows, p.cols}, to_dt(d.dtype), tag::ab);
    algorithm alg = algorithm::eltwise_swish; // silu = x * sigmoid(1 * x)
    const char *what = "silu";
    if (d.op == OPB_OP_GELU) {
        alg = d.variant == OPB_GELU_TANH ? algorithm::eltwise_gelu_tanh : algorithm::eltwise_gelu_erf;
        what = d.variant == OPB_GELU_TANH ? "gelu tanh" : "gelu erf";
    }
    Recipe r;
    r.tensor_count = 2;
    auto pd = make_pd(what, d, [&] {
        return dnnl::eltwise_forward::primitive_desc(
            dnnl::eltwise_forward::desc(prop_kind::forward_inference, alg, x_md, 1.0f, 0.0f), user_scratchpad(),
            b.engine);
    });
    r.steps.push_back({what, pd, {{DNNL_ARG_SRC, tensor(0, x_md)}, {DNNL_ARG_DST, tensor(1, x_md)}}});
    return r;
}

Recipe add_recipe(const Backend &b, const opb_op_desc &d) {
    const auto &p = d.p.eltwise;
    memory::desc x_md(dims{p.rows, p.cols}, to_dt(d.dtype), tag::ab);
    Recipe r;
    r.tensor_count = 3;
    auto pd = make_pd("add", d, [&] {
        return dnnl::binary::primitive_desc(dnnl::binary::desc(algorithm::binary_add, x_md, x_md, x_md),
                                            user_scratchpad(), b.engine);
    });
    r.steps.push_back(
        {"add",
         pd,
         {{DNNL_ARG_SRC_0, tensor(0, x_md)}, {DNNL_ARG_SRC_1, tensor(1, x_md)}, {DNNL_ARG_DST, tensor(2, x_md)}}});
    return r;
}

// Composed attention, per (batch x head) as one batched problem:
//   S = scale * Q K^T                   matmul, f32 scores in a workspace;
//       the scale is the matmul's output scale
//   S += mask (causal only)             binary add in place, mask [1, seq_q, seq_kv]
//       broadcast over batch x heads. (As a matmul binary post-op this
//       broadcast sends 2.6 to its reference matmul, hence a separate pass.)
//   P = softmax(S)                      softmax_v2, in place for f32; for
//       bf16/f16 written in the dtype to a second workspace
//   O = P V                             matmul
Recipe attention_recipe(const Backend &b, const opb_op_desc &d) {
    const auto &p = d.p.attention;
    if (d.variant == OPB_ATTENTION_FUSED)
        throw Unsupported("attention fused: oneDNN 2.6 has no fused scaled-dot-product "
                          "attention primitive, and composing primitives materialises the "
                          "seq_q x seq_kv scores that the fused variant must not hold");
    if (p.causal) require_all_rows_visible("attention", p.seq_q, p.seq_kv);
    const dt t = to_dt(d.dtype);
    const int64_t bh = p.batch * p.heads;
    // Grouped-query attention: the `group` query heads that share a K/V head
    // are adjacent in Q, so Q of one K/V head is a [group * seq_q, head_dim]
    // matrix and both matmuls run per K/V head, reading K and V once (the
    // group = 1 case is plain multi-head attention). The scores of a K/V
    // head, [group * seq_q, seq_kv], are the same memory as `group` heads'
    // [seq_q, seq_kv] matrices, which the mask and softmax see.
    const int64_t kvh = attention_kv_heads(p), group = p.heads / kvh;
    const int64_t bkv = p.batch * kvh, rows = group * p.seq_q;
    memory::desc q_md(dims{bkv, rows, p.head_dim}, t, tag::abc);
    // K is stored [bkv, seq_kv, head_dim]; K^T is the same memory with strides.
    memory::desc kt_md(dims{bkv, p.head_dim, p.seq_kv}, t, dims{p.seq_kv * p.head_dim, 1, p.head_dim});
    memory::desc v_md(dims{bkv, p.seq_kv, p.head_dim}, t, tag::abc);
    memory::desc o_md = q_md;
    memory::desc s_mm_md(dims{bkv, rows, p.seq_kv}, dt::f32, tag::abc); // as the matmuls see the scores
    memory::desc p_mm_md(dims{bkv, rows, p.seq_kv}, t, tag::abc);
    memory::desc s_md(dims{bh, p.seq_q, p.seq_kv}, dt::f32, tag::abc); // as the mask and softmax see them
    memory::desc p_md(dims{bh, p.seq_q, p.seq_kv}, t, tag::abc);
    memory::desc m_md(dims{1, p.seq_q, p.seq_kv}, dt::f32, tag::abc);

    Recipe r;
    r.tensor_count = 4;
    auto qk_pd = make_pd("attention Q.K^T", d, [&] {
        auto attr = user_scratchpad();
        attr.set_output_scales(0, {effective_scale(d)});
        return dnnl::matmul::primitive_desc(dnnl::matmul::desc(q_md, kt_md, s_mm_md), attr, b.engine);
    });
    const int s_buf = add_buffer(r, "scores", s_md.get_size());
    const int p_buf = t == dt::f32 ? s_buf : add_buffer(r, "probabilities", p_md.get_size());
    auto sm_pd = make_pd("attention softmax", d, [&] {
        return dnnl::softmax_v2_forward::primitive_desc(
            dnnl::softmax_v2_forward::desc(prop_kind::forward_inference, algorithm::softmax_accurate, s_md, p_md, 2),
            user_scratchpad(), b.engine);
    });
    auto pv_pd = make_pd("attention P.V", d, [&] {
        return dnnl::matmul::primitive_desc(dnnl::matmul::desc(p_mm_md, v_md, o_md), user_scratchpad(), b.engine);
    });
    // Scopes qk / mask / softmax / pv: the same names as every backend's
    // composed attention, for the profile's component breakdown.
    StepSpec qk{
        "Q.K^T",
        qk_pd,
        {{DNNL_ARG_SRC, tensor(0, q_md)}, {DNNL_ARG_WEIGHTS, tensor(1, kt_md)}, {DNNL_ARG_DST, buffer(s_buf, s_mm_md)}},
        "qk"};
    r.steps.push_back(std::move(qk));
    if (p.causal) {
        const int m_buf = add_buffer(r, "causal mask", m_md.get_size(), causal_mask_init(p.seq_q, p.seq_kv));
        auto mpd = make_pd("attention causal mask", d, [&] {
            return dnnl::binary::primitive_desc(dnnl::binary::desc(algorithm::binary_add, s_md, m_md, s_md),
                                                user_scratchpad(), b.engine);
        });
        r.steps.push_back({"causal mask",
                           mpd,
                           {{DNNL_ARG_SRC_0, buffer(s_buf, s_md)},
                            {DNNL_ARG_SRC_1, buffer(m_buf, m_md)},
                            {DNNL_ARG_DST, buffer(s_buf, s_md)}},
                           "mask"});
    }
    r.steps.push_back(
        {"softmax", sm_pd, {{DNNL_ARG_SRC, buffer(s_buf, s_md)}, {DNNL_ARG_DST, buffer(p_buf, p_md)}}, "softmax"});
    r.steps.push_back(
        {"P.V",
         pv_pd,
         {{DNNL_ARG_SRC, buffer(p_buf, p_mm_md)}, {DNNL_ARG_WEIGHTS, tensor(2, v_md)}, {DNNL_ARG_DST, tensor(3, o_md)}},
         "pv"});
    return r;
}

// Quantisation (plugin.h, QUANTIZE) as one reorder to u8/s8 with the
// output scale 1/scale and the zero point: oneDNN's reorder rounds to
// nearest even and saturates, as plugin.h defines y. (x * (1/scale) equals
// x / scale exactly when the scale is a power of two, as the decoder's are.)
Recipe quantize_recipe(const Backend &b, const opb_op_desc &d) {
    const auto &p = d.p.quantize;
    memory::desc x_md(dims{p.rows, p.cols}, to_dt(d.dtype), tag::ab);
    memory::desc y_md(dims{p.rows, p.cols}, p.out_dtype == OPB_DTYPE_U8 ? dt::u8 : dt::s8, tag::ab);
    Recipe r;
    r.tensor_count = 2;
    auto pd = make_pd("quantize", d, [&] {
        auto attr = user_scratchpad();
        attr.set_output_scales(0, {1.0f / p.scale});
        if (p.zero_point != 0) attr.set_zero_points(DNNL_ARG_DST, 0, {p.zero_point});
        return dnnl::reorder::primitive_desc(b.engine, x_md, b.engine, y_md, attr);
    });
    r.steps.push_back({"quantize", pd, {{DNNL_ARG_FROM, tensor(0, x_md)}, {DNNL_ARG_TO, tensor(1, y_md)}}});
    return r;
}

} // namespace

Recipe make_recipe(const Backend &b, const opb_op_desc &d) {
    switch (d.op) {
    case OPB_OP_MATMUL:
        // oneDNN 2.6 has no FP8 matmul on CPUs (its f8_e4m3 came in 3.x, on few ISAs).
        if (d.dtype == OPB_DTYPE_F8_E4M3)
            throw Unsupported("no FP8 (f8e4m3) matmul in oneDNN 2.6 on CPUs: it runs on cuda on sm_89+ (cuBLASLt "
                              "FP8) and on naive (the reference)");
        return d.dtype == OPB_DTYPE_S8 ? int8_matmul_recipe(b, d) : matmul_recipe(b, d);
    case OPB_OP_SOFTMAX: return softmax_recipe(b, d);
    case OPB_OP_LAYERNORM: return layernorm_recipe(b, d);
    case OPB_OP_RMSNORM: return rmsnorm_recipe(b, d);
    case OPB_OP_GELU:
    case OPB_OP_SILU: return eltwise_recipe(b, d);
    case OPB_OP_ADD: return add_recipe(b, d);
    case OPB_OP_ATTENTION:
        // No e4m3 data type in oneDNN 2.6 (f8_e4m3 came in 3.x).
        if (d.dtype == OPB_DTYPE_F8_E4M3)
            throw Unsupported("no FP8 (f8e4m3) attention in oneDNN 2.6 on CPUs: it runs fused on cuda (cuDNN SDPA, "
                              "sm_90+) and on naive (the reference)");
        return attention_recipe(b, d);
    case OPB_OP_ROPE: return rope_recipe(d); // no oneDNN primitive pairs elements of a row: own kernel
    case OPB_OP_QUANTIZE:
        // No e4m3 data type in oneDNN 2.6 (f8_e4m3 came in 3.x).
        if (d.p.quantize.out_dtype == OPB_DTYPE_F8_E4M3)
            throw Unsupported("no FP8 (f8e4m3) quantize in oneDNN 2.6 on CPUs: it runs on cuda and on naive (the "
                              "reference)");
        return quantize_recipe(b, d);
    }
    throw UnknownOp{d.op};
}

} // namespace opbench::onednn
