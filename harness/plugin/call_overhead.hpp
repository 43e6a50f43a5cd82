// The fixed cost of one call on a backend, for the rooflines' overhead rule.
#pragma once

#include "plugin/plugin_loader.hpp"

#include <optional>

namespace opbench {

// The median time of the smallest op there is (a 1x1 f32 add) through
// execute + synchronize on `be`, over 200 calls after 20 warm-up calls.
// None when the backend cannot run it (rooflines then omit the overhead
// rule). A case whose time per call is within a few times this is
// overhead-bound. Runs where the backend's cases run: in its worker under
// --isolate process (case_host.hpp), so a plugin that crashes here costs
// that backend only.
[[nodiscard]] std::optional<double> measure_call_overhead(BackendInstance &be);

} // namespace opbench
