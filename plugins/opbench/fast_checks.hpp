// opbench SDK — fast verification: checks of an op's output that cost far
// less than recomputing it, for ops whose reference is expensive (matmul and
// attention are O(n^3)-like; a naive f64 reference dominates a run's wall time).
//
// Each check reads host copies of the op's tensors (execute's order, as
// ops.hpp op_tensors lists them), works in f64 and takes a seed, so the same
// seed gives the same verdict on every machine. The harness records method,
// seed and what was covered in the result entry.
//
//   freivalds_matmul      C·r against A·(B·r) (+ bias·r) for a few random ±1
//                         vectors r per batch: O(M·N + K·N + M·K) instead of
//                         O(M·N·K). Every output element takes part; one wrong
//                         element in row i changes (C·r)_i by exactly its error.
//   sampled_attention     the exact f64 reference on a seeded sample of query
//                         rows (always the first and the last of each head),
//                         compared point by point; every row of O is also
//                         checked to lie in the hull of the V rows it can see.
//   int8_matmul_check     (int8 weights, reached through freivalds_matmul) the
//                         integer sums exactly: Freivalds in int64 on every
//                         row, exact sums on sampled rows; the dequantisation
//                         within its rounding bound.
//
// Each checks every output element for NaN and Inf.
//
// The op table (ops.hpp, kOps) points to these: a row's fast_check. ops.hpp
// includes this header at its end, so either header may be included first.
// Header-only; the C/C++ standard library, plugin.h, ops.hpp and two_halves.hpp only.
#ifndef OPBENCH_FAST_CHECKS_HPP
#define OPBENCH_FAST_CHECKS_HPP

#include "ops.hpp"
#include "two_halves.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace opbench {

// ---- what a check reports --------------------------------------------------------

struct FastCheckResult {
    bool passed = true;
    std::string method;       // "freivalds", "sampled-rows"
    std::string unit;         // what checked/total count: "elements", "rows"
    int64_t checked = 0;      // output units the check covered
    int64_t total = 0;        // output units there are
    int vectors = 0;          // random vectors per batch (freivalds)
    double worst_ratio = 0.0; // largest error / its tolerance; above 1 fails
    int64_t worst_index = -1; // flat index into the output of the worst place (a row's first element for a row)
    std::string detail;       // on failure: what was wrong, and where
};

struct FastCheckArgs {
    const opb_op_desc *desc = nullptr;
    const void *const *tensors = nullptr; // host copies in execute's order
    int32_t count = 0;
    uint64_t seed = 0;
    double pointwise_max_error = 0.0; // the row's Tolerance::max_pointwise
};

namespace fastcheck_detail {

// Significand bits of a dtype, counting the implicit one.
inline int significand_bits(int dtype) { return dtype == OPB_DTYPE_BF16 ? 8 : dtype == OPB_DTYPE_F16 ? 11 : 24; }

// Half the spacing of the dtype's numbers around x: the largest error with
// which a correctly rounded value can be stored as x. x is the stored value
// as f32 (exact for every dtype); below the smallest normal the spacing is
// the subnormal one. Read from the exponent bits: this runs once per output
// element.
inline double half_ulp(float x, int dtype) {
    const int p = significand_bits(dtype);
    const int min_exp = dtype == OPB_DTYPE_F16 ? -14 : -126; // smallest normal exponent
    uint32_t u;
    std::memcpy(&u, &x, 4);
    const int e = std::max(int((u >> 23) & 0xffu) - 127, min_exp);
    const uint64_t bits = uint64_t(e - p + 1023) << 52; // 2^(e - p) as a double
    double h;
    std::memcpy(&h, &bits, 8);
    return h;
}

// SplitMix64: a seeded, platform-independent stream for choosing vectors and
// rows (std::uniform_int_distribution is not the same on every library).
struct Stream {
    uint64_t state;
    uint64_t next() {
        uint64_t z = (state += 0x9e3779b97f4a7c15ull);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        return z ^ (z >> 31);
    }
    double sign() { return (next() >> 63) ? 1.0 : -1.0; }
    int64_t below(int64_t n) { return static_cast<int64_t>(next() % static_cast<uint64_t>(n)); }
};

inline std::string describe_index(const std::vector<int64_t> &shape, int64_t flat) {
    std::vector<int64_t> at(shape.size());
    for (std::size_t d = shape.size(); d-- > 0;) {
        at[d] = flat % shape[d];
        flat /= shape[d];
    }
    std::string s = "[";
    for (std::size_t d = 0; d < at.size(); ++d) s += (d ? ", " : "") + std::to_string(at[d]);
    return s + "]";
}

inline std::string number(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.4g", v);
    return buf;
}

// Element loads with the dtype fixed at compile time (the checks' inner loops).
template <int DT>
inline double ld(const void *buf, int64_t i) {
    return static_cast<double>(load_as_f32(buf, DT, i));
}

template <class F>
FastCheckResult with_dtype(int dtype, F &&f) {
    switch (dtype) {
    case OPB_DTYPE_BF16: return f(std::integral_constant<int, OPB_DTYPE_BF16>{});
    case OPB_DTYPE_F16: return f(std::integral_constant<int, OPB_DTYPE_F16>{});
    default: return f(std::integral_constant<int, OPB_DTYPE_F32>{});
    }
}

inline bool wrong_tensor_count(const FastCheckArgs &a, FastCheckResult &r) {
    const auto specs = op_tensors(*a.desc);
    if (a.tensors && a.count == static_cast<int32_t>(specs.size())) return false;
    r.passed = false;
    r.detail = "fast check got " + std::to_string(a.count) + " tensors, " + std::string(op_name(a.desc->op)) + " has " +
               std::to_string(specs.size());
    return true;
}

// Fails `r` at the first NaN or Inf of an output; true when one was found.
template <int DT>
bool find_nonfinite(const void *out, int64_t n, const TensorSpec &spec, FastCheckResult &r) {
    for (int64_t i = 0; i < n; ++i) {
        const double v = ld<DT>(out, i);
        if (std::isfinite(v)) continue;
        r.passed = false;
        r.worst_index = i;
        r.worst_ratio = std::numeric_limits<double>::infinity();
        r.detail = spec.name + describe_index(spec.shape, i) + " is " + number(v);
        return true;
    }
    return false;
}

} // namespace fastcheck_detail

