// libFuzzer target: an archive's index.json (issue 19: `[]` crashed history,
// compare --baseline-from and archive; a row `../../../etc/passwd` was
// opened). parse_archive_index either refuses with ArchiveError or returns
// rows whose paths stay inside the archive: relative, no ".." component.
#include "readers/archive.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size) {
    const std::string text(reinterpret_cast<const char *>(data), size);
    std::vector<opbench::ArchiveEntry> rows;
    try {
        rows = opbench::parse_archive_index(text, "index.json");
    } catch (const opbench::ArchiveError &) {
        return 0;
    }
    const auto confined = [](const std::string &path) {
        const std::filesystem::path p(path);
        if (path.empty() || p.is_absolute() || path.front() == '/') std::abort();
        for (const auto &part : p)
            if (part == "..") std::abort();
    };
    for (const auto &r : rows) {
        confined(r.path);
        if (!r.summaries.empty()) confined(r.summaries); // the entry summaries history opens
    }
    return 0;
}
