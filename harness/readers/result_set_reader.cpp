#include "readers/result_set_reader.hpp"

#include "writers/result_schema.hpp"
#include "measure/sample_codec.hpp"
#include "measure/statistics.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace fs = std::filesystem;

namespace opbench {

namespace {

// Line and column (1-based) of a byte offset, for parse errors.
std::pair<std::size_t, std::size_t> line_column(const std::string &text, std::size_t byte) {
    std::size_t line = 1, col = 1;
    for (std::size_t i = 0; i < std::min(byte, text.size()); ++i) {
        if (text[i] == '\n') {
            ++line;
            col = 1;
        } else {
            ++col;
        }
    }
    return {line, col};
}

std::string str_or(const nlohmann::json &j, const char *key, std::string fallback = "") {
    if (!j.is_object()) return fallback;
    auto it = j.find(key);
    if (it == j.end() || !it->is_string()) return fallback;
    return it->get<std::string>();
}

double num_or(const nlohmann::json &j, const char *key, double fallback = 0) {
    if (!j.is_object()) return fallback;
    auto it = j.find(key);
    if (it == j.end() || !it->is_number()) return fallback;
    return it->get<double>();
}

std::vector<std::string> split(const std::string &s, char sep) {
    std::vector<std::string> parts;
    std::string part;
    std::istringstream in(s);
    while (std::getline(in, part, sep)) parts.push_back(part);
    return parts;
}

// Segments a label leaves out: how it was measured, and the default variant.
bool is_setting_segment(const std::string &seg) {
    return seg.rfind("thr:", 0) == 0 || seg.rfind("cache:", 0) == 0 || seg.rfind("be:", 0) == 0 ||
           seg == "variant:default";
}

// stats.calls_per_sample as an int in range (a hand-edited set may hold 1e300).
int calls_per_sample_of(const nlohmann::json &stats) {
    return static_cast<int>(std::clamp(num_or(stats, "calls_per_sample", 1), 1.0, double(1 << 30)));
}

// ---- Schema checks (validate_result_set) ----

std::string kind_of(const nlohmann::json &v) {
    switch (v.type()) {
    case nlohmann::json::value_t::null: return "null";
    case nlohmann::json::value_t::boolean: return fmt::format("the boolean {}", v.get<bool>());
    case nlohmann::json::value_t::string: {
        std::string t = v.get<std::string>();
        if (t.size() > 40) t = t.substr(0, 40) + "...";
        return fmt::format("the string {}",
                           nlohmann::json(t).dump(-1, ' ', true, nlohmann::json::error_handler_t::replace));
    }
    case nlohmann::json::value_t::number_integer:
    case nlohmann::json::value_t::number_unsigned:
    case nlohmann::json::value_t::number_float: return fmt::format("the number {}", v.dump());
    case nlohmann::json::value_t::object: return "an object";
    case nlohmann::json::value_t::array: return "an array";
    default: return "a value of another kind";
    }
}

class SchemaCheck {
public:
    explicit SchemaCheck(const std::string &file) : file_(file) {}