// ---- matmul: Freivalds ----------------------------------------------------------
//
// For each batch and each of kVectors random ±1 vectors r, with every sum in f64:
//     d = C·r − (op(A)·(op(B)·r) + (bias·r)·1)
// For a correct C, d_i is the sum over j of r_j·e_ij, e_ij being C's own error
// at (i, j). That error has two sources, each bounded per element:
//   * storing the output in the dtype: at most half an ulp of C_ij, a
//     rounding error spread evenly, whose variance is at most half_ulp² / 3;
//   * the backend's accumulation: taken as u_acc·sqrt(K)·Σ_k |a_ik b_kj|
//     (f32 accumulation, u_acc = 2^-24, errors that grow like sqrt(K)), plus
//     2^-10·Σ|ab| when tf32 rounds the inputs; Σ_k |a_ik b_kj| is bounded by
//     ||a_i||·||b_j|| (Cauchy–Schwarz), so the row's bound costs O(M + N).
// Random signs make d_i a sum of independent terms: the row's tolerance is
// kSigmas standard deviations of that sum. One wrong element of error δ adds
// exactly ±δ to d_i for every r, so it is caught whenever |δ| exceeds its row's
// tolerance (about 0.7 rms(C) for bf16 at 4096×4096×4096, far less for f32;
// docs/measurement.md has the measured figures).
inline constexpr int kFreivaldsVectors = 4;
inline constexpr double kFreivaldsSigmas = 7.0;

