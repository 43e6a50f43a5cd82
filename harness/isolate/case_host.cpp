#include "isolate/case_host.hpp"
#include "plugin/plugin_variant.hpp"

#include "plugin/backend_work.hpp"
#include "plugin/call_overhead.hpp"
#include "plugin/memory_figures.hpp"
#include "measure/phase_timer.hpp"
#include "measure/recipe.hpp"
#include "check/reference_cache.hpp"
#include "check/reference_store.hpp"
#include "workload/workload_session.hpp"

#include "opbench/ops.hpp"

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

int repetitions_per_process(const MeasureSettings &s) {
    const int reps = std::max(1, s.repetitions);
    return (reps + kProcessesPerCase - 1) / kProcessesPerCase;
}

double case_timeout_seconds(const MeasureSettings &s) {
    if (s.timeout > 0) return s.timeout;
    return 60.0 + 10.0 * double(std::max(1, s.repetitions)) * s.max_time;
}

// ---- in this process ----------------------------------------------------------------

namespace {

// Passes the recipe's hooks on to the memory observer, and tells `on_phase`
// each phase as it begins (before the memory observer's snapshot, so the
// report's own allocation is not the case's).
class PhaseObserver final : public RecipeObserver {
public:
    PhaseObserver(RecipeObserver &inner, std::function<void(std::string_view)> &on_phase, std::string &current)
        : inner_(inner), on_phase_(on_phase), current_(current) {}
    void on_phase_begin(std::string_view p) override {
        current_ = std::string(case_phase_of(p));
        if (on_phase_) on_phase_(current_);
        inner_.on_phase_begin(p);
    }
    void on_phase_end(std::string_view p) override { inner_.on_phase_end(p); }
    void on_sample_begin(std::size_t i, int calls) override { inner_.on_sample_begin(i, calls); }
    void on_sample_end(std::size_t i, double s) override { inner_.on_sample_end(i, s); }
    void on_sample_excluded(std::size_t i) override { inner_.on_sample_excluded(i); }

private:
    RecipeObserver &inner_;
    std::function<void(std::string_view)> &on_phase_;
    std::string &current_;
};

class InProcessHost final : public CaseHost {
public:
    InProcessHost(BackendSessions &sessions, const std::string &reference,
                  std::function<void(std::string_view)> on_phase, bool catch_exceptions,
                  CaseInstrumentation *instrumentation = nullptr)
        : sessions_(sessions), reference_(sessions.reference.get(), reference, sessions.reference_missing),
          on_phase_(std::move(on_phase)), catch_exceptions_(catch_exceptions), instrumentation_(instrumentation),
          reference_name_(reference) {}

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
        release();
        job_ = job;
        if (job_.workload) return activate_workload();
        Activation a;
        try {
            activate_op(a);
        } catch (const MeasureFailure &f) {
            a.status = f.status;
            a.reason = f.reason;
            if (work_) a.workspace_bytes = work_->workspace_bytes();
            release();
        } catch (const std::exception &e) {
            if (!catch_exceptions_) throw;
            a.status = CaseStatus::failed;
            a.reason = fmt::format("exception: {} in {}", e.what(), phase_);
            release();
        }
        return a;
    }

    RepetitionRecord measure_repetition() override {
        if (!recipe_ && !workload_) throw MeasureFailure{CaseStatus::failed, "no active case (it failed to prepare)"};
        try {
            return workload_ ? workload_->measure_repetition() : recipe_->measure_repetition();
        } catch (const MeasureFailure &) {
            throw;
        } catch (const std::exception &e) {
            if (!catch_exceptions_) throw;
            throw MeasureFailure{CaseStatus::failed, fmt::format("exception: {} in {}", e.what(), phase_)};
        }
    }

