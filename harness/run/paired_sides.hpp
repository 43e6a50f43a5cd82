// One side of `opbench ab` (one build of the backend): its worker pools,
// what its probe said, and the steps of a case on it (activate, measure a
// repetition in a pool, finish). The case's records go to its Entry
// (entry/entry.hpp), as the entry loop records `run`'s.
#pragma once

#include "entry/entry.hpp"
#include "isolate/case_host.hpp"
#include "plugin/plugin_loader.hpp"

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
// pairs average over kPools x kProcessesPerCase processes per side.
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
    // Starts the pools' workers and probes the backend with `cases` into `probes`.
    void open(const PluginSet &plugins, const std::string &reference, const std::vector<opb_op_desc> &cases,
              Probes &probes);
    // Why case number `ci` cannot run on this side (the probe's answers), if so.
    [[nodiscard]] std::optional<MeasureFailure> cannot_run(std::size_t ci) const;
    // Activates `job` in every pool (pool 0 verifies; the others run the
    // inputs and code it verified) and records it on `entry`. True: passed.
    bool activate(Entry &entry, CaseJob job);
    // One repetition in `pool`, onto entry.result. Throws MeasureFailure.
    void measure(Entry &entry, std::size_t pool);
    // Releases the case in every pool; the memory figures are pool 0's.
    void finish(Entry &entry);
    [[nodiscard]] bool active(std::size_t pool) const { return pool < active_.size() && active_[pool]; }
    // From the signal watcher: abandons what every pool runs.
    void interrupt();

private:
    std::string backend_;
    std::vector<std::unique_ptr<CaseHost>> pools_;
    std::vector<bool> active_; // per pool: the case is activated there
    BackendFacts facts_;
};

} // namespace opbench
