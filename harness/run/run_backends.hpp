// The backends of one run: where entries run (the case host: a worker pool
// per backend, or this process), what each backend can do (its probe, asked
// in its worker), its call overhead and context, and full mode's reference
// store. A fault while probing costs that backend only: its entries fail
// with the cause ("crashed: SIGSEGV in create (backend 'x')"). It is the
// entry loop's host for `opbench run` (entry_host.hpp).
#pragma once

#include "isolate/case_host.hpp"
#include "run/entry_host.hpp"
#include "measure/settings.hpp"
#include "machine/machine.hpp"
#include "plugin/backend_facts.hpp"
#include "plugin/backend_sessions.hpp"
#include "plugin/plugin_loader.hpp"
#include "profile/profile_observer.hpp"

#include <nlohmann/json.hpp>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace opbench {

// What the backends of a run are asked to be: the run's options that this
// room reads (run/runner.hpp's RunOptions holds them).
struct BackendOptions {
    std::string reference = "naive";          // backend whose output is the reference
    Isolation isolation = Isolation::process; // where cases run (case_host.hpp)
    VerifyMode verify = VerifyMode::fast;     // --verify: full | fast | off (verify.hpp)
    bool reference_store = true;              // full mode: keep references on disk (--no-reference-cache)
    std::string reference_store_dir;          // empty: ReferenceStore::default_dir()
};

// The seconds each step of probing a backend may take: --case-timeout when
// given, else a minute (a GPU backend's create can take seconds).
[[nodiscard]] double probe_timeout_seconds(const SettingOverrides &overrides);

class RunBackends final : public EntryHost {
public:
    // `probe_timeout`: the seconds each step of a backend's probe may take.
    RunBackends(const PluginSet &plugins, const BackendOptions &options, double probe_timeout,
                ProfileSession *profile);

    // Opens the host (and, when entries run in this process, the backends
    // here), then probes each of `named` with the op cases it will be asked
    // (`cases_of[backend]`; supports() answers come back in that order).
    void open(const std::vector<std::string> &named, const std::map<std::string, std::vector<opb_op_desc>> &cases_of);
    // Full mode keeps its references on disk: a re-run computes none again.
    void choose_reference_store();

    [[nodiscard]] const BackendOptions &options() const { return options_; }
    [[nodiscard]] CaseHost &host() { return *host_; }
    [[nodiscard]] BackendSessions &sessions() { return sessions_; }
    // Why `backend` cannot run entries (missing, refused, unusable, its probe
    // faulted), or nothing.
    [[nodiscard]] std::optional<MeasureFailure> cannot_run(const std::string &backend) const;
    // supports() for the backend's k-th op case, as asked in open().
    [[nodiscard]] SupportAnswer support(const std::string &backend, std::size_t k) const;

    // The entry loop's host: the entry's backend and its probe's answer for
    // it, then the case host's steps (its worker host spreads repetitions
    // over its processes itself, so `slot` is not read).
    [[nodiscard]] std::optional<MeasureFailure> cannot_run(const Entry &entry) const override;
    [[nodiscard]] Activation activate(const Entry &, const CaseJob &job) override { return host_->activate(job); }
    [[nodiscard]] RepetitionRecord measure(const Entry &, std::size_t) override { return host_->measure_repetition(); }
    [[nodiscard]] FinishRecord finish(const Entry &) override { return host_->finish(); }
    [[nodiscard]] bool interrupted() const override { return host_->interrupted(); }
    [[nodiscard]] int processes_of_case(const MeasureSettings &s) const override { return host_->processes_of_case(s); }
    [[nodiscard]] RunFacts facts(const MachinePeaks &peaks) const override {
        return RunFacts{contexts_, call_overhead_, peaks};
    }

    [[nodiscard]] const std::map<std::string, nlohmann::json> &contexts() const { return contexts_; }
    [[nodiscard]] const std::map<std::string, std::string> &unavailable() const { return unavailable_; }
    [[nodiscard]] const std::map<std::string, double> &call_overheads() const { return call_overhead_; }
    [[nodiscard]] const std::string &reference_store_dir() const { return store_dir_; }
    [[nodiscard]] const std::string &reference_store_key() const { return store_key_; }

private:
    [[nodiscard]] bool reference_opens();
    void open_host(bool entries_run_here);

    const PluginSet &plugins_;
    const BackendOptions &options_;
    double probe_timeout_;
    ProfileSession *profile_;
    BackendSessions sessions_; // instances here: --isolate none and profiling runs only
    std::unique_ptr<ProfileInstrumentation> instrumentation_;
    std::unique_ptr<CaseHost> host_;
    std::map<std::string, BackendFacts> facts_;
    std::map<std::string, nlohmann::json> contexts_; // device kind and info, for rooflines
    std::map<std::string, std::string> unavailable_;
    std::map<std::string, double> call_overhead_;
    std::string store_dir_, store_key_;
};

} // namespace opbench
