// The fixed cost of one call on a backend, for the rooflines' overhead rule.
#pragma once

#include "backend_sessions.hpp"

#include <map>
#include <string>

namespace opbench {

// For each usable backend: the median time of the smallest op there is (a
// 1x1 f32 add) through execute + synchronize, over 200 calls after 20 warm-up
// calls. A backend that cannot run it gets no figure (rooflines then omit the
// overhead rule). A case whose time per call is within a few times this is
// overhead-bound.
[[nodiscard]] std::map<std::string, double> measure_call_overheads(const BackendSessions &sessions);

} // namespace opbench
