// `opbench analyze SET.json` (issue 12): the run's bottlenecks, ranked, read
// from a result set only (no plugin is loaded). An entry's `bottleneck` field
// is used when the run wrote one; otherwise the verdict is computed from the
// entry's figures and the set's context with the same rules
// (harness/machine/bottleneck.hpp), so older result sets can be analysed too.
#pragma once

#include "machine/bottleneck.hpp"
#include "measure/bottleneck_rules.hpp"
#include "measure/entry_summary.hpp"
#include "writers/writer.hpp"

#include <nlohmann/json.hpp>

#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace opbench {

// A result set that cannot be analysed; what() names the file and the field.
class AnalyzeError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// An op variant's components (the profiling scopes its row in the op table
// names) as shares of the span that holds them; `other` is that span's self
// time, so the shares and `other` add up to 1.
struct ComponentBreakdown {
    std::string parent; // path of the holding span
    double parent_total_s = 0;
    std::vector<std::pair<std::string, double>> shares; // in the op table's order
    double other = 0;
    std::string dominant;
    bool device_time = false; // from the kernel timeline's device time, not the host's scopes
};

// An entry's kernel timeline (its `kernel_timeline`, issue 42) as analyze
// reads it: medians per call, and whether the gap rule names it.
struct TimelineFinding {
    double kernels_per_call = 0, device_seconds = 0, gap_seconds = 0, gap_share = 0, max_gap_seconds = 0;
    bool gap_bound = false; // measure/bottleneck_rules.hpp is_gap_bound
};
// nullopt for an entry without a recorded timeline.
[[nodiscard]] std::optional<TimelineFinding> timeline_finding(const nlohmann::json &entry);

// The components on device time, from the kernel timeline's `scopes` (each
// plugin scope's kernel time per call over the call's device time); `other`
// is the rest (gaps, unscoped kernels). nullopt when it holds none of
// `components`.
[[nodiscard]] std::optional<ComponentBreakdown> device_component_breakdown(const nlohmann::json &entry,
                                                                           std::span<const char *const> components);

// The components the op table names for an op and variant (by their names in
// a result set); empty for an unknown op or one without components.
[[nodiscard]] std::span<const char *const> variant_components(const std::string &op, const std::string &variant);

// From an entry's `profile` array; nullopt when it holds none of `components`.
[[nodiscard]] std::optional<ComponentBreakdown> component_breakdown(const nlohmann::json &profile,
                                                                    std::span<const char *const> components);

// A decoder workload entry's layer components (its `decoder.components`,
// shares of the steps' time from the component spans) as a breakdown of the
// `step`; `other` is the unscoped rest. nullopt for other entries.
[[nodiscard]] std::optional<ComponentBreakdown> decoder_breakdown(const nlohmann::json &entry);

// The device over an entry's repetitions (issue 41): "SM 1958-1980 MHz (134-136% of
// sustained); up to 612 W, 71 C; NVML: sw power cap"; "" when the set has
// none of them (a CPU backend, a plugin before ABI 1.5).
[[nodiscard]] std::string device_text(const std::vector<const nlohmann::json *> &repetitions);

// One case x backend of the set.
struct AnalyzedEntry {
    std::string name; // the benchmark's run name
    std::string op, backend;
    double seconds = 0;   // the summary's median (every repetition's median), per call
    EntrySummary summary; // its median and quality (measure/entry_summary.hpp)
    // A disturbed entry's bottleneck is kind "disturbed" with the remedy:
    // its time says nothing about the kernel.
    Bottleneck bottleneck;
    bool from_run = false; // the result set carried the verdict
    std::optional<ComponentBreakdown> components;
    std::optional<ComponentBreakdown> layer; // decoder workloads: the layer's components
    std::string device; // GPU backends: clock, power, temperature, NVML reasons (device_text); "" none
    std::optional<TimelineFinding> timeline; // the kernel timeline (GPU backends, --profile / --trace)
};

// The facts the bottleneck rules (measure/bottleneck_rules.hpp) read of one
// result-set entry: what the run filled from the entry's records.
[[nodiscard]] EntryFacts entry_facts(const nlohmann::json &entry);

// The figures analyse() needs, from one entry and the set's context.opbench.
[[nodiscard]] EntryFigures figures_from_entry(const nlohmann::json &entry, const nlohmann::json &opbench_context,
                                              double seconds);

// Every measured case x backend (failed and skipped ones left out), largest
// impact (seconds x headroom) first. Throws AnalyzeError for a document that
// is not a result set; `source` names it in messages.
[[nodiscard]] std::vector<AnalyzedEntry> analyse_result_set(const nlohmann::json &set, const std::string &source);

// Writes `bottleneck` into every measured entry of a result set (the same
// verdict on each repetition of a case x backend: the median of their
// medians decides), from the entry's figures and context.opbench, by the
// rules the run applies to its records (measure/bottleneck_rules.hpp): for a
// set written without them.
void add_bottlenecks(nlohmann::json &set);

// The ranking table and one detail table (description, suggestion,
// components) per entry.
// By default the ranking fits 100 columns (the name segments every entry
// shares go to a header line); `wide` keeps full names.
[[nodiscard]] std::vector<Table> analysis_tables(const std::vector<AnalyzedEntry> &entries, std::size_t limit,
                                                 bool wide = false);

// What every output format writes: `data` (the first `limit` entries, each
// with its verdict, time, impact and breakdowns, as JSON) and `tables` (the
// two above; for no measured case, one table saying so). `source` names the
// set; `wide`: full names and parameters (else fitted to 100 columns).
[[nodiscard]] Document analysis_document(const std::vector<AnalyzedEntry> &entries, std::size_t limit,
                                         const std::string &source, bool wide = false);

// Reads and analyses the result set at `path` into its document. Throws
// AnalyzeError (naming the file) for a file that is missing, too large, not
// JSON or not a result set.
[[nodiscard]] Document analyze_file(const std::string &path, std::size_t limit, bool wide = false);

// The console form of an analysis: the ranked table, then each entry's
// details wrapped to 100 columns (unwrapped when `wide`).
[[nodiscard]] std::string console_analysis(const Document &doc, const std::string &path, bool wide);

// The whole command: read `path`, write it in `format` (a writer's name) to
// `out` (console: the table, then each entry's details wrapped to 100
// columns unless `wide`); exit status 0, or 2 for an unknown format or a file
// that is missing or not a result set (the message goes to `err`).
[[nodiscard]] int cmd_analyze(const std::string &path, std::size_t limit, std::ostream &out, std::ostream &err,
                              std::string_view format = "console", bool wide = false);

} // namespace opbench