    [[noreturn]] void fail(const std::string &where, const std::string &expected, const nlohmann::json &got) const {
        throw ResultSetError(fmt::format("{}: {}: expected {}, got {} (results/README.md describes a result set)",
                                         file_, where, expected, kind_of(got)));
    }
    // Each helper checks j[key] when it is present.
    void string(const nlohmann::json &j, const std::string &at, const char *key) const {
        if (auto it = j.find(key); it != j.end() && !it->is_string()) fail(at + "." + key, "a string", *it);
    }
    void one_of(const nlohmann::json &j, const std::string &at, const char *key,
                std::initializer_list<const char *> allowed) const {
        auto it = j.find(key);
        if (it == j.end()) return;
        std::string list;
        for (const char *a : allowed) {
            if (it->is_string() && it->get<std::string>() == a) return;
            list += fmt::format("{}\"{}\"", list.empty() ? "" : ", ", a);
        }
        fail(at + "." + key, "one of " + list, *it);
    }
    void boolean(const nlohmann::json &j, const std::string &at, const char *key) const {
        if (auto it = j.find(key); it != j.end() && !it->is_boolean()) fail(at + "." + key, "true or false", *it);
    }
    // A finite number; `min` 0 for times and counts; null allowed when `nullable`.
    void number(const nlohmann::json &j, const std::string &at, const char *key, bool non_negative = true,
                bool nullable = false) const {
        auto it = j.find(key);
        if (it == j.end() || (nullable && it->is_null())) return;
        check_number(*it, at + "." + key, non_negative, nullable);
    }
    void check_number(const nlohmann::json &v, const std::string &where, bool non_negative, bool nullable) const {
        const char *what = non_negative ? (nullable ? "a finite number >= 0 or null" : "a finite number >= 0")
                                        : (nullable ? "a finite number or null" : "a finite number");
        if (!v.is_number()) fail(where, what, v);
        const double d = v.get<double>();
        if (!std::isfinite(d) || (non_negative && d < 0)) fail(where, what, v);
    }
    // A time in seconds: a finite number from 0 to kMaxSeconds. A median of
    // 1e308 s is not a time, and the report's axes grew to the memory limit on it.
    void seconds(const nlohmann::json &j, const std::string &at, const char *key) const {
        if (auto it = j.find(key); it != j.end()) check_seconds(*it, at + "." + key);
    }
    void check_seconds(const nlohmann::json &v, const std::string &where) const {
        static constexpr double kMaxSeconds = 1e6; // 11.6 days for one sample
        const std::string what = fmt::format("a time in seconds from 0 to {:g}", kMaxSeconds);
        if (!v.is_number()) fail(where, what, v);
        const double d = v.get<double>();
        if (!(d >= 0 && d <= kMaxSeconds)) fail(where, what, v);
    }
    void integer(const nlohmann::json &j, const std::string &at, const char *key) const {
        auto it = j.find(key);
        if (it == j.end()) return;
        if (!(it->is_number_unsigned() || (it->is_number_integer() && it->get<std::int64_t>() >= 0)))
            fail(at + "." + key, "a whole number >= 0", *it);
    }
    // An object (or null when `nullable`); returns it, or nullptr when absent or null.
    const nlohmann::json *object(const nlohmann::json &j, const std::string &at, const char *key,
                                 bool nullable = true) const {
        auto it = j.find(key);
        if (it == j.end() || (nullable && it->is_null())) return nullptr;
        if (!it->is_object()) fail(at + "." + key, nullable ? "an object or null" : "an object", *it);
        return &*it;
    }
    const nlohmann::json *array(const nlohmann::json &j, const std::string &at, const char *key) const {
        auto it = j.find(key);
        if (it == j.end() || it->is_null()) return nullptr;
        if (!it->is_array()) fail(at + "." + key, "an array or null", *it);
        return &*it;
    }

