#include "measure/settings.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <sched.h>

namespace opbench {

std::string_view cache_state_name(CacheState c) { return c == CacheState::cold ? "cold" : "warm"; }

std::optional<CacheState> cache_state_from_name(std::string_view name) {
    if (name == "warm") return CacheState::warm;
    if (name == "cold") return CacheState::cold;
    return std::nullopt;
}

std::string_view launch_mode_name(LaunchMode m) {
    return m == LaunchMode::batch ? "batch" : m == LaunchMode::graph ? "graph" : "single";
}

std::optional<LaunchMode> launch_mode_from_name(std::string_view name) {
    if (name == "single") return LaunchMode::single;
    if (name == "batch") return LaunchMode::batch;
    if (name == "graph") return LaunchMode::graph;
    return std::nullopt;
}

int resolve_threads(int threads) {
    if (threads > 0) return threads;
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) != 0) return 1;
    return std::max(1, CPU_COUNT(&set));
}

namespace {

#define OPB_SETTING_FIELD(field)                                                                                       \
    [](const MeasureSettings &m) { return double(m.field); },                                                          \
        [](MeasureSettings &m, double v) { m.field = static_cast<decltype(m.field)>(v); }

// The floors keep every repetition finite and meaningful: below 100 us of
// samples (1 ms of cap) the clock's own cost dominates and a repetition can
// end with no sample at all. The caps bound what one typo can cost.
constexpr std::array kSettings = {
    SettingInfo{"warmup", "warmup", "--warmup", SettingType::integer, 0, 1e6, "N",
                "untimed executions before measuring", 2, OPB_SETTING_FIELD(warmup)},
    SettingInfo{"min_time", "min_time", "--min-time", SettingType::seconds, 1e-4, 3600, "S",
                "seconds of samples at least, per repetition (less is raised to the floor, with a warning)", 3,
                OPB_SETTING_FIELD(min_time), /*raised_to_floor=*/true},
    SettingInfo{"max_time", "max_time", "--max-time", SettingType::seconds, 1e-3, 3600, "S",
                "seconds of samples at most, per repetition (>= min_time); the untimed work around "
                "them is capped at twice this",
                4, OPB_SETTING_FIELD(max_time)},
    SettingInfo{"min_samples", "min_samples", "--min-samples", SettingType::integer, 1, 1e6, "N",
                "samples at least, even once min_time is reached", 5, OPB_SETTING_FIELD(min_samples)},
    SettingInfo{"noise", "noise_target", "--noise", SettingType::number, 1e-4, 1, "F",
                "stop target: relative half-width of the median's 95% CI (0.01 = 1%)", 6, OPB_SETTING_FIELD(noise)},
    SettingInfo{"repetitions", "", "--repetitions", SettingType::integer, 1, 1000, "N",
                "separate result entries per case (compare.py's U-test wants about 9)", 7,
                OPB_SETTING_FIELD(repetitions)},
    SettingInfo{"cache", "cache", "--cache", SettingType::cache, 0, 1, "warm|cold",
                "cache state between samples: cold flushes caches before each sample", 1, OPB_SETTING_FIELD(cache)},
    SettingInfo{"threads", "threads", "--threads", SettingType::integer, 0, kMaxThreads, "N",
                "CPU threads; 0 = every CPU opbench may run on (its affinity mask, see --cpus)", 0,
                OPB_SETTING_FIELD(threads)},
    SettingInfo{"timeout", "timeout", "--case-timeout", SettingType::seconds, 0, 86400, "S",
                "seconds a case x backend may take in its worker before it is killed and failed; "
                "0 = 60 + 10 x repetitions x max_time",
                8, OPB_SETTING_FIELD(timeout)},
    SettingInfo{"starved_retries", "starved_retries", "--starved-retries", SettingType::integer, 0, 100, "N",
                "times a starved repetition (its threads waited for a CPU) is measured again before it "
                "counts as starved; an entry with no other repetition is `starved`",
                9, OPB_SETTING_FIELD(starved_retries)},
    SettingInfo{"launch", "launch", "--launch", SettingType::launch, 0, 2, "single|batch|graph",
                "how a sample's calls are launched: single (one call per sample on a GPU), batch (back to "
                "back, one synchronize per sample, about 1 ms of device time; needs cache warm), graph "
                "(batch replayed as one CUDA graph; batch where the plugin cannot)",
                10, OPB_SETTING_FIELD(launch)},
    SettingInfo{"processes", "processes", "--processes", SettingType::integer, 1, kMaxProcessesPerCase, "N",
                "worker processes a case's repetitions are spread over (--isolate process), each with its own "
                "memory layout, so a comparison sees layout effects as noise; 1 = every repetition in one "
                "process: no case prepared again, blind to layout",
                11, OPB_SETTING_FIELD(processes)},
};

constexpr std::array<std::string_view, 2> kCacheNames = {"warm", "cold"};
constexpr std::array<std::string_view, 3> kLaunchNames = {"single", "batch", "graph"};

#undef OPB_SETTING_FIELD

// Whole numbers in full ("1000000"), others in %g form: never 300 digits.
std::string number_text(double v) {
    if (std::isfinite(v) && v == std::floor(v) && std::fabs(v) < 1e15)
        return fmt::format("{}", static_cast<long long>(v));
    return fmt::format("{:g}", v);
}

} // namespace

