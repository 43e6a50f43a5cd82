#include "atomic_file.hpp"

#include <fmt/format.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <unistd.h>

namespace fs = std::filesystem;

namespace opbench {

void write_file_atomically(const std::string &path, const std::string &text) {
    fs::path target = fs::absolute(path);
    std::error_code ec;
    if (!target.parent_path().empty()) fs::create_directories(target.parent_path(), ec);
    if (ec)
        throw std::runtime_error(fmt::format("cannot create directory {}: {}",
                                             target.parent_path().string(), ec.message()));
    // Never replace what is not a regular file (a device, a directory): as
    // root, renaming over /dev/null would turn the device into this file.
    if (fs::exists(target, ec) && !fs::is_regular_file(target, ec))
        throw std::runtime_error(fmt::format("will not write over {}: it is not a regular file{}", target.string(),
                                             fs::is_directory(target, ec) ? " but a directory" : ""));
    // Unique per process and call, so concurrent writers never share one.
    static std::atomic<unsigned> counter{0};
    fs::path tmp = target;
    tmp += fmt::format(".tmp.{}.{}", ::getpid(), counter++);
    {
        std::FILE *f = std::fopen(tmp.c_str(), "wb");
        if (!f) throw std::runtime_error(fmt::format("cannot write {}: {}", tmp.string(), std::strerror(errno)));
        bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size();
        ok = std::fflush(f) == 0 && ok;
        ok = ::fsync(::fileno(f)) == 0 && ok;
        ok = std::fclose(f) == 0 && ok;
        if (!ok) {
            fs::remove(tmp, ec);
            throw std::runtime_error(fmt::format("writing {} failed: {}", tmp.string(), std::strerror(errno)));
        }
    }
    fs::rename(tmp, target, ec);
    if (ec) {
        const std::string why = ec.message();
        fs::remove(tmp, ec);
        throw std::runtime_error(fmt::format("cannot move the result into {}: {}", target.string(), why));
    }
}

} // namespace opbench
