#include "measure/throttle.hpp"

namespace opbench {

ThrottleVerdict judge_throttle(const ClockReading &reading, double sustained_mhz) {
    ThrottleVerdict v;
    if (!(reading.sm_clock_mhz > 0) || !(sustained_mhz > 0)) return v; // nothing to judge by
    v.clock_share = reading.sm_clock_mhz / sustained_mhz;
    v.throttled = v.clock_share < kThrottledClockShare;
    return v;
}

} // namespace opbench
