#include "cli/cpu_list.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <sched.h>
#include <string>

namespace opbench {

namespace {

// An entry as shown in a message: long garbage is cut, not echoed whole.
std::string shown_entry(std::string_view s) {
    constexpr std::size_t kMax = 24;
    return s.size() <= kMax ? std::string(s) : std::string(s.substr(0, kMax)) + "...";
}

[[noreturn]] void bad(std::string_view entry, const std::string &why) {
    throw std::invalid_argument(fmt::format("bad CPU list entry '{}': {} (valid: a CPU number, a range such as "
                                            "0-3, or a range with a stride such as 0-10:2, comma-separated)",
                                            shown_entry(entry), why));
}

// A decimal number that makes up all of `s`, below CPU_SETSIZE.
int cpu_number(std::string_view s, std::string_view entry) {
    if (s.empty()) bad(entry, "a number is missing");
    for (char c : s)
        if (c < '0' || c > '9') bad(entry, fmt::format("'{}' is not a CPU number", shown_entry(s)));
    int v = 0;
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || end != s.data() + s.size() || v >= CPU_SETSIZE)
        bad(entry, fmt::format("CPU numbers go up to {}", CPU_SETSIZE - 1));
    return v;
}

} // namespace

std::vector<int> parse_cpu_list(std::string_view text) {
    if (text.empty()) throw std::invalid_argument("the CPU list is empty (valid: e.g. 0-3,6)");
    std::vector<int> cpus;
    std::size_t start = 0;
    while (start <= text.size()) {
        std::size_t comma = text.find(',', start);
        if (comma == std::string_view::npos) comma = text.size();
        const std::string_view entry = text.substr(start, comma - start);
        if (entry.empty()) bad(entry, "an empty entry (two commas, or one at an end)");
        const std::size_t dash = entry.find('-');
        if (dash == std::string_view::npos) {
            cpus.push_back(cpu_number(entry, entry));
        } else {
            const std::size_t colon = entry.find(':', dash);
            const int first = cpu_number(entry.substr(0, dash), entry);
            const std::string_view last_text =
                entry.substr(dash + 1, colon == std::string_view::npos ? std::string_view::npos : colon - dash - 1);
            const int last = cpu_number(last_text, entry);
            int stride = 1;
            if (colon != std::string_view::npos) {
                stride = cpu_number(entry.substr(colon + 1), entry);
                if (stride < 1) bad(entry, "the stride must be at least 1");
            }
            if (last < first) bad(entry, fmt::format("the range runs backwards ({} > {})", first, last));
            for (int c = first; c <= last; c += stride) cpus.push_back(c);
        }
        start = comma + 1;
    }
    std::sort(cpus.begin(), cpus.end());
    cpus.erase(std::unique(cpus.begin(), cpus.end()), cpus.end());
    return cpus;
}

} // namespace opbench
