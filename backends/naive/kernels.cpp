// The naive reference kernels. See kernels.hpp for the precision rules.
#include "kernels.hpp"

#include "opbench/ops.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace opbench::naive {
namespace {

// Every e4m3 code's value (e4m3_to_f32's ldexp per element made FP8
// attention 30 times slower than bf16 here).
const std::array<double, 256> kE4m3Values = [] {
    std::array<double, 256> t{};
    for (int c = 0; c < 256; ++c) t[size_t(c)] = e4m3_to_f32(uint8_t(c));
    return t;
}();

// Element access with the dtype fixed at compile time, so the per-element
// dtype switch in load_as_f32 / store_from_f32 folds away.
template <int DT>
inline double ld(const void *buf, int64_t i) {
    if constexpr (DT == OPB_DTYPE_F8_E4M3) return kE4m3Values[static_cast<const uint8_t *>(buf)[i]];
    return static_cast<double>(load_as_f32(buf, DT, i));
}
template <int DT>
inline void st(void *buf, int64_t i, double v) {
    store_from_f32(buf, DT, i, static_cast<float>(v));
}

// Call f(std::integral_constant<int, DT>) for the runtime dtype.
template <class F>
void with_dtype(int dtype, const char *op, F &&f) {
    switch (dtype) {
    case OPB_DTYPE_F32: f(std::integral_constant<int, OPB_DTYPE_F32>{}); return;
    case OPB_DTYPE_BF16: f(std::integral_constant<int, OPB_DTYPE_BF16>{}); return;
    case OPB_DTYPE_F16: f(std::integral_constant<int, OPB_DTYPE_F16>{}); return;
    }
    throw std::invalid_argument(std::string("naive ") + op + ": unknown dtype " + std::to_string(dtype) +
                                " (valid: 0 f32, 1 bf16, 2 f16)");
}

// The scale as ops.hpp defines it, so every backend applies the same float.
float attention_scale(const opb_attention_params &p) {
    opb_op_desc d = make_desc(OPB_OP_ATTENTION, OPB_DTYPE_F32);
    d.p.attention = p;
    return effective_scale(d);
}
float softmax_scale(const opb_softmax_params &p) {
    opb_op_desc d = make_desc(OPB_OP_SOFTMAX, OPB_DTYPE_F32);
    d.p.softmax = p;
    return effective_scale(d);
}

// ---- matmul -------------------------------------------------------------------

template <int DT>
void matmul_t(const opb_matmul_params &p, const void *a, const void *b, const void *bias, void *c, double *row) {
    const int64_t M = p.m, N = p.n, K = p.k;
    for (int64_t bi = 0; bi < p.batch; ++bi) {
        const int64_t a0 = bi * M * K, b0 = bi * K * N, c0 = bi * M * N;
        // op(A)[i, k]: A is stored [K, M] when transposed.
        auto A = [&](int64_t i, int64_t kk) { return ld<DT>(a, a0 + (p.trans_a ? kk * M + i : i * K + kk)); };
        for (int64_t i = 0; i < M; ++i) {
            if (!p.trans_b) {
                // Row i of C as a sum of rows of B: the inner loop streams a row
                // of B (i-k-j order), which keeps this reference usable at
                // realistic sizes.
                std::fill(row, row + N, 0.0);
                for (int64_t kk = 0; kk < K; ++kk) {
                    const double aik = A(i, kk);
                    for (int64_t j = 0; j < N; ++j) row[j] += aik * ld<DT>(b, b0 + kk * N + j);
                }
            } else {
                // B stored [N, K]: column j of op(B) is contiguous, so one dot
                // product per output element.
                for (int64_t j = 0; j < N; ++j) {
                    double s = 0.0;
                    for (int64_t kk = 0; kk < K; ++kk) s += A(i, kk) * ld<DT>(b, b0 + j * K + kk);
                    row[j] = s;
                }
            }
            for (int64_t j = 0; j < N; ++j) st<DT>(c, c0 + i * N + j, row[j] + (p.has_bias ? ld<DT>(bias, j) : 0.0));
        }
    }
}

// ---- softmax ------------------------------------------------------------------

template <int DT>
void softmax_t(const opb_softmax_params &p, const void *x, void *y) {
    const double scale = softmax_scale(p);
    for (int64_t bi = 0; bi < p.batch; ++bi) {
        for (int64_t r = 0; r < p.rows; ++r) {
            const int64_t base = (bi * p.rows + r) * p.cols;
            const int64_t visible = p.causal ? causal_visible(r, p.rows, p.cols) : p.cols;
            double mx = -std::numeric_limits<double>::infinity();
            for (int64_t c = 0; c < visible; ++c) mx = std::max(mx, scale * ld<DT>(x, base + c));
            // exp is evaluated twice (sum, then output) rather than kept in a
            // scratch row, so the kernel needs no workspace.
            double sum = 0.0;
            for (int64_t c = 0; c < visible; ++c) sum += std::exp(scale * ld<DT>(x, base + c) - mx);
            for (int64_t c = 0; c < visible; ++c) st<DT>(y, base + c, std::exp(scale * ld<DT>(x, base + c) - mx) / sum);
            for (int64_t c = visible; c < p.cols; ++c) st<DT>(y, base + c, 0.0);
        }
    }
}

// ---- norms --------------------------------------------------------------------

template <int DT>
void layernorm_t(const opb_norm_params &p, const void *x, const void *gamma, const void *beta, void *y) {
    for (int64_t r = 0; r < p.rows; ++r) {
        const int64_t base = r * p.cols;
        double sum = 0.0;
        for (int64_t c = 0; c < p.cols; ++c) sum += ld<DT>(x, base + c);
        const double mean = sum / double(p.cols);
        // Two passes (mean, then squared deviations): no cancellation from E[x^2] - E[x]^2.
        double sq = 0.0;
        for (int64_t c = 0; c < p.cols; ++c) {
            const double d = ld<DT>(x, base + c) - mean;
            sq += d * d;
        }
        const double inv = 1.0 / std::sqrt(sq / double(p.cols) + double(p.eps));
        for (int64_t c = 0; c < p.cols; ++c)
            st<DT>(y, base + c, (ld<DT>(x, base + c) - mean) * inv * ld<DT>(gamma, c) + ld<DT>(beta, c));
    }
}

template <int DT>
void rmsnorm_t(const opb_norm_params &p, const void *x, const void *gamma, void *y) {
    for (int64_t r = 0; r < p.rows; ++r) {
        const int64_t base = r * p.cols;
        double sq = 0.0;
        for (int64_t c = 0; c < p.cols; ++c) {
            const double v = ld<DT>(x, base + c);
            sq += v * v;
        }
        const double inv = 1.0 / std::sqrt(sq / double(p.cols) + double(p.eps));
        for (int64_t c = 0; c < p.cols; ++c) st<DT>(y, base + c, ld<DT>(x, base + c) * inv * ld<DT>(gamma, c));
    }
}

// ---- element-wise -------------------------------------------------------------

template <int DT, class F>
void eltwise_t(const opb_eltwise_params &p, const void *x, void *y, F f) {
    const int64_t n = p.rows * p.cols;
    for (int64_t i = 0; i < n; ++i) st<DT>(y, i, f(ld<DT>(x, i)));
}

double gelu_erf(double x) { return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0))); }
double gelu_tanh(double x) {
    const double k = std::sqrt(2.0 / 3.14159265358979323846);
    return 0.5 * x * (1.0 + std::tanh(k * (x + 0.044715 * x * x * x)));
}
double silu_f(double x) { return x / (1.0 + std::exp(-x)); }

