#include "check/verify.hpp"

#include "opbench/ops.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <utility>

namespace opbench {

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

namespace opbench {

// ---- comparison ------------------------------------------------------------------

OutputComparison compare_outputs(const void *out, const void *ref, int dtype, int64_t count, int64_t row) {
    OutputComparison c;
    if (count == 0) return c;
    // Pass 1: NMSE sums and the reference's scale; sentinels and non-finite values.
    double err = 0.0, norm = 0.0;
    for (int64_t i = 0; i < count; ++i) {
        const double r = load_as_f32(ref, dtype, i);
        norm += r * r;
        if (is_sentinel(out, dtype, i)) {
            if (c.unwritten++ == 0) c.first_unwritten = i;
            continue;
        }
        const double o = load_as_f32(out, dtype, i);
        if (!std::isfinite(o) && std::isfinite(r)) {
            if (c.nonfinite++ == 0) c.first_nonfinite = i;
            continue;
        }
        err += (o - r) * (o - r);
    }
    if (c.unwritten || c.nonfinite) {
        c.nmse = INFINITY;
        c.worst_error = INFINITY;
        c.worst_index = c.unwritten ? c.first_unwritten : c.first_nonfinite;
        c.worst_out = load_as_f32(out, dtype, c.worst_index);
        c.worst_ref = load_as_f32(ref, dtype, c.worst_index);
        return c;
    }
    c.nmse = norm > 0.0 ? err / norm : err / double(count);
    // Pass 2: point-wise error, judged on the row's scale near zero.
    const double floor = kRowScaleFloor * std::sqrt(norm / double(count));
    if (row <= 0 || count % row != 0) row = count;
    for (int64_t r0 = 0; r0 < count; r0 += row) {
        double row_sq = 0.0;
        for (int64_t i = r0; i < r0 + row; ++i) {
            const double r = load_as_f32(ref, dtype, i);
            row_sq += r * r;
        }
        const double scale = std::max(std::sqrt(row_sq / double(row)), floor);
        for (int64_t i = r0; i < r0 + row; ++i) {
            const double o = load_as_f32(out, dtype, i), r = load_as_f32(ref, dtype, i);
            if (o == r) continue; // also both infinite alike
            const double denom = std::fabs(r) + scale;
            const double e = denom > 0.0 ? std::fabs(o - r) / denom : std::fabs(o - r);
            if (!(e <= c.worst_error)) { // NaN in the reference counts as worst
                c.worst_error = std::isnan(e) ? INFINITY : e;
                c.worst_index = i;
                c.worst_out = o;
                c.worst_ref = r;
            }
        }
    }
    if (c.worst_index < 0) c.worst_index = 0; // identical: any place is the worst
    return c;
}

std::string element_name(const std::string &tensor, const std::vector<int64_t> &shape, int64_t flat) {
    std::vector<int64_t> at(shape.size());
    for (std::size_t d = shape.size(); d-- > 0;) {
        at[d] = shape[d] > 0 ? flat % shape[d] : 0;
        flat = shape[d] > 0 ? flat / shape[d] : 0;
    }
    return fmt::format("{}[{}]", tensor, fmt::join(at, ", "));
}

std::string judge(const OutputComparison &c, const Limits &limits, const std::string &tensor,
                  const std::vector<int64_t> &shape) {
    if (c.unwritten)
        return fmt::format("verification failed: {} of {} still holds the sentinel the output was filled with "
                           "({} such elements): the backend never wrote it",
                           element_name(tensor, shape, c.first_unwritten), tensor, c.unwritten);
    if (c.nonfinite)
        return fmt::format("verification failed: {} is {} where the reference is {} ({} non-finite elements)",
                           element_name(tensor, shape, c.first_nonfinite), c.worst_out, c.worst_ref, c.nonfinite);
    if (!(c.nmse <= limits.max_nmse))
        return fmt::format("verification failed: NMSE {:.3g} exceeds {:.3g} ({})", c.nmse, limits.max_nmse,
                           limits.nmse_why);
    if (!(c.worst_error <= limits.max_pointwise))
        return fmt::format("verification failed: {} is {:.6g}, the reference {:.6g}: point-wise error {:.3g} "
                           "exceeds {:.3g} ({}; NMSE {:.3g} was within {:.3g})",
                           element_name(tensor, shape, c.worst_index), c.worst_out, c.worst_ref, c.worst_error,
                           limits.max_pointwise, limits.pointwise_why, c.nmse, limits.max_nmse);
    return {};
}

// ---- the entry's record ---------------------------------------------------------

std::string_view verify_mode_name(VerifyMode m) {
    switch (m) {
    case VerifyMode::full: return "full";
    case VerifyMode::fast: return "fast";
    case VerifyMode::off: return "off";
    }
    return "?";
}

std::optional<VerifyMode> verify_mode_from_name(std::string_view s) {
    for (VerifyMode m : {VerifyMode::full, VerifyMode::fast, VerifyMode::off})
        if (verify_mode_name(m) == s) return m;
    return std::nullopt;
}

nlohmann::json verification_json(const Verification &v) {
    nlohmann::json j;
    j["mode"] = verify_mode_name(v.mode);
    j["verified"] = v.verified;
    j["method"] = v.method;
    if (v.mode == VerifyMode::off) return j;
    if (!v.reference.empty()) j["reference"] = v.reference;
    j["checked"] = v.checked;
    j["total"] = v.total;
    j["unit"] = v.unit;
    if (v.vectors) j["vectors"] = v.vectors;
    if (v.method != "reference") j["seed"] = v.seed;
    // JSON has no infinity: a non-finite figure is written as null.
    auto number = [](double x) { return std::isfinite(x) ? nlohmann::json(x) : nlohmann::json(nullptr); };
    if (v.nmse) j["nmse"] = number(*v.nmse);
    if (v.max_nmse) j["max_nmse"] = number(*v.max_nmse);
    if (v.pointwise_error) j["pointwise_error"] = number(*v.pointwise_error);
    if (v.pointwise_tolerance) j["pointwise_tolerance"] = number(*v.pointwise_tolerance);
    j["worst_ratio"] = number(v.worst_ratio);
    j["worst_index"] = v.worst_index;
    if (!v.failure.empty()) j["failure"] = v.failure;
    return j;
}

} // namespace opbench

// ---- verify_outputs ---------------------------------------------------------------

namespace opbench {

namespace {

// The output specs of an op, in execute's order.
std::vector<TensorSpec> output_specs(const opb_op_desc &desc) {
    std::vector<TensorSpec> out;
    for (auto &spec : op_tensors(desc))
        if (spec.is_output) out.push_back(std::move(spec));
    return out;
}

// The first element holding the sentinel and how many do: one typed pass
// the compiler vectorises, not a call of is_sentinel per element (gemm's
// largest outputs have 22 M elements; issue 44). {-1, 0} when none does.
template <class Bits>
std::pair<int64_t, int64_t> count_sentinels_as(const uint8_t *bytes, int64_t n, Bits sentinel) {
    const Bits *v = reinterpret_cast<const Bits *>(bytes);
    const int64_t count = std::count(v, v + n, sentinel);
    if (count == 0) return {-1, 0};
    return {std::find(v, v + n, sentinel) - v, count};
}

// As is_sentinel reads an element: f32 four bytes, bf16/f16 two, and no
// one-byte dtype has a sentinel (every byte is a value).
std::pair<int64_t, int64_t> count_sentinels(const uint8_t *bytes, int dtype, int64_t n) {
    if (dtype == OPB_DTYPE_F32) return count_sentinels_as<uint32_t>(bytes, n, sentinel_bits(dtype));
    if (dtype_size(dtype) == 2) return count_sentinels_as<uint16_t>(bytes, n, uint16_t(sentinel_bits(dtype)));
    return {-1, 0};
}

// The first element still holding the sentinel, as "y[2, 3] (5 such elements)"; "" when none.
std::string find_unwritten(const Outputs &outputs, const std::vector<TensorSpec> &specs) {
    for (std::size_t t = 0; t < outputs.size() && t < specs.size(); ++t) {
        const int dtype = specs[t].dtype;
        const int64_t n = int64_t(outputs[t].size() / dtype_size(dtype));
        const auto [first, count] = count_sentinels(outputs[t].data(), dtype, n);
        if (count)
            return fmt::format("{} ({} such elements)", element_name(specs[t].name, specs[t].shape, first), count);
    }
    return {};
}

void fast_path(const VerifyRequest &rq, const std::vector<TensorSpec> &specs, Verification &v) {
    v.seed = rq.seed;
    if (std::string where = find_unwritten(*rq.outputs, specs); !where.empty()) {
        v.method = "sentinel";
        v.failure = "verification failed: " + where +
                    " still holds the sentinel the output was filled with: the backend never wrote it";
        return;
    }
    // Host copies in execute's order: inputs from `host`, outputs the backend's.
    std::vector<const void *> tensors;
    std::size_t next_output = 0;
    for (std::size_t i = 0; i < rq.host->buffers.size(); ++i)
        tensors.push_back(rq.host->is_output[i] ? (*rq.outputs)[next_output++].data() : rq.host->buffers[i].data());
    FastCheckArgs args;
    args.desc = rq.desc;
    args.tensors = tensors.data();
    args.count = int32_t(tensors.size());
    args.seed = rq.seed;
    args.pointwise_max_error = rq.tolerance.max_pointwise;
    const FastCheckResult r = rq.fast_check(args);
    v.method = r.method;
    v.unit = r.unit;
    v.checked = r.checked;
    v.total = r.total;
    v.vectors = r.vectors;
    v.worst_ratio = r.worst_ratio;
    v.worst_index = r.worst_index;
    if (r.method == "sampled-rows") v.pointwise_tolerance = rq.tolerance.max_pointwise;
    if (!r.passed) v.failure = "verification failed (" + r.method + "): " + r.detail;
}

void reference_path(const VerifyRequest &rq, const std::vector<TensorSpec> &specs, Verification &v) {
    v.method = "reference";
    v.unit = "elements";
    std::string source;
    const Outputs &ref = rq.reference(source);
    v.reference = source;
    if (std::string where = find_unwritten(ref, specs); !where.empty()) {
        v.failure = "cannot verify: the reference backend never wrote " + where;
        return;
    }
    const Limits limits{rq.tolerance.max_nmse, rq.tolerance.why, rq.tolerance.max_pointwise,
                        rq.tolerance.pointwise_why};
    double worst_nmse = 0.0, worst_pointwise = 0.0;
    int64_t offset = 0;
    for (std::size_t t = 0; t < rq.outputs->size(); ++t) {
        const int dt = specs[t].dtype; // each output in its own dtype (ops.hpp op_tensors)
        const int64_t n = int64_t((*rq.outputs)[t].size() / dtype_size(dt));
        const int64_t row = specs[t].shape.empty() ? n : specs[t].shape.back();
        const OutputComparison c = compare_outputs((*rq.outputs)[t].data(), ref[t].data(), dt, n, row);
        worst_nmse = std::max(worst_nmse, c.nmse);
        v.total += n;
        if (!(c.worst_error <= worst_pointwise) || t == 0) {
            worst_pointwise = c.worst_error;
            v.worst_index = offset + c.worst_index;
        }
        offset += n;
        if (v.failure.empty()) v.failure = judge(c, limits, specs[t].name, specs[t].shape);
    }
    v.checked = v.total;
    v.nmse = worst_nmse;
    v.max_nmse = rq.tolerance.max_nmse;
    v.pointwise_error = worst_pointwise;
    v.pointwise_tolerance = rq.tolerance.max_pointwise;
    v.worst_ratio = rq.tolerance.max_pointwise > 0 ? worst_pointwise / rq.tolerance.max_pointwise : worst_pointwise;
}

} // namespace

Verification verify_outputs(const VerifyRequest &rq) {
    Verification v;
    v.mode = rq.mode;
    if (rq.mode == VerifyMode::off) {
        v.method = "none";
        return v;
    }
    const auto specs = output_specs(*rq.desc);
    if (rq.mode == VerifyMode::fast && rq.fast_check)
        fast_path(rq, specs, v);
    else
        reference_path(rq, specs, v);
    v.verified = v.failure.empty();
    return v;
}

} // namespace opbench
