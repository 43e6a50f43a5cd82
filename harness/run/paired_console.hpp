// What `opbench ab` prints: a line per case and the summary, in compare's
// units (writers/units.hpp: "142 us"; ratio to three decimals, p to three
// significant digits), so the console and `opbench compare SET` agree.
#pragma once

#include "run/ab_run.hpp"

#include <string>

namespace opbench {

// The header line of the case rows (100 columns).
[[nodiscard]] std::string paired_console_header();

// One case: its label, base and new medians of the pairs, ratio new / base,
// p, verdict; or the status with the reason wrapped under it.
[[nodiscard]] std::string paired_console_row(const PairedCaseResult &r);

// The summary, two lines: "opbench ab: 14 cases, naive@base -> naive@new (threshold 2%): 13 same,
// 1 slower, ..." and the canary's drift with the run's time.
[[nodiscard]] std::string paired_summary_line(const PairedSummary &s, const PairedRunOptions &options);

} // namespace opbench
