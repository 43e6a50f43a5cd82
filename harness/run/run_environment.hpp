// The process around a run: CPU pinning and the warnings about things that
// spoil numbers.
#pragma once

#include <string>
#include <vector>

namespace opbench {

// Pins the whole process (and every thread it starts later) to `cpus`.
// Call before plugins are loaded: OpenMP runtimes read the mask when they load.
// Throws std::runtime_error naming the CPUs when the kernel refuses.
void pin_process_to_cpus(const std::vector<int> &cpus);

// Things that spoil numbers, in the spirit of Google Benchmark's warnings:
// a non-release build, CPU frequency scaling, a loaded machine.
[[nodiscard]] std::vector<std::string> measurement_warnings();

} // namespace opbench