// ---- attention ----------------------------------------------------------------

// Offsets of the (batch, head) slice in Q/O and in K/V.
struct HeadOffsets {
    int64_t q, kv;
};
HeadOffsets head_offsets(const opb_attention_params &p, int64_t bi, int64_t h) {
    const int64_t bh = bi * p.heads + h; // grouped-query: K/V head h / (heads / kv_heads)
    return {bh * p.seq_q * p.head_dim, attention_kv_slice(p, bh) * p.seq_kv * p.head_dim};
}

template <int DT>
double dot_qk(const opb_attention_params &p, const void *q, const void *k, int64_t q_row, int64_t k_row) {
    double s = 0.0;
    for (int64_t d = 0; d < p.head_dim; ++d) s += ld<DT>(q, q_row * p.head_dim + d) * ld<DT>(k, k_row * p.head_dim + d);
    return s;
}

template <int DT>
void attention_composed_t(const opb_attention_params &p, const void *q, const void *k, const void *v, void *o,
                          double *scores, const sdk::ScopeHost &scopes, const AttentionScales &sc) {
    const double scale = attention_scale(p) * sc.q * sc.k; // FP8: the stored products' dequantisation
    const double out_scale = sc.v * sc.o;
    const int64_t SQ = p.seq_q, SKV = p.seq_kv, D = p.head_dim;
    constexpr double kMasked = -std::numeric_limits<double>::infinity();
    for (int64_t bi = 0; bi < p.batch; ++bi) {
        for (int64_t h = 0; h < p.heads; ++h) {
            const HeadOffsets off = head_offsets(p, bi, h);
            const int64_t q0 = off.q / D, kv0 = off.kv / D; // in rows
            auto visible = [&](int64_t i) { return p.causal ? causal_visible(i, SQ, SKV) : SKV; };

            // 1. S = scale * Q K^T for the visible pairs (the masked ones are
            //    never computed: FLOPs count visible pairs only)
            {
                OPB_SCOPE(scopes, "qk");
                for (int64_t i = 0; i < SQ; ++i) {
                    const int64_t n = visible(i);
                    for (int64_t j = 0; j < n; ++j) scores[i * SKV + j] = scale * dot_qk<DT>(p, q, k, q0 + i, kv0 + j);
                }
            }

            // 2. S += mask: -inf into the masked pairs, so that softmax reads
            //    a complete score matrix, as composed attention does
            if (p.causal) {
                OPB_SCOPE(scopes, "mask");
                for (int64_t i = 0; i < SQ; ++i)
                    std::fill(scores + i * SKV + visible(i), scores + (i + 1) * SKV, kMasked);
            }

            // 3. P = softmax(S) over each whole row, in place; exp(-inf) is 0.
            //    A row with no visible key stays all zeros.
            {
                OPB_SCOPE(scopes, "softmax");
                for (int64_t i = 0; i < SQ; ++i) {
                    double *row = scores + i * SKV;
                    double mx = kMasked;
                    for (int64_t j = 0; j < SKV; ++j) mx = std::max(mx, row[j]);
                    if (mx == kMasked) {
                        std::fill(row, row + SKV, 0.0);
                        continue;
                    }
                    double sum = 0.0;
                    for (int64_t j = 0; j < SKV; ++j) {
                        row[j] = std::exp(row[j] - mx);
                        sum += row[j];
                    }
                    for (int64_t j = 0; j < SKV; ++j) row[j] /= sum;
                }
            }

            // 4. O = P V over the visible columns (the masked ones are 0)
            {
                OPB_SCOPE(scopes, "pv");
                for (int64_t i = 0; i < SQ; ++i) {
                    const double *row = scores + i * SKV;
                    const int64_t n = visible(i);
                    for (int64_t d = 0; d < D; ++d) {
                        double acc = 0.0;
                        for (int64_t j = 0; j < n; ++j) acc += row[j] * ld<DT>(v, (kv0 + j) * D + d);
                        st<DT>(o, (q0 + i) * D + d, acc * out_scale); // 0 for a row that sees no key
                    }
                }
            }
        }
    }
}

