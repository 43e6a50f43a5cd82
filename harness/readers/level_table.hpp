// Side-by-side tables within and across result sets, read from the sets
// alone:
//   by backend: the optimisation-level table. Rows are cases, columns are
//     backends (levels): time, speed-up against a baseline backend, % of the
//     machine's peak, bound.
//   by machine: sets from different machines side by side, each with its
//     absolute figures and its % of its own measured peaks.
#pragma once

#include "readers/result_set_reader.hpp"
#include "writers/writer.hpp"

#include <string>
#include <vector>

namespace opbench {

struct LevelOptions {
    std::string baseline = "naive"; // backend the speed-ups are against
    bool wide = false; // full case names, every column (--wide); else fitted to 100 columns
};

// "2.2% flop" / "61% bw": the % of peak that matters for the case's bound
// (compute-bound: FLOP/s; memory-bound: bandwidth; overhead-bound: the
// larger). "-" when the set has no roofline for it.
[[nodiscard]] std::string percent_of_peak(const CaseRecord &c);
// Whether that % is above 100, and the note that says why it can be.
[[nodiscard]] bool above_its_roof(const CaseRecord &c);
[[nodiscard]] std::string above_roof_note();
// The note for one entry above its roof: its name and the cause its run
// recorded (issue 28); above_roof_note() for sets from before the causes.
[[nodiscard]] std::string above_roof_note(const CaseRecord &c);

// Throws std::invalid_argument when no set has the baseline backend.
[[nodiscard]] Document by_backend(const std::vector<ResultSet> &sets, const LevelOptions &options);

[[nodiscard]] Document by_machine(const std::vector<ResultSet> &sets, const LevelOptions &options);

} // namespace opbench
