// Writing a run's result set: the one path `opbench run` and `opbench ab`
// share, from the run log (run_log.hpp) through the writer table
// (writers/writer.hpp), with the fields derived from the whole set
// (result_set.hpp's add_run_analysis).
#pragma once

#include "run/run_log.hpp"

#include <string>

namespace opbench {

// Writes log.result_set(complete) to `path` atomically in the writer
// `format` ("json": compact, as Google Benchmark's). Throws
// std::runtime_error for an unknown writer (naming the known ones) or an
// unwritable path.
void write_set_file(const RunLog &log, const std::string &path, const std::string &format, bool complete);

} // namespace opbench
