#include "verify.hpp"

#include "opbench/ops.hpp"

#include <cmath>
#include <random>

namespace opbench {

HostTensors make_inputs(const opb_op_desc &desc, uint64_t seed) {
    HostTensors t;
    std::mt19937_64 rng(seed);
    // Uniform in [-1, 1): keeps softmax and norms well conditioned, and the
    // products of a K=4096 matmul far from overflow even in f16.
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    const std::size_t elem = dtype_size(desc.dtype);
    for (const auto &spec : op_tensors(desc)) {
        std::vector<uint8_t> buf(static_cast<std::size_t>(spec.elements()) * elem, 0);
        if (!spec.is_output) {
            // Norm scales near 1 so the output is not dominated by tiny gammas.
            const bool is_gamma = spec.name == "gamma";
            for (int64_t i = 0; i < spec.elements(); ++i) {
                float v = dist(rng);
                store_from_f32(buf.data(), desc.dtype, i, is_gamma ? 1.0f + 0.5f * v : v);
            }
        }
        t.buffers.push_back(std::move(buf));
        t.is_output.push_back(spec.is_output);
    }
    return t;
}

double nmse(const void *out, const void *ref, int dtype, int64_t count) {
    double err = 0.0, norm = 0.0;
    for (int64_t i = 0; i < count; ++i) {
        double o = load_as_f32(out, dtype, i);
        double r = load_as_f32(ref, dtype, i);
        if (!std::isfinite(o) && std::isfinite(r)) return INFINITY;
        double d = o - r;
        err += d * d;
        norm += r * r;
    }
    if (count == 0) return 0.0;
    return norm > 0.0 ? err / norm : err / double(count);
}

Tolerance tolerance_for(const opb_op_desc &desc) {
    // Differences between correct implementations come from summation order
    // (matmul, norms, softmax sums) and from where intermediates are rounded.
    // An f32 result carries ~2^-24 relative error per element (NMSE ~1e-14);
    // long reductions and exp/erf approximations add a few orders.
    if (desc.op == OPB_OP_MATMUL && desc.variant == OPB_MATMUL_TF32)
        return {1e-5, "tf32 rounds inputs to a 10-bit mantissa (~1e-3 relative)"};
    switch (desc.dtype) {
    case OPB_DTYPE_BF16:
        // bf16 keeps 8 mantissa bits: rounding the output alone gives NMSE
        // ~1e-5; implementations that round intermediates (attention scores,
        // softmax probabilities) to bf16 add up to ~1e-4.
        return desc.op == OPB_OP_ATTENTION || desc.op == OPB_OP_SOFTMAX
                   ? Tolerance{2e-3, "bf16 (8-bit mantissa), intermediates may be bf16"}
                   : Tolerance{5e-4, "bf16 (8-bit mantissa) output rounding"};
    case OPB_DTYPE_F16:
        return desc.op == OPB_OP_ATTENTION || desc.op == OPB_OP_SOFTMAX
                   ? Tolerance{1e-4, "f16 (11-bit mantissa), intermediates may be f16"}
                   : Tolerance{2e-5, "f16 (11-bit mantissa) output rounding"};
    default:
        return {1e-8, "f32: summation order and transcendental approximations only"};
    }
}

} // namespace opbench
