#include "entry/op_case_job.hpp"

#include "check/reference_cache.hpp"
#include "check/reference_store.hpp"
#include "measure/phase_timer.hpp"
#include "measure/recipe.hpp"
#include "plugin/backend_work.hpp"
#include "plugin/memory_figures.hpp"

#include "opbench/ops.hpp"

#include <fmt/format.h>

#include <chrono>
#include <stdexcept>

namespace opbench {
namespace {

// Passes the recipe's hooks on to the memory observer, and tells the host
// each phase as it begins (before the memory observer's snapshot, so the
// report's own allocation is not the case's).
class PhaseObserver final : public RecipeObserver {
public:
    PhaseObserver(RecipeObserver &inner, JobContext &context) : inner_(inner), context_(context) {}
    void on_phase_begin(std::string_view p) override {
        context_.enter(case_phase_of(p));
        inner_.on_phase_begin(p);
    }
    void on_phase_end(std::string_view p) override { inner_.on_phase_end(p); }
    void on_sample_begin(std::size_t i, int calls) override { inner_.on_sample_begin(i, calls); }
    void on_sample_end(std::size_t i, double s) override { inner_.on_sample_end(i, s); }
    void on_sample_excluded(std::size_t i) override { inner_.on_sample_excluded(i); }
    void on_counted_calls_begin() override { inner_.on_counted_calls_begin(); }
    void on_counted_calls_end(int calls) override { inner_.on_counted_calls_end(calls); }

private:
    RecipeObserver &inner_;
    JobContext &context_;
};

// What outlives one op case: the inputs and reference outputs, and full
// mode's references on disk.
struct OpReferences {
    std::unique_ptr<ReferenceCache> cache;
    std::unique_ptr<ReferenceStore> store;

    // Full mode: references kept on disk across runs, when the run asks.
    void use_store(const CaseJob &job) {
        if (job.verify != VerifyMode::full || job.reference_store_dir.empty() || store) return;
        store = std::make_unique<ReferenceStore>(job.reference_store_dir, ReferenceStore::kDefaultMaxBytes);
        cache->use_store(store.get(), job.reference_store_key);
    }
};

// One op case, active: the backend's work, the recipe that measures it,
// with the memory and phase observers (and the instrumentation's wrappers).
class ActiveOpCase final : public ActiveJob {
public:
    ActiveOpCase(const CaseJob &job, JobContext &context, OpReferences &references,
                 CaseInstrumentation *instrumentation)
        : job_(job), context_(context), references_(references), instrumentation_(instrumentation) {}
    ~ActiveOpCase() override {
        recipe_.reset();
        if (instrumented_) instrumentation_->case_end();
        phases_.reset();
        observer_.reset();
        memory_.reset();
        if (work_) work_->release();
    }

    // Throws MeasureFailure (with the workspace recorded in `a` once known).
    void activate(Activation &a) {
        try {
            activate_op(a);
        } catch (const MeasureFailure &) {
            if (work_) a.workspace_bytes = work_->workspace_bytes();
            throw;
        }
    }

    RepetitionRecord measure_repetition() override { return recipe_->measure_repetition(); }

    FinishRecord finish() override {
        FinishRecord out;
        if (!work_ || !memory_) return out;
        memory_->finish(preparation_, work_->workspace_bytes());
        out.memory = figures_;
        return out;
    }

private:
    void activate_op(Activation &a);
    const HostBuffers *reference_outputs(Activation &a, FastCheckFn fast_check);
    void make_recipe(BackendInstance &be, const HostTensors &host);
    Verifier make_verifier(Activation &a, const HostTensors &host, const HostBuffers *reference,
                           FastCheckFn fast_check);
    void record_phase_times(Activation &a) const {
        a.prepare_seconds = phases_->seconds(phase::prepare);
        a.verify_seconds += phases_->seconds(phase::check);
    }

