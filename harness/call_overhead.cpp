#include "call_overhead.hpp"

#include "backend_work.hpp"
#include "statistics.hpp"

#include <chrono>

namespace opbench {

std::map<std::string, double> measure_call_overheads(const BackendSessions &sessions) {
    using Clock = std::chrono::steady_clock;
    const opb_op_desc tiny = call_overhead_desc();
    std::map<std::string, double> overhead;
    for (const auto &[name, inst] : sessions.backends) {
        if (!inst->usable() || inst->api().supports(inst->handle(), &tiny) != OPB_OK) continue;
        try {
            BackendTensors t(*inst, make_inputs(tiny, 1));
            PreparedPlan plan(*inst, tiny);
            std::vector<double> samples;
            for (int i = 0; i < 220; ++i) {
                const auto t0 = Clock::now();
                execute_once(*inst, plan.get(), t);
                synchronize(*inst);
                if (i >= 20) samples.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
            }
            overhead[name] = summarize(samples).median;
        } catch (const MeasureFailure &) {
            // No figure for this backend.
        }
    }
    return overhead;
}

} // namespace opbench
