// What the runner must know about a backend before its cases run: whether it
// opened (the plugin's create and probe), its context for the result set
// (device, info), which of the cases it supports, and the fixed cost of one
// call. Each answer needs calls into the plugin, so under --isolate process
// they are asked in the backend's worker (case_host.hpp) and come back as
// JSON; a crash, exit, exception or hang there costs that backend only.
#pragma once

#include "plugin/backend_sessions.hpp"
#include "measure/records.hpp"

#include "opbench/plugin.h"

#include <nlohmann/json.hpp>

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace opbench {

// What a plugin's table says about it (name, versions, ABI), with its
// usability: no call into the plugin. The context of a backend that could
// not be opened (its worker crashed in create).
[[nodiscard]] nlohmann::json plugin_table_context(const opb_backend_api &api, const std::string &unusable_reason);

// One backend instance: identity, library versions, usability, device, and
// the facts the plugin reports through its optional `info` entry.
[[nodiscard]] nlohmann::json backend_context(const BackendInstance &be, const LoadedPlugin *plugin);

// Phases of the probing, as a failure names them ("crashed: SIGSEGV in create").
namespace backend_phase {
inline constexpr std::string_view create = "create"; // also "probe" (BackendInstance)
inline constexpr std::string_view supports = "supports";
inline constexpr std::string_view call_overhead = "call-overhead";
} // namespace backend_phase

// supports() for one case: passed (supported), skipped (unsupported or
// unavailable, with the plugin's message), failed (an error).
struct SupportAnswer {
    CaseStatus status = CaseStatus::passed;
    std::string reason;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(SupportAnswer, status, reason)

struct BackendFacts {
    // passed: usable. skipped: not loaded, or create/probe said no.
    // failed: a fault while asking (its worker crashed, exited, threw, hung).
    CaseStatus status = CaseStatus::passed;
    std::string reason;                  // why not usable; names the backend
    nlohmann::json context;              // context.opbench.backends.<name>
    std::vector<SupportAnswer> supports; // one per case asked about, in order

    [[nodiscard]] bool usable() const { return status == CaseStatus::passed; }
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(BackendFacts, status, reason, context, supports)

// The facts of `backend` from instances opened in this process (`sessions`,
// where it is either opened or missing): its context, and supports() for
// each of `cases`. `on_phase` hears "supports" before those calls.
[[nodiscard]] BackendFacts probe_backend(const BackendSessions &sessions, const std::string &backend,
                                         const std::vector<opb_op_desc> &cases,
                                         const std::function<void(std::string_view)> &on_phase = nullptr);

// The facts of a backend whose probing failed by a fault (`cause`, e.g.
// "crashed: SIGSEGV in create"): failed, with a reason naming the backend and
// a context made from its plugin table alone.
[[nodiscard]] BackendFacts faulted_backend(const opb_backend_api &api, const std::string &backend,
                                           const std::string &cause);

} // namespace opbench