    CaseJob job_; // outlives work_, which refers to its description
    JobContext &context_;
    OpReferences &references_;
    CaseInstrumentation *instrumentation_;
    bool instrumented_ = false; // the case began in instrumentation_ and has not ended
    MemoryFigures figures_;
    PreparationRecord preparation_;
    std::unique_ptr<BackendWork> work_;
    std::unique_ptr<MemoryObserver> memory_;
    std::unique_ptr<PhaseObserver> observer_;
    std::unique_ptr<PhaseTimer> phases_; // prepare and check times (the run's summary line)
    std::unique_ptr<Recipe> recipe_;
};

// The reference's outputs (when the check needs them), the backend's work
// under a recipe, and the recipe's preparation, which verifies.
void ActiveOpCase::activate_op(Activation &a) {
    BackendInstance &be = context_.usable_or_throw(job_.backend);
    const OpInfo *row = op_info(job_.desc.op);
    const FastCheckFn fast_check = row ? row->fast_check : nullptr;
    const HostBuffers *reference = reference_outputs(a, fast_check);
    const auto inputs_start = std::chrono::steady_clock::now(); // made here unless the reference made them
    const HostTensors &host = references_.cache->inputs(job_.case_index, job_.desc);
    a.inputs_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - inputs_start).count();
    make_recipe(be, host);
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
const HostBuffers *ActiveOpCase::reference_outputs(Activation &a, FastCheckFn fast_check) {
    const VerifyMode mode = job_.verify;
    const bool needs_reference = mode == VerifyMode::full || (mode == VerifyMode::fast && !fast_check);
    references_.use_store(job_);
    context_.enter(case_phase::reference);
    const auto reference_start = std::chrono::steady_clock::now();
    const HostBuffers *reference =
        needs_reference ? &references_.cache->outputs(job_.case_index, job_.desc) : nullptr;
    a.verify_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - reference_start).count();
    if (references_.store && !references_.store->last_problem().empty())
        a.reference_problem = references_.store->last_problem();
    return reference;
}

// The evictor's buffer is the host's, made once, outside the case's memory figures.
void ActiveOpCase::make_recipe(BackendInstance &be, const HostTensors &host) {
    CacheEvictor *evictor = job_.settings.cache == CacheState::cold ? &context_.evictor() : nullptr;
    figures_ = MemoryFigures{};
    work_ = std::make_unique<BackendWork>(be, job_.desc, host, evictor);
    memory_ = std::make_unique<MemoryObserver>(be, figures_);
    observer_ = std::make_unique<PhaseObserver>(*memory_, context_);
    phases_ = std::make_unique<PhaseTimer>(observer_.get());
    MeasuredWork *measured = work_.get();
    RecipeObserver *observer = phases_.get();
    if (instrumentation_) {
        instrumentation_->case_begin(job_.name, job_.backend, job_.desc, be);
        instrumented_ = true;
        measured = &instrumentation_->wrap_work(*work_);
        observer = &instrumentation_->wrap_observer(*observer_);
    }
    recipe_ = std::make_unique<Recipe>(*measured, job_.settings,
                                       RecipeOptions{&steady_measure_clock(), observer, job_.timer_overhead,
                                                    job_.calls_per_sample});
}

// What the recipe's preparation calls to check the outputs; it records
// the verification in `a` (which must outlive the preparation). Empty
// with --verify off (recorded as off: unverified).
Verifier ActiveOpCase::make_verifier(Activation &a, const HostTensors &host, const HostBuffers *reference,
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
            source = references_.cache->source();
            return *reference;
        };
        a.verification = verify_outputs(rq);
        if (a.verification.nmse) a.nmse = *a.verification.nmse; // recorded for a failed check too
        return CheckVerdict{a.verification.verified, a.verification.nmse.value_or(-1.0), a.verification.failure};
    };
}

class OpCaseJobs final : public JobKinds {
public:
    explicit OpCaseJobs(CaseInstrumentation *instrumentation) : instrumentation_(instrumentation) {}

    std::unique_ptr<ActiveJob> activate(const CaseJob &job, JobContext &context, Activation &a) override {
        if (!job.detail.is_null())
            throw std::invalid_argument(fmt::format("case {}: not an op case (its job has a detail)", job.name));
        if (!references_.cache) {
            BackendSessions &s = context.sessions();
            references_.cache =
                std::make_unique<ReferenceCache>(s.reference.get(), context.reference_name(), s.reference_missing);
        }
        auto active = std::make_unique<ActiveOpCase>(job, context, references_, instrumentation_);
        active->activate(a); // on a throw, `active` releases what it made
        return active;
    }

private:
    CaseInstrumentation *instrumentation_;
    OpReferences references_;
};

} // namespace

std::unique_ptr<JobKinds> make_op_case_jobs(CaseInstrumentation *instrumentation) {
    return std::make_unique<OpCaseJobs>(instrumentation);
}

} // namespace opbench
