#include "isolate/case_host.hpp"
#include "plugin/plugin_variant.hpp"

#include "plugin/backend_work.hpp"
#include "plugin/call_overhead.hpp"
#include "measure/recipe.hpp"

#include <fmt/format.h>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <stdexcept>

namespace opbench {

std::string_view isolation_name(Isolation i) { return i == Isolation::process ? "process" : "none"; }

std::optional<Isolation> isolation_from_name(std::string_view name) {
    if (name == "process") return Isolation::process;
    if (name == "none") return Isolation::none;
    return std::nullopt;
}

std::string_view case_phase_of(std::string_view recipe_phase) {
    if (recipe_phase == phase::prepare) return case_phase::prepare;
    if (recipe_phase == phase::check) return case_phase::verify;
    if (recipe_phase == phase::warmup || recipe_phase == phase::choose_batch || recipe_phase == phase::sample ||
        recipe_phase == phase::summarise)
        return case_phase::execute;
    return recipe_phase;
}

int processes_per_case(const MeasureSettings &s) {
    return std::clamp(s.processes, 1, std::max(1, s.repetitions));
}

int repetitions_per_process(const MeasureSettings &s) {
    const int reps = std::max(1, s.repetitions);
    const int processes = processes_per_case(s);
    return (reps + processes - 1) / processes;
}

double case_timeout_seconds(const MeasureSettings &s) {
    if (s.timeout > 0) return s.timeout;
    return 60.0 + 10.0 * double(std::max(1, s.repetitions)) * s.max_time;
}

// ---- in this process ----------------------------------------------------------------

namespace {

class InProcessHost final : public CaseHost, private JobContext {
public:
    InProcessHost(BackendSessions &sessions, const std::string &reference, std::unique_ptr<JobKinds> kinds,
                  std::function<void(std::string_view)> on_phase, bool catch_exceptions)
        : sessions_(sessions), reference_name_(reference), kinds_(std::move(kinds)), on_phase_(std::move(on_phase)),
          catch_exceptions_(catch_exceptions) {}
    ~InProcessHost() override { active_.reset(); }

    BackendProbe probe_backend(const std::string &backend, const std::vector<opb_op_desc> &cases,
                               double /*timeout_seconds: nothing can stop a call here*/) override {
        BackendProbe p;
        p.facts = opbench::probe_backend(sessions_, backend, cases, on_phase_);
        if (BackendInstance *be = sessions_.usable(backend)) {
            enter(backend_phase::call_overhead);
            p.call_overhead_seconds = measure_call_overhead(*be);
        }
        return p;
    }

    Activation activate(const CaseJob &job) override {
        active_.reset();
        Activation a;
        try {
            active_ = kinds_->activate(job, *this, a);
        } catch (const MeasureFailure &f) {
            a.status = f.status;
            a.reason = f.reason;
        } catch (const std::exception &e) {
            if (!catch_exceptions_) throw;
            a.status = CaseStatus::failed;
            a.reason = fmt::format("exception: {} in {}", e.what(), phase_);
        }
        return a;
    }

    RepetitionRecord measure_repetition() override {
        if (!active_) throw MeasureFailure{CaseStatus::failed, "no active case (it failed to prepare)"};
        try {
            return active_->measure_repetition();
        } catch (const MeasureFailure &) {
            throw;
        } catch (const std::exception &e) {
            if (!catch_exceptions_) throw;
            throw MeasureFailure{CaseStatus::failed, fmt::format("exception: {} in {}", e.what(), phase_)};
        }
    }

    FinishRecord finish() override {
        FinishRecord out;
        if (active_) {
            enter(case_phase::finish);
            out = active_->finish();
        }
        active_.reset();
        return out;
    }

private:
    // JobContext: what the active job runs with.
    BackendSessions &sessions() override { return sessions_; }
    const std::string &reference_name() const override { return reference_name_; }
    BackendInstance &usable_or_throw(const std::string &backend) override {
        if (BackendInstance *be = sessions_.usable(backend)) return *be;
        auto it = sessions_.missing.find(backend);
        throw MeasureFailure{CaseStatus::skipped,
                             it != sessions_.missing.end() ? it->second : fmt::format("backend '{}' is not open", backend)};
    }
    void enter(std::string_view p) override {
        phase_ = std::string(p);
        if (on_phase_) on_phase_(phase_);
    }
    CacheEvictor &evictor() override {
        if (!evictor_) evictor_ = std::make_unique<CacheEvictor>();
        return *evictor_;
    }