namespace fastcheck_detail {

// Runs body(begin, end) over [0, n) in two halves at once (two_halves.hpp)
// when `work` (elements read) is large enough to repay a thread; else in one
// go. On gemm's largest layers the check was a second of each case's first
// process (issue 44). The elements read below which a pass runs in one go
// (tests lower it, to run their small problems in halves too).
inline int64_t work_worth_a_thread = int64_t(1) << 22;

template <class Body>
void in_two_halves(int64_t n, int64_t work, Body body) {
    sdk::in_two_halves(n, work >= work_worth_a_thread, body);
}

// The operands of one batch of C = op(A)·op(B) + bias, as stored.
template <int DT>
struct MatmulOperands {
    const void *A, *B, *bias, *C;
    int64_t M, N, K, batch_index, a0, b0, c0;
    bool trans_a, trans_b;
    double a_at(int64_t i, int64_t k) const { return ld<DT>(A, a0 + (trans_a ? k * M + i : i * K + k)); }
    double b_at(int64_t k, int64_t j) const { return ld<DT>(B, b0 + (trans_b ? j * K + k : k * N + j)); }
};

// Y = op(B)·R over k in [k0, k1), and that range's share of each column's
// squared norm into `norm_b2` (sums run in storage order; each sum that
// runs along the inner loop is a local: held in memory, every step waited
// for the store before it, as the compiler cannot tell the vectors apart).
template <int DT>
void freivalds_y(const MatmulOperands<DT> &o, const double *R, double *Y, double *norm_b2, int64_t k0, int64_t k1) {
    constexpr int V = kFreivaldsVectors;
    if (o.trans_b) {
        for (int64_t j = 0; j < o.N; ++j) {
            double norm = 0.0, r[V];
            for (int v = 0; v < V; ++v) r[v] = R[j * V + v];
            for (int64_t k = k0; k < k1; ++k) {
                const double b = o.b_at(k, j);
                norm += b * b;
                for (int v = 0; v < V; ++v) Y[k * V + v] += b * r[v];
            }
            norm_b2[j] += norm;
        }
        return;
    }
    for (int64_t k = k0; k < k1; ++k) {
        double y[V] = {};
        for (int64_t j = 0; j < o.N; ++j) {
            const double b = o.b_at(k, j);
            norm_b2[j] += b * b;
            for (int v = 0; v < V; ++v) y[v] += b * R[j * V + v];
        }
        for (int v = 0; v < V; ++v) Y[k * V + v] = y[v];
    }
}

// T = op(A)·Y + T (T holds bias·R on entry) and the rows' squared norms, for
// rows [i0, i1).
template <int DT>
void freivalds_t_rows(const MatmulOperands<DT> &o, const double *Y, double *T, double *norm_a2, int64_t i0,
                      int64_t i1) {
    constexpr int V = kFreivaldsVectors;
    if (o.trans_a) {
        for (int64_t k = 0; k < o.K; ++k)
            for (int64_t i = i0; i < i1; ++i) {
                const double x = o.a_at(i, k);
                norm_a2[i] += x * x;
                for (int v = 0; v < V; ++v) T[i * V + v] += x * Y[k * V + v];
            }
        return;
    }
    for (int64_t i = i0; i < i1; ++i) {
        double norm = 0.0, t[V];
        for (int v = 0; v < V; ++v) t[v] = T[i * V + v];
        for (int64_t k = 0; k < o.K; ++k) {
            const double x = o.a_at(i, k);
            norm += x * x;
            for (int v = 0; v < V; ++v) t[v] += x * Y[k * V + v];
        }
        norm_a2[i] = norm;
        for (int v = 0; v < V; ++v) T[i * V + v] = t[v];
    }
}

// The rows [i0, i1) of C against T: each row's C·r and its tolerance. The
// worst ratio (its first row when tied) and the first failing row's detail
// go into `r`, as a pass over the rows in order would leave them.
template <int DT>
void freivalds_c_rows(const MatmulOperands<DT> &o, const FastCheckArgs &a, const double *R, const double *T,
                      const double *norm_a2, double sum_norm_b2, double g, int64_t i0, int64_t i1,
                      FastCheckResult &r) {
    constexpr int V = kFreivaldsVectors;
    const opb_op_desc &d = *a.desc;
    for (int64_t i = i0; i < i1; ++i) {
        double rounding = 0.0, cr[V] = {};
        for (int64_t j = 0; j < o.N; ++j) {
            const float c = load_as_f32(o.C, DT, o.c0 + i * o.N + j);
            const double h = half_ulp(c, d.dtype);
            rounding += h * h;
            for (int v = 0; v < V; ++v) cr[v] += double(c) * R[j * V + v];
        }
        const double var = rounding / 3.0 + g * g * norm_a2[i] * sum_norm_b2;
        const double tol = kFreivaldsSigmas * std::sqrt(var);
        for (int v = 0; v < V; ++v) {
            const double resid = std::fabs(cr[v] - T[i * V + v]);
            // A zero tolerance (all-zero inputs) accepts only an exact match.
            const double ratio = tol > 0.0 ? resid / tol : (resid > 0.0 ? INFINITY : 0.0);
            if (ratio > r.worst_ratio) {
                r.worst_ratio = ratio;
                r.worst_index = o.c0 + i * o.N;
            }
            if (ratio > 1.0 && r.passed) {
                r.passed = false;
                r.detail = "row " + describe_index({d.p.matmul.batch, o.M}, o.batch_index * o.M + i) + " of " +
                           op_tensors(d).back().name + ": C·r differs from A·(B·r) by " + number(resid) +
                           ", tolerance " + number(tol) + " (random vector " + std::to_string(v) +
                           "): an element of that row is wrong";
            }
        }
    }
}

// `later`'s findings after `r`'s, as one pass over both in order would have them.
inline void merge_in_order(FastCheckResult &r, const FastCheckResult &later) {
    if (later.worst_ratio > r.worst_ratio) {
        r.worst_ratio = later.worst_ratio;
        r.worst_index = later.worst_index;
    }
    if (r.passed && !later.passed) {
        r.passed = false;
        r.detail = later.detail;
    }
}

template <int DT>
FastCheckResult freivalds_t(const FastCheckArgs &a) {
    const opb_op_desc &d = *a.desc;
    const auto &p = d.p.matmul;
    const int64_t M = p.m, N = p.n, K = p.k;
    const auto specs = op_tensors(d);
    const TensorSpec &out_spec = specs.back();
    const void *C = a.tensors[a.count - 1];

    FastCheckResult r;
    r.method = "freivalds";
    r.unit = "elements";
    r.vectors = kFreivaldsVectors;
    r.total = p.batch * M * N;
    if (find_nonfinite<DT>(C, r.total, out_spec, r)) return r;

    const double u_acc = std::ldexp(1.0, -24) * std::sqrt(double(K));
    const double u_in = d.variant == OPB_MATMUL_TF32 ? std::ldexp(1.0, -10) : 0.0;
    const double g = u_acc + u_in; // accumulation bound per unit of ||a_i||·||b_j||

    // All vectors at once, so A, B and C are each read twice at most:
    // R[j * V + v] is entry j of vector v; Y = op(B)·R; T = op(A)·Y + bias·R.
    constexpr int V = kFreivaldsVectors;
    std::vector<double> norm_a2(M), R(N * V), Y(K * V), T(M * V);
    std::vector<double> norm_b2_halves[2] = {std::vector<double>(N), std::vector<double>(N)};
    Stream rng{a.seed};
    for (int64_t bi = 0; bi < p.batch; ++bi) {
        MatmulOperands<DT> o{};
        o.A = a.tensors[0];
        o.B = a.tensors[1];
        o.bias = p.has_bias ? a.tensors[2] : nullptr;
        o.C = C;
        o.M = M, o.N = N, o.K = K, o.batch_index = bi;
        o.a0 = bi * M * K, o.b0 = bi * K * N, o.c0 = bi * M * N;
        o.trans_a = p.trans_a != 0, o.trans_b = p.trans_b != 0;
        for (auto &x : R) x = rng.sign();

        // Y and the column norms over two halves of k (each half its own
        // share of the norms); then T and the row norms over two halves of rows.
        for (auto &h : norm_b2_halves) std::fill(h.begin(), h.end(), 0.0);
        std::fill(Y.begin(), Y.end(), 0.0);
        in_two_halves(K, K * N, [&](int64_t k0, int64_t k1) {
            freivalds_y(o, R.data(), Y.data(), norm_b2_halves[k0 == 0 ? 0 : 1].data(), k0, k1);
        });
        double sum_norm_b2 = 0.0;
        for (const auto &h : norm_b2_halves)
            for (double x : h) sum_norm_b2 += x;
        double bias_r[V] = {};
        if (o.bias)
            for (int64_t j = 0; j < N; ++j)
                for (int v = 0; v < V; ++v) bias_r[v] += ld<DT>(o.bias, j) * R[j * V + v];
        for (int64_t i = 0; i < M; ++i)
            for (int v = 0; v < V; ++v) T[i * V + v] = bias_r[v];
        std::fill(norm_a2.begin(), norm_a2.end(), 0.0);
        in_two_halves(M, M * K, [&](int64_t i0, int64_t i1) {
            freivalds_t_rows(o, Y.data(), T.data(), norm_a2.data(), i0, i1);
        });

        // One pass over C, in two halves of rows, merged in row order.
        FastCheckResult halves[2];
        in_two_halves(M, M * N, [&](int64_t i0, int64_t i1) {
            freivalds_c_rows(o, a, R.data(), T.data(), norm_a2.data(), sum_norm_b2, g, i0, i1,
                             halves[i0 == 0 ? 0 : 1]);
        });
        merge_in_order(r, halves[0]);
        merge_in_order(r, halves[1]);
    }
    r.checked = r.total;
    return r;
}

} // namespace fastcheck_detail

