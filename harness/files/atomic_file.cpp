#include "files/atomic_file.hpp"

#include "files/scratch_file.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <sys/stat.h>
#include <stdexcept>

namespace fs = std::filesystem;

namespace opbench {

namespace {

// The process's umask without changing it (umask(2) can only swap it, which
// would race with other threads creating files): Linux reports it in
// /proc/self/status since 4.7; 022 where it does not.
mode_t current_umask() {
    std::ifstream status("/proc/self/status");
    std::string line;
    while (std::getline(status, line))
        if (line.rfind("Umask:", 0) == 0) return static_cast<mode_t>(std::stoul(line.substr(6), nullptr, 8));
    return 022;
}

} // namespace

void write_file_atomically(const std::string &path, const std::string &text) {
    fs::path target = fs::absolute(path);
    std::error_code ec;
    if (!target.parent_path().empty()) fs::create_directories(target.parent_path(), ec);
    if (ec)
        throw std::runtime_error(
            fmt::format("cannot create directory {}: {}", target.parent_path().string(), ec.message()));
    // Never replace what is not a regular file (a device, a directory): as
    // root, renaming over /dev/null would turn the device into this file.
    if (fs::exists(target, ec) && !fs::is_regular_file(target, ec))
        throw std::runtime_error(fmt::format("will not write over {}: it is not a regular file{}", target.string(),
                                             fs::is_directory(target, ec) ? " but a directory" : ""));
    // A scratch file beside the target (rename is atomic within one file
    // system), with an unpredictable name; removed on every failure path.
    std::string prefix = ".";
    prefix += target.filename().string();
    prefix += ".tmp.";
    ScratchFile tmp(target.parent_path().string(), prefix);
    tmp.write_and_close(text);
    // The scratch file is 0600 (mkstemp); the result gets the mode of the
    // file it replaces (the run's reservation, or a --force'd file), else
    // what a plain create would get under the umask.
    struct stat st {};
    const mode_t mode = ::stat(target.c_str(), &st) == 0 ? (st.st_mode & 07777) : (0666 & ~current_umask());
    if (::chmod(tmp.path().c_str(), mode) != 0)
        throw std::runtime_error(fmt::format("cannot set the mode of {}: {}", tmp.path(), std::strerror(errno)));
    tmp.publish(target.string());
}

} // namespace opbench
