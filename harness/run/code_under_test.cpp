#include "run/code_under_test.hpp"

#include <cstdlib>

namespace opbench {

nlohmann::json code_under_test(const std::string &given) {
    if (!given.empty()) return {{"commit", given}, {"source", "--commit-under-test"}};
    for (const char *name : {"GITHUB_SHA", "CI_COMMIT_SHA"})
        if (const char *v = std::getenv(name); v && *v) return {{"commit", v}, {"source", name}};
    return nullptr;
}

} // namespace opbench
