// Confirmations of change points (issue 43, item 3): scripts/confirm-change.sh
// builds a plugin at the commits either side of a change, runs `opbench ab`
// on the two builds and appends each case's paired verdict to
// DIR/confirmations.json; `history --changes` shows the verdict beside the
// change it confirms.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace opbench {

// One case's paired verdict on two builds.
struct Confirmation {
    std::string backend;                  // the plugin's name ("naive"), as in the case's " [backend]"
    std::string last_before, first_after; // the commits built (as given: full or abbreviated)
    std::string set;                      // ab's result set, relative to the archive
    std::string case_name;                // the case as ab names it ("add/R:8/C:64/dt:f32")
    std::string verdict;                  // same | slower | faster | noisy
    double ratio = 1, ratio_low = 1, ratio_high = 1; // after / before, its 95% interval (NaN: none)
};

// DIR/confirmations.json's records, oldest first; none when the file is
// absent. Throws ArchiveError naming the file and the field for a file that
// is not the one confirm-change.sh writes (schema_version 1,
// `confirmations`: [{backend, last_before, first_after, set, cases: [{case,
// verdict, ratio, ratio_ci95}]}]).
[[nodiscard]] std::vector<Confirmation> read_change_confirmations(const std::filesystem::path &dir);

// The newest confirmation of a change of case `label` ("case [backend]")
// between the runs of commits `before` and `after` (full SHAs; a
// confirmation may name them abbreviated, 7 characters at least).
[[nodiscard]] std::optional<Confirmation> confirmation_of(const std::vector<Confirmation> &all,
                                                          const std::string &label, const std::string &before,
                                                          const std::string &after);

} // namespace opbench
