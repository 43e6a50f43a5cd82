// The two sides of `opbench ab` (two builds of one backend) as the entry
// loop's host (entry_host.hpp): each side its worker pools, what its probe
// said, and the steps of a case on it (activate in every pool, measure a
// repetition in the pool the ABBA order names, finish).
#pragma once

#include "entry/entry.hpp"
#include "isolate/case_host.hpp"
#include "plugin/plugin_loader.hpp"
#include "run/entry_host.hpp"

#include <nlohmann/json.hpp>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace opbench {

// Worker pools per side. A process draws one memory layout, which moved a
// case by up to 5-7% on this project's VM (docs/measurement.md, "Paired
// A/B"): with one pool (3 processes) a side's draw biased some A/A cases by
// 2-3%. Block p runs in pool p % kPools (abba_schedule.hpp), so a case's
// pairs average over kPools x `processes` (settings) processes per side.
constexpr int kPairedPools = 4;

class PairedSide {
public:
    explicit PairedSide(std::string backend) : backend_(std::move(backend)) {}

    [[nodiscard]] const std::string &backend() const { return backend_; }
    // What the sides' probes said, by backend, as a run's context records it.
    struct Probes {
        std::map<std::string, nlohmann::json> contexts; // each backend's context (device kind, for rooflines)
        std::map<std::string, std::string> unavailable; // those that cannot run: why
        std::map<std::string, double> call_overheads;   // seconds per call of the tiny add
    };
    // Starts the pools' workers and probes the backend with `cases` into
    // `probes`, each step of the probe within `probe_timeout` seconds.
    void open(const PluginSet &plugins, const std::string &reference, const std::vector<opb_op_desc> &cases,
              Probes &probes, double probe_timeout);
    // Why case number `ci` cannot run on this side (the probe's answers), if so.
    [[nodiscard]] std::optional<MeasureFailure> cannot_run(std::size_t ci) const;
    // Activates `job` in every pool (pool 0 verifies; the others run the
    // inputs and code it verified): pool 0's checks, with the status of the
    // last pool reached. One that did not pass holds nothing.
    [[nodiscard]] Activation activate(CaseJob job);
    // One repetition in `pool`. Throws MeasureFailure, every pool released.
    [[nodiscard]] RepetitionRecord measure(std::size_t pool);
    // Releases the case in every pool; the memory figures are pool 0's.
    // Throws the first pool's MeasureFailure, once every pool is released.
    [[nodiscard]] FinishRecord finish();
    // From the signal watcher: abandons what every pool runs.
    void interrupt();
    [[nodiscard]] bool interrupted() const;

private:
    void release(); // finishes every pool that holds the case, their figures unread

    std::string backend_;
    std::vector<std::unique_ptr<CaseHost>> pools_;
    std::vector<bool> active_; // per pool: the case is activated there
    int processes_per_pool_ = 1; // the active case's (its settings), for stats.process
    BackendFacts facts_;
};

// Both sides as one host: an entry runs on the side of its backend (NAME@base
// or NAME@new), and its place in the probe is its case's index.
class PairedHosts final : public EntryHost {
public:
    PairedHosts(const std::string &base, const std::string &next) : base_(base), next_(next) {}
    // Opens both sides with the cases' descriptions into `probes` (each
    // probe step within `probe_timeout` seconds: --case-timeout, else 60).
    void open(const PluginSet &plugins, const std::string &reference, const std::vector<opb_op_desc> &cases,
              PairedSide::Probes &probes, double probe_timeout);
    void interrupt() { base_.interrupt(), next_.interrupt(); }

    [[nodiscard]] std::optional<MeasureFailure> cannot_run(const Entry &entry) const override;
    [[nodiscard]] Activation activate(const Entry &entry, const CaseJob &job) override;
    [[nodiscard]] RepetitionRecord measure(const Entry &entry, std::size_t pool) override;
    [[nodiscard]] FinishRecord finish(const Entry &entry) override { return side(entry).finish(); }
    [[nodiscard]] bool interrupted() const override { return base_.interrupted() || next_.interrupted(); }
    // A side's pools each spread their repetitions over their own processes.
    [[nodiscard]] int processes_of_case(const MeasureSettings &s) const override {
        return kPairedPools * processes_per_case(s);
    }
    [[nodiscard]] RunFacts facts(const MachinePeaks &peaks) const override {
        return RunFacts{probes_->contexts, probes_->call_overheads, peaks};
    }

private:
    [[nodiscard]] PairedSide &side(const Entry &entry) { return entry.backend() == base_.backend() ? base_ : next_; }
    [[nodiscard]] const PairedSide &side(const Entry &entry) const {
        return entry.backend() == base_.backend() ? base_ : next_;
    }
    PairedSide base_, next_;
    const PairedSide::Probes *probes_ = nullptr;
};

} // namespace opbench
