#include "readers/change_confirmations.hpp"

#include "readers/archive.hpp"
#include "readers/result_set_reader.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <fstream>
#include <sstream>

namespace opbench {

namespace {

constexpr std::size_t kShortestCommit = 7;

// Whether `given` (as the user typed it) names `full`: equal, or a prefix of
// at least kShortestCommit characters.
bool names_commit(const std::string &given, const std::string &full) {
    if (given.empty() || full.empty()) return false;
    if (given.size() < kShortestCommit || given.size() > full.size()) return given == full;
    return full.compare(0, given.size(), given) == 0;
}

double number_or_nan(const nlohmann::json &j) { return j.is_number() ? j.get<double>() : NAN; }

} // namespace

std::vector<Confirmation> read_change_confirmations(const std::filesystem::path &dir) {
    const std::filesystem::path path = dir / "confirmations.json";
    std::error_code ec;
    if (!std::filesystem::exists(path, ec)) return {};
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    const std::string where = path.string();
    const auto bad = [&](const std::string &what) {
        return ArchiveError(fmt::format("{}: {}; scripts/confirm-change.sh writes it (schema_version 1, "
                                        "confirmations: [{{backend, last_before, first_after, set, cases}}])",
                                        where, what));
    };
    nlohmann::json doc;
    try {
        doc = parse_reader_json(text.str(), where);
    } catch (const std::exception &e) {
        throw ArchiveError(e.what());
    }
    if (!doc.is_object() || doc.value("schema_version", 0) != 1 || !doc.contains("confirmations") ||
        !doc["confirmations"].is_array())
        throw bad("expected an object with schema_version 1 and a `confirmations` array");
    std::vector<Confirmation> out;
    for (std::size_t i = 0; i < doc["confirmations"].size(); ++i) {
        const nlohmann::json &r = doc["confirmations"][i];
        const std::string at = fmt::format("confirmations[{}]", i);
        for (const char *k : {"backend", "last_before", "first_after", "set"})
            if (!r.is_object() || !r.contains(k) || !r[k].is_string()) throw bad(fmt::format("{}.{}: expected a string", at, k));
        if (!r.contains("cases") || !r["cases"].is_array()) throw bad(at + ".cases: expected an array");
        for (std::size_t k = 0; k < r["cases"].size(); ++k) {
            const nlohmann::json &c = r["cases"][k];
            if (!c.is_object() || !c.contains("case") || !c["case"].is_string() || !c.contains("verdict") ||
                !c["verdict"].is_string())
                throw bad(fmt::format("{}.cases[{}]: expected {{case, verdict}} strings", at, k));
            Confirmation x;
            x.backend = r["backend"];
            x.last_before = r["last_before"];
            x.first_after = r["first_after"];
            x.set = r["set"];
            x.case_name = c["case"];
            x.verdict = c["verdict"];
            x.ratio = number_or_nan(c.value("ratio", nlohmann::json()));
            const nlohmann::json ci = c.value("ratio_ci95", nlohmann::json());
            x.ratio_low = ci.is_array() && ci.size() == 2 ? number_or_nan(ci[0]) : NAN;
            x.ratio_high = ci.is_array() && ci.size() == 2 ? number_or_nan(ci[1]) : NAN;
            out.push_back(std::move(x));
        }
    }
    return out;
}

std::optional<Confirmation> confirmation_of(const std::vector<Confirmation> &all, const std::string &label,
                                            const std::string &before, const std::string &after) {
    std::optional<Confirmation> newest;
    for (const Confirmation &c : all)
        if (label == c.case_name + " [" + c.backend + "]" && names_commit(c.last_before, before) &&
            names_commit(c.first_after, after))
            newest = c;
    return newest;
}

} // namespace opbench
