// The table of output formats. A new format: its file here, one row below.
#include "writers/writer.hpp"

#include "writers/chrome_trace_writer.hpp"
#include "writers/json_writer.hpp"
#include "writers/table_writers.hpp"

#include <array>

namespace opbench {

namespace {

constexpr std::array kWriters = {
    Writer{"json", ".json", "the data as JSON (result sets: Google Benchmark JSON + opbench fields)", write_json},
    Writer{"chrome-trace", ".trace.json",
           "Chrome Trace Event JSON (opbench run --trace): Perfetto, chrome://tracing, speedscope", write_chrome_trace},
    Writer{"console", ".txt", "aligned text tables, for a terminal", write_console},
    Writer{"markdown", ".md", "GitHub Markdown tables (PR comments, $GITHUB_STEP_SUMMARY)", write_markdown},
    Writer{"csv", ".csv", "RFC 4180 CSV: one tidy table, a row per entry and set, numbers in SI units (compare, history)", write_csv},
};

} // namespace

std::span<const Writer> writers() { return kWriters; }

const Writer *find_writer(std::string_view name) {
    for (const Writer &w : kWriters)
        if (w.name == name) return &w;
    return nullptr;
}

std::string writer_names() {
    std::string names;
    for (const Writer &w : kWriters) {
        if (!names.empty()) names += ", ";
        names += w.name;
    }
    return names;
}

} // namespace opbench
