// The kinds of job a run's entries hand the case host (isolate/case_host.hpp):
// an op case's (entry/op_case_job.hpp) and a workload phase's
// (workload/workload_session.hpp), told apart by the job's detail. Made for
// the run's host, and by `opbench __worker` for its own.
#pragma once

#include "isolate/case_job.hpp"
#include "profile/profile_observer.hpp"

#include <memory>

namespace opbench {

// `instrumentation` (profiling; may be null) outlives them.
[[nodiscard]] std::unique_ptr<JobKinds> make_entry_jobs(CaseInstrumentation *instrumentation = nullptr);

} // namespace opbench
