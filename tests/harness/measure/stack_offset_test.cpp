// The per-repetition stack offsets (harness/measure/stack_offset.hpp): the offsets
// span a page in 16-byte steps, and call_with_stack_offset really moves the
// frames of what it calls.
#include "measure/stack_offset.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <set>

using namespace opbench;

TEST(StackOffsets, DrawMultiplesOf16AcrossOnePage) {
    StackOffsets offsets(42);
    std::set<std::size_t> seen;
    for (int i = 0; i < 2000; ++i) {
        const std::size_t o = offsets.next();
        EXPECT_EQ(o % kStackOffsetStep, 0u);
        EXPECT_LT(o, kStackOffsetSpan);
        seen.insert(o);
    }
    // 256 possible offsets, 2000 draws: nearly all of them, both ends of the page.
    EXPECT_GT(seen.size(), 200u);
    EXPECT_LT(*seen.begin(), 256u);
    EXPECT_GE(*seen.rbegin(), kStackOffsetSpan - 256);
}

TEST(StackOffsets, SeededSourcesRepeatAndUnseededOnesDiffer) {
    StackOffsets a(7), b(7), c, d;
    bool c_differs = false;
    for (int i = 0; i < 32; ++i) {
        EXPECT_EQ(a.next(), b.next());
        c_differs |= c.next() != d.next();
    }
    EXPECT_TRUE(c_differs) << "two runs must not share one sequence of layouts";
}

namespace {
[[gnu::noinline]] std::uintptr_t frame_address_at(std::size_t offset) {
    std::uintptr_t where = 0;
    // The callee's frame address, not a local's: under ASan's
    // detect_stack_use_after_return, locals live on a heap "fake stack".
    call_with_stack_offset(offset, [&] { where = reinterpret_cast<std::uintptr_t>(__builtin_frame_address(0)); });
    return where;
}
} // namespace

TEST(StackOffsets, CallWithStackOffsetMovesTheCalleesFrames) {
    const std::uintptr_t at0 = frame_address_at(0);
    const std::uintptr_t at2048 = frame_address_at(2048);
    const std::uintptr_t at4080 = frame_address_at(4080);
    // The stack grows down: a larger offset puts the callee lower by the
    // offset, give or take the rounding (16 bytes; ASan's alloca red zones).
    EXPECT_NEAR(double(at0 - at2048), 2048.0, 64.0);
    EXPECT_NEAR(double(at0 - at4080), 4080.0, 64.0);
}
