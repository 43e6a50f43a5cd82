// Suites: TOML files that describe what to measure (see suites/README.md).
// Loading expands every case's sweep axes into concrete cases, validates them,
// and reports errors as "file:line:column: what is wrong (valid: ...)".
#pragma once

#include "plugin/plugin_spec.hpp"

#include "measure/settings.hpp"

#include "opbench/plugin.h"
#include "suite/decoder_config.hpp"

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace opbench {

// Where something was written in a suite file.
struct SourceLocation {
    std::string file;
    int line = 0;
    int column = 0;
    std::string str() const; // "file:line:column"
};

// One concrete measurement: an op description and how to measure it.
struct Case {
    std::string name;                  // from the suite ("gpt2-small.attn.qkv"); may be empty
    opb_op_desc desc{};                // op, dtype, variant, shape; desc.threads = resolve_threads(settings.threads)
    std::vector<std::string> backends; // backends to run it on, in order (never empty: a
                                       // suite naming none gets naive, onednn, cuda)
    MeasureSettings settings;
    SourceLocation where; // the [[case]] table it came from (for a zipped
                          // case: its row of `shapes`)
};

// A measured unit of several plugin calls: a [[workload]] table
// (harness/suite/workload_schema.cpp). kind "decoder" is the only kind.
struct WorkloadCase {
    enum class Phase { prefill, decode };
    std::string name; // required in the suite ("gpt2-small.layer")
    std::string kind = "decoder";
    workload::DecoderConfig decoder;
    std::vector<Phase> phases; // each phase is measured as its own entry
    std::vector<std::string> backends;
    MeasureSettings settings;
    SourceLocation where;
};

struct Suite {
    std::string name;
    std::string description;
    std::string path;                    // as given
    std::string content_hash;            // SHA-256 hex of the file's bytes
    std::vector<Case> cases;             // fully expanded, in file order
    std::vector<WorkloadCase> workloads; // [[workload]] tables, in file order
    // [defaults] plugins: backend instances built from plugin files, paths
    // made relative to the working directory; --plugin adds to (and for the
    // same instance replaces) them.
    std::vector<PluginVariantSpec> plugins;
    // "file:line:col: warning: ..." for values used other than written (a
    // min_time below its floor), each once; `run` and `validate` print them.
    std::vector<std::string> warnings;
};

// Appends `warning` unless `warnings` holds it already (one line per place,
// however many cases a [defaults] key reaches).
void add_warning(std::vector<std::string> &warnings, const std::string &warning);

// A suite that cannot be used; what() is "file:line:column: message".
class SuiteError : public std::runtime_error {
public:
    SuiteError(SourceLocation where, const std::string &message);
    const SourceLocation &where() const { return where_; }
    const std::string &message() const { return message_; }

private:
    SourceLocation where_;
    std::string message_;
};

// Backend names the loader should accept; an empty list accepts any name
// (unknown names then surface at run time as skipped with a reason).
struct SuiteOptions {
    std::vector<std::string> known_backends;
};

// Parse and expand a suite file. Throws SuiteError (also for an unreadable file).
[[nodiscard]] Suite load_suite_file(const std::string &path, const SuiteOptions &options = {});

// The [defaults] plugins of the suite file at `path`, to load before the
// suite is parsed against the loaded backends; none when `path` is empty or
// the suite does not parse (its full parse then reports why).
[[nodiscard]] std::vector<PluginVariantSpec> suite_plugin_builds(const std::string &path);

// Parse and expand suite text; `source_name` is used in error locations.
[[nodiscard]] Suite parse_suite(std::string_view text, const std::string &source_name,
                                const SuiteOptions &options = {});

} // namespace opbench
