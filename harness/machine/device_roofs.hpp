// A device's roofs (issue 41): one per unit and dtype (SIMT f32; tensor
// cores for tf32, bf16, f16, fp8 e4m3, int8; DRAM and L2 bandwidth), as the
// plugin measured them behind the ABI (opb_backend_api::measure_roofs), with
// the datasheet figure beside each where the plugin knows the device.
//
// The harness links no CUDA: plugin/device_probe.hpp reads the ABI into
// these plain records; this room caches them per device UUID, driver and
// sustained clock, as machine.hpp caches the CPU's peaks, formats them for
// `opbench machine`, and picks the roof an entry is judged against.
#pragma once

#include "machine/machine.hpp"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace opbench {

// Version of the JSON of DeviceRoofs (the cache file and result sets).
inline constexpr int kDeviceRoofsSchemaVersion = 1;

enum class RoofUnit { simt, tensor, dram, l2 };
[[nodiscard]] std::string_view roof_unit_name(RoofUnit u); // "simt", "tensor", "dram", "l2"
[[nodiscard]] std::optional<RoofUnit> roof_unit_from_name(std::string_view name);

struct DeviceRoof {
    RoofUnit unit = RoofUnit::simt;
    // The operands' dtype for simt / tensor ("f32", "bf16", "f16", "f8e4m3",
    // "s8"); tensor with "f32" is TF32. "" for dram / l2.
    std::string dtype;
    double measured = 0;  // per second: FLOP (s8: ops) or bytes; 0 not measured
    double datasheet = 0; // the vendor's dense figure, same unit; 0 unknown
    double sm_clock_mhz = 0;
    std::string method; // how the plugin measured it

    [[nodiscard]] bool is_bandwidth() const { return unit == RoofUnit::dram || unit == RoofUnit::l2; }
    // "tensor bf16", "tensor tf32", "simt f32", "dram", "l2"
    [[nodiscard]] std::string label() const;
};

struct DeviceRoofs {
    int schema_version = kDeviceRoofsSchemaVersion;
    std::string backend; // the plugin that measured them
    std::string device;  // its device_info name
    std::string uuid, driver;
    double sustained_mhz = 0; // the device's sustained SM clock (opb_device_clocks)
    double max_mhz = 0;
    double measure_seconds = 0; // how long measure_roofs took
    std::vector<DeviceRoof> roofs;

    [[nodiscard]] const DeviceRoof *find(RoofUnit unit, std::string_view dtype = "") const;
};

void to_json(nlohmann::json &j, const DeviceRoof &r);
void from_json(const nlohmann::json &j, DeviceRoof &r);
void to_json(nlohmann::json &j, const DeviceRoofs &r);
void from_json(const nlohmann::json &j, DeviceRoofs &r); // throws on another schema version

// --- cache (beside machine-*.json, in machine_cache_dir()) ----------------------------

// <dir>/device-<16 hex digits of FNV-1a of "uuid|driver|max MHz">.json: a
// new driver or another clock setting (the boost ceiling the device is set
// to, opb_device_clocks::max_mhz) measures the roofs again.
[[nodiscard]] std::filesystem::path device_roofs_cache_path(const std::filesystem::path &dir, const std::string &uuid,
                                                            const std::string &driver, double max_mhz);
// The cached roofs at `path`, or nullopt when missing, unreadable, not valid
// JSON, of another schema version, or of another device, driver or clock
// setting than `uuid`, `driver` and `max_mhz` (a copied or colliding file).
[[nodiscard]] std::optional<DeviceRoofs> load_device_roofs(const std::filesystem::path &path, const std::string &uuid,
                                                           const std::string &driver, double max_mhz);
// Writes atomically; throws std::runtime_error naming the path on failure.
void save_device_roofs(const DeviceRoofs &roofs, const std::filesystem::path &path);

// --- which roof judges an entry ---------------------------------------------------------

