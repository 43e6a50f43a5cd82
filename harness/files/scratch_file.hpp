// Scratch files: unpredictable names (mkstemp), never left behind. Each live
// scratch file is registered so that it is removed however the process ends:
// normally (the destructor), through exit() (an atexit hook; a plugin may call
// exit in --isolate none), or on the signal path (remove_all_scratch_files()
// is async-signal-safe).
#pragma once

#include <string>
#include <sys/types.h>

namespace opbench {

class ScratchFile {
public:
    // Creates `<dir>/<prefix>XXXXXX<suffix>` with mode 0600, open for writing.
    // Throws std::runtime_error naming the directory and the reason.
    ScratchFile(const std::string &dir, const std::string &prefix, const std::string &suffix = "");
    ~ScratchFile(); // removes the file unless it was published
    ScratchFile(const ScratchFile &) = delete;
    ScratchFile &operator=(const ScratchFile &) = delete;

    [[nodiscard]] const std::string &path() const { return path_; }
    [[nodiscard]] int fd() const { return fd_; }

    // Writes all of `text`, fsyncs and closes. Throws std::runtime_error.
    void write_and_close(const std::string &text);
    // Renames the file over `target` (atomic within one file system); after
    // that it is no longer scratch. Throws std::runtime_error naming both.
    void publish(const std::string &target);

private:
    void close_fd() noexcept;
    std::string path_;
    int fd_ = -1;
    int slot_ = -1; // registry slot; -1 once published or removed
};

// An empty file reserved for a result written later (output_path.hpp),
// removed on the same exit paths as scratch files but only while it is still
// that empty file (device and inode): once a result was renamed over it, it
// stays. Returns the registry slot for unregister_reservation (-1: no slot
// free; the owner's destructor still removes it).
[[nodiscard]] int register_reservation(const std::string &path, dev_t dev, ino_t ino) noexcept;
void unregister_reservation(int slot) noexcept;

// Removes every registered scratch file now (and each reservation still empty). Async-signal-safe (unlink only).
void remove_all_scratch_files() noexcept;

// How many scratch files are registered (for tests).
[[nodiscard]] int live_scratch_files() noexcept;

} // namespace opbench
