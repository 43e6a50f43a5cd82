#include "plugin/host_tensors.hpp"

#include "opbench/ops.hpp"
#include "opbench/two_halves.hpp"

#include <cmath>
#include <cstring>
#include <random>

#include <sys/mman.h>

namespace opbench {

namespace {

// int8 weights in 7 bits, -64..63: what quantisers produce for x86 CPUs
// without VNNI, whose vpmaddubsw sums two u8 x s8 products in s16 and
// saturates at full 8-bit range (255 * -128 * 2 < -32768). With -128..127,
// oneDNN 2.6 on AVX2 fails verification (NMSE 0.035, docs/measurement.md).
constexpr float kWeightLevels = 64.0f;

// FP8 inputs span e4m3's range, as a per-tensor scale of amax / 448 makes them:
// stored values v * 448 (every exponent, subnormals included), scales ~1/448.
constexpr float kFp8Max = 448.0f;

// v in [-1, 1) as an element of an input tensor: every integer of u8 (0..255)
// and of s8 activations (-128..127) equally likely, weights (`is_weight`,
// s8) in -64..63; f8e4m3 v * 448; other floating dtypes keep v.
float integer_in_range(float v, int dtype, bool is_weight) {
    if (dtype == OPB_DTYPE_S8) return std::floor(v * (is_weight ? kWeightLevels : 128.0f));
    if (dtype == OPB_DTYPE_U8) return std::floor((v + 1.0f) * 128.0f);
    if (dtype == OPB_DTYPE_F8_E4M3) return v * kFp8Max; // e4m3's whole range, rounded by store_from_f32
    return v;
}

// Uniform in [-1, 1): keeps exponentials and normalisations well
// conditioned, and dot products of length 4096 far from overflow even in f16.
// Two values per 64-bit draw, 24 bits each (every one exact in f32): several
// times faster than uniform_real_distribution, which cost 2 s for the 53 M
// input elements of gemm.toml's largest case.
class UniformStream {
public:
    explicit UniformStream(uint64_t seed) : rng_(seed) {}
    float next() {
        if (!have_half_) bits_ = rng_();
        const uint64_t u = have_half_ ? (bits_ >> 8) & 0xffffffu : bits_ >> 40;
        have_half_ = !have_half_;
        return value(u);
    }
    // The next two values, as two calls of next() give them, when no half
    // of a draw is left over: one draw, no branch (issue 44: next() was half
    // of the 0.5 CPU-s gemm's largest layer took for its inputs).
    [[nodiscard]] bool at_a_whole_draw() const { return !have_half_; }
    void next_two(float &first, float &second) {
        const uint64_t bits = rng_();
        first = value(bits >> 40);
        second = value((bits >> 8) & 0xffffffu);
    }

private:
    static float value(uint64_t u24) { return float(u24) * 0x1p-23f - 1.0f; }
    std::mt19937_64 rng_;
    uint64_t bits_ = 0;
    bool have_half_ = false;
};

// One input tensor's values in order, stored as `Dtype`: a compile-time
// dtype folds store_from_f32's per-element switch away (issue 44: every
// worker process of a case makes its inputs again, and the switch was half
// of the 0.9 CPU-s that gemm's largest layer took in each).
template <int Dtype, class ToValue>
void fill_as(uint8_t *buf, int64_t count, UniformStream &stream, ToValue to_value) {
    int64_t i = 0;
    if (count > 0 && !stream.at_a_whole_draw()) store_from_f32(buf, Dtype, i++, to_value(stream.next(), Dtype));
    for (; i + 1 < count; i += 2) {
        float a, b;
        stream.next_two(a, b);
        store_from_f32(buf, Dtype, i, to_value(a, Dtype));
        store_from_f32(buf, Dtype, i + 1, to_value(b, Dtype));
    }
    if (i < count) store_from_f32(buf, Dtype, i, to_value(stream.next(), Dtype));
}

template <class ToValue>
void fill_input(uint8_t *buf, int dtype, int64_t count, UniformStream &stream, ToValue to_value) {
    switch (dtype) {
    case OPB_DTYPE_BF16: fill_as<OPB_DTYPE_BF16>(buf, count, stream, to_value); break;
    case OPB_DTYPE_F16: fill_as<OPB_DTYPE_F16>(buf, count, stream, to_value); break;
    case OPB_DTYPE_S8: fill_as<OPB_DTYPE_S8>(buf, count, stream, to_value); break;
    case OPB_DTYPE_U8: fill_as<OPB_DTYPE_U8>(buf, count, stream, to_value); break;
    case OPB_DTYPE_F8_E4M3: fill_as<OPB_DTYPE_F8_E4M3>(buf, count, stream, to_value); break;
    default: fill_as<OPB_DTYPE_F32>(buf, count, stream, to_value); break; // as store_from_f32's default
    }
}

} // namespace

namespace {

// The kernel's first touch of the pages [first, last) of `page` bytes each
// (MADV_POPULATE_WRITE, Linux 5.14+), in two halves on two threads: page
// faults are most of the cost of a fresh buffer of hundreds of MB (about
// 12 us per 4 KiB page on a KVM guest of this project), and two vCPUs take
// them side by side. Without the advice the zeros written next touch them.
void populate_in_two_halves(std::uintptr_t first, std::uintptr_t last, std::uintptr_t page) {
    sdk::in_two_halves(int64_t((last - first) / page), true, [&](int64_t begin, int64_t end) {
        if (end > begin)
            (void)::madvise(reinterpret_cast<void *>(first + std::uintptr_t(begin) * page),
                            std::size_t(end - begin) * page, MADV_POPULATE_WRITE);
    });
}

} // namespace

std::vector<uint8_t> zeroed_host_buffer(std::size_t bytes) {
    constexpr std::uintptr_t kHugePage = std::uintptr_t(2) << 20, kPage = 4096;
    constexpr std::size_t kWorthAThread = std::size_t(64) << 20;
    std::vector<uint8_t> buf;
    if (bytes >= 2 * kHugePage) {
        // Reserved, not yet touched (malloc maps a block this large afresh):
        // the advice covers the whole 2 MB pages inside it before the zeros
        // touch them. Without transparent huge pages it fails, harmlessly.
        buf.reserve(bytes);
        const auto begin = reinterpret_cast<std::uintptr_t>(buf.data());
        const std::uintptr_t first = (begin + kHugePage - 1) & ~(kHugePage - 1);
        const std::uintptr_t last = (begin + bytes) & ~(kHugePage - 1);
        if (last > first) (void)::madvise(reinterpret_cast<void *>(first), last - first, MADV_HUGEPAGE);
        if (bytes >= kWorthAThread)
            populate_in_two_halves((begin + kPage - 1) & ~(kPage - 1), (begin + bytes) & ~(kPage - 1), kPage);
    }
    buf.resize(bytes);
    return buf;
}

HostTensors make_inputs(const opb_op_desc &desc, uint64_t seed) {
    HostTensors t;
    UniformStream stream(seed);
    for (const auto &spec : op_tensors(desc)) {
        std::vector<uint8_t> buf = zeroed_host_buffer(static_cast<std::size_t>(spec.elements()) * dtype_size(spec.dtype));
        if (spec.is_output) {
            fill_sentinel(buf.data(), spec.dtype, spec.elements());
        } else if (spec.name == "gamma") { // norm scales near 1, so tiny gammas do not dominate the output
            fill_input(buf.data(), spec.dtype, spec.elements(), stream, [](float v, int) { return 1.0f + 0.5f * v; });
        } else if (spec.name == "w_scale") { // int8 weights' scales: positive, about 1/64 (weights in ~[-1.5, 1.5])
            fill_input(buf.data(), spec.dtype, spec.elements(), stream,
                       [](float v, int) { return (1.0f + 0.5f * v) / kWeightLevels; });
        } else if (spec.name == "a_scale" || spec.name == "b_scale" || spec.name == "q_scale" ||
                   spec.name == "k_scale" || spec.name == "v_scale") { // FP8's per-tensor scales, about 1/448
            fill_input(buf.data(), spec.dtype, spec.elements(), stream,
                       [](float v, int) { return (1.0f + 0.5f * v) / kFp8Max; });
        } else if (spec.name == "o_scale") { // FP8's output multiplier: O times it stays inside 448 (|O| < 1.5)
            fill_input(buf.data(), spec.dtype, spec.elements(), stream,
                       [](float v, int) { return (1.0f + 0.25f * v) * kFp8Max / 2.0f; });
        } else {
            const bool is_weight = desc.dtype == OPB_DTYPE_S8 && spec.name == "B";
            fill_input(buf.data(), spec.dtype, spec.elements(), stream,
                       [is_weight](float v, int dtype) { return integer_in_range(v, dtype, is_weight); });
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