    FinishRecord finish() override {
        FinishRecord out;
        if (workload_) {
            enter(case_phase::finish);
            auto [memory, tail] = workload_->finish();
            out.memory = memory;
            out.workload = std::move(tail);
        } else if (work_ && memory_) {
            enter(case_phase::finish);
            memory_->finish(preparation_, work_->workspace_bytes());
            out.memory = figures_;
        }
        release();
        return out;
    }

private:
    // An op case: the reference's outputs (when the check needs them), the
    // backend's work under a recipe, and the recipe's preparation, which
    // verifies. Throws MeasureFailure.
    void activate_op(Activation &a) {
        BackendInstance *be = usable_or_throw(job_.backend);
        const OpInfo *row = op_info(job_.desc.op);
        const FastCheckFn fast_check = row ? row->fast_check : nullptr;
        const HostBuffers *reference = reference_outputs(a, fast_check);
        const HostTensors &host = reference_.inputs(job_.case_index, job_.desc);
        make_recipe(*be, host);
        const Verifier verifier = make_verifier(a, host, reference, fast_check);
        try {
            a.preparation = recipe_->prepare(verifier);
        } catch (const MeasureFailure &) {
            record_phase_times(a);
            throw;
        }
        record_phase_times(a);
        a.workspace_bytes = work_->workspace_bytes();
        preparation_ = a.preparation;
    }

