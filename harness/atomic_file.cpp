#include "atomic_file.hpp"

#include "scratch_file.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <stdexcept>

namespace fs = std::filesystem;

namespace opbench {

void write_file_atomically(const std::string &path, const std::string &text) {
    fs::path target = fs::absolute(path);
    std::error_code ec;
    if (!target.parent_path().empty()) fs::create_directories(target.parent_path(), ec);
    if (ec)
        throw std::runtime_error(fmt::format("cannot create directory {}: {}",
                                             target.parent_path().string(), ec.message()));
    // A scratch file beside the target (rename is atomic within one file
    // system), with an unpredictable name; removed on every failure path.
    std::string prefix = ".";
    prefix += target.filename().string();
    prefix += ".tmp.";
    ScratchFile tmp(target.parent_path().string(), prefix);
    tmp.write_and_close(text);
    tmp.publish(target.string());
}

} // namespace opbench
