// The version of the fields opbench adds to a result set (results/README.md):
// what writers stamp and readers check; and how an entry's name appears in
// it (Google Benchmark's form, so compare.py reads every set).
#pragma once

#include <string>
#include <string_view>

namespace opbench {

// Bump on any incompatible change of opbench's fields.
inline constexpr int kResultSchemaVersion = 1;

// Google Benchmark names a manually timed benchmark's runs "<name>/manual_time";
// result-set entries keep that form. The one place it is spelled.
inline constexpr std::string_view kManualTimeSuffix = "/manual_time";

// The run name of the entry named `entry_name` ("<op>/.../be:naive" ->
// "<op>/.../be:naive/manual_time").
[[nodiscard]] inline std::string run_name_of(std::string_view entry_name) {
    return std::string(entry_name) + std::string(kManualTimeSuffix);
}

// The entry name of a result-set run name (the suffix removed when present).
[[nodiscard]] inline std::string entry_name_of(std::string run_name) {
    const std::string_view s = kManualTimeSuffix;
    if (run_name.size() > s.size() && std::string_view(run_name).substr(run_name.size() - s.size()) == s)
        run_name.resize(run_name.size() - s.size());
    return run_name;
}

} // namespace opbench
