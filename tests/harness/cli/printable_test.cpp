// printable(): control bytes in echoed user input are shown, not acted on
// by the terminal (issue 32).
#include "cli/printable.hpp"

#include <gtest/gtest.h>

namespace opbench {
namespace {

TEST(Printable, EscapesControlBytesAsHex) {
    EXPECT_EQ(printable("naive@a=\x1b[31mred"), "naive@a=\\x1b[31mred");
    EXPECT_EQ(printable("a\rb\tc\x7f"), "a\\x0db\\x09c\\x7f");
    EXPECT_EQ(printable(std::string("nul\0here", 8)), "nul\\x00here");
}

TEST(Printable, KeepsNewlinesAndUtf8) {
    EXPECT_EQ(printable("two\nlines"), "two\nlines");
    EXPECT_EQ(printable("caf\xc3\xa9 / \xe2\x80\x94"), "caf\xc3\xa9 / \xe2\x80\x94");
}

} // namespace
} // namespace opbench
