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

// Per op, dtype and variant, with the reasons: each op's row in the SDK's kOps.
Tolerance tolerance_for(const opb_op_desc &desc) {
    if (const OpInfo *row = op_info(desc.op)) return row->tolerance(desc);
    return op_rows::dtype_tolerance(desc.dtype, false);
}

} // namespace opbench
