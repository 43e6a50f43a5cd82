// Reading a set's JSON that may be damaged or old: a member that is absent,
// or whose parent is no object, reads as null (never a throw, never an
// insertion), so a reader tests its type and moves on.
#pragma once

#include <nlohmann/json.hpp>

namespace opbench {

[[nodiscard]] inline const nlohmann::json &json_member(const nlohmann::json &j, const char *key) {
    static const nlohmann::json null;
    if (!j.is_object()) return null;
    const auto it = j.find(key);
    return it == j.end() ? null : *it;
}

} // namespace opbench
