// Memory figures of one case on one backend (results.hpp MemoryFigures),
// gathered through the recipe's observer hooks: peaks are reset as
// `prepare` begins, heap allocations are counted over `warmup`, and the
// peaks are read when the case ends.
#pragma once

#include "measure/alloc_tracker.hpp"
#include "plugin/plugin_loader.hpp"
#include "measure/recipe.hpp"
#include "measure/records.hpp"

namespace opbench {

class MemoryObserver final : public RecipeObserver {
public:
    MemoryObserver(BackendInstance &be, MemoryFigures &figures) : be_(be), figures_(figures) {}

    void on_phase_begin(std::string_view phase) override;
    void on_phase_end(std::string_view phase) override;

    // Fills the figures: heap allocations per warm-up call (the recipe's
    // `preparation` says how many calls) and the peaks since `prepare` began.
    // Call when the case is done, before anything is released.
    void finish(const PreparationRecord &preparation, uint64_t workspace_bytes);

private:
    BackendInstance &be_;
    MemoryFigures &figures_;
    AllocCounters heap_before_{}, warmup_before_{}, warmup_after_{};
};

} // namespace opbench
