#include "cli/printable.hpp"

#include <fmt/format.h>

namespace opbench {

std::string printable(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    for (const char c : text) {
        const auto byte = static_cast<unsigned char>(c);
        if ((byte < 0x20 && c != '\n') || byte == 0x7f)
            out += fmt::format("\\x{:02x}", byte);
        else
            out += c;
    }
    return out;
}

} // namespace opbench