    [[nodiscard]] const std::string &file() const { return file_; }

private:
    std::string file_;
};

void validate_context(const SchemaCheck &c, const nlohmann::json &raw) {
    const nlohmann::json *ctx = c.object(raw, "", "context", false);
    if (!ctx) return;
    const std::string at = "context";
    for (const char *k : {"date", "host_name", "executable", "library_build_type"}) c.string(*ctx, at, k);
    c.number(*ctx, at, "num_cpus");
    c.number(*ctx, at, "mhz_per_cpu");
    const nlohmann::json *ob = c.object(*ctx, at, "opbench", false);
    if (!ob) return;
    const std::string o = "context.opbench";
    c.integer(*ob, o, "schema_version");
    c.string(*ob, o, "timestamp");
    c.string(*ob, o, "journal");
    c.boolean(*ob, o, "complete");
    c.array(*ob, o, "warnings");
    c.array(*ob, o, "merged_from");
    for (const char *k : {"measurement", "backends", "machine_peaks", "profiling"}) c.object(*ob, o, k);
    if (const auto *b = c.object(*ob, o, "build"))
        for (const char *k : {"git_commit", "build_type", "compiler", "opbench_version"}) c.string(*b, o + ".build", k);
    if (const auto *cut = c.object(*ob, o, "code_under_test"))
        for (const char *k : {"commit", "source"}) c.string(*cut, o + ".code_under_test", k);
    if (const auto *su = c.object(*ob, o, "suite")) {
        for (const char *k : {"name", "sha256", "path", "description"}) c.string(*su, o + ".suite", k);
        c.number(*su, o + ".suite", "cases");
    }
    if (const auto *m = c.object(*ob, o, "machine")) {
        const std::string mat = o + ".machine";
        for (const char *k : {"id", "cpu_model"}) c.string(*m, mat, k);
        c.number(*m, mat, "logical_cores");
        c.number(*m, mat, "allowed_cores");
        c.number(*m, mat, "memory_total_bytes");
    }
    if (const auto *sh = c.object(*ob, o, "shard")) {
        c.integer(*sh, o + ".shard", "index");
        c.integer(*sh, o + ".shard", "count");
    }
    if (const auto *me = c.object(*ob, o, "measurement")) {
        const std::string mat = o + ".measurement";
        for (const char *k : {"reference_backend", "isolation", "timer"}) c.string(*me, mat, k);
        c.object(*me, mat, "call_overhead_seconds");
        c.array(*me, mat, "benchmark_args");
        if (const auto *cpus = c.array(*me, mat, "cpus"))
            for (std::size_t i = 0; i < cpus->size(); ++i) {
                const auto &v = (*cpus)[i];
                if (!v.is_number_integer() || v.get<std::int64_t>() < 0 || v.get<std::int64_t>() > (1 << 20))
                    c.fail(fmt::format("{}.cpus[{}]", mat, i), "a CPU number", v);
            }
    }
    if (const auto *bes = c.object(*ob, o, "backends"))
        for (const auto &[name, be] : bes->items()) {
            const std::string bat = o + ".backends." + name;
            if (!be.is_object()) c.fail(bat, "an object", be);
            for (const char *k : {"version", "description", "library_versions", "unusable_reason"})
                c.string(be, bat, k);
            c.boolean(be, bat, "usable");
            c.object(be, bat, "info");
            c.object(be, bat, "device");
        }
}

// One repetition's `stats` (an iteration entry's, or one of a starved
// entry's starved_repetitions) at JSON path `sat`.
void validate_stats(const SchemaCheck &c, const nlohmann::json *st, const std::string &sat) {
    for (const char *k : {"samples", "calls_per_sample"}) c.number(*st, sat, k);
    for (const char *k : {"min", "mean", "median", "p90", "p99", "max"}) c.seconds(*st, sat, k);
    for (const char *k : {"stddev", "cv", "noise"}) c.number(*st, sat, k, true, true);
    for (const char *k : {"noise_target_met", "timed_out", "starved", "throttled"}) c.boolean(*st, sat, k);
    for (const char *k : {"process", "run_queue_waits", "threads_ran", "remeasured"}) c.integer(*st, sat, k);
    for (const char *k : {"run_queue_wait_seconds", "starved_share"}) c.number(*st, sat, k, true, true);
    if (auto it = st->find("involuntary_switches"); it != st->end() && !it->is_null())
        c.integer(*st, sat, "involuntary_switches");
    if (const auto *t = c.array(*st, sat, "sample_times"))
        for (std::size_t i = 0; i < t->size(); ++i)
            c.check_seconds((*t)[i], fmt::format("{}.sample_times[{}]", sat, i));
    if (auto h = st->find("sample_histogram"); h != st->end()) {
        try {
            const std::size_t n = decode_sample_histogram(*h, calls_per_sample_of(*st)).size();
            if (auto s = st->find("samples"); s != st->end() && s->is_number() && s->get<double>() != double(n))
                c.fail(sat + ".sample_histogram.counts", fmt::format("counts adding up to samples ({})", s->dump()),
                       nlohmann::json(n));
        } catch (const SampleHistogramError &e) {
            throw ResultSetError(fmt::format("{}: {}.sample_histogram: {} (results/README.md describes a result set)",
                                             c.file(), sat, e.what()));
        }
    }
    if (const auto *ci = c.array(*st, sat, "median_ci95"))
        for (std::size_t i = 0; i < ci->size(); ++i)
            if (!(*ci)[i].is_null())
                c.check_number((*ci)[i], fmt::format("{}.median_ci95[{}]", sat, i), false, false);
}

void validate_entry(const SchemaCheck &c, const nlohmann::json &e, const std::string &at) {
    if (!e.is_object()) c.fail(at, "an object (one benchmark entry)", e);
    for (const char *k : {"name", "run_name", "op", "backend", "dtype", "variant", "case", "reason", "error_message",
                          "label", "aggregate_name", "aggregate_unit", "suite_location", "phase"})
        c.string(e, at, k);
    c.one_of(e, at, "run_type", {"iteration", "aggregate"});
    c.one_of(e, at, "status", {"passed", "failed", "skipped", "starved"});
    c.one_of(e, at, "time_unit", {"ns", "us", "ms", "s"});
    for (const char *k : {"error_occurred", "reference", "verified"}) c.boolean(e, at, k);
    for (const char *k : {"real_time", "cpu_time", "iterations", "flops", "bytes", "arithmetic_intensity",
                          "prepare_seconds", "verify_seconds", "measure_seconds", "process_start_seconds",
                          "inputs_seconds"})
        c.number(e, at, k);
    for (const char *k : {"repetition_index", "repetitions", "threads", "family_index", "per_family_instance_index"})
        c.integer(e, at, k);
    c.number(e, at, "nmse", true, true);
    c.number(e, at, "nmse_threshold", true, true);
    c.number(e, at, "repetition_spread", true, true);
    c.object(e, at, "params", false);
    c.object(e, at, "verification");
    c.object(e, at, "workload");
    c.array(e, at, "profile");
    c.object(e, at, "kernel_timeline");
    if (const auto *sr = c.array(e, at, "starved_repetitions"))
        for (std::size_t i = 0; i < sr->size(); ++i) {
            const std::string rat = fmt::format("{}.starved_repetitions[{}]", at, i);
            if (!(*sr)[i].is_object()) c.fail(rat, "an object (a repetition's stats)", (*sr)[i]);
            validate_stats(c, &(*sr)[i], rat);
        }
    if (const auto *d = c.object(e, at, "decoder")) {
        c.array(*d, at + ".decoder", "components");
        for (const char *k : {"tokens_per_second", "ms_per_token_p50", "ms_per_token_p99"})
            c.number(*d, at + ".decoder", k, true, true);
    }
    if (const auto *s = c.object(e, at, "settings", false)) {
        const std::string sat = at + ".settings";
        for (const char *k : {"warmup", "min_time", "max_time", "min_samples", "noise_target", "threads", "timeout",
                              "starved_retries", "processes"}) // processes: absent before issue 44
            c.number(*s, sat, k);
        c.one_of(*s, sat, "cache", {"warm", "cold"});
        c.one_of(*s, sat, "launch", {"single", "batch", "graph"}); // issue 41; absent before it
        c.one_of(*s, sat, "launch_requested", {"graph"});
        c.string(*s, sat, "launch_fallback");
    }
    if (const auto *st = c.object(e, at, "stats", false)) validate_stats(c, st, at + ".stats");
    if (const auto *r = c.object(e, at, "roofline")) {
        c.string(*r, at + ".roofline", "bound");
        c.string(*r, at + ".roofline", "bandwidth_roof");
        for (const char *k : {"pct_peak_compute", "pct_peak_bandwidth"}) c.number(*r, at + ".roofline", k, true, true);
    }
    if (const auto *b = c.object(e, at, "bottleneck")) {
        const std::string bat = at + ".bottleneck";
        for (const char *k : {"kind", "severity", "description", "suggestion"}) c.string(*b, bat, k);
        for (const char *k : {"utilisation", "headroom"}) c.number(*b, bat, k, false, true);
    }
    if (const auto *m = c.object(e, at, "memory")) {
        for (const auto &[k, v] : m->items())
            if (!(v.is_null() || v.is_boolean())) c.check_number(v, at + ".memory." + k, true, false);
    }
}

} // namespace

void validate_result_set(const nlohmann::json &raw, const std::string &path) {
    const SchemaCheck c(path);
    if (!raw.is_object()) c.fail("the top level", "an object with a `benchmarks` array", raw);
    auto b = raw.find("benchmarks");
    if (b == raw.end() || !b->is_array())
        throw ResultSetError(fmt::format("{}: not a result set: no `benchmarks` array (expected Google Benchmark "
                                         "JSON as `opbench run` writes it)",
                                         path));
    validate_context(c, raw);
    // name + repetition_index of each iteration entry: one entry each.
    std::map<std::pair<std::string, std::string>, std::size_t> seen;
    for (std::size_t i = 0; i < b->size(); ++i) {
        const nlohmann::json &e = (*b)[i];
        const std::string at = fmt::format("benchmarks[{}]", i);
        validate_entry(c, e, at);
        if (str_or(e, "run_type", "iteration") != "iteration") continue;
        // Google Benchmark writes repetition_index on every iteration entry;
        // an entry without one is not checked (hand-made JSON).
        const auto rep = e.find("repetition_index");
        if (rep == e.end()) continue;
        const std::string name = str_or(e, "run_name", str_or(e, "name"));
        auto [it, inserted] = seen.emplace(std::pair{name, rep->dump()}, i);
        if (!inserted)
            throw ResultSetError(fmt::format("{}: {}: entry '{}' repetition_index {} appears twice (first as "
                                             "benchmarks[{}]); each case x backend x repetition is one entry",
                                             path, at, name, rep->dump(), it->second));
    }
}

namespace {} // namespace

std::string CaseRecord::match_key() const {
    return fmt::format("{}|{}|{}|{}|{}|{}", op, params.dump(), dtype, variant, backend, case_name);
}

std::string CaseRecord::match_key_with_settings() const {
    return fmt::format("{}|thr:{}|cache:{}", match_key(), settings.value("threads", 0),
                       settings.value("cache", std::string("warm")));
}

std::string CaseRecord::shape() const {
    // The name carries the shape in the harness's order: op/K:V/.../dt:...
    std::vector<std::string> out;
    const auto segs = split(name, '/');
    for (std::size_t i = 1; i < segs.size(); ++i) {
        if (segs[i].rfind("dt:", 0) == 0) break;
        if (segs[i].rfind("variant:", 0) == 0) continue;
        out.push_back(segs[i]);
    }
    if (out.empty() && params.is_object())
        for (const auto &[k, v] : params.items()) out.push_back(k + ":" + v.dump());
    return fmt::format("{}", fmt::join(out, " "));
}

std::string CaseRecord::label() const {
    std::vector<std::string> kept;
    for (const auto &seg : split(name, '/'))
        if (!is_setting_segment(seg)) kept.push_back(seg);
    return fmt::format("{}", fmt::join(kept, "/"));
}

const nlohmann::json &ResultSet::opbench() const {
    static const nlohmann::json empty = nlohmann::json::object();
    auto it = context.find("opbench");
    return it != context.end() && it->is_object() ? *it : empty;
}

std::string ResultSet::suite_name() const { return str_or(opbench().value("suite", nlohmann::json()), "name"); }
std::string ResultSet::suite_sha256() const { return str_or(opbench().value("suite", nlohmann::json()), "sha256"); }
std::string ResultSet::build_type() const { return str_or(opbench().value("build", nlohmann::json()), "build_type"); }
std::string ResultSet::commit() const { return str_or(opbench().value("build", nlohmann::json()), "git_commit"); }
std::string ResultSet::commit_under_test() const {
    return str_or(opbench().value("code_under_test", nlohmann::json()), "commit");
}
std::string ResultSet::timestamp() const { return str_or(opbench(), "timestamp", str_or(context, "date")); }
std::string ResultSet::host_name() const { return str_or(context, "host_name"); }
std::string ResultSet::cpu_model() const { return str_or(opbench().value("machine", nlohmann::json()), "cpu_model"); }
std::string ResultSet::machine_id() const { return opbench::machine_id(context); }
std::string ResultSet::short_name() const { return fs::path(path).stem().string(); }

std::string machine_id(const nlohmann::json &context) {
    nlohmann::json machine = nlohmann::json::object();
    if (context.is_object())
        if (auto ob = context.find("opbench"); ob != context.end() && ob->is_object())
            if (auto m = ob->find("machine"); m != ob->end() && m->is_object()) machine = *m;
    if (auto id = str_or(machine, "id"); !id.empty()) return id;
    const std::string model = str_or(machine, "cpu_model", "unknown-cpu");
    const int cores = static_cast<int>(num_or(machine, "logical_cores", num_or(context, "num_cpus")));
    // Whole GiB: the kernel's MemTotal moves by a few pages between boots.
    const auto mem_gib = static_cast<long long>(std::llround(num_or(machine, "memory_total_bytes") / (1 << 30)));
    const std::string isa = machine.contains("isa") ? machine["isa"].dump() : nlohmann::json::object().dump();
    std::uint64_t h = 0xcbf29ce484222325ull; // FNV-1a: stable across builds
    for (unsigned char c : fmt::format("{}|{}|{}|{}", model, cores, mem_gib, isa)) {
        h ^= c;
        h *= 0x100000001b3ull;
    }
    std::string slug;
    for (char c : model) {
        if (std::isalnum(static_cast<unsigned char>(c)))
            slug += static_cast<char>(std::tolower(c));
        else if (!slug.empty() && slug.back() != '-')
            slug += '-';
    }
    while (!slug.empty() && slug.back() == '-') slug.pop_back();
    if (slug.size() > 40) slug.resize(40);
    return fmt::format("{}-{}c-{:08x}", slug.empty() ? "cpu" : slug, cores, static_cast<std::uint32_t>(h >> 32));
}

// The byte where JSON text opens its (kMaxReaderNesting+1)th nested array or
// object, or npos: a scan outside strings, before the parse builds anything.
static std::size_t too_deep_at(const std::string &text) {
    std::size_t depth = 0;
    bool in_string = false;
    for (std::size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (in_string) {
            if (c == '\\') ++i;
            else if (c == '"') in_string = false;
        } else if (c == '"') in_string = true;
        else if (c == '[' || c == '{') {
            if (++depth > kMaxReaderNesting) return i;
        } else if ((c == ']' || c == '}') && depth > 0) --depth;
    }
    return std::string::npos;
}

nlohmann::json parse_reader_json(const std::string &text, const std::string &path) {
    if (text.find_first_not_of(" \t\r\n") == std::string::npos)
        throw ResultSetError(fmt::format("{}: is empty; expected a JSON file as `opbench run` writes it", path));
    if (const std::size_t at = too_deep_at(text); at != std::string::npos) {
        auto [line, col] = line_column(text, at);
        throw ResultSetError(fmt::format("{}:{}:{}: nested deeper than {} arrays and objects; a result set or "
                                         "archive index is a few levels deep",
                                         path, line, col, kMaxReaderNesting));
    }
    try {
        return nlohmann::json::parse(text);
    } catch (const nlohmann::json::exception &e) {
        // parse_error carries the byte; out_of_range (a number such as 1e999999) does not.
        std::size_t byte = 0;
        if (const auto *pe = dynamic_cast<const nlohmann::json::parse_error *>(&e)) byte = pe->byte;
        std::string what = e.what();
        // nlohmann's message starts "[json.exception.parse_error.101] parse error at line L, column C: ..."
        if (auto pos = what.find("] "); pos != std::string::npos) what = what.substr(pos + 2);
        if (auto pos = what.find(": "); pos != std::string::npos && what.rfind("parse error", 0) == 0)
            what = what.substr(pos + 2);
        if (byte == 0)
            throw ResultSetError(fmt::format("{}: not valid JSON ({}); a result set is the JSON file "
                                             "`opbench run` writes",
                                             path, what));
        auto [line, col] = line_column(text, byte - 1);
        throw ResultSetError(fmt::format("{}:{}:{}: not valid JSON ({}); a result set is the JSON file "
                                         "`opbench run` writes",
                                         path, line, col, what));
    }
}

namespace {

// One repetition as the readers hold it, from an iteration entry (its stats,
// else real_time): the summary's own reading, so every reader agrees.
RepetitionTime repetition_time(const nlohmann::json &e) {
    RepetitionTime rep;
    const nlohmann::json stats = e.value("stats", nlohmann::json::object());
    const RepetitionFigures figures = repetition_figures(e);
    rep.median_seconds = figures.median_s;
    rep.noise = figures.noise;
    rep.noise_target_met = figures.noise_target_met;
    rep.fastest_seconds = figures.fastest_s;
    rep.timed_out = stats.value("timed_out", false);
    rep.starved = figures.starved;
    rep.starved_share = figures.starved_share;
    rep.throttled = figures.throttled;
    rep.remeasured = static_cast<int>(std::clamp<std::int64_t>(stats.value("remeasured", std::int64_t{0}), 0, 1000));
    if (auto p = stats.find("process"); p != stats.end() && p->is_number_integer())
        rep.process = static_cast<int>(std::clamp<std::int64_t>(p->get<std::int64_t>(), 0, 1000));
    // Sets before the histogram hold every sample as a decimal number.
    if (stats.contains("sample_histogram"))
        rep.sample_times = decode_sample_histogram(stats["sample_histogram"], calls_per_sample_of(stats));
    else if (stats.contains("sample_times") && stats["sample_times"].is_array())
        for (const auto &s : stats["sample_times"])
            if (s.is_number()) rep.sample_times.push_back(s.get<double>());
    return rep;
}

} // namespace

ResultSet parse_result_set(const std::string &text, const std::string &path) {
    ResultSet set;
    set.path = path;
    set.raw = parse_reader_json(text, path);
    validate_result_set(set.raw, path);
    set.context = set.raw.value("context", nlohmann::json::object());
    if (!set.context.contains("opbench") || !set.context["opbench"].is_object())
        throw ResultSetError(fmt::format("{}: not an opbench result set: no context.opbench (a plain Google "
                                         "Benchmark file? compare.py reads those)",
                                         path));
    const int version = static_cast<int>(num_or(set.context["opbench"], "schema_version", -1));
    if (version != kResultSchemaVersion)
        throw ResultSetError(fmt::format("{}: result-set schema version {} (this opbench reads version {}; "
                                         "results/README.md)",
                                         path, version, kResultSchemaVersion));
    // A null object that the check above allows ("machine_peaks": null) reads
    // as an absent one: every reader asks value(key, {}), which returns the
    // null, and then aborted on it (issue 44).
    for (nlohmann::json *ob : {&set.context["opbench"], &set.raw["context"]["opbench"]})
        for (const char *k : {"measurement", "backends", "machine_peaks", "profiling"})
            if (auto it = ob->find(k); it != ob->end() && it->is_null()) ob->erase(it);

    std::map<std::string, std::size_t> index; // case name -> position in set.cases
    std::size_t entry_no = 0;
    for (const auto &e : set.raw["benchmarks"]) {
        ++entry_no;
        if (!e.is_object())
            throw ResultSetError(fmt::format("{}: benchmarks[{}] is not an object", path, entry_no - 1));
        if (str_or(e, "run_type", "iteration") != "iteration") continue; // aggregates are recomputed here
        // An entry without its op and backend (`{}`) was dropped silently and
        // moved a comparison by 2.7%: a set with one is not a set opbench wrote.
        if (!e.contains("op") || !e.contains("backend"))
            throw ResultSetError(fmt::format("{}: benchmarks[{}] has no `{}`: not an opbench entry (each iteration "
                                             "entry names its op and backend; results/README.md)",
                                             path, entry_no - 1, e.contains("op") ? "backend" : "op"));
        const std::string name = entry_name_of(str_or(e, "run_name", str_or(e, "name")));
        auto [it, inserted] = index.emplace(name, set.cases.size());
        if (inserted) {
            CaseRecord c;
            c.name = name;
            c.op = str_or(e, "op");
            c.backend = str_or(e, "backend");
            c.dtype = str_or(e, "dtype");
            c.variant = str_or(e, "variant");
            c.case_name = str_or(e, "case");
            c.phase = str_or(e, "phase");
            c.params = e.value("params", nlohmann::json::object());
            c.settings = e.value("settings", nlohmann::json::object());
            c.status = str_or(e, "status", e.value("error_occurred", false) ? "failed" : "passed");
            c.reason = str_or(e, "reason", str_or(e, "error_message"));
            c.reference = e.value("reference", false);
            c.flops = num_or(e, "flops");
            c.bytes = num_or(e, "bytes");
            c.arithmetic_intensity = num_or(e, "arithmetic_intensity");
            c.roofline = e.value("roofline", nlohmann::json());
            c.memory = e.value("memory", nlohmann::json::object());
            c.conditions = entry_conditions(e, set.context);
            set.cases.push_back(std::move(c));
        }
        CaseRecord &c = set.cases[it->second];
        // A starved entry keeps its repetitions' stats beside its error entry:
        // their figures (not a time: the entry is not passed) for the views.
        if (c.status == "starved") {
            if (auto sr = e.find("starved_repetitions"); sr != e.end() && sr->is_array())
                for (const auto &stats : *sr) {
                    RepetitionTime rep = repetition_time(nlohmann::json{{"stats", stats}});
                    rep.starved = true;
                    c.repetitions.push_back(std::move(rep));
                }
            continue;
        }
        if (c.status != "passed" || e.value("error_occurred", false)) continue;
        RepetitionTime rep = repetition_time(e);
        if (!(rep.median_seconds > 0) || !std::isfinite(rep.median_seconds))
            throw ResultSetError(fmt::format("{}: benchmarks[{}] ({}): a passed entry without a positive time", path,
                                             entry_no - 1, name));
        c.repetitions.push_back(std::move(rep));
    }
    return set;
}

std::string read_reader_input(const std::string &path, std::size_t cap) {
    // O_NONBLOCK: opening a FIFO with no writer must not hang; it is cleared
    // before reading so that a FIFO's writer is waited for as `cat` would.
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) {
        if (errno == EISDIR)
            throw ResultSetError(fmt::format("{}: is a directory; expected a result set file (JSON)", path));
        throw ResultSetError(fmt::format("{}: cannot open ({})", path, std::strerror(errno)));
    }
    struct Closer {
        int fd;
        ~Closer() { ::close(fd); }
    } closer{fd};
    struct stat st {};
    if (::fstat(fd, &st) != 0) throw ResultSetError(fmt::format("{}: cannot stat ({})", path, std::strerror(errno)));
    if (S_ISDIR(st.st_mode))
        throw ResultSetError(fmt::format("{}: is a directory; expected a result set file (JSON)", path));
    const auto too_large = [&] {
        return ResultSetError(fmt::format("{}: larger than the {} MiB a reader accepts; not a result set "
                                          "`opbench run` wrote",
                                          path, cap >> 20));
    };
    if (S_ISREG(st.st_mode) && static_cast<std::uintmax_t>(st.st_size) > cap) throw too_large();
    std::string text;
    if (S_ISREG(st.st_mode)) text.reserve(static_cast<std::size_t>(st.st_size) + 1);
    if (const int flags = ::fcntl(fd, F_GETFL); flags >= 0) (void)::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
    char buf[1 << 16];
    for (;;) {
        // Never more than cap + 1 bytes: one past the cap says "too large".
        const std::size_t want = std::min(sizeof buf, cap + 1 - text.size());
        const ssize_t n = ::read(fd, buf, want);
        if (n < 0) {
            if (errno == EINTR) continue;
            if (errno == EISDIR)
                throw ResultSetError(fmt::format("{}: is a directory; expected a result set file (JSON)", path));
            throw ResultSetError(fmt::format("{}: cannot read ({})", path, std::strerror(errno)));
        }
        if (n == 0) break;
        // JSON text never holds a NUL byte: /dev/zero, /dev/urandom or a
        // binary file stop at the first chunk instead of at the cap.
        if (const void *nul = std::memchr(buf, '\0', static_cast<std::size_t>(n)))
            throw ResultSetError(
                fmt::format("{}: a NUL byte at offset {}: not a JSON text (a result set is the "
                            "JSON file `opbench run` writes)",
                            path, text.size() + static_cast<std::size_t>(static_cast<const char *>(nul) - buf)));
        text.append(buf, static_cast<std::size_t>(n));
        if (text.size() > cap) throw too_large();
    }
    return text;
}

