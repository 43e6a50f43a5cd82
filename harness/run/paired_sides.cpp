#include "run/paired_sides.hpp"

#include <fmt/format.h>

#include <chrono>

namespace opbench {

void PairedSide::open(const PluginSet &plugins, const std::string &reference, const std::vector<opb_op_desc> &cases,
                      Probes &probes) {
    std::map<std::string, std::string> paths;
    for (const std::string &name : {backend_, reference})
        if (const LoadedPlugin *p = plugins.find(name)) paths[name] = p->path;
    for (int k = 0; k < kPairedPools; ++k)
        pools_.push_back(make_worker_host({"/proc/self/exe", "__worker"}, reference, paths));
    active_.assign(kPairedPools, false);
    BackendProbe probe = pools_[0]->probe_backend(backend_, cases, 60.0);
    if (!probe.fault.empty())
        facts_ = BackendFacts{CaseStatus::failed, fmt::format("{} (backend '{}')", probe.fault, backend_), nullptr, {}};
    else
        facts_ = std::move(probe.facts);
    if (probe.call_overhead_seconds) probes.call_overheads[backend_] = *probe.call_overhead_seconds;
    if (!facts_.context.is_null()) probes.contexts[backend_] = facts_.context;
    if (!facts_.usable()) probes.unavailable[backend_] = facts_.reason;
}

std::optional<MeasureFailure> PairedSide::cannot_run(std::size_t ci) const {
    if (!facts_.usable()) return MeasureFailure{facts_.status, facts_.reason};
    if (ci < facts_.supports.size() && facts_.supports[ci].status != CaseStatus::passed)
        return MeasureFailure{facts_.supports[ci].status, facts_.supports[ci].reason};
    return std::nullopt;
}

bool PairedSide::activate(Entry &entry, CaseJob job) {
    const Activation first = pools_[0]->activate(job);
    active_[0] = first.status == CaseStatus::passed;
    job.verify = VerifyMode::off; // the other pools run the inputs and code pool 0 verified
    Activation last = first;
    for (std::size_t k = 1; k < pools_.size() && last.status == CaseStatus::passed; ++k) {
        last = pools_[k]->activate(job);
        active_[k] = last.status == CaseStatus::passed;
    }
    entry.activated(first); // the checks' figures are pool 0's
    entry.result.status = last.status;
    entry.result.reason = last.reason;
    return last.status == CaseStatus::passed;
}

void PairedSide::measure(Entry &entry, std::size_t pool) {
    const auto t0 = std::chrono::steady_clock::now();
    RepetitionRecord rec = pools_[pool]->measure_repetition();
    rec.process += int(pool) * kProcessesPerCase; // stats.process: which of the side's processes
    entry.result.measure_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    entry.result.repetitions.push_back(std::move(rec));
}

void PairedSide::finish(Entry &entry) {
    for (std::size_t k = 0; k < pools_.size(); ++k) {
        if (!active_[k]) continue;
        active_[k] = false;
        try {
            FinishRecord f = pools_[k]->finish();
            if (k == 0) entry.finished(f);
        } catch (const MeasureFailure &f) {
            entry.result.status = f.status;
            entry.result.reason = f.reason;
        }
    }
}

void PairedSide::interrupt() {
    for (auto &pool : pools_) pool->interrupt();
}

} // namespace opbench
