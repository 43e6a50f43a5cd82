// Console text that fits a terminal: display widths and word wrapping, one
// implementation for the run console, the table writers' notes and the
// "Not measured" list. Widths count UTF-8 code points (a '±' is one column).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace opbench {

// Columns the console's lines fit by default.
inline constexpr std::size_t kTerminalColumns = 100;

// Display width: UTF-8 continuation bytes take no column.
[[nodiscard]] std::size_t display_width(std::string_view s);

// `text` word-wrapped at spaces to `width` columns: the first line indented
// by first_indent, the others by indent; every line ends in '\n'. A word
// longer than a line keeps its line (it is never cut). Empty text: "".
[[nodiscard]] std::string wrap_words(std::string_view text, std::size_t indent, std::size_t first_indent,
                                     std::size_t width = kTerminalColumns);

// An entry name ("op/B:1/.../be:naive/case:x") indented by `indent`, broken
// after a '/' where it would pass `width`, its later lines indented two more.
// A name that fits is one line.
[[nodiscard]] std::string wrap_name(std::string_view name, std::size_t indent, std::size_t width = kTerminalColumns);

// `name` cut to `width` columns by replacing its middle with '…': a quarter of
// the room keeps its head (the op), the rest its tail, where entries of one
// case differ (variant, dtype, backend, case name). A name that fits, or a
// width under 5, returns the name whole.
[[nodiscard]] std::string shorten_middle(std::string_view name, std::size_t width);

} // namespace opbench
