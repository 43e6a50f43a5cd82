// What an end-to-end test may expect of a case that ran through the real
// program, when the test checks anything but timing.
//
// Such a case ends "passed", or "starved" when the machine was so busy that
// every repetition's threads waited for a CPU (harness/measure/starvation.hpp):
// a starved entry is verified and keeps its memory figures and repetitions,
// but has no time of the op. Which of the two a case gets depends on the
// machine's load, never on the code under test, so a test that asserted
// "passed" would fail on a busy CI machine. Checks of the time itself belong
// under `status == "passed"`.
#pragma once

#include <string_view>

namespace opbench::test {

inline bool ran_to_the_end(std::string_view status) { return status == "passed" || status == "starved"; }

} // namespace opbench::test
