// Reading a suite file's TOML values: the one set of value readers, shared
// by the [[case]]/[defaults] parser (suite.cpp) and the [[workload]] parser
// (suite/workload_schema.cpp), so a value is read, range-checked and
// refused the same way, with the same words and its file:line:column,
// whichever table it is in.
#pragma once

#include "measure/settings.hpp"
#include "suite/suite.hpp"

#include <fmt/format.h>
#include <toml++/toml.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace opbench {

// "a, b, c".
template <class Range>
std::string join(const Range &names) {
    std::string out;
    for (const auto &n : names) {
        if (!out.empty()) out += ", ";
        out += n;
    }
    return out;
}

template <class Range>
bool contains(const Range &names, std::string_view s) {
    for (const auto &n : names)
        if (n == s) return true;
    return false;
}

// "string \"big\"", "integer 0", "an array" ... for messages about a value.
[[nodiscard]] std::string describe(const toml::node &n);
// A double as TOML would write it back (17 significant digits at most).
[[nodiscard]] std::string format_double(double v);

class TomlReader {
public:
    explicit TomlReader(std::string file) : file_(std::move(file)) {}

    [[nodiscard]] SourceLocation at(const toml::source_region &r) const {
        return {file_, static_cast<int>(r.begin.line), static_cast<int>(r.begin.column)};
    }
    [[nodiscard]] SourceLocation at(const toml::node &n) const { return at(n.source()); }
    [[noreturn]] void fail(const SourceLocation &where, const std::string &message) const {
        throw SuiteError(where, message);
    }
    // A value used other than written (a min_time raised to its floor): the
    // suite goes on, and its user is told once per place.
    void warn(const SourceLocation &where, const std::string &message) const {
        add_warning(warnings_, where.str() + ": warning: " + message);
    }
    [[nodiscard]] const std::vector<std::string> &warnings() const { return warnings_; }
    // Warnings another reader of the same file gave, after this one's so far.
    void add_warnings(const std::vector<std::string> &more) const {
        for (const auto &w : more) add_warning(warnings_, w);
    }

    [[nodiscard]] std::string string_value(const toml::node &n, std::string_view key) const;
    // A name that becomes part of a benchmark name and a file name: printable.
    [[nodiscard]] std::string name_value(const toml::node &n, std::string_view key) const;
    [[nodiscard]] std::int64_t integer_value(const toml::node &n, std::string_view key) const;
    // An integer from `lo` to `hi`.
    [[nodiscard]] std::int64_t integer_in(const toml::node &n, std::string_view key, std::int64_t lo,
                                          std::int64_t hi) const;
    [[nodiscard]] double number_value(const toml::node &n, std::string_view key) const; // finite
    [[nodiscard]] bool boolean_value(const toml::node &n, std::string_view key) const;
    // The index of the node's string in `valid`; `what` names them in the error.
    template <class Names>
    [[nodiscard]] std::int64_t index_of_name(const toml::node &n, std::string_view key, const Names &valid,
                                             const std::string &what) const {
        const std::string s = string_value(n, key);
        std::int64_t idx = 0;
        for (const auto &v : valid) {
            if (v == s) return idx;
            ++idx;
        }
        fail(at(n), fmt::format("unknown {} '{}' (valid: {})", what, s, join(valid)));
    }
    // Every key of `t` is one of `valid`; `where_text` says where ("in [[case]]").
    void check_keys(const toml::table &t, const std::vector<std::string_view> &valid,
                    const std::string &where_text) const;
    // 'backends': a name or a non-empty list of distinct names, each one of
    // `known` (when it is not empty).
    [[nodiscard]] std::vector<std::string> backends(const toml::node &n, const std::vector<std::string> &known) const;
    // A measurement setting's value (settings.hpp's row `info`): read as its
    // type, raised to its floor (with a warning), checked against its range.
    [[nodiscard]] double setting_value(const SettingInfo &info, const toml::node &n, std::string_view key) const;

private:
    std::string file_;
    mutable std::vector<std::string> warnings_; // filled by the const value readers
};

} // namespace opbench
