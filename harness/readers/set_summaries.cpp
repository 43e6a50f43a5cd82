#include "readers/set_summaries.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <limits>
#include <stdexcept>
#include <utility>

namespace opbench {

namespace {

// A figure that is not finite is written as null (the document stays one
// that JSON can hold) and read back as the value its reader uses for
// "unknown".
nlohmann::json finite_json(double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); }

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

// The settings and roofline figures history and its CSV rows read.
nlohmann::json picked(const nlohmann::json &from, std::initializer_list<const char *> keys) {
    if (!from.is_object()) return from;
    nlohmann::json out = nlohmann::json::object();
    for (const char *k : keys)
        if (auto it = from.find(k); it != from.end()) out[k] = *it;
    return out;
}

// The entries as columns (an array per field, one element per entry; the
// conditions and repetitions flattened): reading is mostly allocating the
// document's nodes, and an object per entry and repetition took 1.3x as
// long over 1,000 runs (docs/ci.md, "The archive").
constexpr const char *kTextColumns[] = {"name", "op", "backend", "dtype", "variant", "case", "status", "reason"};
constexpr std::size_t kConditionFields = 4;  // noise_target, threads, cpus, load
// median_s, noise, noise_target_met, timed_out, fastest_s, process; since
// version 2 also starved, starved_share, remeasured; since version 3 throttled.
constexpr std::size_t kRepetitionFieldsV1 = 6;
constexpr std::size_t kRepetitionFieldsV2 = 9;
constexpr std::size_t kRepetitionFields = 10;

nlohmann::json entry_columns(const std::vector<CaseRecord> &cases) {
    nlohmann::json cols = nlohmann::json::object();
    for (const char *k : {"name", "op", "backend", "dtype", "variant", "case", "status", "reason", "params", "settings",
                          "reference", "flops", "bytes", "roofline", "conditions", "repetition_counts", "repetitions"})
        cols[k] = nlohmann::json::array();
    for (const auto &c : cases) {
        const std::string *text[] = {&c.name, &c.op, &c.backend, &c.dtype, &c.variant, &c.case_name, &c.status, &c.reason};
        for (std::size_t i = 0; i < std::size(kTextColumns); ++i) cols[kTextColumns[i]].push_back(*text[i]);
        cols["params"].push_back(c.params);
        cols["settings"].push_back(picked(c.settings, {"threads", "cache", "noise_target"}));
        cols["reference"].push_back(c.reference);
        cols["flops"].push_back(c.flops);
        cols["bytes"].push_back(c.bytes);
        cols["roofline"].push_back(picked(c.roofline, {"pct_peak_compute", "pct_peak_bandwidth", "bandwidth_roof", "bound"}));
        for (const nlohmann::json &v : {nlohmann::json(c.conditions.noise_target), nlohmann::json(c.conditions.threads),
                                        nlohmann::json(c.conditions.cpus), finite_json(c.conditions.load)})
            cols["conditions"].push_back(v);
        cols["repetition_counts"].push_back(c.repetitions.size());
        for (const auto &r : c.repetitions)
            for (const nlohmann::json &v :
                 {nlohmann::json(r.median_seconds), finite_json(r.noise), nlohmann::json(r.noise_target_met),
                  nlohmann::json(r.timed_out), finite_json(r.fastest_seconds), nlohmann::json(r.process),
                  nlohmann::json(r.starved), finite_json(r.starved_share), nlohmann::json(r.remeasured),
                  nlohmann::json(r.throttled)})
                cols["repetitions"].push_back(v);
    }
    return cols;
}

double number_at(const nlohmann::json &a, std::size_t i, double otherwise) {
    return a.at(i).is_number() ? a[i].get<double>() : otherwise;
}

// An integer of column `k`: nlohmann's get<int>() casts any number, and a
// float out of the type's range is undefined behaviour (found by
// tests/fuzz/fuzz_history.cpp).
template <class T> T integer_at(const nlohmann::json &a, std::size_t i, const char *k) {
    const nlohmann::json &v = a.at(i);
    if (v.is_number_unsigned() && std::in_range<T>(v.get<std::uint64_t>())) return T(v.get<std::uint64_t>());
    if (v.is_number_integer() && !v.is_number_unsigned() && std::in_range<T>(v.get<std::int64_t>()))
        return T(v.get<std::int64_t>());
    throw std::invalid_argument(fmt::format("entries.{}[{}]: expected an integer from {} to {}", k, i,
                                            std::numeric_limits<T>::min(), std::numeric_limits<T>::max()));
}

// The cases back from entry_columns(); throws nlohmann's exceptions or
// std::invalid_argument for columns of the wrong type or length. The texts
// and objects are moved out of `cols`: copying each run's params, settings
// and roofline maps and then freeing the document's was a fifth of reading
// 1,000 runs' summaries (docs/measurement.md, "Change points in the archive").
std::vector<CaseRecord> cases_from_columns(nlohmann::json &cols, std::size_t fields) {
    const std::size_t n = cols.at("name").size();
    const auto column = [&](const char *k, std::size_t per_entry) -> nlohmann::json & {
        nlohmann::json &c = cols.at(k);
        if (!c.is_array() || (per_entry > 0 && c.size() != n * per_entry))
            throw std::invalid_argument(fmt::format("entries.{}: expected an array of {} x {} values", k, n, per_entry));
        return c;
    };
    const nlohmann::json &counts = column("repetition_counts", 1), &reps = column("repetitions", 0),
                         &conditions = column("conditions", kConditionFields);
    // A string element's text, moved (type_error where it is not a string).
    const auto text_of = [](nlohmann::json &v) { return std::move(v.get_ref<std::string &>()); };
    std::vector<CaseRecord> cases(n);
    std::size_t rep = 0;
    for (std::size_t i = 0; i < n; ++i) {
        CaseRecord &c = cases[i];
        std::string *text[] = {&c.name, &c.op, &c.backend, &c.dtype, &c.variant, &c.case_name, &c.status, &c.reason};
        for (std::size_t k = 0; k < std::size(kTextColumns); ++k)
            *text[k] = text_of(column(kTextColumns[k], 1)[i]);
        c.params = std::move(column("params", 1)[i]);
        c.settings = std::move(column("settings", 1)[i]);
        c.reference = column("reference", 1)[i].get<bool>();
        c.flops = column("flops", 1)[i].get<double>();
        c.bytes = column("bytes", 1)[i].get<double>();
        c.roofline = std::move(column("roofline", 1)[i]);
        const std::size_t at = i * kConditionFields;
        c.conditions = {conditions[at].get<double>(), integer_at<int>(conditions, at + 1, "conditions"),
                        integer_at<int>(conditions, at + 2, "conditions"), number_at(conditions, at + 3, NAN)};
        for (auto r = integer_at<std::size_t>(counts, i, "repetition_counts"); r > 0; --r, rep += fields) {
            if (rep + fields > reps.size())
                throw std::invalid_argument("entries.repetitions: fewer values than repetition_counts needs");
            RepetitionTime t;
            t.median_seconds = reps[rep].get<double>();
            // As the set reader: a median of 1e308 s is not a time (the report's axes grew without bound).
            if (!(t.median_seconds >= 0 && t.median_seconds <= 1e6))
                throw std::invalid_argument(fmt::format("entries.repetitions[{}]: median {:g} s is not a time from "
                                                        "0 to 1e6 s",
                                                        rep, t.median_seconds));
            t.noise = number_at(reps, rep + 1, INFINITY); // null: too few samples for a CI, as in the set
            t.noise_target_met = reps[rep + 2].get<bool>();
            t.timed_out = reps[rep + 3].get<bool>();
            t.fastest_seconds = number_at(reps, rep + 4, NAN);
            t.process = integer_at<int>(reps, rep + 5, "repetitions");
            if (fields >= kRepetitionFieldsV2) {
                t.starved = reps[rep + 6].get<bool>();
                t.starved_share = number_at(reps, rep + 7, NAN);
                t.remeasured = integer_at<int>(reps, rep + 8, "repetitions");
            }
            if (fields >= kRepetitionFields) t.throttled = reps[rep + 9].get<bool>();
            c.repetitions.push_back(t);
        }
    }
    return cases;
}

} // namespace

