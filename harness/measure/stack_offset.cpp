#include "measure/stack_offset.hpp"

#include <alloca.h>

namespace opbench {

StackOffsets::StackOffsets() : engine_(std::random_device{}()) {}

std::size_t StackOffsets::next() {
    std::uniform_int_distribution<std::size_t> pick(0, kStackOffsetSpan / kStackOffsetStep - 1);
    return pick(engine_) * kStackOffsetStep;
}

// Never inlined: the alloca must live in a frame of its own, below which fn's
// frames then start.
[[gnu::noinline]] void call_with_stack_offset(std::size_t bytes, const std::function<void()> &fn) {
    void *pad = alloca(bytes + 1);
    // The padding is otherwise unused; this keeps the compiler from dropping it.
    asm volatile("" : : "r"(pad) : "memory");
    fn();
}

} // namespace opbench
