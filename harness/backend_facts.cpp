#include "backend_facts.hpp"

#include "context.hpp"

#include <fmt/format.h>

namespace opbench {

void to_json(nlohmann::json &j, const BackendFacts &f) {
    nlohmann::json supports = nlohmann::json::array();
    for (const SupportAnswer &s : f.supports)
        supports.push_back({{"status", case_status_name(s.status)}, {"reason", s.reason}});
    j = {{"status", case_status_name(f.status)}, {"reason", f.reason}, {"context", f.context},
         {"supports", std::move(supports)}};
}

void from_json(const nlohmann::json &j, BackendFacts &f) {
    f.status = case_status_from_name(j.at("status").get<std::string>()).value_or(CaseStatus::failed);
    f.reason = j.at("reason").get<std::string>();
    f.context = j.at("context");
    f.supports.clear();
    for (const auto &s : j.at("supports"))
        f.supports.push_back({case_status_from_name(s.at("status").get<std::string>()).value_or(CaseStatus::failed),
                              s.at("reason").get<std::string>()});
}

BackendFacts probe_backend(const BackendSessions &sessions, const std::string &backend,
                           const std::vector<opb_op_desc> &cases,
                           const std::function<void(std::string_view)> &on_phase) {
    BackendFacts f;
    auto opened = sessions.backends.find(backend);
    if (opened != sessions.backends.end()) f.context = backend_context(*opened->second, nullptr);
    if (auto missing = sessions.missing.find(backend); missing != sessions.missing.end()) {
        f.status = CaseStatus::skipped;
        f.reason = missing->second;
        return f;
    }
    const BackendInstance &be = *opened->second;
    if (on_phase) on_phase(backend_phase::supports);
    for (const opb_op_desc &desc : cases) {
        const opb_status s = be.api().supports(be.handle(), &desc);
        if (s == OPB_OK)
            f.supports.push_back({CaseStatus::passed, ""});
        else if (s == OPB_ERR_UNSUPPORTED || s == OPB_ERR_UNAVAILABLE)
            f.supports.push_back({CaseStatus::skipped, be.error_text(s)});
        else
            f.supports.push_back({CaseStatus::failed, "supports: " + be.error_text(s)});
    }
    return f;
}

BackendFacts faulted_backend(const opb_backend_api &api, const std::string &backend, const std::string &cause) {
    BackendFacts f;
    f.status = CaseStatus::failed;
    f.reason = fmt::format("{} (backend '{}')", cause, backend);
    f.context = plugin_table_context(api, f.reason);
    return f;
}

} // namespace opbench