inline FastCheckResult int8_matmul_check(const FastCheckArgs &a); // below

namespace fastcheck_detail {

// FP8 (dtype f8e4m3): Freivalds on f32 copies of the scaled operands
// (a_scale * A and b_scale * B, each one f32 rounding of an exact product,
// far below the bound) and of C, judged as an f32 matmul with tf32's input
// allowance (2^-10 of ||a_i||·||b_j||), which covers FP8 tensor cores'
// reduced-precision accumulation; a bf16 C keeps its own rounding bound.
inline FastCheckResult fp8_matmul_check(const FastCheckArgs &a) {
    const opb_op_desc &d = *a.desc;
    const auto &p = d.p.matmul;
    const auto specs = op_tensors(d);
    std::vector<std::vector<float>> f(static_cast<std::size_t>(a.count));
    for (int32_t t = 0; t < a.count; ++t) {
        const auto &spec = specs[std::size_t(t)];
        const double s = t == 0 ? double(load_as_f32(a.tensors[2], OPB_DTYPE_F32, 0))
                         : t == 1 ? double(load_as_f32(a.tensors[3], OPB_DTYPE_F32, 0))
                                  : 1.0;
        f[std::size_t(t)].resize(std::size_t(spec.elements()));
        for (int64_t i = 0; i < spec.elements(); ++i)
            f[std::size_t(t)][std::size_t(i)] = float(s * double(load_as_f32(a.tensors[t], spec.dtype, i)));
    }
    opb_op_desc as_f32 = d;
    as_f32.dtype = p.out_dtype; // C's rounding bound (half_ulp) is the output's
    as_f32.variant = OPB_MATMUL_TF32;
    const void *ptrs[4] = {f[0].data(), f[1].data(), nullptr, nullptr};
    int32_t n = 2;
    if (p.has_bias) ptrs[n++] = f[4].data();
    ptrs[n++] = f[std::size_t(a.count - 1)].data();
    FastCheckArgs g = a;
    g.desc = &as_f32;
    g.tensors = ptrs;
    g.count = n;
    return freivalds_t<OPB_DTYPE_F32>(g);
}

} // namespace fastcheck_detail

