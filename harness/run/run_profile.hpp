// A profiling run's begin and end (--profile, --trace): the session records
// through every backend instance that runs entries here; at the end the hot
// paths are printed and the trace written (docs/profiling.md).
#pragma once

#include "plugin/backend_sessions.hpp"
#include "profile/profile_session.hpp"
#include "suite/suite.hpp"

#include <map>
#include <optional>
#include <string>

namespace opbench {

// Attaches the session to every instance in `sessions` and opens the run's span.
void begin_profiled_run(ProfileSession &profile, BackendSessions &sessions, const Suite &suite);

// Closes the run's span and detaches the session; prints the hot paths
// (--profile), each with a line where its time per call disagrees with the
// entry's measured median (CaseProfile::measured_median, which the entry
// loop sets) by more than 2x, and writes the trace (--trace). A trace that
// cannot be written never costs the result set: returns
// "--trace FILE: not written: why" (exit 3).
[[nodiscard]] std::optional<std::string> end_profiled_run(ProfileSession &profile, BackendSessions &sessions,
                                                          const Suite &suite);

// The line saying a profile's time per call and the measured median differ
// by more than 2x; "" when they agree within 2x or either is unknown.
[[nodiscard]] std::string profile_disagreement(double profiled_per_call, double measured_median);

} // namespace opbench
