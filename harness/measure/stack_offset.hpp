// Memory-layout bias, and how a run samples it instead of freezing one draw.
//
// A kernel's time can depend on where its stack frames fall relative to its
// buffers (4 KiB aliasing between stack spills and operand streams, cache-set
// conflicts). The stack's start moves with ASLR and with the size of the
// environment, so one process measures one layout: seen on this project's
// AMD EPYC VM, a oneDNN op on a 2x16x64 tensor ran at 1.05-1.15 us in most processes
// and 1.67 us in some, tight within each (0.2-2% noise), and an environment
// 1000 bytes longer turned a fast layout slow with ASLR off. Two runs then
// "differ" by 50% with p < 0.001.
//
// So the recipe moves its stack by a random offset for each repetition
// (Mytkowicz et al., "Producing wrong data without doing anything obviously
// wrong!", ASPLOS 2009; Curtsinger and Berger, "Stabilizer", ASPLOS 2013):
// the repetitions of one run then span the layouts, their median is the
// typical one, their spread shows the sensitivity, and a comparison's U test
// on repetitions sees run-to-run layout changes as noise, not as a change.
// Only the calling thread's stack moves; threads a backend starts (an OpenMP
// team) keep theirs for the process.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <random>

namespace opbench {

// Offsets cover one page: 0, 16, ..., 4080 bytes (the stack's alignment).
inline constexpr std::size_t kStackOffsetSpan = 4096;
inline constexpr std::size_t kStackOffsetStep = 16;

// A source of stack offsets, seeded once (from std::random_device by default).
class StackOffsets {
public:
    StackOffsets();
    explicit StackOffsets(std::uint64_t seed) : engine_(seed) {}
    // The next offset: a multiple of kStackOffsetStep below kStackOffsetSpan.
    [[nodiscard]] std::size_t next();

private:
    std::mt19937_64 engine_;
};

// Calls fn() with the stack `bytes` (rounded up to 16) lower than it would be.
void call_with_stack_offset(std::size_t bytes, const std::function<void()> &fn);

} // namespace opbench