    BackendSessions &sessions_;
    std::string reference_name_;
    std::unique_ptr<JobKinds> kinds_; // outlives active_ (declared before it)
    std::function<void(std::string_view)> on_phase_;
    bool catch_exceptions_;
    std::string phase_;
    std::unique_ptr<CacheEvictor> evictor_;
    std::unique_ptr<ActiveJob> active_;
};


// ---- in worker processes -------------------------------------------------------------

class WorkerHost final : public CaseHost {
public:
    WorkerHost(std::vector<std::string> command, std::string reference, std::map<std::string, std::string> paths)
        : command_(std::move(command)), reference_(std::move(reference)), paths_(std::move(paths)) {}

    // Two requests to the backend's worker, the one its cases then run in:
    // "probe" (create, probe, context, supports) and "call_overhead".
    BackendProbe probe_backend(const std::string &backend, const std::vector<opb_op_desc> &cases,
                               double timeout_seconds) override {
        use_worker(backend, 0);
        BackendProbe p;
        for (const char *op : {"probe", "call_overhead"}) {
            timeout_ = timeout_seconds;
            started_ = std::chrono::steady_clock::now();
            WorkerOutcome o = call(nlohmann::json{{"op", op}, {"cases", cases}});
            if (!o.ok) {
                p.fault = cause_of(o);
                break;
            }
            if (std::string_view(op) == "probe") {
                p.facts = o.reply.get<BackendFacts>();
                if (!p.facts.usable()) break;
            } else if (!o.reply.at("seconds").is_null()) {
                p.call_overhead_seconds = o.reply["seconds"].get<double>();
            }
        }
        return p;
    }

    Activation activate(const CaseJob &job) override {
        job_ = job;
        timeout_ = case_timeout_seconds(job.settings);
        started_ = std::chrono::steady_clock::now();
        interrupted_ = false;
        repetitions_in_process_ = 0;
        // A case activated again (interleaved repetitions: once per
        // repetition) goes to the next worker of the pool, so its
        // repetitions span the pool's processes either way.
        process_index_ = next_process_of_case();
        use_worker(job.backend, process_index_);
        WorkerOutcome o = call(nlohmann::json{{"op", "activate"}, {"job", job}});
        if (o.ok) {
            Activation a = o.reply.get<Activation>();
            first_calls_per_sample_ = a.preparation.calls_per_sample;
            return a;
        }
        Activation a;
        a.status = CaseStatus::failed;
        a.reason = reason_of(o);
        return a;
    }

    RepetitionRecord measure_repetition() override {
        // A job may stay in one process (CaseJob::one_process).
        double moved_seconds = 0;
        if (!job_.one_process && repetitions_in_process_ == repetitions_per_process(job_.settings)) {
            const auto start = std::chrono::steady_clock::now();
            move_to_next_process();
            moved_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        }
        ++repetitions_in_process_;
        WorkerOutcome o = call(nlohmann::json{{"op", "repetition"}});
        if (!o.ok) throw MeasureFailure{CaseStatus::failed, reason_of(o)};
        if (o.reply.contains("failure"))
            throw MeasureFailure{
                case_status_from_name(o.reply["failure"].at("status").get<std::string>()).value_or(CaseStatus::failed),
                o.reply["failure"].at("reason").get<std::string>()};
        auto record = o.reply.at("record").get<RepetitionRecord>();
        record.process = process_index_;
        record.process_start_seconds = moved_seconds;
        // A batch the activation left to the first sample (recipe.hpp) is
        // known now, for the case's later processes.
        if (first_calls_per_sample_ <= 0) first_calls_per_sample_ = record.calls_per_sample;
        return record;
    }

    FinishRecord finish() override {
        WorkerOutcome o = call(nlohmann::json{{"op", "finish"}});
        if (!o.ok) throw MeasureFailure{CaseStatus::failed, reason_of(o)};
        return o.reply.get<FinishRecord>();
    }

