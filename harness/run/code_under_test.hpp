// The commit of the code under test (issue 43): a plugin's own commit, which
// context.opbench.build.git_commit (opbench's) is not. Recorded in a set as
// context.opbench.code_under_test = {"commit": ..., "source": ...}; the
// archive index keeps it and history orders runs by it.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

namespace opbench {

// The object to record: `given` (--commit-under-test) where not empty,
// else the environment's GITHUB_SHA or CI_COMMIT_SHA (GitHub Actions,
// GitLab CI), the source naming which; null where none is set.
[[nodiscard]] nlohmann::json code_under_test(const std::string &given);

// The help of --commit-under-test (run and ab).
inline constexpr const char *kCommitUnderTestHelp =
    "commit of the code under test (e.g. your plugin's), recorded in the set and the archive index; "
    "history orders runs by it (default: $GITHUB_SHA, else $CI_COMMIT_SHA)";

} // namespace opbench
