// Human-readable units for tables and reports.
#pragma once

#include <string>

namespace opbench {

// Seconds in the largest unit that keeps three significant digits in front:
// "356 ns", "43.3 us", "12.3 ms", "2.5 s"; "0" for zero, "-" for no figure.
[[nodiscard]] std::string format_seconds(double seconds);

// Bytes in binary units: "0", "512 B", "1.0 KiB", "12.5 MiB", "2.00 GiB".
[[nodiscard]] std::string format_bytes(double bytes);

} // namespace opbench