    void interrupt() override {
        interrupted_ = true;
        std::lock_guard lock(mutex_);
        if (active_) active_->interrupt();
    }
    bool interrupted() const override { return interrupted_; }

    int processes_of_case(const MeasureSettings &s) const override {
        const int reps = std::max(1, s.repetitions);
        const int per_process = repetitions_per_process(s);
        return (reps + per_process - 1) / per_process;
    }

private:
    int next_process_of_case() {
        int &next = next_process_[job_.name];
        const int index = next % processes_per_case(job_.settings);
        next = index + 1;
        return index;
    }

    // Makes worker `index` of `backend`'s pool the active one (started on
    // its first request).
    void use_worker(const std::string &backend, int index) {
        std::lock_guard lock(mutex_);
        auto &pool = workers_[backend];
        if (pool.size() <= std::size_t(index)) pool.resize(std::size_t(index) + 1);
        auto &w = pool[static_cast<std::size_t>(index)];
        if (!w) {
            std::vector<std::string> argv = command_;
            for (const std::string &name : {backend, reference_}) {
                argv.push_back(name);
                auto it = paths_.find(name);
                argv.push_back(it == paths_.end() ? std::string() : it->second); // "": not loaded
            }
            w = std::make_unique<WorkerProcess>(std::move(argv));
        }
        active_ = w.get();
    }

    // The case again in the pool's next worker: a process of its own has its
    // own memory layout and runtime state (case_host.hpp, processes_per_case).
    // Its inputs and code are those the first process verified, so it is not
    // checked again. The worker left releases the case (its memory).
    void move_to_next_process() {
        (void)call(nlohmann::json{{"op", "finish"}}); // a fault here shows on that worker's next request
        process_index_ = next_process_of_case();
        use_worker(job_.backend, process_index_);
        CaseJob again = job_;
        again.verify = VerifyMode::off;
        again.calls_per_sample = first_calls_per_sample_; // the batch the verified process chose: no probe call
        WorkerOutcome o = call(nlohmann::json{{"op", "activate"}, {"job", again}});
        if (!o.ok) throw MeasureFailure{CaseStatus::failed, reason_of(o)};
        const Activation a = o.reply.get<Activation>();
        if (a.status != CaseStatus::passed)
            throw MeasureFailure{a.status, fmt::format("{} (in the backend's worker {}, after {} repetitions)",
                                                       a.reason, process_index_ + 1, repetitions_in_process_)};
        repetitions_in_process_ = 0;
    }

    WorkerOutcome call(const nlohmann::json &request) {
        const double used = std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
        // At least a moment for each request, so a case that used up its
        // time still gets a clean "timed out" from the worker layer.
        WorkerOutcome o = active_->call(request, std::max(0.001, timeout_ - used));
        if (o.interrupted) interrupted_ = true;
        return o;
    }

    // The worker layer's cause, with the whole timeout (not the rest of it
    // that the last request had).
    std::string cause_of(const WorkerOutcome &o) const {
        if (o.failure.rfind("timed out", 0) != 0) return o.failure;
        return fmt::format("timed out after {:g} s in {}", timeout_, o.phase.empty() ? "start-up" : o.phase);
    }
    // The cause with the backend and case it cost.
    std::string reason_of(const WorkerOutcome &o) const {
        return fmt::format("{} (backend '{}', case {})", cause_of(o), job_.backend, job_.name);
    }

