// What a case is called: its stable, filterable benchmark name on a backend
// and its shape parameters as fields, both from the SDK's op table.
#pragma once

#include "suite/suite.hpp"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace opbench {

// The stable, filterable benchmark name of a case on a backend:
//   <op>/<label>:<value>/.../[variant:<name>/]dt:<dtype>/[thr:<n>/]be:<backend>
// e.g. <op>/B:1/M:1024/N:1024/K:1024/dt:f32/be:onednn.
// The shape part (labels, and which parameters show) comes from the op's row
// in the SDK's op table (opbench/ops.hpp, ParamInfo::label / name_rule).
// A named case appends /case:<name>. Settings that change what is measured
// (threads when set, cold cache) appear too, so such entries never collide.
[[nodiscard]] std::string benchmark_name(const Case &c, const std::string &backend);

// Throws SuiteError at the later of two cases that would get the same
// benchmark name on the same backend (their results could not be told apart).
void check_unique_names(const std::vector<Case> &cases);

// The shape parameters of a description as a flat JSON object.
[[nodiscard]] nlohmann::json shape_params(const opb_op_desc &desc);

} // namespace opbench