// The roof an entry of `op` in `dtype` ran against: tensor cores of the
// dtype for bf16 / f16 / s8 / f8e4m3 ops on matrix units (the op table's
// runs_on_matrix_units), tensor tf32 for f32 ones when `tf32` (the backend
// let tensor cores take f32),
// SIMT f32 for other f32 compute, DRAM bandwidth for every other op (the
// memory-bound ones: their rate is bytes per second). nullptr when the device
// has no such roof measured.
[[nodiscard]] const DeviceRoof *roof_for_entry(const DeviceRoofs &roofs, std::string_view op, std::string_view dtype,
                                               bool tf32);

struct RoofShare {
    const DeviceRoof *roof = nullptr;
    double share = -1; // rate / roof->measured; < 0 when no roof
    // Set when share > 1: a recorded cause (the roof was measured at another
    // clock, or below the datasheet, the entry's rate counts work it skips).
    std::string cause;
};
// `flops_per_second` and `bytes_per_second` are the entry's rates; the roof's
// unit picks which one is judged.
[[nodiscard]] RoofShare share_of_roof(const DeviceRoofs &roofs, std::string_view op, std::string_view dtype, bool tf32,
                                      double flops_per_second, double bytes_per_second);

// The two roofs of an entry's roofline on the device: its compute roof
// (roof_for_entry's for an op on matrix units; SIMT f32 for every other op,
// whose FLOPs run on the SIMT lanes) and DRAM bandwidth. nullptr where not
// measured.
struct EntryRoofs {
    const DeviceRoof *compute = nullptr;
    const DeviceRoof *bandwidth = nullptr;
};
[[nodiscard]] EntryRoofs entry_roofs(const DeviceRoofs &roofs, std::string_view op, std::string_view dtype, bool tf32);

// Why `rate` (per second, in the roof's unit) is above `roof`'s measured
// figure: above its datasheet figure too, or only above what the sweep
// measured. "" when it is not above.
[[nodiscard]] std::string above_device_roof_cause(const DeviceRoof &roof, double rate);

// The roofline of an entry on a device with measured roofs (issue 41):
// pct_peak_compute of entry_roofs' compute roof, pct_peak_bandwidth of DRAM,
// the bound by classify()'s rule (overhead below 5x `fixed_cost_seconds`,
// else the ridge point of those two roofs), and `device_roof`: the roof
// that judges it. An op on matrix units is judged by its compute roof where
// its arithmetic intensity reaches the ridge point, by DRAM below it (a
// decode GEMV streams its weights); every other op by DRAM. Any share above
// 100% carries its cause (device_roof.cause, above_roof_cause). Without the
// entry's compute roof (an f16 or fp8 roof the plugin did not measure) the
// compute share is NaN and device_roof.missing says why.
[[nodiscard]] Roofline device_roofline(const DeviceRoofs &roofs, std::string_view op, std::string_view dtype,
                                       bool tf32, double flops, double bytes, double seconds_per_call,
                                       double fixed_cost_seconds);

// `opbench machine`'s table of device roofs, one line per roof (each within
// 100 columns): unit, measured, datasheet, measured / datasheet, clock, method.
[[nodiscard]] std::vector<std::string> device_roofs_lines(const DeviceRoofs &roofs);

// --- readers: the roofs a result set holds ------------------------------------------------

// The device roofs a result set's `context.opbench` holds: each backend's
// backends.<name>.device_roofs (issue 41), by backend name; an object that
// does not read (another schema version) is left out. Empty for a CPU set.
[[nodiscard]] std::vector<DeviceRoofs> device_roofs_in_context(const nlohmann::json &opbench_context);
// A roof's figure in the readers' units: "1.23e+03 GFLOP/s" ("Gop/s" for
// int8), "3350 GB/s" for bandwidth; "-" for 0 (not known).
[[nodiscard]] std::string roof_figure_text(const DeviceRoof &roof, double per_second);

} // namespace opbench