std::span<const SettingInfo> measurement_settings() { return kSettings; }

std::vector<const SettingInfo *> settings_in_sweep_order() {
    std::vector<const SettingInfo *> out;
    for (const auto &s : kSettings) out.push_back(&s);
    std::sort(out.begin(), out.end(), [](auto *a, auto *b) { return a->sweep_rank < b->sweep_rank; });
    return out;
}

const SettingInfo *find_setting(std::string_view key) {
    for (const auto &s : kSettings)
        if (s.key == key) return &s;
    return nullptr;
}

std::span<const std::string_view> setting_value_names(SettingType type) {
    if (type == SettingType::cache) return kCacheNames;
    if (type == SettingType::launch) return kLaunchNames;
    return {};
}

namespace {
// "warm or cold", "single, batch or graph".
std::string names_text(std::span<const std::string_view> names) {
    std::string out;
    for (std::size_t i = 0; i < names.size(); ++i)
        out += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + std::string(names[i]);
    return out;
}
} // namespace

std::string value_text(const SettingInfo &s, double v) {
    const auto names = setting_value_names(s.type);
    if (!names.empty()) {
        const auto i = static_cast<std::size_t>(v >= 0 && v < double(names.size()) ? v : 0);
        return std::string(names[i]);
    }
    return number_text(v);
}

std::string default_text(const SettingInfo &s) { return value_text(s, s.get(MeasureSettings{})); }

std::string range_text(const SettingInfo &s) {
    switch (s.type) {
    case SettingType::integer: return fmt::format("integer {}..{}", number_text(s.min), number_text(s.max));
    case SettingType::seconds: return fmt::format("seconds {}..{}", number_text(s.min), number_text(s.max));
    case SettingType::number: return fmt::format("number {}..{}", number_text(s.min), number_text(s.max));
    case SettingType::cache:
    case SettingType::launch: return names_text(setting_value_names(s.type));
    }
    return {};
}

std::optional<std::string> check_setting(const SettingInfo &s, double v) {
    if (const auto names = setting_value_names(s.type); !names.empty()) {
        if (v >= 0 && v < double(names.size()) && v == std::floor(v)) return std::nullopt;
        return fmt::format("'{}' must be {}", s.key, names_text(names));
    }
    if (!std::isfinite(v)) return fmt::format("'{}' must be a finite number", s.key);
    if (s.type == SettingType::integer && v != std::floor(v))
        return fmt::format("'{}' must be an integer, got {}", s.key, number_text(v));
    if (v < s.min || v > s.max)
        return fmt::format("'{}' must be between {} and {}, got {}", s.key, number_text(s.min), number_text(s.max),
                           number_text(v));
    return std::nullopt;
}

FlooredValue raise_to_floor(const SettingInfo &s, double v) {
    // NaN and negative values are no request for "as short as possible":
    // they stay for check_setting to refuse.
    if (!s.raised_to_floor || !std::isfinite(v) || v < 0 || v >= s.min) return {v, ""};
    return {s.min, fmt::format("'{}' {} is below its floor; using {}", s.key, number_text(v), number_text(s.min))};
}

std::string_view setting_in_conflict(const MeasureSettings &m) {
    if (m.max_time < m.min_time) return "max_time";
    // A cold cache needs a flush between calls; batch and graph have none.
    if (m.launch != LaunchMode::single && m.cache == CacheState::cold) return "launch";
    return {};
}

std::optional<std::string> check_settings(const MeasureSettings &m) {
    const std::string_view key = setting_in_conflict(m);
    if (key == "max_time")
        return fmt::format("max_time ({} s) is less than min_time ({} s)", number_text(m.max_time),
                           number_text(m.min_time));
    if (key == "launch")
        return fmt::format("launch '{}' needs cache 'warm' (no flush between its calls); valid with cache "
                           "'cold': launch 'single'",
                           launch_mode_name(m.launch));
    return std::nullopt;
}

void SettingOverrides::set(const SettingInfo &s, double v) {
    for (auto &[info, value] : values)
        if (info == &s) {
            value = v;
            return;
        }
    values.emplace_back(&s, v);
}

void SettingOverrides::apply(MeasureSettings &m) const {
    for (const auto &[info, value] : values) info->set(m, value);
}

std::optional<double> SettingOverrides::get(std::string_view key) const {
    for (const auto &[info, value] : values)
        if (info->key == key) return value;
    return std::nullopt;
}

} // namespace opbench
