// Where a case's wall time goes: a recipe observer that times the recipe's
// phases (prepare, check, warm up, choose batch, sample, summarise) on the
// recipe's clock and passes every callback on to another observer (memory
// accounting), so both can watch one recipe.
#pragma once

#include "measure/recipe.hpp"

#include <map>
#include <string>
#include <string_view>

namespace opbench {

class PhaseTimer final : public RecipeObserver {
public:
    // `next` may be null.
    explicit PhaseTimer(RecipeObserver *next, MeasureClock &clock = steady_measure_clock())
        : next_(next), clock_(clock) {}

    void on_phase_begin(std::string_view phase) override;
    void on_phase_end(std::string_view phase) override;
    void on_sample_begin(std::size_t index, int calls) override;
    void on_sample_end(std::size_t index, double seconds_per_call) override;
    void on_sample_excluded(std::size_t index) override;
    void on_counted_calls_begin() override {
        if (next_) next_->on_counted_calls_begin();
    }
    void on_counted_calls_end(int calls) override {
        if (next_) next_->on_counted_calls_end(calls);
    }

    // Seconds spent in `phase` so far, over all its occurrences (0 if never).
    [[nodiscard]] double seconds(std::string_view phase) const;

private:
    RecipeObserver *next_;
    MeasureClock &clock_;
    std::map<std::string, double, std::less<>> total_, started_;
};

} // namespace opbench
