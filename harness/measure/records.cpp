#include "measure/records.hpp"

namespace opbench {

std::string_view case_status_name(CaseStatus s) {
    switch (s) {
    case CaseStatus::passed: return "passed";
    case CaseStatus::failed: return "failed";
    case CaseStatus::skipped: return "skipped";
    case CaseStatus::starved: return "starved";
    }
    return "failed";
}

std::optional<CaseStatus> case_status_from_name(std::string_view name) {
    for (CaseStatus s : {CaseStatus::passed, CaseStatus::failed, CaseStatus::skipped, CaseStatus::starved})
        if (case_status_name(s) == name) return s;
    return std::nullopt;
}

} // namespace opbench
