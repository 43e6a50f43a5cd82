#include "plugin/device_probe.hpp"

#include "machine/machine.hpp"

#include "opbench/ops.hpp"

#include <fmt/format.h>

#include <chrono>
#include <cstring>
#include <stdexcept>

namespace opbench {

namespace {

template <class T>
T abi_struct() {
    T s;
    std::memset(&s, 0, sizeof s);
    s.struct_size = sizeof s;
    s.abi_version = OPB_ABI_VERSION;
    return s;
}

// ops.hpp names an op's dtypes; FP8 is only a roof's dtype so far.
std::string roof_dtype_name(int32_t dtype) {
    if (dtype < 0) return "";
    if (dtype == OPB_DTYPE_F8_E4M3) return "f8e4m3";
    return std::string(dtype_name(dtype));
}

// Copies a fixed char field that a plugin may have left unterminated.
template <std::size_t N>
std::string bounded(const char (&field)[N]) {
    return std::string(field, strnlen(field, N));
}

void keep_roof(void *user, const opb_device_roof *r) {
    if (!r || r->unit < OPB_ROOF_SIMT || r->unit > OPB_ROOF_L2) return; // a unit this host does not know
    DeviceRoof roof;
    roof.unit = static_cast<RoofUnit>(r->unit);
    roof.dtype = roof.is_bandwidth() ? "" : roof_dtype_name(r->dtype);
    roof.measured = r->measured;
    roof.datasheet = r->datasheet;
    roof.sm_clock_mhz = r->sm_clock_mhz;
    roof.method = bounded(r->method);
    static_cast<DeviceRoofs *>(user)->roofs.push_back(std::move(roof));
}

} // namespace

std::optional<DeviceIdentity> device_identity(const BackendInstance &be) {
    if (!OPB_API_HAS(&be.api(), device_clocks)) return std::nullopt;
    auto c = abi_struct<opb_device_clocks>();
    if (be.api().device_clocks(be.handle(), &c) != OPB_OK) return std::nullopt;
    return DeviceIdentity{bounded(c.uuid), bounded(c.driver), c.sustained_mhz, c.max_mhz};
}

std::optional<DeviceRoofs> measure_device_roofs(const BackendInstance &be) {
    if (!OPB_API_HAS(&be.api(), measure_roofs)) return std::nullopt;
    DeviceRoofs roofs;
    roofs.backend = be.name();
    auto info = abi_struct<opb_device_info>();
    if (be.api().device_info(be.handle(), &info) == OPB_OK) roofs.device = bounded(info.name);
    if (auto id = device_identity(be)) {
        roofs.uuid = id->uuid;
        roofs.driver = id->driver;
        roofs.sustained_mhz = id->sustained_mhz;
        roofs.max_mhz = id->max_mhz;
    }
    const auto start = std::chrono::steady_clock::now();
    if (be.api().measure_roofs(be.handle(), keep_roof, &roofs) != OPB_OK)
        throw std::runtime_error(be.name() + ": measure_roofs failed: " + be.api().last_error(be.handle()));
    roofs.measure_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    // Asked again: a plugin reports the clock its sweep left the device at
    // as the sustained one only once it has run the sweep.
    if (auto id = device_identity(be)) roofs.sustained_mhz = id->sustained_mhz;
    return roofs;
}

double sustained_clock_mhz(const BackendInstance &be, const std::filesystem::path &dir) {
    const auto id = device_identity(be);
    if (!id) return 0;
    if (!id->uuid.empty() && cache_dir_problem(dir).empty())
        if (auto cached = load_device_roofs(device_roofs_cache_path(dir, id->uuid, id->driver, id->max_mhz), id->uuid,
                                            id->driver, id->max_mhz);
            cached && cached->sustained_mhz > 0)
            return cached->sustained_mhz;
    return id->sustained_mhz;
}

std::optional<CachedDeviceRoofs> load_or_measure_device_roofs(const BackendInstance &be,
                                                              const std::filesystem::path &dir, bool remeasure) {
    if (!OPB_API_HAS(&be.api(), measure_roofs)) return std::nullopt;
    CachedDeviceRoofs r;
    const auto id = device_identity(be);
    const std::string dir_problem = cache_dir_problem(dir);
    if (id && !id->uuid.empty() && dir_problem.empty()) {
        r.path = device_roofs_cache_path(dir, id->uuid, id->driver, id->max_mhz);
        if (!remeasure)
            if (auto cached = load_device_roofs(r.path, id->uuid, id->driver, id->max_mhz)) {
                r.roofs = std::move(*cached);
                r.from_cache = true;
                return r;
            }
    }
    auto measured = measure_device_roofs(be);
    if (!measured) return std::nullopt;
    r.roofs = std::move(*measured);
    if (r.path.empty()) {
        r.warning = !dir_problem.empty() ? dir_problem : "the device gives no UUID: its roofs are not cached";
        return r;
    }
    try {
        save_device_roofs(r.roofs, r.path);
    } catch (const std::exception &e) {
        r.warning = e.what();
        r.path.clear();
    }
    return r;
}

void add_device_roofs(nlohmann::json &context, const BackendInstance &be) {
    if (!be.handle() || !OPB_API_HAS(&be.api(), measure_roofs)) return;
    try {
        const auto c = load_or_measure_device_roofs(be, machine_cache_dir(), false);
        if (!c) return;
        context["device_roofs"] = c->roofs;
        context["device_roofs_origin"] =
            c->from_cache ? std::string("cache") : fmt::format("measured now in {:.1f} s", c->roofs.measure_seconds);
        if (!c->warning.empty()) context["device_roofs_origin"] = context["device_roofs_origin"].get<std::string>() +
                                                                  " (not cached: " + c->warning + ")";
    } catch (const std::exception &e) {
        context["device_roofs_error"] = e.what();
    }
}

void device_clock_begin(const BackendInstance &be) {
    if (OPB_API_HAS(&be.api(), clock_begin) && OPB_API_HAS(&be.api(), clock_end))
        (void)be.api().clock_begin(be.handle());
}

ClockReading device_clock_end(const BackendInstance &be) {
    ClockReading out;
    if (!OPB_API_HAS(&be.api(), clock_begin) || !OPB_API_HAS(&be.api(), clock_end)) return out;
    auto r = abi_struct<opb_clock_reading>();
    r.power_watts = -1;
    r.temperature_c = -1000;
    if (be.api().clock_end(be.handle(), &r) != OPB_OK) return out;
    out.sm_clock_mhz = r.sm_clock_mhz;
    out.power_watts = r.power_watts;
    out.temperature_c = r.temperature_c;
    out.throttle_reasons = r.throttle_reasons;
    return out;
}

double device_host_seconds(const BackendInstance &be) {
    if (!OPB_API_HAS(&be.api(), timer_host_seconds)) return -1;
    double seconds = -1;
    if (be.api().timer_host_seconds(be.handle(), &seconds) != OPB_OK) return -1;
    return seconds;
}

} // namespace opbench
