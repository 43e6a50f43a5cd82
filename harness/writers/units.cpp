#include "writers/units.hpp"

#include <fmt/format.h>

#include <cmath>

namespace opbench {

std::string format_seconds(double s) {
    if (!std::isfinite(s)) return "-";
    const double a = std::fabs(s);
    if (a == 0) return "0";
    if (a < 1e-6) return fmt::format("{:.3g} ns", s * 1e9);
    if (a < 1e-3) return fmt::format("{:.3g} us", s * 1e6);
    if (a < 1) return fmt::format("{:.3g} ms", s * 1e3);
    return fmt::format("{:.3g} s", s);
}

std::string format_bytes(double b) {
    if (!std::isfinite(b)) return "-";
    if (b == 0) return "0";
    const double a = std::fabs(b);
    if (a < 1024) return fmt::format("{:.0f} B", b);
    if (a < 1024.0 * 1024) return fmt::format("{:.1f} KiB", b / 1024);
    if (a < 1024.0 * 1024 * 1024) return fmt::format("{:.1f} MiB", b / 1024 / 1024);
    return fmt::format("{:.2f} GiB", b / 1024 / 1024 / 1024);
}

} // namespace opbench
