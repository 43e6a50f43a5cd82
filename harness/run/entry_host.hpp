// Where the entry loop (entry_loop.hpp) runs its entries, as the loop sees
// it: whether an entry can run, then activate, measure a repetition at a
// time, finish. `opbench run` hosts its entries in its backends' case host
// (run_backends.hpp: a worker pool per backend, or this process); `opbench
// ab` in the two sides' worker pools (paired_sides.hpp). The loop is the
// same for both; only the host and the order of repetitions differ.
#pragma once

#include "entry/entry.hpp"
#include "measure/bottleneck_rules.hpp"
#include "measure/records.hpp"
#include "measure/settings.hpp"

#include <cstddef>
#include <optional>
#include <string>

namespace opbench {

class EntryHost {
public:
    virtual ~EntryHost() = default;
    // Why `entry` cannot run here (its backend is missing, unusable, failed
    // its probe or refuses the case), if so.
    [[nodiscard]] virtual std::optional<MeasureFailure> cannot_run(const Entry &entry) const = 0;
    // Runs the reference, prepare, check, warm-up and batch choice of `job`
    // (entry's); when it passed, the entry stays held until finish(), and
    // when not, nothing is held.
    [[nodiscard]] virtual Activation activate(const Entry &entry, const CaseJob &job) = 0;
    // One repetition of the held entry; `slot` is the order's (an `ab`
    // side's pool; a run's host spreads repetitions itself). Throws
    // MeasureFailure, the entry then released (no finish() follows).
    [[nodiscard]] virtual RepetitionRecord measure(const Entry &entry, std::size_t slot) = 0;
    // Memory figures and release of the held entry. Throws MeasureFailure.
    [[nodiscard]] virtual FinishRecord finish(const Entry &entry) = 0;
    // The step in progress was abandoned by an interrupt (its failure is no result).
    [[nodiscard]] virtual bool interrupted() const = 0;
    // How many processes an entry with these settings runs in (each further
    // one prepares it again: the time-left estimate counts that).
    [[nodiscard]] virtual int processes_of_case(const MeasureSettings &settings) const = 0;
    // What the bottleneck rules and rooflines read of the backends: their
    // contexts and call overheads, and this machine's peaks.
    [[nodiscard]] virtual RunFacts facts(const MachinePeaks &peaks) const = 0;
};

// The roofline of `entry` at `seconds` per call: judged against the threads
// its backend really uses (naive: one), or a GPU backend's own peaks, and in
// a warm cache against the roof of the level that holds its bytes.
[[nodiscard]] Roofline entry_roofline(const Entry &entry, double seconds, const RunFacts &facts);

} // namespace opbench
