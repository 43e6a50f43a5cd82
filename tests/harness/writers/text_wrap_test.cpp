// Console text wrapping (harness/writers/text_wrap.hpp), shared by the run
// console, the table writers' notes and the "Not measured" list: widths count
// columns, not bytes; words and entry names wrap within the width.
#include "writers/text_wrap.hpp"

#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

using namespace opbench;

namespace {

std::vector<std::string> lines_of(const std::string &text) {
    std::vector<std::string> lines;
    std::istringstream in(text);
    for (std::string l; std::getline(in, l);) lines.push_back(l);
    return lines;
}

} // namespace

TEST(TextWrap, WidthCountsColumnsNotBytes) {
    EXPECT_EQ(display_width("spread ±3%"), 10u);
    EXPECT_EQ(display_width("1.2 µs"), 6u);
    EXPECT_EQ(display_width(""), 0u);
}

TEST(TextWrap, WordsWrapWithinTheWidthWithAHangingIndent) {
    std::string text;
    for (int i = 0; i < 40; ++i) text += "spread ±3% ";
    const auto lines = lines_of(wrap_words(text, 6, 2, 40));
    ASSERT_GT(lines.size(), 5u);
    EXPECT_EQ(lines[0].rfind("  spread", 0), 0u);
    for (std::size_t i = 0; i < lines.size(); ++i) {
        EXPECT_LE(display_width(lines[i]), 40u) << lines[i];
        if (i > 0) {
            EXPECT_EQ(lines[i].rfind("      s", 0), 0u) << lines[i];
        }
    }
    // A '±' is one column: a line of exactly 40 columns with one stays whole.
    EXPECT_EQ(lines_of(wrap_words("abcdefghij abcdefghij abcdefghij ±bcdefg", 0, 0, 40)).size(), 1u);
    EXPECT_EQ(wrap_words("", 2, 2), "");
}

TEST(TextWrap, ALongEntryNameBreaksAfterASlash) {
    const std::string name = "attention/B:1/H:4/KVH:2/Sq:1/Skv:96/D:32/causal:1/variant:composed/dt:f32/be:onednn/"
                             "case:attention.gqa";
    ASSERT_GT(name.size(), 100u);
    const auto lines = lines_of(wrap_name(name, 6));
    ASSERT_EQ(lines.size(), 2u);
    EXPECT_EQ(lines[0].back(), '/');
    EXPECT_EQ(lines[1].rfind("        ", 0), 0u) << "later lines indent two more";
    for (const auto &l : lines) EXPECT_LE(l.size(), 100u) << l;
    // The parts, joined again, are the name.
    EXPECT_EQ(lines[0].substr(6) + lines[1].substr(8), name);
    EXPECT_EQ(wrap_name("add/R:32/be:naive", 2), "  add/R:32/be:naive\n");
}

// The progress line's and the fitted tables' names: cut in the middle, so
// the op (head) and what differs between a case's entries (tail: variant,
// dtype, backend, case name) both stay.
TEST(TextWrap, ShortenMiddleKeepsHeadAndDifferingTail) {
    const std::string composed = "attention/B:1/H:4/KVH:2/Sq:1/Skv:96/D:32/causal:1/variant:composed/dt:f32/be:onednn/"
                                 "case:attention.gqa";
    const std::string fused = "attention/B:1/H:4/KVH:2/Sq:1/Skv:96/D:32/causal:1/variant:fused/dt:f32/be:onednn/"
                              "case:attention.gqa";
    const std::string a = shorten_middle(composed, 60), b = shorten_middle(fused, 60);
    EXPECT_EQ(display_width(a), 60u) << a;
    EXPECT_EQ(a.rfind("attention/", 0), 0u) << "the head stays: " << a;
    EXPECT_TRUE(a.ends_with("composed/dt:f32/be:onednn/case:attention.gqa")) << a;
    EXPECT_NE(a.find("\u2026"), std::string::npos) << "the cut is marked";
    EXPECT_NE(a, b) << "two entries of one case still read apart";
    // A name that fits, or no room for a cut, is left whole.
    EXPECT_EQ(shorten_middle("add/R:32/be:naive", 60), "add/R:32/be:naive");
    EXPECT_EQ(shorten_middle(composed, 4), composed);
    // Widths count columns: a '±' in the kept tail is one.
    EXPECT_EQ(display_width(shorten_middle(composed + "/\u00b1", 30)), 30u);
}
