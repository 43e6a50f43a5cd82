// Writing files so that readers see either the old file or the complete new one.
#pragma once

#include <string>

namespace opbench {

// Write `text` to `path` through a temporary file in the same directory
// (mkstemp: an unpredictable name), flushed to disk, then renamed over `path`.
// Creates the parent directory. Throws std::runtime_error naming the path and
// the reason; on failure `path` is untouched and no temporary file remains.
void write_file_atomically(const std::string &path, const std::string &text);

} // namespace opbench
