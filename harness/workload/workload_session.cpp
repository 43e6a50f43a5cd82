#include "workload/workload_session.hpp"

#include "workload/component_spans.hpp"

#include "measure/settings.hpp"
#include "measure/statistics.hpp"
#include "plugin/device_probe.hpp"
#include "plugin/memory_figures.hpp"

#include "opbench/ops.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstring>

namespace opbench::workload {

namespace {

MeasureFailure as_measure_failure(const WorkloadFailure &f) {
    return MeasureFailure{f.status == "skipped" ? CaseStatus::skipped : CaseStatus::failed, f.reason};
}

bool same_config(const DecoderConfig &a, const DecoderConfig &b) {
    // Plain data (suite/decoder_config.hpp): equal bytes, equal workload.
    return std::memcmp(&a, &b, sizeof a) == 0;
}

} // namespace

std::optional<MeasureFailure> workload_unsupported(BackendInstance &backend, const DecoderConfig &decoder) {
    try {
        DecoderRun probe(backend, decoder); // describes the steps; allocates nothing
        if (auto u = probe.unsupported()) return as_measure_failure(*u);
    } catch (const WorkloadFailure &f) {
        return as_measure_failure(f);
    }
    return std::nullopt;
}

const LayerOutputs &ReferenceLayerOutputs::get(BackendInstance *reference, const std::string &reference_name,
                                               const std::string &why_missing, const DecoderConfig &decoder) {
    if (!cached_ || !same_config(*cached_, decoder)) {
        cached_ = decoder;
        outputs_.clear();
        error_.clear();
        try {
            if (!reference) throw WorkloadFailure{"failed", why_missing};
            DecoderRun ref(*reference, decoder);
            if (auto u = ref.unsupported()) throw *u;
            outputs_ = capture_layer_outputs(ref);
        } catch (const WorkloadFailure &f) {
            error_ = "cannot verify: reference backend '" + reference_name + "': " + f.reason;
        }
    }
    if (!error_.empty()) throw MeasureFailure{CaseStatus::failed, error_};
    return outputs_;
}

// A decoder phase as the recipe's MeasuredWork; WorkloadFailure becomes MeasureFailure.
class WorkloadSession::Work final : public MeasuredWork {
public:
    Work(DecoderPhaseWork &work, BackendInstance &be, CacheEvictor *evictor)
        : work_(work), be_(be), evictor_(evictor) {}
    void prepare() override {
        guarded([&] { work_.prepare(); });
    }
    void execute() override {
        guarded([&] { work_.execute(); });
    }
    void synchronize() override {
        guarded([&] { work_.synchronize(); });
    }
    void flush_cache() override {
        if (evictor_) evictor_->evict();
        if (be_.api().flush_cache) be_.api().flush_cache(be_.handle());
        synchronize();
    }
    // The device's clock over each repetition, as an op case's (throttle.hpp,
    // issue 41): a phase whose clock fell is measured again, or `throttled`.
    double sustained_clock_mhz() override {
        if (sustained_mhz_ < 0) {
            sustained_mhz_ = opbench::sustained_clock_mhz(be_);
        }
        return sustained_mhz_;
    }
    void clock_begin() override { device_clock_begin(be_); }
    ClockReading clock_end() override { return device_clock_end(be_); }

private:
    template <class F>
    static void guarded(F &&f) {
        try {
            f();
        } catch (const WorkloadFailure &e) {
            throw as_measure_failure(e);
        }
    }
    DecoderPhaseWork &work_;
    BackendInstance &be_;
    CacheEvictor *evictor_;
    double sustained_mhz_ = -1; // read once; 0: no clock (never throttled)
};

// The memory figures of an op case (MemoryObserver), plus the allocations the
// plugin reported through on_alloc during the counted calls (recipe.hpp).
// The decode steps of a sample kept out of the statistics (a profiler's recorded one)
// are dropped from the step times too. Each phase is told to `on_phase`
// first (the worker reports it to its parent, for a fault's message).
class WorkloadSession::Observer final : public RecipeObserver {
public:
    Observer(BackendInstance &be, MemoryFigures &figures, DecoderPhaseWork &phase,
             const std::function<void(std::string_view)> &on_phase)
        : memory(be, figures), be_(be), phase_(phase), on_phase_(on_phase) {}
    void on_sample_begin(std::size_t, int) override { sample_steps_from_ = phase_.step_seconds().size(); }
    void on_sample_excluded(std::size_t) override { phase_.drop_step_seconds_since(sample_steps_from_); }
    void on_phase_begin(std::string_view phase) override {
        if (on_phase_) on_phase_(phase);
        memory.on_phase_begin(phase);
    }
    void on_phase_end(std::string_view phase) override { memory.on_phase_end(phase); }
    void on_counted_calls_begin() override {
        memory.on_counted_calls_begin();
        backend_allocs_before = be_.accounting().alloc_calls;
    }
    void on_counted_calls_end(int calls) override {
        memory.on_counted_calls_end(calls);
        backend_allocs_after = be_.accounting().alloc_calls;
        counted_calls = calls;
    }
    MemoryObserver memory;
    uint64_t backend_allocs_before = 0, backend_allocs_after = 0;
    int counted_calls = 0; // the calls between the two counts (0: none yet)

private:
    BackendInstance &be_;
    DecoderPhaseWork &phase_;
    const std::function<void(std::string_view)> &on_phase_;
    std::size_t sample_steps_from_ = 0;
};

WorkloadSession::WorkloadSession(BackendInstance &backend, WorkloadJob job, Setup setup)
    : backend_(backend), job_(std::move(job)), setup_(std::move(setup)) {}

WorkloadSession::~WorkloadSession() {
    // A profiled entry that did not finish (it failed) still ends its span.
    if (profiled_) (void)setup_.instrumentation->finish_case();
}

WorkloadActivation WorkloadSession::activate(const LayerOutputs &reference, double &nmse,
                                             PreparationRecord &preparation) {
    const DecoderConfig &c = job_.decoder;
    run_ = std::make_unique<DecoderRun>(backend_, c);
    phase_ = std::make_unique<DecoderPhaseWork>(*run_, job_.phase);
    work_ = std::make_unique<Work>(*phase_, backend_, setup_.evictor);
    observer_ = std::make_unique<Observer>(backend_, memory_, *phase_, setup_.on_phase);
    MeasuredWork *measured = work_.get();
    RecipeObserver *observer = observer_.get();
    if (CaseInstrumentation *instr = setup_.instrumentation) {
        // As an op case's: the component spans are installed while the
        // plugin's scopes record (the schedule's samples), so every other
        // call runs without them.
        spans_ = std::make_unique<ComponentSpans>(instr->profiler(), *run_);
        nlohmann::json args = {{"op", job_.kind},
                               {"workload", job_.workload},
                               {"phase", phase_name(job_.phase)},
                               {"backend", setup_.backend},
                               {"dtype", dtype_name(c.dtype)},
                               {"threads", c.threads},
                               {"params", decoder_shape_json(c)}};
        instr->begin(setup_.name, setup_.backend, std::move(args), backend_,
                     [phase = phase_.get(), spans = spans_.get()](bool on) {
                         phase->set_component_observer(on ? spans : nullptr);
                     });
        profiled_ = true;
        measured = &instr->wrap_work(*measured);
        observer = &instr->wrap_observer(*observer);
    }
    recipe_ = std::make_unique<Recipe>(*measured, setup_.settings,
                                       RecipeOptions{&steady_measure_clock(), observer, setup_.timer_overhead});
    const WorkloadTolerance tol = decoder_tolerance(c);
    WorkloadActivation a;
    preparation_ = recipe_->prepare([&](MeasuredWork &) {
        LayerComparison cmp;
        try {
            cmp = check_phase(*phase_, reference);
        } catch (const WorkloadFailure &f) {
            throw as_measure_failure(f);
        }
        nmse = cmp.worst_nmse;
        a.check_where = cmp.where();
        CheckVerdict v;
        v.error = cmp.worst_nmse;
        v.passed = cmp.worst_nmse <= tol.max_nmse;
        if (!v.passed)
            v.reason = fmt::format("verification failed: NMSE {:.3g} exceeds {:.3g} at {} ({})", cmp.worst_nmse,
                                   tol.max_nmse, cmp.where(), tol.why);
        return v;
    });
    preparation = preparation_;
    for (int s : phase_->steps()) {
        a.flops_per_call += run_->flops_in_step(s);
        a.bytes_per_call += run_->bytes_in_step(s);
    }
    a.tokens_per_call = phase_->tokens_per_call();
    a.tokens_per_unit = phase_->tokens_per_unit();
    return a;
}

RepetitionRecord WorkloadSession::measure_repetition() {
    if (!recipe_) throw MeasureFailure{CaseStatus::failed, "no active workload (it failed to prepare)"};
    phase_->clear_step_seconds();
    RepetitionRecord rec = recipe_->measure_repetition();
    // Units: a decode step each (timed inside the call), or the whole prefill.
    rec.unit_seconds = job_.phase == Phase::decode ? phase_->step_seconds() : rec.sample_times;
    call_seconds_.insert(call_seconds_.end(), rec.sample_times.begin(), rec.sample_times.end());
    return rec;
}

std::pair<MemoryFigures, WorkloadTail> WorkloadSession::finish() {
    WorkloadTail tail;
    // What the run's profile recorded of this entry (profiling runs only).
    std::optional<ComponentTimes> profiled;
    if (profiled_) {
        profiled_ = false;
        profiled = component_times(setup_.instrumentation->finish_case().tree);
    }
    if (!run_ || !recipe_) return {memory_, tail};
    observer_->memory.finish(preparation_, run_->footprint().workspace);
    tail.weight_bytes = run_->footprint().weights;
    tail.kv_cache_bytes = run_->footprint().kv_cache;
    tail.kv_bytes_per_token = run_->kv_bytes_per_token();
    tail.backend_allocs_per_call = double(observer_->backend_allocs_after - observer_->backend_allocs_before) /
                                   double(std::max(1, observer_->counted_calls));
    // Component shares from the component spans: the run's recorded samples
    // when it profiles, else scoped calls after the timed repetitions (not
    // in them): up to 5, within about max_time.
    try {
        if (profiled && profiled->steps > 0) {
            tail.components = *profiled;
            tail.components_from = "profile";
        } else {
            const double per_call = call_seconds_.empty() ? 0.0 : summarize(call_seconds_).median;
            const int calls = per_call > 0 ? std::clamp(int(setup_.settings.max_time / per_call), 1, 5) : 1;
            tail.components = scoped_component_times(*phase_, calls);
            tail.components_from = "scoped_calls";
        }
    } catch (const WorkloadFailure &f) {
        tail.failure = "component timing: " + f.reason;
    }
    const MemoryFigures memory = memory_;
    recipe_.reset();
    observer_.reset();
    work_.reset();
    phase_.reset();
    spans_.reset();
    run_.reset(); // frees the workload's buffers and plans before the next entry
    return {memory, tail};
}

namespace {

// A workload phase, active: its session, which releases what it made.
class ActiveWorkload final : public ActiveJob {
public:
    explicit ActiveWorkload(std::unique_ptr<WorkloadSession> session) : session_(std::move(session)) {}
    RepetitionRecord measure_repetition() override { return session_->measure_repetition(); }
    FinishRecord finish() override {
        auto [memory, tail] = session_->finish();
        return FinishRecord{memory, nlohmann::json(tail)};
    }

private:
    std::unique_ptr<WorkloadSession> session_;
};

class WorkloadJobs final : public JobKinds {
public:
    explicit WorkloadJobs(CaseInstrumentation *instrumentation) : instrumentation_(instrumentation) {}

