// The decoder's components as profiler spans; see component_spans.hpp.
#include "workload/component_spans.hpp"

#include <algorithm>
#include <vector>

namespace opbench::workload {

void ComponentSpans::end(Component, int) {
    try {
        run_.synchronize(); // the component's work, not only its launches
    } catch (...) {
        profiler_.end();
        throw;
    }
    profiler_.end();
}

ComponentTimes component_times(const ScopeTree &tree) {
    ComponentTimes t;
    for (const ScopeNode &step : tree.nodes) {
        if (step.name != kStepSpan || step.kind != SpanKind::host) continue;
        t.steps += step.calls;
        t.step_seconds += step.total_s;
        t.unscoped_seconds += step.self_s;
        for (int c : step.children) {
            const ScopeNode &n = tree.nodes[std::size_t(c)];
            auto part = std::find_if(t.parts.begin(), t.parts.end(),
                                     [&](const ComponentTimes::Part &p) { return p.component == n.name; });
            if (part == t.parts.end()) part = t.parts.insert(t.parts.end(), {n.name});
            part->spans += n.calls;
            part->total_s += n.total_s;
            part->self_s += n.self_s;
        }
    }
    return t;
}

ComponentTimes scoped_component_times(DecoderPhaseWork &phase, int calls) {
    Profiler profiler;
    ComponentSpans spans(profiler, phase.run());
    phase.set_component_observer(&spans);
    struct Uninstall {
        DecoderPhaseWork &phase;
        ~Uninstall() { phase.set_component_observer(nullptr); }
    } uninstall{phase};
    const std::size_t step_mark = phase.step_seconds().size();
    std::vector<ComponentTimes> per_call;
    for (int i = 0; i < std::max(1, calls); ++i) {
        const std::size_t from = profiler.mark();
        phase.execute();
        phase.synchronize();
        per_call.push_back(component_times(build_scope_tree(profiler, from, profiler.mark())));
    }
    phase.drop_step_seconds_since(step_mark); // not timed calls
    // The call of median length: a call that a shared machine stalled in one
    // component is the longest, and would skew that component's share.
    std::sort(per_call.begin(), per_call.end(),
              [](const ComponentTimes &a, const ComponentTimes &b) { return a.step_seconds < b.step_seconds; });
    return per_call[(per_call.size() - 1) / 2];
}

} // namespace opbench::workload
