// JSON: the document's data, indented, one trailing newline. Result sets are
// written with it (Google Benchmark JSON that compare.py reads).
#pragma once

#include "writers/writer.hpp"

namespace opbench {

[[nodiscard]] std::string write_json(const Document &doc);

} // namespace opbench
