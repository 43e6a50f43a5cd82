// The decoder's components as profiler spans; see component_spans.hpp.
#include "component_spans.hpp"

#include <algorithm>

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
    for (int i = 0; i < std::max(1, calls); ++i) {
        phase.execute();
        phase.synchronize();
    }
    phase.drop_step_seconds_since(step_mark); // not timed calls
    return component_times(build_scope_tree(profiler, 0, profiler.mark()));
}

} // namespace opbench::workload