// Workspace layout of the fused kernel, in doubles.
struct FusedLayout {
    int64_t scores, acc, max, sum, total;
};
FusedLayout fused_layout(int64_t head_dim) {
    FusedLayout l{};
    l.scores = 0;
    l.acc = l.scores + kFusedTileQ * kFusedTileKV;
    l.max = l.acc + kFusedTileQ * head_dim;
    l.sum = l.max + kFusedTileQ;
    l.total = l.sum + kFusedTileQ;
    return l;
}

template <int DT>
void attention_fused_t(const opb_attention_params &p, const void *q, const void *k, const void *v, void *o, double *ws,
                       const AttentionScales &sc) {
    const double scale = attention_scale(p) * sc.q * sc.k; // FP8: the stored products' dequantisation
    const double out_scale = sc.v * sc.o;
    const int64_t SQ = p.seq_q, SKV = p.seq_kv, D = p.head_dim;
    const FusedLayout L = fused_layout(D);
    double *S = ws + L.scores; // [kFusedTileQ][kFusedTileKV] scores of the current tile
    double *acc = ws + L.acc;  // [kFusedTileQ][D] unnormalised output rows
    double *m = ws + L.max;    // [kFusedTileQ] running max of each row's scores
    double *l = ws + L.sum;    // [kFusedTileQ] running sum of exp(score - m)
    constexpr double kNegInf = -std::numeric_limits<double>::infinity();

    for (int64_t bi = 0; bi < p.batch; ++bi) {
        for (int64_t h = 0; h < p.heads; ++h) {
            const HeadOffsets off = head_offsets(p, bi, h);
            const int64_t q_base = off.q / D, kv_base = off.kv / D; // in rows
            auto visible = [&](int64_t i) { return p.causal ? causal_visible(i, SQ, SKV) : SKV; };

            for (int64_t t0 = 0; t0 < SQ; t0 += kFusedTileQ) {
                const int64_t nq = std::min(kFusedTileQ, SQ - t0);
                std::fill(acc, acc + nq * D, 0.0);
                std::fill(m, m + nq, kNegInf);
                std::fill(l, l + nq, 0.0);
                // The tile's last row sees the most keys; blocks past it are masked for all rows.
                const int64_t kv_end = visible(t0 + nq - 1);

                for (int64_t k0 = 0; k0 < kv_end; k0 += kFusedTileKV) {
                    const int64_t nk = std::min(kFusedTileKV, kv_end - k0);
                    for (int64_t r = 0; r < nq; ++r) {
                        const int64_t i = t0 + r;
                        const int64_t n = std::clamp<int64_t>(visible(i) - k0, 0, nk);
                        if (n == 0) continue; // this row sees none of this block
                        double *srow = S + r * kFusedTileKV;
                        double *arow = acc + r * D;
                        double block_max = kNegInf;
                        for (int64_t j = 0; j < n; ++j) {
                            srow[j] = scale * dot_qk<DT>(p, q, k, q_base + i, kv_base + k0 + j);
                            block_max = std::max(block_max, srow[j]);
                        }
                        // Online softmax: when the running max grows, everything
                        // accumulated so far was weighted by exp(s - old max);
                        // rescale it to the new max.
                        const double new_max = std::max(m[r], block_max);
                        const double correction = std::exp(m[r] - new_max); // 0 on the first block
                        l[r] *= correction;
                        for (int64_t d = 0; d < D; ++d) arow[d] *= correction;
                        for (int64_t j = 0; j < n; ++j) {
                            const double w = std::exp(srow[j] - new_max);
                            l[r] += w;
                            const int64_t vrow = (kv_base + k0 + j) * D;
                            for (int64_t d = 0; d < D; ++d) arow[d] += w * ld<DT>(v, vrow + d);
                        }
                        m[r] = new_max;
                    }
                }
                for (int64_t r = 0; r < nq; ++r) {
                    // l == 0: the row saw no key (causal, seq_q > seq_kv): zeros, as composed.
                    const double inv = l[r] > 0.0 ? out_scale / l[r] : 0.0;
                    for (int64_t d = 0; d < D; ++d) st<DT>(o, (q_base + t0 + r) * D + d, acc[r * D + d] * inv);
                }
            }
        }
    }
}

