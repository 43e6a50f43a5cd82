// The table of output formats. A new format: its file here, one row below.
#include "writer.hpp"

#include "chrome_trace_writer.hpp"
#include "json_writer.hpp"

#include <array>

namespace opbench {

namespace {

constexpr std::array kWriters = {
    Writer{"json", ".json", "the data as JSON (result sets: Google Benchmark JSON + opbench fields)", write_json},
    Writer{"chrome-trace", ".trace.json",
           "Chrome Trace Event JSON (opbench run --trace): Perfetto, chrome://tracing, speedscope",
           write_chrome_trace},
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
