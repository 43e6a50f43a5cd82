// `opbench run --format FORMAT`: what the run prints on stdout once its
// result set is written. The document is the one `opbench compare --by
// backend SET --format FORMAT` prints for that set (the level table; csv:
// the tidy entry records), so a run's own figures and a later reading of its
// set never differ. While the run goes, its console lines go to stderr
// (StdoutToStderr), so stdout carries the document alone.
#pragma once

#include <string>

namespace opbench {

// Checks FORMAT before anything runs; "" when it is a document format, else
// why not (unknown name, or one that is not for a run's document).
[[nodiscard]] std::string run_format_problem(const std::string &format);

// "json, markdown, csv": the writers a run's document can be written with.
[[nodiscard]] std::string run_document_formats();

// Writes the document of the result set at `set_path` in `format` to
// stdout; `reference` is the speed-ups' baseline when the set has it (else
// the set's first backend). Returns an exit status (0, or 3 when the set
// cannot be read back).
[[nodiscard]] int print_run_document(const std::string &set_path, const std::string &format,
                                     const std::string &reference);

// While alive, file descriptor 1 is stderr: opbench's console lines, Google
// Benchmark's and those of worker processes (which inherit it) all go there.
// The destructor flushes and gives stdout back.
class StdoutToStderr {
public:
    StdoutToStderr();
    ~StdoutToStderr();
    StdoutToStderr(const StdoutToStderr &) = delete;
    StdoutToStderr &operator=(const StdoutToStderr &) = delete;

private:
    int saved_stdout_ = -1;
};

} // namespace opbench
