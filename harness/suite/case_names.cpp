#include "suite/case_names.hpp"

#include "opbench/ops.hpp"

#include <fmt/format.h>

#include <cstdint>
#include <map>

namespace opbench {

namespace {

// A parameter's value as a result field: integers, booleans or numbers by its kind.
nlohmann::json param_json(const ParamInfo &p, double v) {
    switch (p.kind) {
    case ParamKind::Dim: return static_cast<std::int64_t>(v);
    case ParamKind::Flag: return v != 0.0;
    case ParamKind::Choice: return std::string(p.choices[static_cast<std::size_t>(v)]);
    case ParamKind::Scale:
    case ParamKind::PosReal: break;
    }
    return v;
}

// A parameter's value in a benchmark name: integers as written, flags as 0/1,
// numbers as the float the description holds (shortest form).
std::string param_text(const ParamInfo &p, double v) {
    switch (p.kind) {
    case ParamKind::Dim: return fmt::format("{}", static_cast<std::int64_t>(v));
    case ParamKind::Flag: return v != 0.0 ? "1" : "0";
    case ParamKind::Choice: return std::string(p.choices[static_cast<std::size_t>(v)]);
    case ParamKind::Scale:
    case ParamKind::PosReal: break;
    }
    return fmt::format("{}", static_cast<float>(v));
}

} // namespace

nlohmann::json shape_params(const opb_op_desc &d) {
    nlohmann::json j = nlohmann::json::object();
    if (const OpInfo *row = op_info(d.op))
        for (const auto &p : row->params)
            if (p.field && (!p.applies || p.applies(d))) j[p.field] = param_json(p, p.value(d));
    return j;
}

std::string benchmark_name(const Case &c, const std::string &backend) {
    const opb_op_desc &d = c.desc;
    std::string n{op_name(d.op)};
    if (const OpInfo *row = op_info(d.op))
        for (const auto &p : row->params) {
            if (!p.label || p.name_rule == NameRule::Never || (p.applies && !p.applies(d))) continue;
            const double v = p.name_value ? p.name_value(d) : p.value(d);
            if (p.name_rule == NameRule::IfNonzero && v == 0.0) continue;
            n += fmt::format("/{}:{}", p.label, param_text(p, v));
        }
    if (variant_names(d.op).size() > 1) n += fmt::format("/variant:{}", variant_name(d.op, d.variant));
    n += fmt::format("/dt:{}", dtype_name(d.dtype));
    if (c.settings.threads > 0) n += fmt::format("/thr:{}", c.settings.threads);
    if (c.settings.cache != CacheState::warm) n += "/cache:" + std::string(cache_state_name(c.settings.cache));
    if (c.settings.launch != LaunchMode::single) n += "/launch:" + std::string(launch_mode_name(c.settings.launch));
    n += "/be:" + backend;
    if (!c.name.empty()) n += "/case:" + c.name;
    return n;
}

void check_unique_names(const std::vector<Case> &cases) {
    std::map<std::string, const Case *> seen;
    for (const auto &c : cases)
        for (const auto &be : c.backends) {
            auto [it, inserted] = seen.emplace(benchmark_name(c, be), &c);
            if (!inserted)
                throw SuiteError(c.where, fmt::format("this case measures the same as the case at {} ({}); "
                                                      "give one of them a distinct `name`",
                                                      it->second->where.str(), it->first));
        }
}

} // namespace opbench