    // The check the mode calls for: fast mode runs the reference only for ops
    // without a fast check (the linear ones, checked in full). The reference
    // runs first, in its own instance, so it never shows in this case's
    // memory figures. Null when no reference is needed.
    const HostBuffers *reference_outputs(Activation &a, FastCheckFn fast_check) {
        const VerifyMode mode = job_.verify;
        const bool needs_reference = mode == VerifyMode::full || (mode == VerifyMode::fast && !fast_check);
        use_reference_store(job_);
        enter(case_phase::reference);
        const auto reference_start = std::chrono::steady_clock::now();
        const HostBuffers *reference = needs_reference ? &reference_.outputs(job_.case_index, job_.desc) : nullptr;
        a.verify_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - reference_start).count();
        if (store_ && !store_->last_problem().empty()) a.reference_problem = store_->last_problem();
        return reference;
    }

    // The backend's work and the recipe that measures it, with the memory
    // and phase observers (and the instrumentation's wrappers). The
    // evictor's buffer is made once, outside the case's memory figures.
    void make_recipe(BackendInstance &be, const HostTensors &host) {
        if (job_.settings.cache == CacheState::cold && !evictor_) evictor_ = std::make_unique<CacheEvictor>();
        figures_ = MemoryFigures{};
        work_ = std::make_unique<BackendWork>(be, job_.desc, host, evictor_.get());
        memory_ = std::make_unique<MemoryObserver>(be, figures_);
        observer_ = std::make_unique<PhaseObserver>(*memory_, on_phase_, phase_);
        phases_ = std::make_unique<PhaseTimer>(observer_.get());
        MeasuredWork *measured = work_.get();
        RecipeObserver *observer = phases_.get();
        if (instrumentation_) {
            instrumentation_->case_begin(job_, be);
            instrumented_ = true;
            measured = &instrumentation_->wrap_work(*work_);
            observer = &instrumentation_->wrap_observer(*observer_);
        }
        recipe_ = std::make_unique<Recipe>(*measured, job_.settings,
                                           RecipeOptions{&steady_measure_clock(), observer, job_.timer_overhead});
    }

    // What the recipe's preparation calls to check the outputs; it records
    // the verification in `a` (which must outlive the preparation). Empty
    // with --verify off (recorded as off: unverified).
    Verifier make_verifier(Activation &a, const HostTensors &host, const HostBuffers *reference,
                           FastCheckFn fast_check) {
        const VerifyMode mode = job_.verify;
        a.verification.mode = mode;
        if (mode == VerifyMode::off) {
            a.verification.method = "none";
            a.checked = true;
            return {};
        }
        return [this, &a, &host, reference, fast_check, mode](MeasuredWork &) {
            a.checked = true;
            const HostBuffers outputs = work_->outputs();
            VerifyRequest rq;
            rq.mode = mode;
            rq.desc = &job_.desc;
            rq.host = &host;
            rq.outputs = &outputs;
            rq.fast_check = fast_check;
            rq.seed = job_.check_seed;
            rq.tolerance = tolerance_for(job_.desc);
            rq.reference = [this, reference](std::string &source) -> const HostBuffers & {
                source = reference_.source();
                return *reference;
            };
            a.verification = verify_outputs(rq);
            if (a.verification.nmse) a.nmse = *a.verification.nmse; // recorded for a failed check too
            return CheckVerdict{a.verification.verified, a.verification.nmse.value_or(-1.0), a.verification.failure};
        };
    }

    // A workload phase (job_.workload): the reference's layer outputs first,
    // in its own instance (never in this entry's memory figures), then the
    // session's prepare, layer-by-layer check, warm-up and batch choice.
    Activation activate_workload() {
        Activation a;
        const workload::WorkloadJob &w = *job_.workload;
        try {
            BackendInstance *be = usable_or_throw(job_.backend);
            if (auto u = workload::workload_unsupported(*be, w.decoder)) throw *u;
            enter(case_phase::reference);
            const auto reference_start = std::chrono::steady_clock::now();
            const workload::LayerOutputs &reference = workload_references_.get(
                sessions_.reference.get(), reference_name_, sessions_.reference_missing, w.decoder);
            a.verify_seconds =
                std::chrono::duration<double>(std::chrono::steady_clock::now() - reference_start).count();
            if (job_.settings.cache == CacheState::cold && !evictor_) evictor_ = std::make_unique<CacheEvictor>();
            workload::WorkloadSession::Setup setup;
            setup.name = job_.name;
            setup.backend = job_.backend;
            setup.settings = job_.settings;
            setup.timer_overhead = job_.timer_overhead;
            setup.evictor = evictor_.get();
            setup.on_phase = [this](std::string_view p) { enter(case_phase_of(p)); };
            setup.instrumentation = instrumentation_;
            workload_ = std::make_unique<workload::WorkloadSession>(*be, w, std::move(setup));
            // A workload is always checked against the reference, every layer
            // output of every step (whatever --verify says of op cases).
            double nmse = -1;
            a.checked = true;
            a.verification.mode = job_.verify;
            a.verification.method = "layers";
            a.verification.reference = "computed";
            a.verification.max_nmse = workload::decoder_tolerance(w.decoder).max_nmse;
            try {
                a.workload = workload_->activate(reference, nmse, a.preparation);
            } catch (const MeasureFailure &f) {
                a.nmse = nmse;
                a.checked = nmse >= 0; // reached the check (else it failed before it)
                if (a.checked) a.verification.nmse = nmse;
                a.verification.failure = f.reason;
                throw;
            }
            a.nmse = nmse;
            a.verification.nmse = nmse;
            a.verification.verified = true;
        } catch (const MeasureFailure &f) {
            a.status = f.status;
            a.reason = f.reason;
            release();
        } catch (const std::exception &e) {
            if (!catch_exceptions_) throw;
            a.status = CaseStatus::failed;
            a.reason = fmt::format("exception: {} in {}", e.what(), phase_);
            release();
        }
        return a;
    }

    BackendInstance *usable_or_throw(const std::string &backend) {
        if (BackendInstance *be = sessions_.usable(backend)) return be;
        auto it = sessions_.missing.find(backend);
        throw MeasureFailure{CaseStatus::skipped,
                             it != sessions_.missing.end() ? it->second : fmt::format("backend '{}' is not open", backend)};
    }

    // Full mode: references kept on disk across runs, when the run asks.
    void use_reference_store(const CaseJob &job) {
        if (job.verify != VerifyMode::full || job.reference_store_dir.empty() || store_) return;
        store_ = std::make_unique<ReferenceStore>(job.reference_store_dir, ReferenceStore::kDefaultMaxBytes);
        reference_.use_store(store_.get(), job.reference_store_key);
    }
    void record_phase_times(Activation &a) const {
        a.prepare_seconds = phases_->seconds(phase::prepare);
        a.verify_seconds += phases_->seconds(phase::check);
    }
    void enter(std::string_view p) {
        phase_ = std::string(p);
        if (on_phase_) on_phase_(phase_);
    }
    void release() {
        workload_.reset();
        recipe_.reset();
        if (instrumented_) instrumentation_->case_end();
        instrumented_ = false;
        phases_.reset();
        observer_.reset();
        memory_.reset();
        if (work_) work_->release();
        work_.reset();
    }

    BackendSessions &sessions_;
    ReferenceCache reference_;
    std::function<void(std::string_view)> on_phase_;
    bool catch_exceptions_;
    std::string phase_;
    CaseJob job_; // outlives work_, which refers to its description
    std::unique_ptr<CacheEvictor> evictor_;
    MemoryFigures figures_;
    PreparationRecord preparation_;
    std::unique_ptr<BackendWork> work_;
    std::unique_ptr<MemoryObserver> memory_;
    std::unique_ptr<PhaseObserver> observer_;
    std::unique_ptr<PhaseTimer> phases_;    // prepare and check times (the run's summary line)
    std::unique_ptr<ReferenceStore> store_; // full mode's references on disk
    std::unique_ptr<Recipe> recipe_;
    CaseInstrumentation *instrumentation_;
    bool instrumented_ = false; // a case began in instrumentation_ and has not ended
    std::string reference_name_;
    workload::ReferenceLayerOutputs workload_references_;
    std::unique_ptr<workload::WorkloadSession> workload_; // the active workload entry, if one is
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
        if (o.ok) return o.reply.get<Activation>();
        Activation a;
        a.status = CaseStatus::failed;
        a.reason = reason_of(o);
        return a;
    }

    RepetitionRecord measure_repetition() override {
        // A workload stays in one process: its layer check and whole-model
        // figures belong to the process that prepared it.
        if (!job_.workload && repetitions_in_process_ == repetitions_per_process(job_.settings))
            move_to_next_process();
        ++repetitions_in_process_;
        WorkerOutcome o = call(nlohmann::json{{"op", "repetition"}});
        if (!o.ok) throw MeasureFailure{CaseStatus::failed, reason_of(o)};
        if (o.reply.contains("failure"))
            throw MeasureFailure{
                case_status_from_name(o.reply["failure"].at("status").get<std::string>()).value_or(CaseStatus::failed),
                o.reply["failure"].at("reason").get<std::string>()};
        auto record = o.reply.at("record").get<RepetitionRecord>();
        record.process = process_index_;
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

private:
    int next_process_of_case() {
        int &next = next_process_[job_.name];
        const int index = next;
        next = (next + 1) % kProcessesPerCase;
        return index;
    }

    // Makes worker `index` of `backend`'s pool the active one (started on
    // its first request).
    void use_worker(const std::string &backend, int index) {
        std::lock_guard lock(mutex_);
        auto &pool = workers_[backend];
        if (pool.size() < kProcessesPerCase) pool.resize(kProcessesPerCase);
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
    // own memory layout and runtime state (case_host.hpp, kProcessesPerCase).
    // Its inputs and code are those the first process verified, so it is not
    // checked again. The worker left releases the case (its memory).
    void move_to_next_process() {
        (void)call(nlohmann::json{{"op", "finish"}}); // a fault here shows on that worker's next request
        process_index_ = next_process_of_case();
        use_worker(job_.backend, process_index_);
        CaseJob again = job_;
        again.verify = VerifyMode::off;
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
    // Each backend's pool of kProcessesPerCase workers; the first also
    // answers the probes.
    std::map<std::string, std::vector<std::unique_ptr<WorkerProcess>>> workers_;
    // Per case name: the pool worker its next run of repetitions goes to.
    // Every run of repetitions (an activation, or a move when a worker has
    // had its share) takes the next in turn, so a case with at least
    // kProcessesPerCase runs of repetitions uses every worker.
    std::map<std::string, int> next_process_;
    WorkerProcess *active_ = nullptr;
    CaseJob job_;
    double timeout_ = 0;
    int repetitions_in_process_ = 0; // of the active case, in the current worker
    int process_index_ = 0;          // which worker of the pool runs the active case (0-based)
    std::chrono::steady_clock::time_point started_;
    std::atomic<bool> interrupted_{false};
};

} // namespace

std::unique_ptr<CaseHost> make_in_process_host(BackendSessions &sessions, const std::string &reference,
                                               std::function<void(std::string_view)> on_phase,
                                               CaseInstrumentation *instrumentation) {
    return std::make_unique<InProcessHost>(sessions, reference, std::move(on_phase), /*catch_exceptions=*/true,
                                           instrumentation);
}

std::unique_ptr<CaseHost> make_worker_host(std::vector<std::string> worker_command, std::string reference,
                                           std::map<std::string, std::string> plugin_paths) {
    return std::make_unique<WorkerHost>(std::move(worker_command), std::move(reference), std::move(plugin_paths));
}

int case_worker_main(int argc, char **argv) {
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
    return serve_case_worker(plugins, argv[2], argv[4]);
}

int serve_case_worker(const PluginSet &plugins, const std::string &backend, const std::string &reference) {
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
            host = std::make_unique<InProcessHost>(*sessions, reference, on_phase, /*catch_exceptions=*/false);
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
