#include "files/scratch_file.hpp"

#include <fmt/format.h>

#include <atomic>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <mutex>
#include <stdexcept>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

namespace opbench {

namespace {

// A fixed table, so that the signal path can walk it without allocating.
constexpr int kSlots = 64;
struct Slot {
    std::atomic<bool> used{false};
    char path[PATH_MAX];
    bool reservation = false; // removed only while still the empty file dev/ino
    dev_t dev = 0;
    ino_t ino = 0;
};
Slot g_slots[kSlots];
std::once_flag g_atexit_once;

int register_path(const std::string &path, bool reservation = false, dev_t dev = 0, ino_t ino = 0) {
    std::call_once(g_atexit_once, [] { std::atexit(remove_all_scratch_files); });
    if (path.size() >= PATH_MAX) return -1;
    for (int i = 0; i < kSlots; ++i) {
        bool expected = false;
        if (g_slots[i].used.load() || !g_slots[i].used.compare_exchange_strong(expected, true)) continue;
        std::memcpy(g_slots[i].path, path.c_str(), path.size() + 1);
        g_slots[i].reservation = reservation;
        g_slots[i].dev = dev;
        g_slots[i].ino = ino;
        return i;
    }
    return -1; // more than kSlots at once: still removed by the destructor
}

void unregister(int slot) {
    if (slot >= 0) g_slots[slot].used.store(false);
}

} // namespace

ScratchFile::ScratchFile(const std::string &dir, const std::string &prefix, const std::string &suffix) {
    std::string pattern = (std::filesystem::path(dir.empty() ? "." : dir) / (prefix + "XXXXXX" + suffix)).string();
    std::vector<char> buf(pattern.begin(), pattern.end());
    buf.push_back('\0');
    fd_ = ::mkostemps(buf.data(), static_cast<int>(suffix.size()), O_CLOEXEC);
    if (fd_ < 0)
        throw std::runtime_error(
            fmt::format("cannot create a scratch file in {}: {}", dir.empty() ? "." : dir, std::strerror(errno)));
    path_ = buf.data();
    slot_ = register_path(path_);
}

ScratchFile::~ScratchFile() {
    close_fd();
    if (!path_.empty()) ::unlink(path_.c_str());
    unregister(slot_);
}

void ScratchFile::close_fd() noexcept {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
}

void ScratchFile::write_and_close(const std::string &text) {
    std::string_view rest = text;
    while (!rest.empty()) {
        ssize_t n = ::write(fd_, rest.data(), rest.size());
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0)
            throw std::runtime_error(
                fmt::format("writing {} failed: {}", path_, n < 0 ? std::strerror(errno) : "no space written"));
        rest.remove_prefix(static_cast<std::size_t>(n));
    }
    if (::fsync(fd_) != 0) throw std::runtime_error(fmt::format("writing {} failed: {}", path_, std::strerror(errno)));
    const int fd = fd_;
    fd_ = -1;
    if (::close(fd) != 0) throw std::runtime_error(fmt::format("writing {} failed: {}", path_, std::strerror(errno)));
}

void ScratchFile::publish(const std::string &target) {
    close_fd();
    if (std::rename(path_.c_str(), target.c_str()) != 0)
        throw std::runtime_error(fmt::format("cannot move {} to {}: {}", path_, target, std::strerror(errno)));
    unregister(slot_);
    slot_ = -1;
    path_.clear();
}

int register_reservation(const std::string &path, dev_t dev, ino_t ino) noexcept {
    try {
        return register_path(path, true, dev, ino);
    } catch (...) { // call_once / atexit registration failing: the destructor still removes it
        return -1;
    }
}

void unregister_reservation(int slot) noexcept { unregister(slot); }

void remove_all_scratch_files() noexcept {
    for (auto &slot : g_slots) {
        if (!slot.used.load()) continue;
        if (slot.reservation) {
            // lstat and unlink are async-signal-safe.
            struct stat st {};
            if (::lstat(slot.path, &st) != 0 || !S_ISREG(st.st_mode) || st.st_dev != slot.dev ||
                st.st_ino != slot.ino || st.st_size != 0)
                continue;
        }
        ::unlink(slot.path);
    }
}

int live_scratch_files() noexcept {
    int n = 0;
    for (auto &slot : g_slots) n += slot.used.load() ? 1 : 0;
    return n;
}

} // namespace opbench
