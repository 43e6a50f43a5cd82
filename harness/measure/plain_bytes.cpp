#include "measure/plain_bytes.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <charconv>
#include <span>
#include <stdexcept>

namespace opbench {

std::string bytes_to_hex(const void *data, std::size_t n) {
    return fmt::format("{:02x}", fmt::join(std::span(static_cast<const unsigned char *>(data), n), ""));
}

void bytes_from_hex(std::string_view hex, void *data, std::size_t n, std::string_view what) {
    if (hex.size() != 2 * n)
        throw std::invalid_argument(fmt::format("{} of {} hex digits, expected {}", what, hex.size(), 2 * n));
    auto *out = static_cast<unsigned char *>(data);
    for (std::size_t i = 0; i < n; ++i) {
        const char *first = hex.data() + 2 * i;
        const auto [end, ec] = std::from_chars(first, first + 2, out[i], 16);
        if (ec != std::errc() || end != first + 2)
            throw std::invalid_argument(
                fmt::format("{}: '{}' at {} is not a hex byte", what, hex.substr(2 * i, 2), 2 * i));
    }
}

} // namespace opbench
