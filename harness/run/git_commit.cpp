#include "run/git_commit.hpp"

#include "git_version.hpp"

namespace opbench {

const char *git_commit() { return OPBENCH_GIT_COMMIT; }

} // namespace opbench
