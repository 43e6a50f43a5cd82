// Reading result sets back: the one place that knows how a result set's JSON
// (results/README.md) maps to cases, repetitions and context. compare,
// report, history, archive and merge read sets through it and never load a
// plugin.
#pragma once

#include "measure/entry_summary.hpp"
#include "writers/units.hpp"

#include <nlohmann/json.hpp>

#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace opbench {

// A result set that cannot be read: the message names the file, and for
// malformed JSON the line and column.
class ResultSetError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// One repetition of a case (one Google Benchmark iteration entry).
struct RepetitionTime {
    double median_seconds = 0; // the repetition's median time per call
    double noise = 0;          // relative half-width of that median's 95% CI
    bool noise_target_met = true;
    bool timed_out = false;
    double fastest_seconds = NAN;     // stats.min: its fastest sample per call
    std::vector<double> sample_times; // seconds per call, every sample
    int process = 0;                  // stats.process: which of the backend's worker processes took it
    bool starved = false;             // stats.starved: its threads waited for a CPU; not a time of the op
    double starved_share = NAN;       // stats.starved_share
    int remeasured = 0;               // stats.remeasured: tries discarded as starved before this one
    bool throttled = false;           // stats.throttled: the device's clock had fallen (issue 41)
};

// Everything a set says about one case on one backend.
struct CaseRecord {
    std::string name; // run_name without Google Benchmark's manual-time suffix
    std::string op, backend, dtype, variant, case_name;
    std::string phase; // a workload entry's phase ("prefill", "decode"); empty for an op case
    nlohmann::json params = nlohmann::json::object();   // shape parameters
    nlohmann::json settings = nlohmann::json::object(); // threads, cache, noise_target, ...
    std::string status;                                 // passed | failed | skipped (as written)
    std::string reason;
    bool reference = false;
    double flops = 0, bytes = 0, arithmetic_intensity = 0;
    nlohmann::json roofline;                 // null when not measured
    nlohmann::json memory;                   // the entry's memory object
    std::vector<RepetitionTime> repetitions; // passed entries only, in repetition order
    EntryConditions conditions;              // noise target, threads, CPUs, load: for its summary

    // What the case computes, without the settings that only change how it
    // was measured (threads, cache): op, shape, dtype, variant, backend, name.
    [[nodiscard]] std::string match_key() const;
    // The same plus threads and cache, for sets that hold a case under
    // several settings.
    [[nodiscard]] std::string match_key_with_settings() const;
    // "op variant shape dtype" for a person, e.g. "<op> <variant> B:1 H:2 S:64 D:32 f32".
    [[nodiscard]] std::string label() const;
    // The shape as "K:V" pairs in the result set's parameter order.
    [[nodiscard]] std::string shape() const;
};

struct ResultSet {
    std::string path;
    nlohmann::json context;        // Google Benchmark's context, context.opbench inside
    std::vector<CaseRecord> cases; // in the order the set first lists them
    nlohmann::json raw;            // the whole file, for merge

    [[nodiscard]] const nlohmann::json &opbench() const; // context.opbench
    [[nodiscard]] std::string suite_name() const;
    [[nodiscard]] std::string suite_sha256() const;
    [[nodiscard]] std::string build_type() const;
    [[nodiscard]] std::string commit() const;
    // context.opbench.code_under_test.commit (run/code_under_test.hpp); "" when not recorded.
    [[nodiscard]] std::string commit_under_test() const;
    [[nodiscard]] std::string timestamp() const; // context.opbench.timestamp, UTC ISO 8601
    [[nodiscard]] std::string host_name() const;
    [[nodiscard]] std::string cpu_model() const;
    // See machine_id() below.
    [[nodiscard]] std::string machine_id() const;
    // A short name for tables: the file name without directory and ".json".
    [[nodiscard]] std::string short_name() const;
};

// The most a reader reads of one input file (a result set, an archive index):
// a larger file is refused. suites/quick.toml's set is about 45 MiB (every
// sample time is kept), so the cap leaves room for suites 20x larger.
inline constexpr std::size_t kMaxReaderInputBytes = std::size_t{1} << 30;
// The deepest nesting of arrays and objects a reader accepts (JSON or CBOR):
// deeper input (a crafted index 100,000 deep) exhausted the stack in the
// recursive copies, dumps and CBOR reads that follow a parse.
constexpr std::size_t kMaxReaderNesting = 256;

// The one way every reader (compare, report, history, merge, archive,
// analyze, compare --baseline-from) reads a file: a directory is refused
// with a clear message, and at most `cap` + 1 bytes are ever read, so a
// device (/dev/zero), a FIFO or a growing file cannot be read forever; more
// than `cap` bytes is an error, and so is a NUL byte (never in JSON text), so
// /dev/zero stops at its first 64 KiB. Throws ResultSetError naming the file.
[[nodiscard]] std::string read_reader_input(const std::string &path, std::size_t cap = kMaxReaderInputBytes);
// JSON text to a document; every parse failure (syntax, a number out of
// range such as 1e999999, bad UTF-8) becomes a ResultSetError with
// file:line:column.
[[nodiscard]] nlohmann::json parse_reader_json(const std::string &text, const std::string &path);
// Check a parsed result set against the schema (results/README.md) before
// any reader touches it: a `benchmarks` array of objects whose fields have
// the documented types, times finite and not negative, no entry twice
// (same name and repetition_index), context and context.opbench objects
// whose known members have their types. The error names the file, the JSON
// path (`benchmarks[3].real_time`) and what was expected. It does not
// require context.opbench (analyze reads plain Google Benchmark JSON too);
// parse_result_set does. Throws ResultSetError.
void validate_result_set(const nlohmann::json &raw, const std::string &path);

// Read and check a result set: valid JSON, a `benchmarks` array, an opbench
// context of a schema version this build knows, validate_result_set.
// Throws ResultSetError.
[[nodiscard]] ResultSet read_result_set(const std::string &path);
// The same from text already in memory (`path` only names it in errors).
[[nodiscard]] ResultSet parse_result_set(const std::string &text, const std::string &path);

// Which machine a set was measured on, as a directory-safe name:
// context.opbench.machine.id when the set has one, else
// "<cpu model>-<N>c-<hash>" from the CPU model, core count, memory and ISA
// flags. It leaves the host name out on purpose: CI runners of one kind get
// fresh host names, and their sets must find each other's baselines.
[[nodiscard]] std::string machine_id(const nlohmann::json &context);

// The entry's one summary (measure/entry_summary.hpp): its median over every
// passed repetition and its quality, the same in every reader.
[[nodiscard]] EntrySummary entry_summary(const CaseRecord &c);

// An entry's time as every view takes it: the summary's policy (a repetition
// that missed its noise target counts and is a reason in the quality; a
// starved one does not count). Empty, with `status` and `why`, for an entry
// that failed, was skipped or was starved ("starved", "every repetition ...").
struct ValidTimes {
    std::vector<double> repetition_medians; // seconds
    std::vector<int> repetition_processes;  // the worker process of each (stats.process)
    std::vector<double> samples;            // every sample of those repetitions
    double median = 0;                      // summary.median_s
    EntrySummary summary;                   // median and quality (also for an entry left without a time)
    std::string status;                     // "ok", or skipped / failed / starved
    std::string why;
};
[[nodiscard]] ValidTimes valid_times(const CaseRecord &c);

} // namespace opbench