inline FastCheckResult freivalds_matmul(const FastCheckArgs &a) {
    FastCheckResult r;
    r.method = "freivalds";
    if (fastcheck_detail::wrong_tensor_count(a, r)) return r;
    if (a.desc->dtype == OPB_DTYPE_S8) return int8_matmul_check(a);
    if (a.desc->dtype == OPB_DTYPE_F8_E4M3) return fastcheck_detail::fp8_matmul_check(a);
    return fastcheck_detail::with_dtype(a.desc->dtype,
                                        [&](auto dt) { return fastcheck_detail::freivalds_t<decltype(dt)::value>(a); });
}

// ---- attention: sampled exact rows + hull bound --------------------------------
//
// Rows checked exactly per (batch, head): the first and the last query row
// (the causal mask's two extremes) and kSampledRandomRows more drawn from the
// seed; all of them when the head has no more rows than that. Each checked
// row is the f64 reference (scores in f64, softmax in f64, P·V in f64) with
// the bottom-right causal alignment of plugin.h; a row that sees no key must
// be zeros. Errors are point-wise against args.pointwise_max_error, each row
// on its own scale (see below): under a causal mask the first rows average
// few V rows and are large, the last average many and are small.
//
// Every row, checked or not, must lie within the hull of the V rows it sees:
// a softmax-weighted average of them stays between their per-column minimum
// and maximum (widened by the point-wise tolerance). That costs O(S·D) per
// head and catches gross corruption of unchecked rows; a subtly wrong
// unchecked row is caught only when it is sampled.
inline constexpr int kSampledRandomRows = 6;

namespace fastcheck_detail {

// The query rows of one head checked exactly: sorted, distinct.
inline std::vector<int64_t> sampled_rows(int64_t seq_q, Stream &rng) {
    std::vector<int64_t> rows;
    if (seq_q <= 2 + kSampledRandomRows) {
        for (int64_t i = 0; i < seq_q; ++i) rows.push_back(i);
        return rows;
    }
    rows = {0, seq_q - 1};
    while (static_cast<int>(rows.size()) < 2 + kSampledRandomRows) {
        const int64_t i = 1 + rng.below(seq_q - 2);
        if (std::find(rows.begin(), rows.end(), i) == rows.end()) rows.push_back(i);
    }
    std::sort(rows.begin(), rows.end());
    return rows;
}

} // namespace fastcheck_detail

// The rows of O that sampled_attention checks exactly for this seed, as flat
// row indices ((batch * heads + head) * seq_q + query row), ascending.
inline std::vector<int64_t> attention_checked_rows(const opb_op_desc &d, uint64_t seed) {
    const auto &p = d.p.attention;
    fastcheck_detail::Stream rng{seed};
    std::vector<int64_t> all;
    for (int64_t bh = 0; bh < p.batch * p.heads; ++bh)
        for (int64_t i : fastcheck_detail::sampled_rows(p.seq_q, rng)) all.push_back(bh * p.seq_q + i);
    return all;
}

