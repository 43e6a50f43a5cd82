// exit() called by plugin code running in opbench's own process (--isolate
// none, a profiling run, a workload) would end the run with the plugin's
// status, no result set and no message. opbench's executable interposes
// exit() (run/exit_interposer.cpp): while a run has armed a guard, the call
// goes to the guard instead, which records the case in progress as failed,
// writes the partial result set and exits 1 (docs/reliability.md).
#pragma once

#include <functional>

namespace opbench {

// The guard: does not return (it ends the process). An empty function disarms.
void arm_exit_guard(std::function<void(int status)> guard);

// Runs the armed guard, once; returns when none is armed (or it already ran),
// so the real exit() proceeds.
void run_exit_guard(int status);

} // namespace opbench
