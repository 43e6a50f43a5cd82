// Messages that echo what the user typed (a --plugin spec, a path, a suite
// value) go to a terminal: control characters in them would be acted on
// there (an ESC sequence recolours or rewrites the screen, a CR hides what
// came before). printable() shows each as \xHH instead, so the message says
// exactly which bytes were given.
#pragma once

#include <string>
#include <string_view>

namespace opbench {

// `text` with every C0 control byte but newline, and DEL, written as \xHH
// (ESC as \x1b); other bytes, UTF-8 included, unchanged.
[[nodiscard]] std::string printable(std::string_view text);

} // namespace opbench
