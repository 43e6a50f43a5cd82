// Chrome Trace Event JSON (harness/profile/trace.hpp builds the document's data):
// one event per line, so a trace reads and diffs as text and still parses as
// one JSON object in Perfetto, chrome://tracing and speedscope.
#pragma once

#include "writers/writer.hpp"

namespace opbench {

// doc.data: {"traceEvents": [...], ...}; the other members are written after
// the events, compactly. Throws std::invalid_argument for a document without
// a traceEvents array (a result set is not a trace).
[[nodiscard]] std::string write_chrome_trace(const Document &doc);

} // namespace opbench