namespace fastcheck_detail {

template <int DT>
FastCheckResult attention_t(const FastCheckArgs &a) {
    const opb_op_desc &d = *a.desc;
    const auto &p = d.p.attention;
    const int64_t SQ = p.seq_q, SKV = p.seq_kv, D = p.head_dim;
    const auto specs = op_tensors(d);
    const TensorSpec &out_spec = specs.back();
    const void *Q = a.tensors[0], *Kt = a.tensors[1], *V = a.tensors[2], *O = a.tensors[specs.size() - 1];
    // FP8 (ops.hpp): the scores carry q_scale * k_scale, and O is stored
    // times o_scale, so V's stored numbers count v_scale * o_scale each.
    auto scalar = [&](int i) { return double(*static_cast<const float *>(a.tensors[i])); };
    const bool fp8 = DT == OPB_DTYPE_F8_E4M3;
    const double scale = effective_scale(d) * (fp8 ? scalar(3) * scalar(4) : 1.0);
    const double v_unit = fp8 ? scalar(5) * scalar(6) : 1.0;
    auto visible = [&](int64_t i) { return p.causal ? causal_visible(i, SQ, SKV) : SKV; };

    FastCheckResult r;
    r.method = "sampled-rows";
    r.unit = "rows";
    r.total = p.batch * p.heads * SQ;
    if (find_nonfinite<DT>(O, r.total * D, out_spec, r)) return r;

    // 1. Reference rows for the sample, in f64.
    struct Row {
        int64_t first;           // flat index of the row's first element in O
        std::vector<double> ref; // D values
    };
    std::vector<Row> rows;
    std::vector<double> scores(SKV);
    double sum_sq = 0.0;
    for (int64_t flat_row : attention_checked_rows(d, a.seed)) {
        const int64_t bh = flat_row / SQ, i = flat_row % SQ;
        const int64_t q0 = bh * SQ, kv0 = attention_kv_slice(p, bh) * SKV; // in rows
        Row row{flat_row * D, std::vector<double>(D, 0.0)};
        const int64_t n = visible(i);
        double mx = -std::numeric_limits<double>::infinity();
        for (int64_t j = 0; j < n; ++j) {
            double dot = 0.0;
            for (int64_t k = 0; k < D; ++k) dot += ld<DT>(Q, (q0 + i) * D + k) * ld<DT>(Kt, (kv0 + j) * D + k);
            scores[j] = double(scale) * dot;
            mx = std::max(mx, scores[j]);
        }
        double sum = 0.0;
        for (int64_t j = 0; j < n; ++j) sum += (scores[j] = std::exp(scores[j] - mx));
        for (int64_t j = 0; j < n; ++j)
            for (int64_t k = 0; k < D; ++k) row.ref[k] += scores[j] / sum * (v_unit * ld<DT>(V, (kv0 + j) * D + k));
        for (double v : row.ref) sum_sq += v * v;
        rows.push_back(std::move(row));
    }
    const double s = std::sqrt(sum_sq / double(rows.size() * D));
    r.checked = static_cast<int64_t>(rows.size());

    // 2. Point-wise comparison of the sampled rows.
    for (const Row &row : rows) {
        double row_sq = 0.0;
        for (double v : row.ref) row_sq += v * v;
        const double row_scale = std::max(std::sqrt(row_sq / double(D)), kRowScaleFloor * s);
        for (int64_t k = 0; k < D; ++k) {
            const double out = ld<DT>(O, row.first + k), ref = row.ref[k];
            const double denom = std::fabs(ref) + row_scale;
            const double err = denom > 0.0 ? std::fabs(out - ref) / denom : std::fabs(out - ref);
            const double ratio = a.pointwise_max_error > 0.0 ? err / a.pointwise_max_error : (err > 0 ? INFINITY : 0);
            if (ratio > r.worst_ratio) {
                r.worst_ratio = ratio;
                r.worst_index = row.first + k;
            }
            if (ratio > 1.0 && r.passed) {
                r.passed = false;
                r.detail = out_spec.name + describe_index(out_spec.shape, row.first + k) + " is " + number(out) +
                           ", the f64 reference gives " + number(ref) + " (point-wise error " + number(err) + " > " +
                           number(a.pointwise_max_error) + ")";
            }
        }
    }

    // 3. Every row within the hull of the V rows it sees. Visible keys form a
    // prefix [0, n), so prefix minima and maxima serve every row of a head.
    std::vector<double> lo(SKV * D), hi(SKV * D);
    for (int64_t bh = 0; bh < p.batch * p.heads && r.passed; ++bh) {
        const int64_t q0 = bh * SQ, kv0 = attention_kv_slice(p, bh) * SKV;
        for (int64_t j = 0; j < SKV; ++j)
            for (int64_t k = 0; k < D; ++k) {
                const double v = v_unit * ld<DT>(V, (kv0 + j) * D + k);
                lo[j * D + k] = j ? std::min(lo[(j - 1) * D + k], v) : v;
                hi[j * D + k] = j ? std::max(hi[(j - 1) * D + k], v) : v;
            }
        for (int64_t i = 0; i < SQ && r.passed; ++i) {
            const int64_t n = visible(i);
            for (int64_t k = 0; k < D; ++k) {
                const double out = ld<DT>(O, (q0 + i) * D + k);
                const double low = n ? lo[(n - 1) * D + k] : 0.0, high = n ? hi[(n - 1) * D + k] : 0.0;
                const double slack = a.pointwise_max_error * (std::max(std::fabs(low), std::fabs(high)) + s);
                if (out >= low - slack && out <= high + slack) continue;
                r.passed = false;
                r.worst_ratio = std::max(r.worst_ratio, 1.0 + std::min(std::fabs(out - low), std::fabs(out - high)) /
                                                                  std::max(slack, 1e-300));
                r.worst_index = (q0 + i) * D + k;
                r.detail = out_spec.name + describe_index(out_spec.shape, (q0 + i) * D + k) + " is " + number(out) +
                           (n ? ", outside [" + number(low) + ", " + number(high) + "], the range of the " +
                                    std::to_string(n) + " V rows it can see"
                              : ", but its row sees no key and must be 0");
                break;
            }
        }
    }
    return r;
}

} // namespace fastcheck_detail

