// Process resident set size from /proc/self; see rss.hpp.
#include "measure/rss.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

namespace opbench {

namespace {

// The "<key>:   1234 kB" line of /proc/self/status, in bytes; 0 when absent.
// A stack buffer and raw read(2), so no heap allocation happens here.
std::uint64_t status_kib_field(const char *key) {
    const int fd = ::open("/proc/self/status", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 0;
    char buf[8192];
    std::size_t len = 0;
    for (;;) {
        const ssize_t r = ::read(fd, buf + len, sizeof(buf) - 1 - len);
        if (r <= 0) break;
        len += static_cast<std::size_t>(r);
        if (len == sizeof(buf) - 1) break;
    }
    ::close(fd);
    buf[len] = '\0';
    const std::size_t key_len = std::strlen(key);
    for (const char *line = buf; line && *line;) {
        if (std::strncmp(line, key, key_len) == 0 && line[key_len] == ':') {
            const unsigned long long kib = std::strtoull(line + key_len + 1, nullptr, 10);
            return static_cast<std::uint64_t>(kib) * 1024;
        }
        line = std::strchr(line, '\n');
        if (line) ++line;
    }
    return 0;
}

} // namespace

std::uint64_t peak_rss_bytes() { return status_kib_field("VmHWM"); }

std::uint64_t current_rss_bytes() { return status_kib_field("VmRSS"); }

bool reset_peak_rss() {
    const int fd = ::open("/proc/self/clear_refs", O_WRONLY | O_CLOEXEC);
    if (fd < 0) return false;
    const bool ok = ::write(fd, "5", 1) == 1;
    ::close(fd);
    return ok;
}

} // namespace opbench
