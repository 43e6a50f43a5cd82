#include "suite/toml_reader.hpp"

#include <fmt/format.h>

#include <cmath>
#include <set>
#include <sstream>

namespace opbench {

std::string format_double(double v) {
    std::ostringstream os;
    os.precision(17);
    os << v;
    return os.str();
}

std::string describe(const toml::node &n) {
    if (auto s = n.as_string()) return fmt::format("string \"{}\"", s->get());
    if (auto i = n.as_integer()) return fmt::format("integer {}", i->get());
    if (auto f = n.as_floating_point()) return fmt::format("floating-point {}", format_double(f->get()));
    if (auto b = n.as_boolean()) return fmt::format("boolean {}", b->get());
    if (n.is_array()) return "an array";
    if (n.is_table()) return "a table";
    return "a date/time";
}

std::string TomlReader::string_value(const toml::node &n, std::string_view key) const {
    auto s = n.as_string();
    if (!s) fail(at(n), fmt::format("'{}' must be a string, got {}", key, describe(n)));
    return s->get();
}

std::string TomlReader::name_value(const toml::node &n, std::string_view key) const {
    std::string s = string_value(n, key);
    for (std::size_t i = 0; i < s.size(); ++i) {
        const auto c = static_cast<unsigned char>(s[i]);
        if (c < 0x20 || c == 0x7f) {
            fail(at(n), fmt::format("'{}' holds the control character U+{:04X} at byte {} of the name; names must "
                                    "be printable (letters, digits, punctuation, spaces)",
                                    key, unsigned(c), i + 1));
        }
    }
    return s;
}

void TomlReader::check_keys(const toml::table &t, const std::vector<std::string_view> &valid,
                            const std::string &where_text) const {
    for (auto &&[k, v] : t)
        if (!contains(valid, k.str()))
            fail(at(k.source()), fmt::format("unknown key '{}' {} (valid: {})", k.str(), where_text, join(valid)));
}

std::int64_t TomlReader::integer_value(const toml::node &n, std::string_view key) const {
    auto i = n.as_integer();
    if (!i) fail(at(n), fmt::format("'{}' must be an integer, got {}", key, describe(n)));
    return i->get();
}

std::int64_t TomlReader::integer_in(const toml::node &n, std::string_view key, std::int64_t lo,
                                    std::int64_t hi) const {
    const std::int64_t i = integer_value(n, key);
    if (i < lo || i > hi)
        fail(at(n), fmt::format("'{}' must be between {} and {}, got {}", key, lo, hi, i));
    return i;
}

double TomlReader::number_value(const toml::node &n, std::string_view key) const {
    double v;
    if (auto i = n.as_integer())
        v = static_cast<double>(i->get());
    else if (auto f = n.as_floating_point())
        v = f->get();
    else
        fail(at(n), fmt::format("'{}' must be a number, got {}", key, describe(n)));
    if (!std::isfinite(v)) fail(at(n), fmt::format("'{}' must be finite, got {}", key, describe(n)));
    return v;
}

bool TomlReader::boolean_value(const toml::node &n, std::string_view key) const {
    auto b = n.as_boolean();
    if (!b) fail(at(n), fmt::format("'{}' must be true or false, got {}", key, describe(n)));
    return b->get();
}

std::vector<std::string> TomlReader::backends(const toml::node &n, const std::vector<std::string> &known) const {
    std::vector<const toml::node *> items;
    if (auto arr = n.as_array()) {
        if (arr->empty()) fail(at(n), "'backends' is an empty list; name at least one backend");
        for (const toml::node &el : *arr) items.push_back(&el);
    } else {
        items.push_back(&n);
    }
    std::vector<std::string> out;
    std::set<std::string> listed;
    for (auto item : items) {
        auto name = string_value(*item, "backends");
        if (!known.empty() && !contains(known, name))
            fail(at(*item), fmt::format("unknown backend '{}' (valid: {})", name, join(known)));
        if (!listed.insert(name).second) fail(at(*item), fmt::format("backend '{}' is listed twice", name));
        out.push_back(std::move(name));
    }
    return out;
}

double TomlReader::setting_value(const SettingInfo &info, const toml::node &n, std::string_view key) const {
    double v = 0;
    if (const auto names = setting_value_names(info.type); !names.empty()) {
        v = double(index_of_name(n, key, names, info.type == SettingType::cache ? "cache mode" : "launch mode"));
    } else if (info.type == SettingType::integer) {
        v = double(integer_value(n, key));
    } else {
        v = number_value(n, key);
    }
    const FlooredValue used = raise_to_floor(info, v);
    if (!used.warning.empty()) warn(at(n), used.warning);
    if (auto why = check_setting(info, used.value)) fail(at(n), *why);
    return used.value;
}

} // namespace opbench