std::string set_summaries_file_name(const std::string &set_file_name) {
    const std::filesystem::path p(set_file_name);
    return (p.parent_path() / (p.stem().string() + ".summaries.cbor")).string();
}

nlohmann::json set_summaries(const ResultSet &set) {
    return {{"schema_version", kSetSummariesVersion},
            {"context", identity_context(set)},
            {"entries", entry_columns(set.cases)}};
}

std::string set_summaries_bytes(const ResultSet &set) {
    const std::vector<std::uint8_t> cbor = nlohmann::json::to_cbor(set_summaries(set));
    return std::string(cbor.begin(), cbor.end());
}

namespace {
// Whether `s` is well-formed UTF-8 (Unicode 15, table 3-7: no overlong
// form, no surrogate, nothing past U+10FFFF), as nlohmann's dump() checks.
bool is_utf8(const std::string &s) {
    const auto *p = reinterpret_cast<const unsigned char *>(s.data());
    const auto *end = p + s.size();
    while (p < end) {
        const unsigned c = *p++;
        if (c < 0x80) continue;
        int more = c >= 0xC2 && c <= 0xDF ? 1 : c >= 0xE0 && c <= 0xEF ? 2 : c >= 0xF0 && c <= 0xF4 ? 3 : -1;
        if (more < 0 || end - p < more) return false;
        const unsigned lo = c == 0xE0 ? 0xA0 : c == 0xF0 ? 0x90 : 0x80; // the second byte's range
        const unsigned hi = c == 0xED ? 0x9F : c == 0xF4 ? 0x8F : 0xBF;
        if (*p < lo || *p > hi) return false;
        for (++p, --more; more > 0; --more, ++p)
            if (*p < 0x80 || *p > 0xBF) return false;
    }
    return true;
}

// The DOM builder for the summaries' CBOR, with two checks nlohmann's lacks.
// Its reader recurses once per nesting level (a file nested 200,000 deep
// overflowed the stack): this one stops at the bound. And CBOR's text
// strings are not checked as UTF-8 when read, as JSON text's are: one bad
// byte would throw later, wherever the string is written (found by
// tests/fuzz/fuzz_summaries.cpp); each string and key is checked here as it
// is read (walking the finished document for them was a fifth of reading
// 1,000 runs' summaries).
class CheckedCborDom : public nlohmann::detail::json_sax_dom_parser<nlohmann::json> {
    using Base = nlohmann::detail::json_sax_dom_parser<nlohmann::json>;
    std::size_t depth_ = 0;

public:
    enum class Refused { none, too_deep, not_utf8 };
    Refused refused = Refused::none;

