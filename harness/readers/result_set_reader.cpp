#include "readers/result_set_reader.hpp"

#include "writers/result_schema.hpp"
#include "measure/statistics.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

namespace fs = std::filesystem;

namespace opbench {

namespace {

// Google Benchmark's time units, in seconds.
double unit_seconds(const std::string &unit) {
    if (unit == "ns") return 1e-9;
    if (unit == "us") return 1e-6;
    if (unit == "ms") return 1e-3;
    if (unit == "s") return 1.0;
    return 0;
}

std::string strip_suffix(std::string name, const std::string &suffix) {
    if (name.size() > suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0)
        name.resize(name.size() - suffix.size());
    return name;
}

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

} // namespace

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
std::string ResultSet::build_type() const {
    return str_or(opbench().value("build", nlohmann::json()), "build_type");
}
std::string ResultSet::commit() const { return str_or(opbench().value("build", nlohmann::json()), "git_commit"); }
std::string ResultSet::timestamp() const { return str_or(opbench(), "timestamp", str_or(context, "date")); }
std::string ResultSet::host_name() const { return str_or(context, "host_name"); }
std::string ResultSet::cpu_model() const {
    return str_or(opbench().value("machine", nlohmann::json()), "cpu_model");
}
std::string ResultSet::machine_id() const { return opbench::machine_id(context); }
std::string ResultSet::short_name() const { return fs::path(path).stem().string(); }

std::string machine_id(const nlohmann::json &context) {
    const nlohmann::json machine =
        context.contains("opbench") ? context["opbench"].value("machine", nlohmann::json::object())
                                    : nlohmann::json::object();
    if (auto id = str_or(machine, "id"); !id.empty()) return id;
    const std::string model = str_or(machine, "cpu_model", "unknown-cpu");
    const int cores = static_cast<int>(num_or(machine, "logical_cores", num_or(context, "num_cpus")));
    // Whole GiB: the kernel's MemTotal moves by a few pages between boots.
    const auto mem_gib = static_cast<long long>(std::llround(num_or(machine, "memory_total_bytes") / (1 << 30)));
    const std::string isa = machine.value("isa", nlohmann::json::object()).dump();
    std::uint64_t h = 0xcbf29ce484222325ull; // FNV-1a: stable across builds
    for (unsigned char c : fmt::format("{}|{}|{}|{}", model, cores, mem_gib, isa)) {
        h ^= c;
        h *= 0x100000001b3ull;
    }
    std::string slug;
    for (char c : model) {
        if (std::isalnum(static_cast<unsigned char>(c))) slug += static_cast<char>(std::tolower(c));
        else if (!slug.empty() && slug.back() != '-') slug += '-';
    }
    while (!slug.empty() && slug.back() == '-') slug.pop_back();
    if (slug.size() > 40) slug.resize(40);
    return fmt::format("{}-{}c-{:08x}", slug.empty() ? "cpu" : slug, cores, static_cast<std::uint32_t>(h >> 32));
}

ResultSet parse_result_set(const std::string &text, const std::string &path) {
    ResultSet set;
    set.path = path;
    try {
        set.raw = nlohmann::json::parse(text);
    } catch (const nlohmann::json::parse_error &e) {
        auto [line, col] = line_column(text, e.byte == 0 ? 0 : e.byte - 1);
        std::string what = e.what();
        // nlohmann's message starts "[json.exception.parse_error.101] parse error at line L, column C: ..."
        if (auto pos = what.find(": "); pos != std::string::npos) what = what.substr(pos + 2);
        throw ResultSetError(fmt::format("{}:{}:{}: not valid JSON ({}); a result set is the JSON file "
                                         "`opbench run` writes",
                                         path, line, col, what));
    }
    if (!set.raw.is_object() || !set.raw.contains("benchmarks") || !set.raw["benchmarks"].is_array())
        throw ResultSetError(fmt::format("{}: not a result set: no `benchmarks` array (expected Google Benchmark "
                                         "JSON as `opbench run` writes it)",
                                         path));
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

    std::map<std::string, std::size_t> index; // case name -> position in set.cases
    std::size_t entry_no = 0;
    for (const auto &e : set.raw["benchmarks"]) {
        ++entry_no;
        if (!e.is_object()) throw ResultSetError(fmt::format("{}: benchmarks[{}] is not an object", path, entry_no - 1));
        if (str_or(e, "run_type", "iteration") != "iteration") continue; // aggregates are recomputed here
        if (!e.contains("op") || !e.contains("backend")) continue;        // not an opbench entry
        const std::string name = strip_suffix(str_or(e, "run_name", str_or(e, "name")), "/manual_time");
        auto [it, inserted] = index.emplace(name, set.cases.size());
        if (inserted) {
            CaseRecord c;
            c.name = name;
            c.op = str_or(e, "op");
            c.backend = str_or(e, "backend");
            c.dtype = str_or(e, "dtype");
            c.variant = str_or(e, "variant");
            c.case_name = str_or(e, "case");
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
            set.cases.push_back(std::move(c));
        }
        CaseRecord &c = set.cases[it->second];
        if (c.status != "passed" || e.value("error_occurred", false)) continue;
        RepetitionTime rep;
        const nlohmann::json stats = e.value("stats", nlohmann::json::object());
        const double scale = unit_seconds(str_or(e, "time_unit", "ns"));
        rep.median_seconds = stats.contains("median") ? num_or(stats, "median") : num_or(e, "real_time") * scale;
        rep.noise = num_or(stats, "noise", INFINITY); // null: no CI (too few samples)
        rep.noise_target_met = stats.value("noise_target_met", true);
        rep.timed_out = stats.value("timed_out", false);
        if (auto p = stats.find("process"); p != stats.end() && p->is_number_integer())
            rep.process = static_cast<int>(std::clamp<std::int64_t>(p->get<std::int64_t>(), 0, 1000));
        if (stats.contains("sample_times") && stats["sample_times"].is_array())
            for (const auto &s : stats["sample_times"])
                if (s.is_number()) rep.sample_times.push_back(s.get<double>());
        if (!(rep.median_seconds > 0) || !std::isfinite(rep.median_seconds))
            throw ResultSetError(fmt::format("{}: benchmarks[{}] ({}): a passed entry without a positive time",
                                             path, entry_no - 1, name));
        c.repetitions.push_back(std::move(rep));
    }
    return set;
}

ResultSet read_result_set(const std::string &path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw ResultSetError(fmt::format("{}: cannot open ({})", path, std::strerror(errno)));
    std::ostringstream text;
    text << in.rdbuf();
    return parse_result_set(text.str(), path);
}

ValidTimes valid_times(const CaseRecord &c, bool accept_unmet_noise_target) {
    ValidTimes v;
    if (c.status != "passed") {
        v.status = c.status.empty() ? "failed" : c.status;
        v.why = c.reason;
        return v;
    }
    double best_noise = INFINITY;
    std::size_t timed_out = 0;
    for (const auto &r : c.repetitions) {
        best_noise = std::min(best_noise, r.noise);
        if (r.timed_out) ++timed_out;
        if (!r.noise_target_met && !accept_unmet_noise_target) {
            ++v.excluded;
            continue;
        }
        v.repetition_medians.push_back(r.median_seconds);
        v.repetition_processes.push_back(r.process);
        v.samples.insert(v.samples.end(), r.sample_times.begin(), r.sample_times.end());
    }
    if (v.repetition_medians.empty()) {
        v.status = timed_out > 0 ? "timed_out" : "noisy";
        const double target = c.settings.value("noise_target", 0.0);
        v.why = c.repetitions.empty()
                    ? "no repetition recorded"
                    : fmt::format("noise target {:.2g}% not met in any of {} repetitions ({}); "
                                  "--accept-unmet-noise compares them anyway",
                                  target * 100, c.repetitions.size(),
                                  std::isfinite(best_noise) ? fmt::format("best {:.2g}%", best_noise * 100)
                                                            : std::string("too few samples for a confidence interval"));
        return v;
    }
    v.median = summarize(v.repetition_medians).median;
    v.status = "ok";
    return v;
}

} // namespace opbench
