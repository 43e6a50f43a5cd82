#include "run/paired_console.hpp"

#include "measure/statistics.hpp"
#include "writers/text_wrap.hpp"
#include "writers/units.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace opbench {

namespace {

// The console's case column: a longer name keeps its start (the op) and its
// end (variant, dtype, case name), with '~' where the middle was cut.
constexpr std::size_t kLabelWidth = 52;
std::string fit(const std::string &s, std::size_t width) {
    if (s.size() <= width) return s + std::string(width - s.size(), ' ');
    const std::size_t head = (width - 1) / 3;
    return s.substr(0, head) + "~" + s.substr(s.size() - (width - 1 - head));
}

std::string row(const std::string &label, const std::string &base, const std::string &next, const std::string &ratio,
                const std::string &p, const std::string &verdict) {
    return fmt::format("{} {:>9} {:>9} {:>9} {:>6}  {}\n", fit(label, kLabelWidth), base, next, ratio, p, verdict);
}

} // namespace

std::string paired_console_header() { return row("case", "base", "new", "new/base", "p", "verdict"); }

std::string paired_console_row(const PairedCaseResult &r) {
    // The reason under the row, wrapped: beside it, it ran past 100 columns.
    if (r.status != "passed") return fit(r.label, kLabelWidth) + " " + r.status + ":\n" + wrap_words(r.reason, 4, 4);
    // As compare's paired table (readers/paired_compare.cpp) prints them;
    // the blocks left out (starved, throttled) on a line under the row.
    return row(r.label, format_seconds(summarize(r.base_times).median), format_seconds(summarize(r.new_times).median),
               fmt::format("{:.3f}", r.verdict.ratio), fmt::format("{:.3g}", r.verdict.p_value), r.verdict.verdict) +
           (r.left_out.empty() ? "" : "    " + r.left_out + "\n");
}

namespace {

// "K not compared: S starved, T throttled, F failed" for the cases that have no verdict,
// by status; empty when every case was compared.
std::string not_compared_line(const PairedSummary &s) {
    if (s.failed() == 0) return {};
    std::vector<std::string> parts;
    for (const char *status : {"starved", "throttled", "failed", "skipped"})
        if (const std::size_t n = s.count_status(status)) parts.push_back(fmt::format("{} {}", n, status));
    return fmt::format("\n  {} not compared: {}", s.failed(), fmt::join(parts, ", "));
}

} // namespace

std::string paired_summary_line(const PairedSummary &s, const PairedRunOptions &o) {
    // Lines each within 100 columns: the verdicts, the cases with none (by
    // status), then how the run went.
    // On a device backend the canary (a loop on the host) reads the host,
    // and the SM clock reads the device.
    const std::string device_line = s.device_clock ? "\n  " + clock_range_text(*s.device_clock) : "";
    return fmt::format("opbench ab: {} cases, {} -> {} (threshold {:g}%): {} same, {} slower, {} faster, {} noisy{}\n"
                       "  the {}'s speed moved {:.0f}% during the run (drift canary); {:.1f} s{}",
                       s.cases.size(), o.base, o.next, o.verdict.threshold * 100, s.count("same"), s.count("slower"),
                       s.count("faster"), s.count("noisy"), not_compared_line(s), s.device_clock ? "host" : "machine",
                       s.canary_drift * 100, s.wall_seconds, device_line);
}

} // namespace opbench
