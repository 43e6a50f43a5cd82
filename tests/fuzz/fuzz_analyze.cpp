// libFuzzer target: `opbench analyze FILE` (issue 19: wrong-typed name,
// status, backend or op crashed it). The input is written to a file and
// read by cmd_analyze exactly as the command does (the readers' capped
// reading, JSON and schema check, then the bottleneck analysis and its
// tables). It must return 0 or 2; anything else (an exception escaping, a
// crash, UB) is a finding.
#include "readers/analyze.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <unistd.h>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size) {
    static const std::string path = [] {
        std::string p = "/tmp/opbench-fuzz-analyze-" + std::to_string(::getpid()) + ".json";
        std::atexit([] { ::unlink(("/tmp/opbench-fuzz-analyze-" + std::to_string(::getpid()) + ".json").c_str()); });
        return p;
    }();
    {
        std::ofstream f(path, std::ios::binary | std::ios::trunc);
        f.write(reinterpret_cast<const char *>(data), static_cast<std::streamsize>(size));
    }
    std::ostringstream out, err;
    const int rc = opbench::cmd_analyze(path, 5, out, err);
    if (rc != 0 && rc != 2) std::abort();
    if (rc == 2 && err.str().find(path) == std::string::npos) std::abort(); // the error names the file
    return 0;
}
