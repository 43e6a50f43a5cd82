// History's change points (issue 43): each case's changes over the archived
// runs of one suite on one machine (readers/change_points.hpp), named by
// their commits, as a Document for every writer (console within 100
// columns, Markdown, JSON, CSV: one row per change) and for the report.
#pragma once

#include "readers/archive.hpp"
#include "readers/change_confirmations.hpp"
#include "readers/change_points.hpp"

#include <string>
#include <vector>

namespace opbench {

// One case's changes.
struct CaseChanges {
    std::string label; // "case [backend]"
    std::vector<ChangePoint> changes;
    std::size_t usable_runs = 0; // runs with a time (what the fit read)
};

struct ChangeHistory {
    HistorySeries series;
    std::vector<CaseChanges> cases; // every case of the series, in its order
    // The archive's confirmations (read_change_confirmations); each change
    // that one confirms shows its verdict.
    std::vector<Confirmation> confirmations;
};

// Runs find_change_points() on every case. Throws ArchiveError when the
// series has too few runs to find a change (fewer than 2 x min_runs: one
// run only, say) or none at all.
[[nodiscard]] ChangeHistory change_history(HistorySeries series, const ChangePointOptions &options);

// The console / Markdown table (one row per change), the JSON data
// (`changes` per case with commits, runs, ratio and interval, `undone_by`)
// and the CSV records (one row per change). The table names each case by
// its label less the segments every case shares (said once in the title);
// `shown_names` (one per case, without the backend), where given, names
// them instead: the report passes its charts' titles, so a row and the
// chart it marks read the same.
[[nodiscard]] Document change_history_document(const ChangeHistory &h, const ChangePointOptions &options,
                                               const std::vector<std::string> &shown_names = {});

// Regressions among the newest `newest` runs: changes to slower (the
// interval above 1) not undone, whose first run after is one of the last
// `newest` runs; one line each naming the case, the commit range and the
// size.
[[nodiscard]] std::vector<std::string> newest_regressions(const ChangeHistory &h, std::size_t newest);

} // namespace opbench