    std::vector<std::string> command_;
    std::string reference_;
    std::map<std::string, std::string> paths_;
    std::mutex mutex_; // guards workers_ and active_ against interrupt()
    // Each backend's pool of workers (as many as the most processes a case
    // has asked for); the first also answers the probes.
    std::map<std::string, std::vector<std::unique_ptr<WorkerProcess>>> workers_;
    // Per case name: the pool worker its next run of repetitions goes to.
    // Every run of repetitions (an activation, or a move when a worker has
    // had its share) takes the next in turn, so a case with at least
    // `processes` runs of repetitions uses that many workers.
    std::map<std::string, int> next_process_;
    WorkerProcess *active_ = nullptr;
    CaseJob job_;
    double timeout_ = 0;
    int repetitions_in_process_ = 0; // of the active case, in the current worker
    int process_index_ = 0;          // which worker of the pool runs the active case (0-based)
    int first_calls_per_sample_ = 0; // the batch the active case's first process chose; 0: not yet
    std::chrono::steady_clock::time_point started_;
    std::atomic<bool> interrupted_{false};
};

} // namespace

std::unique_ptr<CaseHost> make_in_process_host(BackendSessions &sessions, const std::string &reference,
                                               std::unique_ptr<JobKinds> kinds,
                                               std::function<void(std::string_view)> on_phase) {
    return std::make_unique<InProcessHost>(sessions, reference, std::move(kinds), std::move(on_phase),
                                           /*catch_exceptions=*/true);
}

std::unique_ptr<CaseHost> make_worker_host(std::vector<std::string> worker_command, std::string reference,
                                           std::map<std::string, std::string> plugin_paths) {
    return std::make_unique<WorkerHost>(std::move(worker_command), std::move(reference), std::move(plugin_paths));
}

int case_worker_main(int argc, char **argv, const JobKindsMaker &make_kinds) {
    if (argc != 6) {
        std::fprintf(stderr, "opbench __worker: started by opbench itself, not by hand\n");
        return 2;
    }
    PluginSet plugins;
    for (const char *path : {argv[3], argv[5]}) {
        if (!*path) continue;
        LoadResult loaded = load_plugin(path);
        // A variant (`--plugin onednn@base=FILE`): the backend file runs under its instance name.
        if (loaded.plugin && path == argv[3] && variant_backend(argv[2]) == loaded.plugin->name() &&
            std::string_view(argv[2]) != loaded.plugin->name())
            loaded.plugin->instance = argv[2];
        if (loaded.plugin && !plugins.find(loaded.plugin->name())) plugins.plugins.push_back(*loaded.plugin);
        if (loaded.failure) plugins.failures.push_back(*loaded.failure);
    }
    return serve_case_worker(plugins, argv[2], argv[4], make_kinds);
}

int serve_case_worker(const PluginSet &plugins, const std::string &backend, const std::string &reference,
                      const JobKindsMaker &make_kinds) {
    PhaseReporter *reporter = nullptr;
    std::unique_ptr<BackendSessions> sessions;
    std::unique_ptr<CaseHost> host;
    auto on_phase = [&](std::string_view p) {
        if (reporter) reporter->enter(p);
    };
    return serve_worker([&](const nlohmann::json &request, PhaseReporter &phase) -> nlohmann::json {
        reporter = &phase;
        if (!sessions) {
            // The instances report "create" and "probe" as each call begins.
            sessions =
                std::make_unique<BackendSessions>(open_backend_sessions(plugins, {backend}, reference, on_phase));
            // Exceptions are not caught here: a plugin that threw may be in
            // any state, so the worker reports the fault and is replaced.
            host = std::make_unique<InProcessHost>(*sessions, reference, make_kinds(), on_phase, /*catch_exceptions=*/false);
        }
        const std::string op = request.at("op").get<std::string>();
        if (op == "probe")
            return nlohmann::json(
                opbench::probe_backend(*sessions, backend, request.at("cases").get<std::vector<opb_op_desc>>(), on_phase));
        if (op == "call_overhead") {
            BackendInstance *be = sessions->usable(backend);
            if (!be) return nlohmann::json{{"seconds", nullptr}};
            phase.enter(backend_phase::call_overhead);
            const std::optional<double> seconds = measure_call_overhead(*be);
            return nlohmann::json{{"seconds", seconds ? nlohmann::json(*seconds) : nlohmann::json(nullptr)}};
        }
        if (op == "activate") return nlohmann::json(host->activate(request.at("job").get<CaseJob>()));
        if (op == "repetition") {
            try {
                return nlohmann::json{{"record", host->measure_repetition()}};
            } catch (const MeasureFailure &f) {
                return nlohmann::json{{"failure", {{"status", case_status_name(f.status)}, {"reason", f.reason}}}};
            }
        }
        if (op == "finish") return nlohmann::json(host->finish());
        throw std::invalid_argument("case worker: unknown request '" + op + "'");
    });
}

} // namespace opbench