// ---- rope -----------------------------------------------------------------------

// Rotates `rows` rows of head_dim elements (x -> y); row r is at position
// p.position + r % seq.
template <int DT>
void rope_rows_t(const opb_rope_params &p, int variant, int64_t rows, const void *x, void *y) {
    const int64_t D = p.head_dim, R = rope_rotary_dim(p), half = R / 2;
    for (int64_t row = 0; row < rows; ++row) {
        const double t = double(p.position + row % p.seq);
        const int64_t base = row * D;
        for (int64_t i = 0; i < half; ++i) {
            // angle = t * theta^(-2i / rotary_dim), in double
            const double angle = t * std::pow(double(p.theta), -2.0 * double(i) / double(R));
            const double c = std::cos(angle), s = std::sin(angle);
            const int64_t i0 = variant == OPB_ROPE_INTERLEAVED ? 2 * i : i;
            const int64_t i1 = variant == OPB_ROPE_INTERLEAVED ? 2 * i + 1 : i + half;
            const double x0 = ld<DT>(x, base + i0), x1 = ld<DT>(x, base + i1);
            st<DT>(y, base + i0, x0 * c - x1 * s);
            st<DT>(y, base + i1, x1 * c + x0 * s);
        }
        for (int64_t e = R; e < D; ++e) st<DT>(y, base + e, ld<DT>(x, base + e)); // past rotary_dim: copied
    }
}

} // namespace