ResultSet read_result_set(const std::string &path) { return parse_result_set(read_reader_input(path), path); }

EntrySummary entry_summary(const CaseRecord &c) {
    std::vector<RepetitionFigures> reps;
    for (const auto &r : c.repetitions)
        reps.push_back({r.median_seconds, r.noise, r.noise_target_met, r.fastest_seconds, r.starved, r.starved_share,
                        r.throttled});
    return summarize_entry(reps, c.conditions);
}

ValidTimes valid_times(const CaseRecord &c) {
    ValidTimes v;
    if (c.status != "passed") {
        v.status = c.status.empty() ? "failed" : c.status;
        v.why = c.reason;
        return v;
    }
    v.summary = entry_summary(c);
    if (v.summary.all_starved()) { // a set that flags every repetition but says passed
        v.status = "starved";
        v.why = fmt::format("every repetition starved ({}): its threads waited for a CPU", c.repetitions.size());
        return v;
    }
    if (v.summary.repetitions == 0) {
        v.status = "failed";
        v.why = "no repetition recorded";
        return v;
    }
    // The repetitions the summary's median is of: throttled ones only when every one was (issue 41).
    const bool all_throttled = std::all_of(c.repetitions.begin(), c.repetitions.end(),
                                           [](const RepetitionTime &r) { return r.starved || r.throttled; });
    for (const auto &r : c.repetitions) {
        if (r.starved || (r.throttled && !all_throttled)) continue;
        v.repetition_medians.push_back(r.median_seconds);
        v.repetition_processes.push_back(r.process);
        v.samples.insert(v.samples.end(), r.sample_times.begin(), r.sample_times.end());
    }
    v.median = v.summary.median_s;
    v.status = "ok";
    return v;
}

} // namespace opbench
