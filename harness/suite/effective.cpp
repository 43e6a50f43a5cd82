#include "suite/effective.hpp"

#include "suite/case_names.hpp"

namespace opbench {

int apply_command_line(MeasureSettings &settings, std::vector<std::string> &backends, const SourceLocation &where,
                       const CommandLineChanges &changes) {
    changes.overrides.apply(settings);
    if (auto why = check_settings(settings)) throw SuiteError(where, *why + " (after the command-line overrides)");
    if (!changes.backends.empty()) backends = changes.backends;
    return resolve_threads(settings.threads);
}

std::vector<Case> effective_cases(const Suite &suite, const CommandLineChanges &changes) {
    std::vector<Case> cases;
    for (const auto &c : suite.cases) {
        Case effective = c;
        effective.desc.threads = apply_command_line(effective.settings, effective.backends, c.where, changes);
        cases.push_back(std::move(effective));
    }
    check_unique_names(cases); // after the changes: --backends can change the lists
    return cases;
}

std::vector<WorkloadCase> effective_workloads(const Suite &suite, const CommandLineChanges &changes) {
    std::vector<WorkloadCase> out;
    for (const auto &w : suite.workloads) {
        WorkloadCase e = w;
        e.decoder.threads = apply_command_line(e.settings, e.backends, w.where, changes);
        out.push_back(std::move(e));
    }
    return out;
}

} // namespace opbench