    explicit CheckedCborDom(nlohmann::json &j) : Base(j, true) {}
    bool start_object(std::size_t n) { return deep_enough() && Base::start_object(n); }
    bool start_array(std::size_t n) { return deep_enough() && Base::start_array(n); }
    bool end_object() { return --depth_, Base::end_object(); }
    bool end_array() { return --depth_, Base::end_array(); }
    bool string(std::string &s) { return utf8(s) && Base::string(s); }
    bool key(std::string &s) { return utf8(s) && Base::key(s); }

private:
    bool deep_enough() {
        if (++depth_ <= kMaxReaderNesting) return true;
        refused = Refused::too_deep;
        return false;
    }
    bool utf8(const std::string &s) {
        if (is_utf8(s)) return true;
        refused = Refused::not_utf8;
        return false;
    }
};

// What the parse refused (none: `j` holds the document); throws nlohmann's
// error where the bytes are not CBOR.
CheckedCborDom::Refused parse_checked_cbor(const std::string &bytes, nlohmann::json &j) {
    CheckedCborDom dom(j);
    const bool parsed = nlohmann::json::sax_parse(bytes, &dom, nlohmann::json::input_format_t::cbor);
    return parsed || dom.refused != CheckedCborDom::Refused::none ? dom.refused : CheckedCborDom::Refused::too_deep;
}
} // namespace

ResultSet read_set_summaries(const std::string &summaries_path, const std::string &set_path) {
    std::ifstream in(summaries_path, std::ios::binary | std::ios::ate);
    if (!in) throw ResultSetError(fmt::format("{}: cannot open ({})", summaries_path, std::strerror(errno)));
    const std::streamoff size = in.tellg();
    if (size < 0 || static_cast<std::uintmax_t>(size) > kMaxReaderInputBytes)
        throw ResultSetError(fmt::format("{}: not a readable file of at most {} MiB", summaries_path,
                                         kMaxReaderInputBytes >> 20));
    std::string bytes(static_cast<std::size_t>(size), '\0');
    in.seekg(0);
    in.read(bytes.data(), size);
    return set_from_summaries_bytes(bytes, summaries_path, set_path);
}

ResultSet set_from_summaries_bytes(const std::string &bytes, const std::string &summaries_path,
                                   const std::string &set_path) {
    nlohmann::json j;
    CheckedCborDom::Refused refused{};
    try {
        refused = parse_checked_cbor(bytes, j);
    } catch (const nlohmann::json::exception &e) {
        throw ResultSetError(fmt::format("{}: not the entry summaries of an archived set (not CBOR: {}); "
                                         "results/README.md, \"Archive\"",
                                         summaries_path, e.what()));
    }
    if (refused == CheckedCborDom::Refused::too_deep)
        throw ResultSetError(fmt::format("{}: not the entry summaries of an archived set (nested deeper than {} "
                                         "arrays and maps); results/README.md, \"Archive\"",
                                         summaries_path, kMaxReaderNesting));
    if (refused == CheckedCborDom::Refused::not_utf8)
        throw ResultSetError(fmt::format("{}: not the entry summaries of an archived set (a string is not UTF-8); "
                                         "results/README.md, \"Archive\"",
                                         summaries_path));
    return set_from_summaries(std::move(j), summaries_path, set_path);
}

ResultSet set_from_summaries(nlohmann::json j, const std::string &summaries_path,
                             const std::string &set_path) {
    const auto refuse = [&](const std::string &why) {
        return ResultSetError(fmt::format("{}: not the entry summaries of an archived set ({}); results/README.md, "
                                          "\"Archive\"",
                                          summaries_path, why));
    };
    const int version = j.is_object() ? j.value("schema_version", -1) : -1;
    if (version < 1 || version > kSetSummariesVersion)
        throw refuse(fmt::format("expected an object with schema_version 1 to {}", kSetSummariesVersion));
    ResultSet set;
    set.path = set_path;
    try {
        set.context = std::move(j.at("context"));
        set.cases = cases_from_columns(j.at("entries"), version == 1   ? kRepetitionFieldsV1
                                                        : version == 2 ? kRepetitionFieldsV2
                                                                       : kRepetitionFields);
    } catch (const std::exception &e) { // nlohmann's type errors, a column's length
        throw refuse(e.what());
    }
    if (!set.context.is_object() || !set.opbench().is_object()) throw refuse("`context` is not an object");
    return set;
}

} // namespace opbench