    // The reference's layer outputs first, in its own instance (never in this
    // entry's memory figures), then the session's prepare, layer-by-layer
    // check, warm-up and batch choice.
    std::unique_ptr<ActiveJob> activate(const CaseJob &job, JobContext &context, Activation &a) override {
        const WorkloadJob w = job.detail.get<WorkloadJob>();
        BackendInstance &be = context.usable_or_throw(job.backend);
        if (auto u = workload_unsupported(be, w.decoder)) throw *u;
        context.enter(case_phase::reference);
        const auto reference_start = std::chrono::steady_clock::now();
        BackendSessions &sessions = context.sessions();
        const LayerOutputs &reference =
            references_.get(sessions.reference.get(), context.reference_name(), sessions.reference_missing, w.decoder);
        a.verify_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - reference_start).count();
        auto session = std::make_unique<WorkloadSession>(be, w, setup_of(job, context));
        // A workload is always checked against the reference, every layer
        // output of every step (whatever --verify says of op cases).
        double nmse = -1;
        a.checked = true;
        a.verification.mode = job.verify;
        a.verification.method = "layers";
        a.verification.reference = "computed";
        a.verification.max_nmse = decoder_tolerance(w.decoder).max_nmse;
        try {
            a.detail = session->activate(reference, nmse, a.preparation);
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
        return std::make_unique<ActiveWorkload>(std::move(session));
    }

private:
    WorkloadSession::Setup setup_of(const CaseJob &job, JobContext &context) const {
        WorkloadSession::Setup setup;
        setup.name = job.name;
        setup.backend = job.backend;
        setup.settings = job.settings;
        setup.timer_overhead = job.timer_overhead;
        setup.evictor = job.settings.cache == CacheState::cold ? &context.evictor() : nullptr;
        setup.on_phase = [&context](std::string_view p) { context.enter(case_phase_of(p)); };
        setup.instrumentation = instrumentation_;
        return setup;
    }

    CaseInstrumentation *instrumentation_;
    ReferenceLayerOutputs references_; // the last workload's: its phases and backends run one after another
};

} // namespace

std::unique_ptr<JobKinds> make_workload_jobs(CaseInstrumentation *instrumentation) {
    return std::make_unique<WorkloadJobs>(instrumentation);
}

} // namespace opbench::workload
