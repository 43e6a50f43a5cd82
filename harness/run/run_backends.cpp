#include "run/run_backends.hpp"

#include "check/reference_store.hpp"
#include "machine/bottleneck.hpp"
#include "run/entry_jobs.hpp"
#include "writers/text_wrap.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <iostream>

namespace opbench {

RunBackends::RunBackends(const PluginSet &plugins, const BackendOptions &options, double probe_timeout,
                         ProfileSession *profile)
    : plugins_(plugins), options_(options), probe_timeout_(probe_timeout), profile_(profile) {}

// Entries run in this process with --isolate none and when profiling (its
// scopes, spans and hot paths are recorded here); otherwise every plugin
// call of the run, workloads' included, happens in a worker.
void RunBackends::open(const std::vector<std::string> &named,
                       const std::map<std::string, std::vector<opb_op_desc>> &cases_of) {
    const bool entries_run_here = profile_ || options_.isolation == Isolation::none;
    if (entries_run_here && !named.empty()) sessions_ = open_backend_sessions(plugins_, named, options_.reference);
    open_host(entries_run_here);
    for (const std::string &name : named) {
        const LoadedPlugin *plugin = plugins_.find(name);
        if (!plugin) { // refused by the loader (with its reason), or absent
            facts_[name] = BackendFacts{CaseStatus::skipped, plugins_.why_unavailable(name), nullptr, {}};
            unavailable_[name] = facts_[name].reason;
            continue;
        }
        auto asked = cases_of.find(name);
        const std::vector<opb_op_desc> descs = asked == cases_of.end() ? std::vector<opb_op_desc>() : asked->second;
        BackendProbe probe = host_->probe_backend(name, descs, probe_timeout_);
        BackendFacts facts =
            probe.fault.empty() ? std::move(probe.facts) : faulted_backend(*plugin->api, name, probe.fault);
        // Which file ran, as `ab` sets record their plugins (issue 44).
        if (facts.context.is_object()) facts.context["path"] = plugin->path;
        if (!facts.context.is_null()) contexts_[name] = facts.context;
        if (!facts.usable()) unavailable_[name] = facts.reason;
        if (facts.usable() && facts.supports.size() != descs.size()) facts.supports.clear();
        if (probe.call_overhead_seconds) call_overhead_[name] = *probe.call_overhead_seconds;
        facts_[name] = std::move(facts);
    }
}

void RunBackends::open_host(bool entries_run_here) {
    if (profile_) {
        if (options_.isolation == Isolation::process)
            std::cerr << wrap_words("opbench: --profile / --trace run the cases in this process (as --isolate "
                                    "none): a plugin crash ends this run",
                                    4, 0);
        instrumentation_ = std::make_unique<ProfileInstrumentation>(*profile_);
        host_ = make_in_process_host(sessions_, options_.reference, make_entry_jobs(instrumentation_.get()));
    } else if (!entries_run_here) {
        std::map<std::string, std::string> paths;
        for (const auto &p : plugins_.plugins) paths[p.name()] = p.path;
        host_ = make_worker_host({"/proc/self/exe", "__worker"}, options_.reference, std::move(paths));
    } else {
        host_ = make_in_process_host(sessions_, options_.reference, make_entry_jobs());
    }
}

std::optional<MeasureFailure> RunBackends::cannot_run(const std::string &backend) const {
    auto it = facts_.find(backend);
    if (it == facts_.end())
        return MeasureFailure{CaseStatus::skipped, fmt::format("backend '{}' was not probed", backend)};
    if (!it->second.usable()) return MeasureFailure{it->second.status, it->second.reason};
    return std::nullopt;
}

SupportAnswer RunBackends::support(const std::string &backend, std::size_t k) const {
    auto it = facts_.find(backend);
    if (it == facts_.end() || k >= it->second.supports.size()) return SupportAnswer{};
    return it->second.supports[k];
}

std::optional<MeasureFailure> RunBackends::cannot_run(const Entry &entry) const {
    if (auto cannot = cannot_run(entry.backend())) return cannot;
    if (const std::optional<std::size_t> place = entry.probe_place()) {
        const SupportAnswer s = support(entry.backend(), *place);
        if (s.status != CaseStatus::passed) return MeasureFailure{s.status, s.reason};
    }
    return std::nullopt;
}

double probe_timeout_seconds(const SettingOverrides &overrides) {
    const std::optional<double> timeout = overrides.get("timeout");
    return timeout && *timeout > 0 ? *timeout : 60.0;
}

// Whether the reference backend opens: known from its probe when the run
// names it, else asked now.
bool RunBackends::reference_opens() {
    auto it = facts_.find(options_.reference);
    if (it != facts_.end()) return it->second.usable();
    const BackendProbe probe = host_->probe_backend(options_.reference, {}, probe_timeout_);
    return probe.fault.empty() && probe.facts.usable();
}

// The key names the reference build exactly (version, libraries, the plugin
// file's hash), so a rebuilt reference never serves old outputs.
void RunBackends::choose_reference_store() {
    const LoadedPlugin *ref = plugins_.find(options_.reference);
    if (options_.verify != VerifyMode::full || !options_.reference_store || !ref || !reference_opens()) return;
    const std::string dir =
        options_.reference_store_dir.empty() ? ReferenceStore::default_dir().string() : options_.reference_store_dir;
    if (std::string why = cache_dir_problem(std::filesystem::path(dir)); !why.empty()) {
        std::cerr << "opbench: references not cached: " << why << "\n";
        return;
    }
    store_dir_ = dir;
    store_key_ = fmt::format("{} | {} | plugin sha256 {}", ref->api->version, ref->api->library_versions,
                             file_sha256(ref->path));
}

} // namespace opbench
