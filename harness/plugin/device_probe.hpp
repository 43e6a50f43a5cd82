// The device's own measurements behind the plugin wall (ABI 1.5, issue 41):
// its identity and clocks, its roofs, the clock of a repetition and the
// host's time inside execute. Reads a plugin's optional entries into plain
// records (machine/device_roofs.hpp, measure/throttle.hpp); a plugin built
// against ABI 1.4 or earlier, or one that leaves an entry NULL, gives none.
#pragma once

#include "machine/device_roofs.hpp"
#include "measure/throttle.hpp"
#include "plugin/plugin_loader.hpp"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <optional>
#include <string>

namespace opbench {

struct DeviceIdentity {
    std::string uuid, driver;
    double sustained_mhz = 0, max_mhz = 0;
};
// device_clocks' answer; nullopt when the plugin has no such entry or it failed.
[[nodiscard]] std::optional<DeviceIdentity> device_identity(const BackendInstance &be);

// The clock a repetition's SM clock is judged against (measure/throttle.hpp): the
// sustained clock of this device's cached roofs (the clock the roofs' GEMM
// sweep left it at), where `dir` holds them; else the instance's own
// device_clocks answer (its boost ceiling when it never ran the sweep, as a
// worker process does not); 0 when the plugin gives neither.
[[nodiscard]] double sustained_clock_mhz(const BackendInstance &be,
                                         const std::filesystem::path &dir = machine_cache_dir());

// Runs measure_roofs (slow: up to a minute on a GPU); nullopt when the plugin
// has no such entry. Throws std::runtime_error with the plugin's message
// when the entry fails.
[[nodiscard]] std::optional<DeviceRoofs> measure_device_roofs(const BackendInstance &be);

struct CachedDeviceRoofs {
    DeviceRoofs roofs;
    std::filesystem::path path; // the cache read or written; empty when none
    bool from_cache = false;
    std::string warning; // why no cache was kept, when none was
};
// The cached roofs of this device (same UUID, driver and sustained clock)
// unless `remeasure`, else measured and cached. nullopt when the plugin
// measures no roofs.
[[nodiscard]] std::optional<CachedDeviceRoofs> load_or_measure_device_roofs(const BackendInstance &be,
                                                                          const std::filesystem::path &dir,
                                                                          bool remeasure);

// Adds the device's roofs to a backend's context (`context.opbench.backends.
// <name>`): `device_roofs` (DeviceRoofs' JSON, cached per device as
// load_or_measure_device_roofs does, in machine_cache_dir()) and
// `device_roofs_origin` ("cache", or "measured now in 8.2 s"); or
// `device_roofs_error` when the plugin's measurement failed. Nothing for a
// plugin without measure_roofs (ABI 1.4), whose entries keep the peaks of
// its info. The run judges each GPU entry against them (machine/bottleneck.hpp).
void add_device_roofs(nlohmann::json &context, const BackendInstance &be);

// The clock entries; without them, begin does nothing and end reads unknown.
void device_clock_begin(const BackendInstance &be);
[[nodiscard]] ClockReading device_clock_end(const BackendInstance &be);
// timer_host_seconds; < 0 when the plugin has none or it failed.
[[nodiscard]] double device_host_seconds(const BackendInstance &be);

} // namespace opbench
