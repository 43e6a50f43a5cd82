#include "files/trust.hpp"

#include <fmt/format.h>

#include <grp.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

namespace fs = std::filesystem;

namespace opbench {

namespace {

std::string user_name(uid_t uid) {
    const passwd *pw = ::getpwuid(uid);
    return pw ? fmt::format("'{}' (uid {})", pw->pw_name, uid) : fmt::format("uid {}", uid);
}

std::string group_name(gid_t gid) {
    const group *gr = ::getgrgid(gid);
    return gr ? fmt::format("'{}'", gr->gr_name) : fmt::format("gid {}", gid);
}

bool trusted_owner(uid_t uid) { return uid == 0 || uid == ::geteuid(); }

// What makes one existing file or directory untrusted, as "<who> ..." text
// after its description; "" when nothing does.
std::string entry_problem(const struct stat &st) {
    const mode_t mode = st.st_mode & 07777;
    if (!trusted_owner(st.st_uid)) return fmt::format("is owned by {}, not by root or you", user_name(st.st_uid));
    const bool sticky_dir = S_ISDIR(st.st_mode) && (st.st_mode & S_ISVTX);
    if (sticky_dir) return ""; // others cannot replace what they do not own; below is checked in turn
    if (st.st_mode & S_IWOTH) return fmt::format("is writable by others (mode {:04o})", mode);
    if (st.st_mode & S_IWGRP)
        return fmt::format("is writable by its group {} (mode {:04o})", group_name(st.st_gid), mode);
    return "";
}

// The directory a symlink sits in may be written by others: then anyone
// could point the link elsewhere.
std::string link_dir_problem(const fs::path &dir) {
    struct stat st {};
    if (::stat(dir.c_str(), &st) != 0) return "";
    const bool others_write = (st.st_mode & (S_IWOTH | S_IWGRP)) != 0 || !trusted_owner(st.st_uid);
    if (!others_write) return "";
    return fmt::format("in the directory {} that others may write (mode {:04o}, owner {})", dir.string(),
                       st.st_mode & 07777, user_name(st.st_uid));
}

} // namespace

std::string trust_problem(const fs::path &path) {
    std::error_code ec;
    fs::path target = fs::absolute(path, ec);
    if (ec) return "";
    // The nearest existing ancestor stands for a path still to be created.
    while (!fs::exists(fs::symlink_status(target, ec)) && target.has_relative_path()) target = target.parent_path();

    // 1. Symlinks on the path as given, each in a directory only trusted users write.
    fs::path prefix = target.root_path();
    for (const auto &part : target.relative_path()) {
        const fs::path next = prefix / part;
        if (fs::is_symlink(fs::symlink_status(next, ec))) {
            const fs::path dir = fs::canonical(prefix, ec);
            if (std::string why = link_dir_problem(ec ? prefix : dir); !why.empty())
                return fmt::format("it is reached through the symlink {}, {}, so anyone could point it elsewhere",
                                   next.string(), why);
        }
        const fs::path resolved = fs::canonical(next, ec);
        prefix = ec ? next : resolved;
    }

    // 2. The resolved file and every directory above it.
    const fs::path real = fs::canonical(target, ec);
    if (ec) return "";
    bool first = true;
    for (fs::path p = real;; p = p.parent_path()) {
        struct stat st {};
        if (::stat(p.c_str(), &st) == 0) {
            if (std::string why = entry_problem(st); !why.empty()) {
                if (first) return fmt::format("the {} {}", S_ISDIR(st.st_mode) ? "directory" : "file", why);
                if (p == real.parent_path()) return fmt::format("its directory {} {}", p.string(), why);
                return fmt::format("the directory {} on its path {}", p.string(), why);
            }
        }
        first = false;
        if (p == p.root_path() || !p.has_relative_path()) break;
    }
    return "";
}

} // namespace opbench
