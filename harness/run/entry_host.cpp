#include "run/entry_host.hpp"

#include "machine/bottleneck.hpp"

namespace opbench {

Roofline entry_roofline(const Entry &entry, double seconds, const RunFacts &facts) {
    const CallWork w = entry.call_work();
    const auto context = facts.backends.find(entry.backend());
    const auto overhead = facts.call_overhead_seconds.find(entry.backend());
    const bool warm_cache = entry.settings().cache == CacheState::warm;
    const EntryFacts id = entry.identity_facts(); // op, dtype, variant: which of a device's roofs judge it
    return roofline_for(w.flops, w.bytes, seconds, context != facts.backends.end() ? context->second : nlohmann::json(),
                        w.threads, facts.machine,
                        overhead != facts.call_overhead_seconds.end() ? overhead->second : 0.0, peak_kind(w.dtype),
                        warm_cache ? w.bytes : 0, RoofKey{id.op, id.dtype, id.variant});
}

} // namespace opbench
