// CPU lists as taskset(1) and cpuset(7) write them: "0-3,6", "0-10:2".
#pragma once

#include <stdexcept>
#include <string_view>
#include <vector>

namespace opbench {

// Parses a CPU list: comma-separated entries, each a CPU number N, a range
// A-B (A <= B, both included), or a range with a stride A-B:S (S >= 1).
// Numbers are decimal, below CPU_SETSIZE (1024). Returns the CPUs sorted,
// each once. Throws std::invalid_argument naming the entry and what would be
// valid for anything else: an empty list or entry, a sign, a reversed range,
// trailing text.
[[nodiscard]] std::vector<int> parse_cpu_list(std::string_view text);

} // namespace opbench
