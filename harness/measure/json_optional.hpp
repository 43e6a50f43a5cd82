// std::optional<T> in nlohmann-json: none is null, a value is T's own JSON.
// nlohmann-json 3.11.2 (Debian's) has no conversion for std::optional; this
// one lets structs with optional members use NLOHMANN_DEFINE_TYPE_* macros.
// (Remove it when the library provides one: both would define the same thing.)
#pragma once

#include <nlohmann/json.hpp>

#include <optional>

namespace nlohmann {

template <class T>
struct adl_serializer<std::optional<T>> {
    static void to_json(json &j, const std::optional<T> &value) {
        if (value) j = *value;
        else j = nullptr;
    }
    static void from_json(const json &j, std::optional<T> &value) {
        if (j.is_null()) value.reset();
        else value = j.get<T>();
    }
};

} // namespace nlohmann
