#include "run/entry_jobs.hpp"

#include "entry/op_case_job.hpp"
#include "workload/workload_session.hpp"

namespace opbench {
namespace {

class EntryJobs final : public JobKinds {
public:
    explicit EntryJobs(CaseInstrumentation *instrumentation)
        : op_cases_(make_op_case_jobs(instrumentation)), workloads_(workload::make_workload_jobs(instrumentation)) {}

    // A job with no detail is an op case; one with a detail, a workload phase.
    std::unique_ptr<ActiveJob> activate(const CaseJob &job, JobContext &context, Activation &a) override {
        return (job.detail.is_null() ? *op_cases_ : *workloads_).activate(job, context, a);
    }

private:
    std::unique_ptr<JobKinds> op_cases_, workloads_;
};

} // namespace

std::unique_ptr<JobKinds> make_entry_jobs(CaseInstrumentation *instrumentation) {
    return std::make_unique<EntryJobs>(instrumentation);
}

} // namespace opbench