inline FastCheckResult sampled_attention(const FastCheckArgs &a) {
    FastCheckResult r;
    r.method = "sampled-rows";
    if (fastcheck_detail::wrong_tensor_count(a, r)) return r;
    if (a.desc->dtype == OPB_DTYPE_F8_E4M3) return fastcheck_detail::attention_t<OPB_DTYPE_F8_E4M3>(a);
    return fastcheck_detail::with_dtype(a.desc->dtype,
                                        [&](auto dt) { return fastcheck_detail::attention_t<decltype(dt)::value>(a); });
}

// ---- int8 matmul: exact integer sums, bounded dequantisation ---------------------
//
// C[m, n] = act_scale · w_scale[n] · S[m, n] (+ bias[n]) with S the s32 sum of
// (A - zp)·B, exact in every correct implementation. The check computes S
// exactly (int64) and judges C against it, element by element, within the
// dequantisation's bound: the f32 roundings of the dequantisation (taken as
// kInt8DequantRoundings units of 2^-24 of |C| + |bias|) plus half an ulp of C
// in its dtype. An error of one in an element's integer sum moves C by the
// step act_scale · w_scale[n]: it is caught wherever that step exceeds the
// bound (for f32 C at the host's inputs, every element; for bf16 C, only
// errors of many steps). Two parts:
//   * every row, Freivalds in integers: C's recovered sums (C - bias) / step
//     times random ±1 vectors against (A - zp)·(B·r), exact in int64, within
//     kFreivaldsSigmas deviations of the rows' bounds (in steps);
//   * sampled rows (the first, the last and kSampledRandomRows more per batch)
//     element by element.
inline constexpr double kInt8DequantRoundings = 4.0;

