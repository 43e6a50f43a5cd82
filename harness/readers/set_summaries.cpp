#include "readers/set_summaries.hpp"

#include <fmt/format.h>

#include <cmath>
#include <filesystem>

namespace opbench {

namespace {

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

nlohmann::json repetition_json(const RepetitionTime &r) {
    return {{"median_s", r.median_seconds},
            {"noise", finite_or_null(r.noise)},
            {"noise_target_met", r.noise_target_met},
            {"timed_out", r.timed_out},
            {"fastest_s", finite_or_null(r.fastest_seconds)},
            {"process", r.process}};
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
            {"settings", c.settings},
            {"status", c.status},
            {"reason", c.reason},
            {"reference", c.reference},
            {"flops", c.flops},
            {"bytes", c.bytes},
            {"roofline", c.roofline},
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
    for (const auto &r : e.at("repetitions")) {
        RepetitionTime rep;
        rep.median_seconds = r.at("median_s").get<double>();
        rep.noise = number_or(r, "noise", INFINITY); // null: too few samples for a CI, as in the set
        rep.noise_target_met = r.at("noise_target_met").get<bool>();
        rep.timed_out = r.at("timed_out").get<bool>();
        rep.fastest_seconds = number_or(r, "fastest_s", NAN);
        rep.process = r.at("process").get<int>();
        c.repetitions.push_back(rep);
    }
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
            } catch (const nlohmann::json::exception &e) {
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
