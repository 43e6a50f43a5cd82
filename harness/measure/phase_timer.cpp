#include "measure/phase_timer.hpp"

namespace opbench {

void PhaseTimer::on_phase_begin(std::string_view phase) {
    started_[std::string(phase)] = clock_.now();
    if (next_) next_->on_phase_begin(phase);
}

void PhaseTimer::on_phase_end(std::string_view phase) {
    if (next_) next_->on_phase_end(phase);
    auto it = started_.find(phase);
    if (it == started_.end()) return;
    total_[std::string(phase)] += clock_.now() - it->second;
    started_.erase(it);
}

void PhaseTimer::on_sample_begin(std::size_t index, int calls) {
    if (next_) next_->on_sample_begin(index, calls);
}

void PhaseTimer::on_sample_end(std::size_t index, double seconds_per_call) {
    if (next_) next_->on_sample_end(index, seconds_per_call);
}

void PhaseTimer::on_sample_excluded(std::size_t index) {
    if (next_) next_->on_sample_excluded(index);
}

double PhaseTimer::seconds(std::string_view phase) const {
    auto it = total_.find(phase);
    return it == total_.end() ? 0.0 : it->second;
}

} // namespace opbench