// ---- public entry points --------------------------------------------------------

void matmul(const opb_matmul_params &p, int dtype, const void *a, const void *b, const void *bias, void *c,
            double *workspace) {
    with_dtype(dtype, "matmul", [&](auto dt) { matmul_t<decltype(dt)::value>(p, a, b, bias, c, workspace); });
}

void fp8_matmul(const opb_matmul_params &p, const uint8_t *a, const uint8_t *b, float a_scale, float b_scale,
                const float *bias, void *c, double *row) {
    const int64_t M = p.m, N = p.n, K = p.k;
    double lut[256]; // every e4m3 code's value
    for (int v = 0; v < 256; ++v) lut[v] = e4m3_to_f32(uint8_t(v));
    const double scale = double(a_scale) * double(b_scale);
    for (int64_t bi = 0; bi < p.batch; ++bi) {
        const int64_t a0 = bi * M * K, b0 = bi * K * N, c0 = bi * M * N;
        for (int64_t i = 0; i < M; ++i) {
            std::fill(row, row + N, 0.0);
            for (int64_t kk = 0; kk < K; ++kk) {
                const double aik = lut[a[a0 + (p.trans_a ? kk * M + i : i * K + kk)]];
                for (int64_t j = 0; j < N; ++j) row[j] += aik * lut[b[b0 + (p.trans_b ? j * K + kk : kk * N + j)]];
            }
            for (int64_t j = 0; j < N; ++j)
                store_from_f32(c, p.out_dtype, c0 + i * N + j,
                               static_cast<float>(scale * row[j] + (bias ? double(bias[j]) : 0.0)));
        }
    }
}

void int8_matmul(const opb_matmul_params &p, const void *a, const void *b, const float *w_scale, const float *bias,
                 void *c, void *workspace) {
    const int64_t M = p.m, N = p.n, K = p.k;
    auto *row = static_cast<int64_t *>(workspace);
    for (int64_t bi = 0; bi < p.batch; ++bi) {
        const int64_t a0 = bi * M * K, b0 = bi * K * N, c0 = bi * M * N;
        for (int64_t i = 0; i < M; ++i) {
            std::fill(row, row + N, int64_t(0));
            for (int64_t kk = 0; kk < K; ++kk) {
                const int64_t aik =
                    int64_t(load_as_f32(a, p.act_dtype, a0 + (p.trans_a ? kk * M + i : i * K + kk))) - p.act_zero_point;
                for (int64_t j = 0; j < N; ++j)
                    row[j] += aik * static_cast<const int8_t *>(b)[b0 + (p.trans_b ? j * K + kk : kk * N + j)];
            }
            // Exact sums; the dequantisation in double, rounded once at the store.
            for (int64_t j = 0; j < N; ++j) {
                const double v = double(p.act_scale) * double(w_scale[j]) * double(row[j]) + (bias ? bias[j] : 0.0);
                store_from_f32(c, p.out_dtype, c0 + i * N + j, static_cast<float>(v));
            }
        }
    }
}

