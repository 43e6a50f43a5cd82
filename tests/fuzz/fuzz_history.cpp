// libFuzzer target: `opbench history` over a damaged archive (issue 32: one
// set with a 100,000-character backend name made history die of std::regex
// recursion; an index nested 100,000 deep killed every archive command).
// The input is an archive of suite "quick": the bytes before the first NUL
// are its index.json, the rest the entry summaries at m/quick/a.summaries.cbor
// (the path the seed index names; m/quick/a.json is a valid empty set).
// archive_history either refuses with ArchiveError or ResultSetError or
// gives its table; a crash, a hang, UB or any other exception is a finding.
#include "readers/archive.hpp"
#include "readers/result_set_reader.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>

namespace fs = std::filesystem;

namespace {

// One archive directory per process, rewritten for every input.
const fs::path &archive_dir() {
    static const fs::path dir = [] {
        fs::path d = fs::temp_directory_path() / ("opbench-fuzz-history-" + std::to_string(::getpid()));
        fs::create_directories(d / "m" / "quick");
        return d;
    }();
    return dir;
}

void write(const fs::path &path, const std::string &bytes) {
    std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size) {
    const std::string input(reinterpret_cast<const char *>(data), size);
    const std::size_t nul = input.find('\0');
    const fs::path &dir = archive_dir();
    write(dir / "index.json", input.substr(0, nul));
    write(dir / "m" / "quick" / "a.summaries.cbor", nul == std::string::npos ? "" : input.substr(nul + 1));
    write(dir / "m" / "quick" / "a.json", R"({"context": {}, "benchmarks": []})");
    opbench::HistoryOptions options;
    options.suite = "quick";
    try {
        (void)opbench::archive_history(dir, options);
        options.wide = true;
        (void)opbench::archive_history(dir, options);
    } catch (const opbench::ArchiveError &) {
        return 0; // refused with a message: the expected outcome
    } catch (const opbench::ResultSetError &) {
        return 0;
    }
    return 0;
}
