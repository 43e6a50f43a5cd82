// Measurement settings, listed once. Each key a suite, the command line and a
// result set know (warmup, min_time, ..., threads) is one row of
// measurement_settings(): its name, type, range, default and help. The suite
// parser, the CLI overrides (main.cpp), the result writer (results.cpp) and the
// docs (suites/README.md, README.md; checked by tests/harness/settings_test.cpp)
// all read the table.
//
// Adding a setting: a field in MeasureSettings and one row in settings.cpp;
// then its line in suites/README.md's and README.md's tables (the test says
// if one is missing). Nothing else needs to change.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace opbench {

// Cache state between samples. JSON and suites spell it "warm" / "cold".
enum class CacheState { warm, cold };
[[nodiscard]] std::string_view cache_state_name(CacheState c);
[[nodiscard]] std::optional<CacheState> cache_state_from_name(std::string_view name);

// How a sample's calls reach the device (issue 41; docs/measurement.md,
// "Launch modes"). JSON and suites spell them "single" / "batch" / "graph".
//   single  today's recipe: one call per sample on a GPU (more only where
//           the clock's own cost needs it), the caches as `cache` says
//   batch   calls back to back, one synchronize at the sample's end, about
//           1 ms of device time per sample, caches warm
//   graph   batch's calls captured once into a device graph (a CUDA graph),
//           each sample one replay; a plugin without it measures batch
enum class LaunchMode { single, batch, graph };
[[nodiscard]] std::string_view launch_mode_name(LaunchMode m);
[[nodiscard]] std::optional<LaunchMode> launch_mode_from_name(std::string_view name);

// threads = 0 means every CPU this process may run on (its affinity mask,
// which --cpus narrows). The harness resolves it to that count before a
// backend sees the case (desc.threads is then always >= 1) and records the
// resolved count in each result entry (settings.threads_resolved).
// Upper bound of `threads`: far more than any machine opbench targets, far
// fewer than would make an OpenMP runtime fail to start its team.
inline constexpr int kMaxThreads = 1024;
// Upper bound of `processes`: more would only repeat the preparation.
inline constexpr int kMaxProcessesPerCase = 16;
[[nodiscard]] int resolve_threads(int threads);

// How one case is measured. Suite [defaults] set these; a [[case]] may
// override any of them (and sweep them); the command line overrides both.
// Defaults and ranges live in the table (settings.cpp); these initialisers
// repeat the defaults so that a default-constructed value is usable, and a
// test checks that the two agree.
struct MeasureSettings {
    int warmup = 3;
    double min_time = 0.05;
    double max_time = 2.0;
    int min_samples = 10;
    double noise = 0.01;
    int repetitions = 9;
    CacheState cache = CacheState::warm;
    int threads = 0;
    double timeout = 0; // seconds per case x backend; 0 = derived (case_host.hpp case_timeout_seconds)
    int starved_retries = 2; // times a starved repetition is measured again (measure/starvation.hpp)
    LaunchMode launch = LaunchMode::single;
    // Worker processes a case's repetitions are spread over under --isolate
    // process (isolate/case_host.hpp): each draws its own memory layout.
    int processes = 3;
};

enum class SettingType {
    integer, // a whole number
    seconds, // a number of seconds
    number,  // a plain number
    cache,   // "warm" | "cold"
    launch,  // "single" | "batch" | "graph"
};

// The names of a setting type whose values are names (cache, launch), in
// value order (a value is its name's index); empty for a numeric type.
[[nodiscard]] std::span<const std::string_view> setting_value_names(SettingType type);

// One measurement key. Values pass through the table as doubles (cache as its
// enum index) so that one code path checks and stores every key.
struct SettingInfo {
    std::string_view key;        // suite key, result-set key (except result_key below)
    std::string_view result_key; // its name under an entry's "settings" in a result set
    std::string_view cli_flag;   // "--min-time"
    SettingType type;
    double min, max;             // inclusive range
    std::string_view value_name; // for help: "N", "S", "F", "warm|cold"
    std::string_view help;
    int sweep_rank; // position among settings in the sweep order (suites/README.md)
    double (*get)(const MeasureSettings &);
    void (*set)(MeasureSettings &, double);
    // A value below `min` is raised to it, with a warning, instead of refused
    // (min_time: a too-short request has an obvious meaning, "as short as
    // measurable"). Values above `max` are refused as for every key.
    bool raised_to_floor = false;
};

// Every setting, in the order messages and docs list them.
[[nodiscard]] std::span<const SettingInfo> measurement_settings();
// The same rows in sweep order: an earlier key varies more slowly.
[[nodiscard]] std::vector<const SettingInfo *> settings_in_sweep_order();
// The row of `key`, or nullptr.
[[nodiscard]] const SettingInfo *find_setting(std::string_view key);

// The default, as text: "3", "0.05", "warm".
[[nodiscard]] std::string default_text(const SettingInfo &s);
// The range, as text: "integer 0..1000000", "seconds 0.0001..3600", "warm or cold".
[[nodiscard]] std::string range_text(const SettingInfo &s);
// A value as text (cache by name; numbers in %g form, never 300 digits).
[[nodiscard]] std::string value_text(const SettingInfo &s, double v);

// nullopt when `v` is a valid value of `s`; else why not, e.g.
// "'threads' must be between 0 and 1024, got 100000".
[[nodiscard]] std::optional<std::string> check_setting(const SettingInfo &s, double v);

// The value the run uses for `v` of `s`: for a key raised_to_floor, a value
// below the floor becomes the floor and `warning` says so ("'min_time' 1e-09
// is below its floor; using 0.0001"); otherwise `v` unchanged and no warning.
// Check the result with check_setting() as before.
struct FlooredValue {
    double value = 0;
    std::string warning; // empty: nothing was raised
};
[[nodiscard]] FlooredValue raise_to_floor(const SettingInfo &s, double v);

// Checks across keys (max_time >= min_time; launch batch or graph only with
// a warm cache); nullopt when consistent.
[[nodiscard]] std::optional<std::string> check_settings(const MeasureSettings &m);
// The key a failed check_settings() is about ("max_time", "launch"), for
// the message's location; empty when the settings are consistent.
[[nodiscard]] std::string_view setting_in_conflict(const MeasureSettings &m);

// Command-line overrides of what the suite says: key -> value, applied in
// table order; unset keys keep the suite's.
struct SettingOverrides {
    std::vector<std::pair<const SettingInfo *, double>> values;
    void set(const SettingInfo &s, double v);
    void apply(MeasureSettings &m) const;
    [[nodiscard]] std::optional<double> get(std::string_view key) const;
};

} // namespace opbench
