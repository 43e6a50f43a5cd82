// An op case as a job of the case host (isolate/case_host.hpp's JobKinds):
// the reference's outputs when the check needs them, the backend's work
// under a recipe, the check --verify asks for, memory figures. The run's
// instrumentation (profiling), when given, wraps the recipe's work and
// observer here: the host knows none.
#pragma once

#include "isolate/case_job.hpp"
#include "profile/profile_observer.hpp"

#include <memory>

namespace opbench {

// The op cases' kind alone (a job with a `detail` is not one of them).
// `instrumentation` (may be null) outlives it.
[[nodiscard]] std::unique_ptr<JobKinds> make_op_case_jobs(CaseInstrumentation *instrumentation = nullptr);

} // namespace opbench
