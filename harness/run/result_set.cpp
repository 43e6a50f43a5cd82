#include "run/result_set.hpp"

#include "run/context.hpp"

namespace opbench {

nlohmann::json run_context_json(const RunContext &c) {
    nlohmann::json ctx = opbench_context(*c.suite, *c.cases, *c.backends, *c.unavailable, c.reference_backend,
                                         c.benchmark_args, c.timer_overhead_seconds);
    ctx["machine_peaks"] = c.machine->peaks;
    ctx["machine_peaks_cache"] = c.machine->path.string();
    ctx["measurement"]["call_overhead_seconds"] = c.call_overhead_seconds;
    ctx["measurement"]["cpus"] = c.cpus;
    ctx["warnings"] = c.warnings;
    // A profiling run says so: its timings are not to be mixed with plain runs'.
    ctx["profiling"] = c.profiling ? c.profiling->options().context() : nlohmann::json{{"enabled", false}};
    if (c.shard) ctx["shard"] = {{"index", c.shard->index}, {"count", c.shard->count}};
    return ctx;
}

void add_run_analysis(nlohmann::json &result_set) {
    store_case_fields_once(result_set); // the entry loop wrote per-case fields on every repetition
}

} // namespace opbench
