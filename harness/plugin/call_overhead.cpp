#include "plugin/call_overhead.hpp"

#include "plugin/backend_work.hpp"
#include "measure/statistics.hpp"

#include <chrono>

namespace opbench {

std::optional<double> measure_call_overhead(BackendInstance &be) {
    using Clock = std::chrono::steady_clock;
    const opb_op_desc tiny = call_overhead_desc();
    if (!be.usable() || be.api().supports(be.handle(), &tiny) != OPB_OK) return std::nullopt;
    try {
        BackendTensors t(be, make_inputs(tiny, 1));
        PreparedPlan plan(be, tiny);
        std::vector<double> samples;
        for (int i = 0; i < 220; ++i) {
            const auto t0 = Clock::now();
            execute_once(be, plan.get(), t);
            synchronize(be);
            if (i >= 20) samples.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
        }
        return summarize(samples).median;
    } catch (const MeasureFailure &) {
        return std::nullopt; // no figure for this backend
    }
}

} // namespace opbench
