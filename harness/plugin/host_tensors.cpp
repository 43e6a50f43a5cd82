#include "plugin/host_tensors.hpp"

#include "opbench/ops.hpp"

#include <cmath>
#include <cstring>
#include <random>

namespace opbench {

namespace {

// int8 weights in 7 bits, -64..63: what quantisers produce for x86 CPUs
// without VNNI, whose vpmaddubsw sums two u8 x s8 products in s16 and
// saturates at full 8-bit range (255 * -128 * 2 < -32768). With -128..127,
// oneDNN 2.6 on AVX2 fails verification (NMSE 0.035, docs/measurement.md).
constexpr float kWeightLevels = 64.0f;

// v in [-1, 1) as an element of an input tensor: every integer of u8 (0..255)
// and of s8 activations (-128..127) equally likely, weights (`is_weight`,
// s8) in -64..63; floating dtypes keep v.
float integer_in_range(float v, int dtype, bool is_weight) {
    if (dtype == OPB_DTYPE_S8) return std::floor(v * (is_weight ? kWeightLevels : 128.0f));
    if (dtype == OPB_DTYPE_U8) return std::floor((v + 1.0f) * 128.0f);
    return v;
}

} // namespace

HostTensors make_inputs(const opb_op_desc &desc, uint64_t seed) {
    HostTensors t;
    std::mt19937_64 rng(seed);
    // Uniform in [-1, 1): keeps exponentials and normalisations well
    // conditioned, and dot products of length 4096 far from overflow even in f16. Two values
    // per 64-bit draw, 24 bits each (every one exact in f32): several times
    // faster than uniform_real_distribution, which cost 2 s for the 53 M
    // input elements of gemm.toml's largest case.
    uint64_t bits = 0;
    bool have_half = false;
    auto dist = [&](std::mt19937_64 &g) {
        if (!have_half) bits = g();
        const uint64_t u = have_half ? (bits >> 8) & 0xffffffu : bits >> 40;
        have_half = !have_half;
        return float(u) * 0x1p-23f - 1.0f;
    };
    for (const auto &spec : op_tensors(desc)) {
        std::vector<uint8_t> buf(static_cast<std::size_t>(spec.elements()) * dtype_size(spec.dtype), 0);
        if (spec.is_output) {
            fill_sentinel(buf.data(), spec.dtype, spec.elements());
        } else {
            // Norm scales near 1 so the output is not dominated by tiny gammas;
            // int8 weights' scales positive, about 1/64 (weights in about [-1.5, 1.5]).
            const bool is_gamma = spec.name == "gamma", is_w_scale = spec.name == "w_scale";
            const bool is_weight = desc.dtype == OPB_DTYPE_S8 && spec.name == "B";
            for (int64_t i = 0; i < spec.elements(); ++i) {
                const float v = dist(rng);
                store_from_f32(buf.data(), spec.dtype, i,
                               is_gamma     ? 1.0f + 0.5f * v
                               : is_w_scale ? (1.0f + 0.5f * v) / kWeightLevels
                                            : integer_in_range(v, spec.dtype, is_weight));
            }
        }
        t.buffers.push_back(std::move(buf));
        t.is_output.push_back(spec.is_output);
    }
    return t;
}

// ---- sentinel ------------------------------------------------------------------

uint32_t sentinel_bits(int dtype) {
    switch (dtype) {
    case OPB_DTYPE_BF16: return 0x7fdbu;
    case OPB_DTYPE_F16: return 0x7edbu;
    default: return 0x7fdbdbdbu;
    }
}

void fill_sentinel(void *buf, int dtype, int64_t count) {
    const uint32_t bits = sentinel_bits(dtype);
    if (dtype_size(dtype) == 1) { // u8/s8: every byte is a value, so this is a fill, not a sentinel
        std::fill_n(static_cast<uint8_t *>(buf), count, static_cast<uint8_t>(bits));
    } else if (dtype == OPB_DTYPE_F32) {
        std::fill_n(static_cast<uint32_t *>(buf), count, bits);
    } else {
        std::fill_n(static_cast<uint16_t *>(buf), count, static_cast<uint16_t>(bits));
    }
}

bool is_sentinel(const void *buf, int dtype, int64_t i) {
    if (dtype_size(dtype) == 1) return false; // no integer is not a value: the comparison finds it
    if (dtype == OPB_DTYPE_F32) return static_cast<const uint32_t *>(buf)[i] == sentinel_bits(dtype);
    return static_cast<const uint16_t *>(buf)[i] == sentinel_bits(dtype);
}

} // namespace opbench