void softmax(const opb_softmax_params &p, int dtype, const void *x, void *y) {
    with_dtype(dtype, "softmax", [&](auto dt) { softmax_t<decltype(dt)::value>(p, x, y); });
}

void layernorm(const opb_norm_params &p, int dtype, const void *x, const void *gamma, const void *beta, void *y) {
    with_dtype(dtype, "layernorm", [&](auto dt) { layernorm_t<decltype(dt)::value>(p, x, gamma, beta, y); });
}

void rmsnorm(const opb_norm_params &p, int dtype, const void *x, const void *gamma, void *y) {
    with_dtype(dtype, "rmsnorm", [&](auto dt) { rmsnorm_t<decltype(dt)::value>(p, x, gamma, y); });
}

void gelu(const opb_eltwise_params &p, int dtype, int variant, const void *x, void *y) {
    if (variant != OPB_GELU_ERF && variant != OPB_GELU_TANH)
        throw std::invalid_argument("naive gelu: unknown variant " + std::to_string(variant) +
                                    " (valid: 0 erf, 1 tanh)");
    with_dtype(dtype, "gelu", [&](auto dt) {
        if (variant == OPB_GELU_TANH)
            eltwise_t<decltype(dt)::value>(p, x, y, gelu_tanh);
        else
            eltwise_t<decltype(dt)::value>(p, x, y, gelu_erf);
    });
}

void silu(const opb_eltwise_params &p, int dtype, const void *x, void *y) {
    with_dtype(dtype, "silu", [&](auto dt) { eltwise_t<decltype(dt)::value>(p, x, y, silu_f); });
}

void add(const opb_eltwise_params &p, int dtype, const void *a, const void *b, void *y) {
    with_dtype(dtype, "add", [&](auto dt) {
        constexpr int DT = decltype(dt)::value;
        const int64_t n = p.rows * p.cols;
        for (int64_t i = 0; i < n; ++i) st<DT>(y, i, ld<DT>(a, i) + ld<DT>(b, i));
    });
}

void attention_composed(const opb_attention_params &p, int dtype, const void *q, const void *k, const void *v, void *o,
                        double *workspace, const sdk::ScopeHost &scopes, const AttentionScales &scales) {
    if (dtype == OPB_DTYPE_F8_E4M3)
        return attention_composed_t<OPB_DTYPE_F8_E4M3>(p, q, k, v, o, workspace, scopes, scales);
    with_dtype(dtype, "attention",
               [&](auto dt) { attention_composed_t<decltype(dt)::value>(p, q, k, v, o, workspace, scopes, scales); });
}

void attention_fused(const opb_attention_params &p, int dtype, const void *q, const void *k, const void *v, void *o,
                     double *workspace, const AttentionScales &scales) {
    if (dtype == OPB_DTYPE_F8_E4M3) return attention_fused_t<OPB_DTYPE_F8_E4M3>(p, q, k, v, o, workspace, scales);
    with_dtype(dtype, "attention",
               [&](auto dt) { attention_fused_t<decltype(dt)::value>(p, q, k, v, o, workspace, scales); });
}

void rope(const opb_rope_params &p, int dtype, int variant, const void *q, const void *k, void *qr, void *kr) {
    if (variant != OPB_ROPE_HALF_SPLIT && variant != OPB_ROPE_INTERLEAVED)
        throw std::invalid_argument("naive rope: unknown variant " + std::to_string(variant) +
                                    " (valid: 0 half_split, 1 interleaved)");
    with_dtype(dtype, "rope", [&](auto dt) {
        constexpr int DT = decltype(dt)::value;
        rope_rows_t<DT>(p, variant, p.batch * p.heads * p.seq, q, qr);
        rope_rows_t<DT>(p, variant, p.batch * rope_kv_heads(p) * p.seq, k, kr);
    });
}

