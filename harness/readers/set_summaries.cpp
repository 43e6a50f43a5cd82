#include "readers/set_summaries.hpp"

#include <fmt/format.h>

#include <cmath>
#include <filesystem>
#include <initializer_list>
#include <stdexcept>

namespace opbench {

namespace {

constexpr const char *kRepetitionFields = "median_s, noise, noise_target_met, timed_out, fastest_s, process";

// JSON has no NaN or infinity: a figure that is not finite is written as null
// and read back as the value its reader uses for "unknown".
nlohmann::json finite_or_null(double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); }

double number_or(const nlohmann::json &j, const char *key, double otherwise) {
    auto it = j.find(key);
    return it != j.end() && it->is_number() ? it->get<double>() : otherwise;
}

// What ResultSet's accessors and machine_id() read (suite, build, commit,
// time, host, machine), and nothing else.
nlohmann::json identity_context(const ResultSet &set) {
    nlohmann::json ctx = nlohmann::json::object();
    for (const char *k : {"host_name", "date"})
        if (auto it = set.context.find(k); it != set.context.end()) ctx[k] = *it;
    nlohmann::json ob = nlohmann::json::object();
    for (const char *k : {"schema_version", "timestamp", "suite", "build", "machine"})
        if (auto it = set.opbench().find(k); it != set.opbench().end()) ob[k] = *it;
    if (ob.contains("suite") && ob["suite"].is_object()) // the suite's own text is not needed
        for (const char *k : {"workloads", "description", "path"}) ob["suite"].erase(k);
    ctx["opbench"] = std::move(ob);
    return ctx;
}

// One repetition as an array (kRepetitionFields): a quick set has ~600
// repetitions, and their keys would be half of the file history parses.
nlohmann::json repetition_json(const RepetitionTime &r) {
    return nlohmann::json::array({r.median_seconds, finite_or_null(r.noise), r.noise_target_met, r.timed_out,
                                  finite_or_null(r.fastest_seconds), r.process});
}

RepetitionTime repetition_from_json(const nlohmann::json &r) {
    if (!r.is_array() || r.size() != 6)
        throw std::invalid_argument(fmt::format("a repetition is [{}]", kRepetitionFields));
    const auto number = [&](std::size_t i, double otherwise) {
        return r[i].is_number() ? r[i].get<double>() : otherwise;
    };
    RepetitionTime rep;
    rep.median_seconds = r[0].get<double>();
    rep.noise = number(1, INFINITY); // null: too few samples for a CI, as in the set
    rep.noise_target_met = r[2].get<bool>();
    rep.timed_out = r[3].get<bool>();
    rep.fastest_seconds = number(4, NAN);
    rep.process = r[5].get<int>();
    return rep;
}

// The settings and roofline figures history and its CSV rows read.
nlohmann::json picked(const nlohmann::json &from, std::initializer_list<const char *> keys) {
    if (!from.is_object()) return from;
    nlohmann::json out = nlohmann::json::object();
    for (const char *k : keys)
        if (auto it = from.find(k); it != from.end()) out[k] = *it;
    return out;
}

nlohmann::json entry_json(const CaseRecord &c) {
    nlohmann::json reps = nlohmann::json::array();
    for (const auto &r : c.repetitions) reps.push_back(repetition_json(r));
    return {{"name", c.name},
            {"op", c.op},
            {"backend", c.backend},
            {"dtype", c.dtype},
            {"variant", c.variant},
            {"case", c.case_name},
            {"params", c.params},
            {"settings", picked(c.settings, {"threads", "cache", "noise_target"})},
            {"status", c.status},
            {"reason", c.reason},
            {"reference", c.reference},
            {"flops", c.flops},
            {"bytes", c.bytes},
            {"roofline", picked(c.roofline, {"pct_peak_compute", "pct_peak_bandwidth", "bandwidth_roof", "bound"})},
            {"conditions",
             {{"noise_target", c.conditions.noise_target},
              {"threads", c.conditions.threads},
              {"cpus", c.conditions.cpus},
              {"load", finite_or_null(c.conditions.load)}}},
            {"repetitions", std::move(reps)}};
}

CaseRecord case_from_json(const nlohmann::json &e) {
    CaseRecord c;
    c.name = e.at("name").get<std::string>();
    c.op = e.at("op").get<std::string>();
    c.backend = e.at("backend").get<std::string>();
    c.dtype = e.at("dtype").get<std::string>();
    c.variant = e.at("variant").get<std::string>();
    c.case_name = e.at("case").get<std::string>();
    c.params = e.at("params");
    c.settings = e.at("settings");
    c.status = e.at("status").get<std::string>();
    c.reason = e.at("reason").get<std::string>();
    c.reference = e.at("reference").get<bool>();
    c.flops = e.at("flops").get<double>();
    c.bytes = e.at("bytes").get<double>();
    c.roofline = e.at("roofline");
    const nlohmann::json &cond = e.at("conditions");
    c.conditions.noise_target = cond.at("noise_target").get<double>();
    c.conditions.threads = cond.at("threads").get<int>();
    c.conditions.cpus = cond.at("cpus").get<int>();
    c.conditions.load = number_or(cond, "load", NAN);
    for (const auto &r : e.at("repetitions")) c.repetitions.push_back(repetition_from_json(r));
    return c;
}

} // namespace

std::string set_summaries_file_name(const std::string &set_file_name) {
    const std::filesystem::path p(set_file_name);
    return (p.parent_path() / (p.stem().string() + ".summaries.json")).string();
}

nlohmann::json set_summaries(const ResultSet &set) {
    nlohmann::json entries = nlohmann::json::array();
    for (const auto &c : set.cases) entries.push_back(entry_json(c));
    return {{"schema_version", kSetSummariesVersion}, {"context", identity_context(set)}, {"entries", entries}};
}

ResultSet parse_set_summaries(const std::string &text, const std::string &summaries_path,
                              const std::string &set_path) {
    const nlohmann::json j = parse_reader_json(text, summaries_path);
    const auto refuse = [&](const std::string &why) {
        return ResultSetError(fmt::format("{}: not the entry summaries of an archived set ({}); results/README.md, "
                                          "\"Archive\"",
                                          summaries_path, why));
    };
    if (!j.is_object() || j.value("schema_version", -1) != kSetSummariesVersion)
        throw refuse(fmt::format("expected an object with schema_version {}", kSetSummariesVersion));
    ResultSet set;
    set.path = set_path;
    try {
        set.context = j.at("context");
        const nlohmann::json &entries = j.at("entries");
        for (std::size_t i = 0; i < entries.size(); ++i) {
            try {
                set.cases.push_back(case_from_json(entries.at(i)));
            } catch (const std::exception &e) { // nlohmann's type errors, a repetition's shape
                throw refuse(fmt::format("entries[{}]: {}", i, e.what()));
            }
        }
    } catch (const nlohmann::json::exception &e) {
        throw refuse(e.what());
    }
    if (!set.context.is_object() || !set.opbench().is_object()) throw refuse("`context` is not an object");
    return set;
}

} // namespace opbench
