#include "machine/device_roofs.hpp"
#include "machine/system_readers.hpp"

#include "files/atomic_file.hpp"

#include "opbench/ops.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <fstream>
#include <optional>
#include <stdexcept>

namespace opbench {

std::string_view roof_unit_name(RoofUnit u) {
    switch (u) {
    case RoofUnit::simt: return "simt";
    case RoofUnit::tensor: return "tensor";
    case RoofUnit::dram: return "dram";
    case RoofUnit::l2: return "l2";
    }
    return "simt";
}

std::optional<RoofUnit> roof_unit_from_name(std::string_view name) {
    for (RoofUnit u : {RoofUnit::simt, RoofUnit::tensor, RoofUnit::dram, RoofUnit::l2})
        if (roof_unit_name(u) == name) return u;
    return std::nullopt;
}

std::string DeviceRoof::label() const {
    if (is_bandwidth()) return std::string(roof_unit_name(unit));
    // Tensor cores on f32 operands run TF32: name it as GPU engineers do.
    const std::string shown = unit == RoofUnit::tensor && dtype == "f32" ? "tf32" : dtype;
    return fmt::format("{} {}", roof_unit_name(unit), shown);
}

const DeviceRoof *DeviceRoofs::find(RoofUnit unit, std::string_view dtype) const {
    for (const auto &r : roofs)
        if (r.unit == unit && (r.is_bandwidth() || r.dtype == dtype) && r.measured > 0) return &r;
    return nullptr;
}

void to_json(nlohmann::json &j, const DeviceRoof &r) {
    j = {{"unit", roof_unit_name(r.unit)}, {"dtype", r.dtype},
         {"measured", r.measured},         {"datasheet", r.datasheet},
         {"sm_clock_mhz", r.sm_clock_mhz}, {"method", r.method}};
}

void from_json(const nlohmann::json &j, DeviceRoof &r) {
    const std::string unit = j.at("unit").get<std::string>();
    const auto u = roof_unit_from_name(unit);
    if (!u) throw std::runtime_error("device roof: unit '" + unit + "' is none of simt, tensor, dram, l2");
    r.unit = *u;
    r.dtype = j.at("dtype").get<std::string>();
    r.measured = j.at("measured").get<double>();
    r.datasheet = j.value("datasheet", 0.0);
    r.sm_clock_mhz = j.value("sm_clock_mhz", 0.0);
    r.method = j.value("method", "");
}

void to_json(nlohmann::json &j, const DeviceRoofs &r) {
    j = {{"schema_version", r.schema_version},
         {"backend", r.backend},
         {"device", r.device},
         {"uuid", r.uuid},
         {"driver", r.driver},
         {"sustained_mhz", r.sustained_mhz},
         {"max_mhz", r.max_mhz},
         {"measure_seconds", r.measure_seconds},
         {"roofs", r.roofs}};
}

void from_json(const nlohmann::json &j, DeviceRoofs &r) {
    r.schema_version = j.at("schema_version").get<int>();
    if (r.schema_version != kDeviceRoofsSchemaVersion)
        throw std::runtime_error(fmt::format("device roofs: schema version {}, this opbench reads {}",
                                             r.schema_version, kDeviceRoofsSchemaVersion));
    r.backend = j.value("backend", "");
    r.device = j.value("device", "");
    r.uuid = j.at("uuid").get<std::string>();
    r.driver = j.at("driver").get<std::string>();
    r.sustained_mhz = j.at("sustained_mhz").get<double>();
    r.max_mhz = j.value("max_mhz", 0.0);
    r.measure_seconds = j.value("measure_seconds", 0.0);
    r.roofs = j.at("roofs").get<std::vector<DeviceRoof>>();
}

namespace {
// The clock as a key: whole MHz, so a reading of 1755.0 and 1755.4 is one device state.
std::string clock_key(double mhz) { return fmt::format("{:.0f}", mhz); }
} // namespace

std::filesystem::path device_roofs_cache_path(const std::filesystem::path &dir, const std::string &uuid,
                                              const std::string &driver, double max_mhz) {
    const std::string key = uuid + "|" + driver + "|" + clock_key(max_mhz);
    return dir / fmt::format("device-{:016x}.json", detail::fnv1a64(key));
}

std::optional<DeviceRoofs> load_device_roofs(const std::filesystem::path &path, const std::string &uuid,
                                             const std::string &driver, double max_mhz) {
    std::ifstream in(path);
    if (!in) return std::nullopt;
    try {
        auto roofs = nlohmann::json::parse(in).get<DeviceRoofs>();
        // The hash could collide and a file could be copied between machines.
        if (roofs.uuid != uuid || roofs.driver != driver ||
            clock_key(roofs.max_mhz) != clock_key(max_mhz))
            return std::nullopt;
        return roofs;
    } catch (const std::exception &) {
        return std::nullopt; // corrupt or another version: the caller measures again
    }
}

void save_device_roofs(const DeviceRoofs &roofs, const std::filesystem::path &path) {
    write_file_atomically(path.string(), nlohmann::json(roofs).dump(2) + "\n");
}

namespace {
bool runs_on_matrix_units(std::string_view op) {
    const std::optional<int> kind = op_from_name(op);
    return kind && opbench::runs_on_matrix_units(*kind);
}
bool has_tensor_dtype(std::string_view dtype) {
    return dtype == "bf16" || dtype == "f16" || dtype == "s8" || dtype == "f8e4m3";
}
} // namespace

const DeviceRoof *roof_for_entry(const DeviceRoofs &roofs, std::string_view op, std::string_view dtype, bool tf32) {
    if (runs_on_matrix_units(op)) {
        if (has_tensor_dtype(dtype)) return roofs.find(RoofUnit::tensor, dtype);
        if (dtype == "f32") return tf32 ? roofs.find(RoofUnit::tensor, "f32") : roofs.find(RoofUnit::simt, "f32");
        return nullptr;
    }
    // Every other op (element-wise, normalising, position encoding, quantising): bound by device memory.
    return roofs.find(RoofUnit::dram);
}

std::string above_device_roof_cause(const DeviceRoof &roof, double rate) {
    if (!(roof.measured > 0) || !(rate > roof.measured)) return "";
    const bool above_sheet = roof.datasheet > 0 && rate > roof.datasheet;
    if (roof.is_bandwidth())
        return above_sheet ? fmt::format("above the {} datasheet figure: the entry's data stays in the GPU's caches "
                                         "between calls, so its rate is not the memory's",
                                         roof.label())
                           : fmt::format("above the measured {} roof, {}: part of its data stays in the GPU's caches, "
                                         "or the roof's measurement ({}) fell short of the device's best",
                                         roof.label(), roof.datasheet > 0 ? "below its datasheet figure"
                                                                          : "no datasheet figure known",
                                         roof.method);
    if (above_sheet)
        return fmt::format("above the {} datasheet figure: the entry's count credits work the kernel skips (a "
                           "causal mask's upper half)",
                           roof.label());
    return fmt::format("above the measured {} roof, {}: the roof's sweep ({}) missed this shape's better kernel "
                       "or clock",
                       roof.label(), roof.datasheet > 0 ? "below its datasheet figure" : "no datasheet figure known",
                       roof.method);
}

RoofShare share_of_roof(const DeviceRoofs &roofs, std::string_view op, std::string_view dtype, bool tf32,
                        double flops_per_second, double bytes_per_second) {
    RoofShare s;
    s.roof = roof_for_entry(roofs, op, dtype, tf32);
    if (!s.roof) return s;
    const double rate = s.roof->is_bandwidth() ? bytes_per_second : flops_per_second;
    if (!(rate > 0)) return s;
    s.share = rate / s.roof->measured;
    s.cause = above_device_roof_cause(*s.roof, rate);
    return s;
}

EntryRoofs entry_roofs(const DeviceRoofs &roofs, std::string_view op, std::string_view dtype, bool tf32) {
    EntryRoofs r;
    r.bandwidth = roofs.find(RoofUnit::dram);
    r.compute = runs_on_matrix_units(op) ? roof_for_entry(roofs, op, dtype, tf32) : roofs.find(RoofUnit::simt, "f32");
    return r;
}

namespace {

// The roof that would have judged an op on matrix units, for the note of a roof not measured.
std::string missing_roof_label(std::string_view dtype, bool tf32) {
    if (dtype == "f32") return tf32 ? "tensor tf32" : "simt f32";
    return fmt::format("tensor {}", dtype);
}

DeviceRoofJudgement judgement_of(const DeviceRoof &roof, double rate) {
    DeviceRoofJudgement j;
    j.roof = roof.label();
    j.unit = std::string(roof_unit_name(roof.unit));
    j.dtype = roof.dtype;
    j.measured = roof.measured;
    j.datasheet = roof.datasheet;
    j.sm_clock_mhz = roof.sm_clock_mhz;
    j.method = roof.method;
    if (rate > 0) j.share = rate / roof.measured;
    j.cause = above_device_roof_cause(roof, rate);
    return j;
}

// The roofline's two shares and the bound, by classify()'s rule.
void place_on_roofs(Roofline &r, const EntryRoofs &roofs, bool matrix, double flops, double bytes, double seconds,
                    double fixed_cost_seconds) {
    r.pct_peak_compute = roofs.compute ? 100.0 * flops / seconds / roofs.compute->measured : NAN;
    r.pct_peak_bandwidth = roofs.bandwidth ? 100.0 * bytes / seconds / roofs.bandwidth->measured : NAN;
    r.arithmetic_intensity = bytes > 0 ? flops / bytes : std::numeric_limits<double>::infinity();
    r.ridge_point = roofs.compute && roofs.bandwidth ? roofs.compute->measured / roofs.bandwidth->measured : NAN;
    if (roofs.compute) r.compute_roof = roofs.compute->label();
    if ((flops == 0 && bytes == 0) || (fixed_cost_seconds > 0 && seconds < 5 * fixed_cost_seconds))
        r.bound = "overhead-bound";
    else if (std::isfinite(r.ridge_point))
        r.bound = r.arithmetic_intensity >= r.ridge_point ? "compute-bound" : "memory-bound";
    else
        r.bound = roofs.bandwidth && !matrix ? "memory-bound" : "unknown";
}

} // namespace

Roofline device_roofline(const DeviceRoofs &roofs, std::string_view op, std::string_view dtype, bool tf32,
                         double flops, double bytes, double seconds_per_call, double fixed_cost_seconds) {
    Roofline r;
    r.bound = "unknown";
    if (!(seconds_per_call > 0) || !std::isfinite(seconds_per_call) || !(flops >= 0) || !(bytes >= 0)) return r;
    const EntryRoofs e = entry_roofs(roofs, op, dtype, tf32);
    const bool matrix = runs_on_matrix_units(op);
    place_on_roofs(r, e, matrix, flops, bytes, seconds_per_call, fixed_cost_seconds);
    // The judge: DRAM for every op off the matrix units, and for one on them
    // below the ridge point; else the compute roof of its unit and dtype.
    const bool by_bandwidth = !matrix || (std::isfinite(r.ridge_point) && r.arithmetic_intensity < r.ridge_point);
    const DeviceRoof *judge = by_bandwidth ? e.bandwidth : e.compute;
    if (judge) {
        r.device_roof = judgement_of(*judge, (judge->is_bandwidth() ? bytes : flops) / seconds_per_call);
    } else {
        r.device_roof = DeviceRoofJudgement{};
        r.device_roof->missing =
            by_bandwidth ? "the device's plugin measured no DRAM bandwidth"
                         : fmt::format("the device's plugin measured no {} roof: no share of a roof",
                                       missing_roof_label(dtype, tf32));
    }
    // Every share above 100% the views may show carries its cause.
    std::vector<std::string> causes;
    if (e.compute && r.pct_peak_compute > 100)
        causes.push_back(fmt::format("{:.0f}% of the device's {} roof: {}", r.pct_peak_compute, e.compute->label(),
                                     above_device_roof_cause(*e.compute, flops / seconds_per_call)));
    if (e.bandwidth && r.pct_peak_bandwidth > 100)
        causes.push_back(fmt::format("{:.0f}% of the device's {} roof: {}", r.pct_peak_bandwidth,
                                     e.bandwidth->label(),
                                     above_device_roof_cause(*e.bandwidth, bytes / seconds_per_call)));
    if (by_bandwidth) std::reverse(causes.begin(), causes.end()); // the judging roof's first
    r.above_roof_cause = fmt::format("{}", fmt::join(causes, "; "));
    return r;
}

namespace {
std::string rate_text(const DeviceRoof &r, double v) {
    if (!(v > 0)) return "-";
    return r.is_bandwidth() ? fmt::format("{:.0f} GB/s", v / 1e9) : fmt::format("{:.1f} T/s", v / 1e12);
}

std::string_view strip_prefix(std::string_view s, std::string_view prefix) {
    return s.substr(0, prefix.size()) == prefix ? s.substr(prefix.size()) : s;
}

// `text` in lines of at most `width` columns, each indented by `indent`,
// broken at spaces (a word longer than a line keeps its line).
std::vector<std::string> indented_lines(std::string_view text, std::size_t indent, std::size_t width) {
    std::vector<std::string> out;
    std::string line(indent, ' ');
    std::size_t pos = 0;
    while (pos < text.size()) {
        std::size_t end = text.find(' ', pos);
        if (end == std::string_view::npos) end = text.size();
        const std::string_view word = text.substr(pos, end - pos);
        if (line.size() > indent && line.size() + 1 + word.size() > width) {
            out.push_back(line);
            line.assign(indent, ' ');
        }
        if (line.size() > indent) line += ' ';
        line += word;
        pos = end + 1;
    }
    if (line.size() > indent) out.push_back(line);
    return out;
}
} // namespace

std::vector<std::string> device_roofs_lines(const DeviceRoofs &roofs) {
    std::vector<std::string> lines;
    lines.push_back(fmt::format("{} ({}), driver {}, sustained SM clock {:.0f} MHz", roofs.device,
                                roofs.uuid.empty() ? "no UUID" : roofs.uuid, roofs.driver, roofs.sustained_mhz));
    lines.push_back(fmt::format("  {:<12} {:>12} {:>12} {:>6} {:>6}  {}", "roof", "measured", "datasheet", "share",
                                "MHz", "method"));
    for (const auto &r : roofs.roofs) {
        if (!(r.measured > 0)) { // its reason whole, on lines of its own
            lines.push_back(fmt::format("  {:<12} {:>12} {:>12} {:>6} {:>6}  {}", r.label(), "-",
                                        rate_text(r, r.datasheet), "-", "-", "not measured:"));
            for (std::string &l : indented_lines(strip_prefix(r.method, "not measured: "), 4, 100))
                lines.push_back(std::move(l));
            continue;
        }
        const std::string share = r.datasheet > 0 && r.measured > 0 ? fmt::format("{:.0f}%", 100 * r.measured / r.datasheet) : "-";
        std::string line = fmt::format("  {:<12} {:>12} {:>12} {:>6} {:>6.0f}  {}", r.label(), rate_text(r, r.measured),
                                       rate_text(r, r.datasheet), share, r.sm_clock_mhz, r.method);
        if (line.size() > 100) {
            line.resize(97);
            line += "...";
        }
        lines.push_back(std::move(line));
    }
    return lines;
}

std::vector<DeviceRoofs> device_roofs_in_context(const nlohmann::json &opbench_context) {
    std::vector<DeviceRoofs> out;
    if (!opbench_context.is_object()) return out;
    const auto backends = opbench_context.find("backends");
    if (backends == opbench_context.end() || !backends->is_object()) return out;
    for (const auto &[name, ctx] : backends->items()) {
        if (!ctx.is_object() || !ctx.contains("device_roofs") || !ctx["device_roofs"].is_object()) continue;
        try {
            DeviceRoofs r = ctx["device_roofs"].get<DeviceRoofs>();
            if (r.backend.empty()) r.backend = name;
            if (!r.roofs.empty()) out.push_back(std::move(r));
        } catch (const std::exception &) { // another schema version: not shown
        }
    }
    return out;
}

std::string roof_figure_text(const DeviceRoof &roof, double per_second) {
    if (!(per_second > 0) || !std::isfinite(per_second)) return "-";
    const char *unit = roof.is_bandwidth() ? "GB/s" : roof.dtype == "s8" ? "Gop/s" : "GFLOP/s";
    return fmt::format("{:.4g} {}", per_second / 1e9, unit);
}

} // namespace opbench