void quantize(const opb_quantize_params &p, int dtype, const void *x, void *y) {
    const int64_t n = p.rows * p.cols;
    with_dtype(dtype, "quantize", [&](auto dt) {
        constexpr int DT = decltype(dt)::value;
        if (p.out_dtype == OPB_DTYPE_F8_E4M3) { // plugin.h: the quotient rounded to f32, then to e4m3 (saturating)
            for (int64_t i = 0; i < n; ++i) store_from_f32(y, p.out_dtype, i, static_cast<float>(ld<DT>(x, i)) / p.scale);
            return;
        }
        const double lo = p.out_dtype == OPB_DTYPE_U8 ? 0.0 : -128.0, hi = p.out_dtype == OPB_DTYPE_U8 ? 255.0 : 127.0;
        for (int64_t i = 0; i < n; ++i) {
            const double v = ld<DT>(x, i) / double(p.scale);          // the exact quotient, rounded once below
            const double q = std::isnan(v) ? 0.0 : std::nearbyint(v); // ties to even (the default rounding mode)
            store_from_f32(y, p.out_dtype, i, static_cast<float>(std::clamp(q + p.zero_point, lo, hi)));
        }
    });
}

// ---- dispatch: one row per row of the SDK's op table --------------------------------

namespace {

struct KernelRow {
    int op; // opb_op_kind, = the row's index, as in kOps
    void (*run)(const opb_op_desc &d, void *const *t, double *workspace, const sdk::ScopeHost &scopes);
    uint64_t (*workspace_bytes)(const opb_op_desc &d); // nullptr: none
};

uint64_t no_workspace(const opb_op_desc &) { return 0; }

// FP8 attention's four f32 [1] scale tensors, in execute's order.
AttentionScales attention_scales(void *const *t) {
    auto at = [&](int i) { return double(*static_cast<const float *>(t[i])); };
    return {at(0), at(1), at(2), at(3)};
}

constexpr KernelRow kKernels[] = {
    {OPB_OP_MATMUL,
     [](const opb_op_desc &d, void *const *t, double *ws, const sdk::ScopeHost &) {
         if (d.dtype == OPB_DTYPE_F8_E4M3) { // FP8: A, B, a_scale, b_scale, [bias], C
             const auto &p = d.p.matmul;
             fp8_matmul(p, static_cast<const uint8_t *>(t[0]), static_cast<const uint8_t *>(t[1]),
                        *static_cast<const float *>(t[2]), *static_cast<const float *>(t[3]),
                        p.has_bias ? static_cast<const float *>(t[4]) : nullptr, t[p.has_bias ? 5 : 4], ws);
         } else if (d.dtype == OPB_DTYPE_S8) // int8 weights: A, B, w_scale, [bias], C
             int8_matmul(d.p.matmul, t[0], t[1], static_cast<const float *>(t[2]),
                         d.p.matmul.has_bias ? static_cast<const float *>(t[3]) : nullptr,
                         t[d.p.matmul.has_bias ? 4 : 3], ws);
         else if (d.p.matmul.has_bias)
             matmul(d.p.matmul, d.dtype, t[0], t[1], t[2], t[3], ws);
         else
             matmul(d.p.matmul, d.dtype, t[0], t[1], nullptr, t[2], ws);
     },
     [](const opb_op_desc &d) { return uint64_t(d.p.matmul.n) * sizeof(double); }},
    {OPB_OP_SOFTMAX,
     [](const opb_op_desc &d, void *const *t, double *, const sdk::ScopeHost &) {
         softmax(d.p.softmax, d.dtype, t[0], t[1]);
     },
     no_workspace},
    {OPB_OP_LAYERNORM,
     [](const opb_op_desc &d, void *const *t, double *, const sdk::ScopeHost &) {
         layernorm(d.p.norm, d.dtype, t[0], t[1], t[2], t[3]);
     },
     no_workspace},
    {OPB_OP_RMSNORM,
     [](const opb_op_desc &d, void *const *t, double *, const sdk::ScopeHost &) {
         rmsnorm(d.p.norm, d.dtype, t[0], t[1], t[2]);
     },
     no_workspace},
    {OPB_OP_GELU,
     [](const opb_op_desc &d, void *const *t, double *, const sdk::ScopeHost &) {
         gelu(d.p.eltwise, d.dtype, d.variant, t[0], t[1]);
     },
     no_workspace},
    {OPB_OP_SILU,
     [](const opb_op_desc &d, void *const *t, double *, const sdk::ScopeHost &) {
         silu(d.p.eltwise, d.dtype, t[0], t[1]);
     },
     no_workspace},
    {OPB_OP_ADD,
     [](const opb_op_desc &d, void *const *t, double *, const sdk::ScopeHost &) {
         add(d.p.eltwise, d.dtype, t[0], t[1], t[2]);
     },
     no_workspace},
    {OPB_OP_ATTENTION,
     [](const opb_op_desc &d, void *const *t, double *ws, const sdk::ScopeHost &scopes) {
         // FP8: Q, K, V, q_scale, k_scale, v_scale, o_scale, O (ops.hpp)
         const bool fp8 = d.dtype == OPB_DTYPE_F8_E4M3;
         const AttentionScales sc = fp8 ? attention_scales(t + 3) : AttentionScales{};
         void *o = t[fp8 ? 7 : 3];
         if (d.variant == OPB_ATTENTION_FUSED)
             attention_fused(d.p.attention, d.dtype, t[0], t[1], t[2], o, ws, sc);
         else if (d.variant == OPB_ATTENTION_COMPOSED)
             attention_composed(d.p.attention, d.dtype, t[0], t[1], t[2], o, ws, scopes, sc);
         else
             throw std::invalid_argument("naive attention: unknown variant " + std::to_string(d.variant) +
                                         " (valid: 0 composed, 1 fused)");
     },
     [](const opb_op_desc &d) {
         const auto &p = d.p.attention;
         if (d.variant == OPB_ATTENTION_FUSED) return uint64_t(fused_layout(p.head_dim).total) * sizeof(double);
         return uint64_t(p.seq_q) * uint64_t(p.seq_kv) * sizeof(double);
     }},
    {OPB_OP_ROPE,
     [](const opb_op_desc &d, void *const *t, double *, const sdk::ScopeHost &) {
         rope(d.p.rope, d.dtype, d.variant, t[0], t[1], t[2], t[3]);
     },
     no_workspace},
    {OPB_OP_QUANTIZE,
     [](const opb_op_desc &d, void *const *t, double *, const sdk::ScopeHost &) {
         quantize(d.p.quantize, d.dtype, t[0], t[1]);
     },
     no_workspace},
};
// The reference runs every op: a new row in kOps needs its kernel here.
static_assert(std::size(kKernels) == std::size(kOps), "naive: one kernel per row of kOps");
static_assert(
    [] {
        for (std::size_t i = 0; i < std::size(kKernels); ++i)
            if (kKernels[i].op != static_cast<int>(i)) return false;
        return true;
    }(),
    "naive: kKernels rows in opb_op_kind order");

} // namespace

bool has_kernel(int op) { return op >= 0 && op < static_cast<int>(std::size(kKernels)); }

uint64_t workspace_bytes(const opb_op_desc &desc) {
    return has_kernel(desc.op) ? kKernels[desc.op].workspace_bytes(desc) : 0;
}

void run(const opb_op_desc &d, void *const *t, void *workspace, const sdk::ScopeHost &scopes) {
    if (!has_kernel(d.op)) throw std::invalid_argument("naive: no kernel for op " + std::to_string(d.op));
    kKernels[d.op].run(d, t, static_cast<double *>(workspace), scopes);
}

} // namespace opbench::naive
