// Memory figures of one case on one backend (results.hpp MemoryFigures),
// gathered through the recipe's observer hooks: peaks are reset as
// `prepare` begins, heap allocations are counted over the counted calls
// (the first sample's: warm calls of the work as measured; recipe.hpp),
// and the peaks are read when the case ends.
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
    void on_counted_calls_begin() override;
    void on_counted_calls_end(int calls) override;

    // Fills the figures: heap allocations per counted call (per warm-up
    // call, which `preparation` counts, when no sample was taken) and the
    // peaks since `prepare` began. Call when the case is done, before
    // anything is released.
    void finish(const PreparationRecord &preparation, uint64_t workspace_bytes);

private:
    BackendInstance &be_;
    MemoryFigures &figures_;
    AllocCounters heap_before_{}, warmup_before_{}, warmup_after_{};
    AllocCounters counted_before_{}, counted_after_{};
    int counted_calls_ = 0; // 0: no counted calls yet
};

} // namespace opbench