namespace fastcheck_detail {

// The bound on |C - exact| at one element, from the exact value's size.
inline double int8_bound(double exact, double bias, int out_dtype) {
    return half_ulp(float(exact), out_dtype) + kInt8DequantRoundings * std::ldexp(1.0, -24) * (std::fabs(exact) + std::fabs(bias));
}

struct Int8View {
    const opb_matmul_params *p;
    const void *A, *B, *C;
    const float *w_scale, *bias;
    int out_dtype, act_dtype;
    int64_t a_at(int64_t bi, int64_t i, int64_t k) const {
        const int64_t M = p->m, K = p->k;
        return int64_t(load_as_f32(A, act_dtype, bi * M * K + (p->trans_a ? k * M + i : i * K + k))) -
               p->act_zero_point;
    }
    int64_t b_at(int64_t bi, int64_t k, int64_t j) const {
        const int64_t N = p->n, K = p->k;
        return static_cast<const int8_t *>(B)[bi * K * N + (p->trans_b ? j * K + k : k * N + j)];
    }
    double step(int64_t j) const { return double(p->act_scale) * double(w_scale[j]); }
    double bias_at(int64_t j) const { return bias ? double(bias[j]) : 0.0; }
};

// Every row: Freivalds on the recovered integer sums; false when a row fails.
inline bool int8_freivalds_rows(const Int8View &v, int64_t bi, Stream &rng, FastCheckResult &r) {
    const auto &p = *v.p;
    const int64_t M = p.m, N = p.n, K = p.k;
    constexpr int V = kFreivaldsVectors;
    std::vector<int64_t> R(N * V), Y(K * V, 0);
    for (auto &x : R) x = rng.sign() > 0 ? 1 : -1;
    for (int64_t k = 0; k < K; ++k)
        for (int64_t j = 0; j < N; ++j)
            for (int w = 0; w < V; ++w) Y[k * V + w] += v.b_at(bi, k, j) * R[j * V + w];
    for (int64_t i = 0; i < M; ++i) {
        int64_t t[V] = {};
        for (int64_t k = 0; k < K; ++k)
            for (int w = 0; w < V; ++w) t[w] += v.a_at(bi, i, k) * Y[k * V + w];
        double dr[V] = {}, var = 0.0;
        for (int64_t j = 0; j < N; ++j) {
            const double c = load_as_f32(v.C, v.out_dtype, (bi * M + i) * N + j);
            const double e = int8_bound(c, v.bias_at(j), v.out_dtype) / v.step(j);
            var += e * e / 3.0;
            for (int w = 0; w < V; ++w) dr[w] += (c - v.bias_at(j)) / v.step(j) * double(R[j * V + w]);
        }
        const double tol = kFreivaldsSigmas * std::sqrt(var);
        for (int w = 0; w < V; ++w) {
            const double resid = std::fabs(dr[w] - double(t[w]));
            const double ratio = tol > 0.0 ? resid / tol : (resid > 0.0 ? INFINITY : 0.0);
            if (ratio > r.worst_ratio) {
                r.worst_ratio = ratio;
                r.worst_index = (bi * M + i) * N;
            }
            if (ratio > 1.0) {
                r.passed = false;
                r.detail = "row " + describe_index({p.batch, M}, bi * M + i) +
                           " of C: its integer sums times a random ±1 vector differ from (A - zp)·(B·r) by " +
                           number(resid) + ", tolerance " + number(tol) + ": an element of that row is wrong";
                return false;
            }
        }
    }
    return true;
}

// Sampled rows, element by element against the exact sum; false on the first failure.
inline bool int8_exact_rows(const Int8View &v, int64_t bi, const std::vector<int64_t> &rows, FastCheckResult &r) {
    const auto &p = *v.p;
    const int64_t M = p.m, N = p.n, K = p.k;
    for (int64_t i : rows)
        for (int64_t j = 0; j < N; ++j) {
            int64_t sum = 0;
            for (int64_t k = 0; k < K; ++k) sum += v.a_at(bi, i, k) * v.b_at(bi, k, j);
            const double exact = v.step(j) * double(sum) + v.bias_at(j);
            const int64_t at = (bi * M + i) * N + j;
            const double c = load_as_f32(v.C, v.out_dtype, at);
            const double tol = int8_bound(exact, v.bias_at(j), v.out_dtype);
            const double ratio = std::fabs(c - exact) / tol;
            if (ratio > r.worst_ratio) {
                r.worst_ratio = ratio;
                r.worst_index = at;
            }
            if (ratio > 1.0) {
                r.passed = false;
                r.detail = "C" + describe_index({p.batch, M, N}, at) + " is " + number(c) + ", the exact integer sum " +
                           std::to_string(sum) + " dequantises to " + number(exact) + " (bound " + number(tol) + ")";
                return false;
            }
        }
    return true;
}

} // namespace fastcheck_detail

inline FastCheckResult int8_matmul_check(const FastCheckArgs &a) {
    using namespace fastcheck_detail;
    const opb_op_desc &d = *a.desc;
    const auto &p = d.p.matmul;
    const auto specs = op_tensors(d);
    FastCheckResult r;
    r.method = "int8-exact";
    r.unit = "elements";
    r.vectors = kFreivaldsVectors;
    r.total = p.batch * p.m * p.n;
    const Int8View v{&p,
                     a.tensors[0],
                     a.tensors[1],
                     a.tensors[a.count - 1],
                     static_cast<const float *>(a.tensors[2]),
                     p.has_bias ? static_cast<const float *>(a.tensors[a.count - 2]) : nullptr, // before C
                     p.out_dtype,
                     p.act_dtype};
    const bool bf16 = p.out_dtype == OPB_DTYPE_BF16;
    if (bf16 ? find_nonfinite<OPB_DTYPE_BF16>(v.C, r.total, specs.back(), r)
             : find_nonfinite<OPB_DTYPE_F32>(v.C, r.total, specs.back(), r))
        return r;
    Stream rng{a.seed};
    for (int64_t bi = 0; bi < p.batch; ++bi) {
        if (!int8_freivalds_rows(v, bi, rng, r)) return r;
        if (!int8_exact_rows(v, bi, sampled_rows(p.m, rng), r)) return r;
    }
    r.checked = r.total; // every element takes part in the row checks
    return r;
}

} // namespace opbench

#endif // OPBENCH_FAST_CHECKS_HPP
