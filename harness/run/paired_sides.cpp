#include "run/paired_sides.hpp"

#include <fmt/format.h>

namespace opbench {

void PairedSide::open(const PluginSet &plugins, const std::string &reference, const std::vector<opb_op_desc> &cases,
                      Probes &probes, double probe_timeout) {
    std::map<std::string, std::string> paths;
    for (const std::string &name : {backend_, reference})
        if (const LoadedPlugin *p = plugins.find(name)) paths[name] = p->path;
    for (int k = 0; k < kPairedPools; ++k)
        pools_.push_back(make_worker_host({"/proc/self/exe", "__worker"}, reference, paths));
    active_.assign(kPairedPools, false);
    BackendProbe probe = pools_[0]->probe_backend(backend_, cases, probe_timeout);
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

Activation PairedSide::activate(CaseJob job) {
    processes_per_pool_ = processes_per_case(job.settings);
    Activation first = pools_[0]->activate(job);
    active_[0] = first.status == CaseStatus::passed;
    job.verify = VerifyMode::off; // the other pools run the inputs and code pool 0 verified
    for (std::size_t k = 1; k < pools_.size() && first.status == CaseStatus::passed; ++k) {
        const Activation other = pools_[k]->activate(job);
        active_[k] = other.status == CaseStatus::passed;
        if (!active_[k]) first.status = other.status, first.reason = fmt::format("in pool {}: {}", k, other.reason);
    }
    if (first.status != CaseStatus::passed) release(); // a side that did not pass holds nothing
    return first;
}

RepetitionRecord PairedSide::measure(std::size_t pool) {
    try {
        RepetitionRecord rec = pools_[pool]->measure_repetition();
        rec.process += int(pool) * processes_per_pool_; // stats.process: which of the side's processes
        return rec;
    } catch (const MeasureFailure &) {
        active_[pool] = false; // its worker gave the case up
        release();             // a failed step leaves nothing held (entry_host.hpp)
        throw;
    }
}

void PairedSide::release() {
    for (std::size_t k = 0; k < pools_.size(); ++k) {
        if (!active_[k]) continue;
        active_[k] = false;
        try {
            (void)pools_[k]->finish();
        } catch (const MeasureFailure &) {
            // The case is given up either way; the failure that stopped it is the one reported.
        }
    }
}

FinishRecord PairedSide::finish() {
    FinishRecord pool0;
    std::optional<MeasureFailure> failure;
    for (std::size_t k = 0; k < pools_.size(); ++k) {
        if (!active_[k]) continue;
        active_[k] = false;
        try {
            FinishRecord f = pools_[k]->finish();
            if (k == 0) pool0 = std::move(f);
        } catch (const MeasureFailure &f) {
            if (!failure) failure = f;
        }
    }
    if (failure) throw *failure;
    return pool0;
}

bool PairedSide::interrupted() const {
    for (const auto &pool : pools_)
        if (pool->interrupted()) return true;
    return false;
}

void PairedSide::interrupt() {
    for (auto &pool : pools_) pool->interrupt();
}

void PairedHosts::open(const PluginSet &plugins, const std::string &reference, const std::vector<opb_op_desc> &cases,
                       PairedSide::Probes &probes, double probe_timeout) {
    base_.open(plugins, reference, cases, probes, probe_timeout);
    next_.open(plugins, reference, cases, probes, probe_timeout);
    probes_ = &probes;
}

std::optional<MeasureFailure> PairedHosts::cannot_run(const Entry &entry) const {
    return side(entry).cannot_run(entry.probe_place().value_or(SIZE_MAX));
}

Activation PairedHosts::activate(const Entry &entry, const CaseJob &job) { return side(entry).activate(job); }

RepetitionRecord PairedHosts::measure(const Entry &entry, std::size_t pool) { return side(entry).measure(pool); }

} // namespace opbench
