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

} // namespace opbench
