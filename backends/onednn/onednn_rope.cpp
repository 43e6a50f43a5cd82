// oneDNN backend: RoPE, which oneDNN 2.6 cannot express (no primitive pairs
// two elements of a row), as this plugin's own kernel.
//
// prepare: a table of cos/sin per (position, pair), computed in double and
// stored in f32 (seq x rotary_dim/2 x 2 floats, the plan's workspace), so
// execute does no transcendental. execute: rows of Q then K, split across
// the OpenMP team; each row reads its position's table row. f32 rows are
// plain float loops (the half-split form vectorises); bf16/f16 convert
// through f32, as the other backends' kernels do.
#include "onednn_backend.hpp"

#include <omp.h>

#include <cmath>

namespace opbench::onednn {
namespace {

template <int DT>
void rotate_rows(const opb_rope_params &p, bool interleaved, int64_t rows, const void *x, void *y, const float *cs) {
    const int64_t D = p.head_dim, half = rope_rotary_dim(p) / 2;
    // Below ~64k elements the team's fork and barrier cost more than the
    // rotation (a decode step's rows): one thread then.
#pragma omp parallel for schedule(static) if (rows * D >= (int64_t(1) << 16))
    for (int64_t row = 0; row < rows; ++row) {
        const float *c = cs + (row % p.seq) * half * 2;
        const int64_t base = row * D;
        if constexpr (DT == OPB_DTYPE_F32) {
            const float *in = static_cast<const float *>(x) + base;
            float *out = static_cast<float *>(y) + base;
            if (interleaved) {
                for (int64_t i = 0; i < half; ++i) {
                    const float x0 = in[2 * i], x1 = in[2 * i + 1];
                    out[2 * i] = x0 * c[2 * i] - x1 * c[2 * i + 1];
                    out[2 * i + 1] = x1 * c[2 * i] + x0 * c[2 * i + 1];
                }
            } else {
                for (int64_t i = 0; i < half; ++i) {
                    const float x0 = in[i], x1 = in[i + half];
                    out[i] = x0 * c[2 * i] - x1 * c[2 * i + 1];
                    out[i + half] = x1 * c[2 * i] + x0 * c[2 * i + 1];
                }
            }
            for (int64_t e = 2 * half; e < D; ++e) out[e] = in[e];
        } else {
            for (int64_t i = 0; i < half; ++i) {
                const int64_t i0 = interleaved ? 2 * i : i, i1 = interleaved ? 2 * i + 1 : i + half;
                const float x0 = load_as_f32(x, DT, base + i0), x1 = load_as_f32(x, DT, base + i1);
                store_from_f32(y, DT, base + i0, x0 * c[2 * i] - x1 * c[2 * i + 1]);
                store_from_f32(y, DT, base + i1, x1 * c[2 * i] + x0 * c[2 * i + 1]);
            }
            for (int64_t e = 2 * half; e < D; ++e) store_from_f32(y, DT, base + e, load_as_f32(x, DT, base + e));
        }
    }
}

template <int DT>
void rope_t(const opb_rope_params &p, bool interleaved, void *const *t, const float *cs) {
    rotate_rows<DT>(p, interleaved, p.batch * p.heads * p.seq, t[0], t[2], cs);
    rotate_rows<DT>(p, interleaved, p.batch * rope_kv_heads(p) * p.seq, t[1], t[3], cs);
}

} // namespace

Recipe rope_recipe(const opb_op_desc &d) {
    const opb_rope_params p = d.p.rope;
    const bool interleaved = d.variant == OPB_ROPE_INTERLEAVED;
    const int64_t half = rope_rotary_dim(p) / 2;
    Recipe r;
    r.tensor_count = 4;
    r.buffers.push_back({"rope cos/sin table", uint64_t(p.seq * half * 2) * sizeof(float), [p, half](void *buf) {
                             auto *cs = static_cast<float *>(buf);
                             const double r_dim = double(rope_rotary_dim(p));
                             for (int64_t t = 0; t < p.seq; ++t)
                                 for (int64_t i = 0; i < half; ++i) {
                                     const double angle =
                                         double(p.position + t) * std::pow(double(p.theta), -2.0 * double(i) / r_dim);
                                     cs[(t * half + i) * 2] = float(std::cos(angle));
                                     cs[(t * half + i) * 2 + 1] = float(std::sin(angle));
                                 }
                         }});
    const int dtype = d.dtype;
    r.own_kernel = [p, interleaved, dtype](void *const *t, const std::vector<void *> &bufs) {
        const auto *cs = static_cast<const float *>(bufs.at(0));
        switch (dtype) {
        case OPB_DTYPE_F32: rope_t<OPB_DTYPE_F32>(p, interleaved, t, cs); break;
        case OPB_DTYPE_BF16: rope_t<OPB_DTYPE_BF16>(p, interleaved, t, cs); break;
        default: rope_t<OPB_DTYPE_F16>(p, interleaved, t, cs); break;
        }
    };
    return r;
}

} // namespace opbench::onednn
