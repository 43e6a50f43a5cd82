#include "profile_observer.hpp"

namespace opbench {

void ProfiledWork::execute() {
    session_.call_begin("execute");
    struct End {
        ProfileSession &s;
        ~End() { s.call_end(); } // also when execute throws
    } end{session_};
    inner_.execute();
}

void ProfiledWork::synchronize() {
    session_.call_begin("synchronize");
    struct End {
        ProfileSession &s;
        ~End() { s.call_end(); }
    } end{session_};
    inner_.synchronize();
}

double ProfiledWork::device_timer_stop() {
    last_device_seconds_ = inner_.device_timer_stop();
    return last_device_seconds_;
}

std::string_view span_name_of_phase(std::string_view phase) {
    return phase == phase::sample ? std::string_view("repetition") : phase;
}

void ProfilingObserver::on_phase_begin(std::string_view phase) {
    session_.phase_begin(span_name_of_phase(phase));
    if (next_) next_->on_phase_begin(phase);
}

void ProfilingObserver::on_phase_end(std::string_view phase) {
    if (next_) next_->on_phase_end(phase);
    session_.phase_end();
}

void ProfilingObserver::on_sample_begin(std::size_t index, int calls) {
    recorded_ = session_.sample_begin();
    if (next_) next_->on_sample_begin(index, calls);
}

void ProfilingObserver::on_sample_end(std::size_t index, double seconds_per_call) {
    if (next_) next_->on_sample_end(index, seconds_per_call);
    std::optional<double> device;
    if (recorded_ && work_ && work_->last_device_seconds() >= 0) device = work_->last_device_seconds();
    session_.sample_end(device);
    recorded_ = false;
}

} // namespace opbench
