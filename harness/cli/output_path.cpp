#include "cli/output_path.hpp"

#include "cli/exit_codes.hpp"

#include "run/journal.hpp"
#include "files/scratch_file.hpp"

#include <nlohmann/json.hpp>

#include <fmt/format.h>

#include <cerrno>
#include <climits>
#include <cstring>
#include <ctime>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sys/stat.h>
#include <unistd.h>

namespace fs = std::filesystem;

namespace opbench {

namespace {

// "a character device", "a directory", ... for a stat() mode.
const char *kind_of(mode_t mode) {
    if (S_ISDIR(mode)) return "a directory";
    if (S_ISCHR(mode)) return "a character device";
    if (S_ISBLK(mode)) return "a block device";
    if (S_ISFIFO(mode)) return "a FIFO";
    if (S_ISSOCK(mode)) return "a socket";
    if (S_ISREG(mode)) return "a regular file";
    return "not a regular file";
}

[[noreturn]] void refuse_as(std::string_view flag, const std::string &path, const std::string &why) {
    throw OutputPathError(fmt::format("{} {}: {}", flag, path, why));
}
[[noreturn]] void refuse(const std::string &path, const std::string &why) { refuse_as("--out", path, why); }

// The directory a path's file lives in ("." for a bare name).
fs::path directory_of(const fs::path &p) {
    fs::path dir = p.parent_path();
    return dir.empty() ? fs::path(".") : dir;
}

void check_directory(const std::string &shown, const fs::path &dir, std::string_view flag = "--out") {
    struct stat st {};
    if (::stat(dir.c_str(), &st) != 0)
        refuse_as(flag, shown,
                  fmt::format("its directory {} {}", dir.string(),
                              errno == ENOENT ? "does not exist (create it first)"
                                              : std::string("cannot be used: ") + std::strerror(errno)));
    if (!S_ISDIR(st.st_mode))
        refuse_as(flag, shown, fmt::format("{} is {}, not a directory", dir.string(), kind_of(st.st_mode)));
    if (::access(dir.c_str(), W_OK | X_OK) != 0)
        refuse_as(flag, shown,
                  fmt::format("its directory {} is not writable ({})", dir.string(), std::strerror(errno)));
}

void check_name_fits(const std::string &shown, const fs::path &p, std::string_view flag = "--out") {
    const std::string name = p.filename().string();
    long name_max = ::pathconf(directory_of(p).c_str(), _PC_NAME_MAX);
    if (name_max <= 0) name_max = NAME_MAX;
    const std::size_t limit = static_cast<std::size_t>(name_max) - kOutputNameHeadroom;
    if (name.size() > limit)
        refuse_as(flag, shown,
                  fmt::format("the file name is {} bytes long; at most {} fit here ({} allowed by the "
                              "file system, less {} for the temporary file and journal beside it)",
                              name.size(), limit, name_max, kOutputNameHeadroom));
    const std::string absolute = fs::absolute(p).string();
    if (absolute.size() + kOutputNameHeadroom >= PATH_MAX)
        refuse_as(flag, shown,
                  fmt::format("the path is {} bytes long; at most {} fit", absolute.size(),
                              PATH_MAX - 1 - kOutputNameHeadroom));
}

bool same_file(const std::string &a, const struct stat &b) {
    struct stat sa {};
    return !a.empty() && ::stat(a.c_str(), &sa) == 0 && sa.st_dev == b.st_dev && sa.st_ino == b.st_ino;
}

// An interrupted run's journal beside `path` would be refused only once the
// run starts (Journal::create); found here, before anything runs. A journal
// a live run holds (its lock) is that run's, not an interrupted one.
void check_no_journal(const std::string &shown, const std::string &path) {
    const std::string journal = journal_path_for(path);
    struct stat st {};
    if (::lstat(journal.c_str(), &st) == 0 && journal_is_live(journal))
        refuse(shown, fmt::format("a run still going writes here (its journal {} is held by it); wait for it to "
                                  "finish, or choose another --out",
                                  journal));
    if (::lstat(journal.c_str(), &st) == 0)
        refuse(shown, fmt::format("the journal of an interrupted run lies beside it ({}): `opbench run --resume {}` "
                                  "finishes that run; remove the journal to start afresh",
                                  journal, path));
}

// What --resume may replace without --force: the interrupted run's empty
// reservation (it was killed before writing anything) or its own result set
// marked incomplete.
bool is_empty_or_incomplete_result_set(const std::string &path, const struct stat &st) {
    if (st.st_size == 0) return true;
    std::ifstream in(path);
    const nlohmann::json rs = nlohmann::json::parse(in, nullptr, false);
    if (rs.is_discarded() || !rs.is_object()) return false;
    const auto ctx = rs.find("context");
    if (ctx == rs.end() || !ctx->is_object()) return false;
    const auto ob = ctx->find("opbench");
    if (ob == ctx->end() || !ob->is_object()) return false;
    const auto complete = ob->find("complete");
    return complete != ob->end() && complete->is_boolean() && !complete->get<bool>();
}

} // namespace

void check_not_an_input(std::string_view flag, const std::string &path, const std::vector<CommandInput> &inputs,
                        const std::vector<std::string> &input_dirs) {
    struct stat st {};
    if (::stat(path.c_str(), &st) == 0)
        for (const auto &in : inputs)
            if (same_file(in.path, st))
                refuse_as(flag, path,
                          fmt::format("is {} ({}), which this command reads; --force never replaces an input: "
                                      "choose another file",
                                      in.what, in.path));
    std::error_code ec;
    const fs::path mine = fs::weakly_canonical(path, ec);
    for (const auto &dir : input_dirs) {
        std::error_code dec;
        const fs::path d = fs::weakly_canonical(dir, dec);
        if (dec || ec || dir.empty()) continue;
        const auto rel = mine.lexically_relative(d);
        if (!rel.empty() && *rel.begin() != "..")
            refuse_as(flag, path,
                      fmt::format("is inside {}, the archive this command reads and stores into; write elsewhere",
                                  dir));
    }
}

std::string sanitize_file_stem(std::string_view name) {
    constexpr std::size_t kMaxStem = 96;
    std::string out;
    for (char ch : name) {
        if (out.size() == kMaxStem) break;
        const bool plain = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
                           ch == '-' || ch == '_' || ch == '.';
        // A leading '.' would make ".", ".." or a hidden file.
        out += plain && !(ch == '.' && out.empty()) ? ch : '_';
    }
    if (out.find_first_not_of('_') == std::string::npos) return "suite";
    return out;
}

std::string default_result_name(std::string_view stem, std::chrono::system_clock::time_point now, int counter) {
    using namespace std::chrono;
    const std::time_t secs = system_clock::to_time_t(time_point_cast<seconds>(now));
    const auto millis = duration_cast<milliseconds>(now.time_since_epoch()).count() % 1000;
    std::tm utc{};
    ::gmtime_r(&secs, &utc);
    char stamp[32];
    std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &utc);
    std::string name = fmt::format("{}-{}.{:03d}", stem, stamp, static_cast<int>(millis < 0 ? millis + 1000 : millis));
    if (counter > 1) name += fmt::format("-{}", counter);
    return name + ".json";
}

ResultPath::ResultPath(ResultPath &&other) noexcept
    : path_(std::move(other.path_)), reserved_(other.reserved_), dev_(other.dev_), ino_(other.ino_),
      slot_(other.slot_) {
    other.reserved_ = false;
    other.slot_ = -1;
}

ResultPath &ResultPath::operator=(ResultPath &&other) noexcept {
    if (this != &other) {
        release();
        path_ = std::move(other.path_);
        reserved_ = other.reserved_;
        dev_ = other.dev_;
        ino_ = other.ino_;
        slot_ = other.slot_;
        other.reserved_ = false;
        other.slot_ = -1;
    }
    return *this;
}

ResultPath::~ResultPath() { release(); }

void ResultPath::keep() noexcept {
    if (!reserved_) return;
    reserved_ = false;
    unregister_reservation(slot_);
    slot_ = -1;
}

void ResultPath::release() noexcept {
    if (!reserved_) return;
    reserved_ = false;
    unregister_reservation(slot_);
    slot_ = -1;
    // Only our own empty file: once the result set was renamed over it, the
    // path names another inode and stays.
    struct stat st {};
    if (::lstat(path_.c_str(), &st) == 0 && S_ISREG(st.st_mode) && st.st_dev == dev_ && st.st_ino == ino_ &&
        st.st_size == 0)
        ::unlink(path_.c_str());
}

int exit_keeping_journal(ResultPath &result_path, std::string_view command) {
    if (!result_path.path().empty() && fs::exists(journal_path_for(result_path.path()))) {
        result_path.keep();
        std::cerr << fmt::format("opbench {}: the finished cases are kept in {}; once the cause is fixed, "
                                 "`opbench {} --resume {}` finishes the run\n",
                                 command, journal_path_for(result_path.path()), command, result_path.path());
    }
    return kExitEnvironment;
}

ResultPath reserve_result_path(const OutputRequest &request, std::string_view suite_name,
                               std::chrono::system_clock::time_point now) {
    ResultPath result;
    auto reserve = [&](const std::string &path) -> bool {
        int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
        if (fd < 0) {
            if (errno == EEXIST) return false;
            refuse(path, fmt::format("cannot create it: {}", std::strerror(errno)));
        }
        struct stat st {};
        ::fstat(fd, &st);
        ::close(fd);
        result.path_ = path;
        result.reserved_ = true;
        result.dev_ = st.st_dev;
        result.ino_ = st.st_ino;
        // Removed on the exit paths that skip destructors too (a signal at
        // start-up, exit() in a plugin), while it is still this empty file.
        result.slot_ = register_reservation(path, st.st_dev, st.st_ino);
        return true;
    };

    if (request.path.empty()) {
        const fs::path dir = request.default_dir;
        std::error_code ec;
        fs::create_directories(dir, ec);
        if (ec) refuse(dir.string(), fmt::format("cannot create the results directory: {}", ec.message()));
        check_directory(dir.string(), dir);
        const std::string stem = sanitize_file_stem(suite_name);
        for (int counter = 1; counter <= 1000; ++counter) {
            const std::string path = (dir / default_result_name(stem, now, counter)).string();
            if (counter == 1) check_name_fits(path, path);
            struct stat journal_st {};
            if (::lstat(journal_path_for(path).c_str(), &journal_st) == 0) continue; // another run's
            if (reserve(path)) return result;
        }
        refuse(dir.string(), "1000 result files of this suite share this millisecond's name; choose --out");
    }

    const std::string &shown = request.path;
    const fs::path p = request.path;
    if (!p.has_filename()) refuse(shown, "names a directory; --out takes a file name such as DIR/run.json");
    check_name_fits(shown, p);
    check_not_an_input("--out", shown, request.inputs, request.input_dirs);

    struct stat st {};
    if (::stat(shown.c_str(), &st) == 0) {
        if (!S_ISREG(st.st_mode))
            refuse(shown, fmt::format("is {}; result sets are written only to regular files", kind_of(st.st_mode)));
        if (same_file(request.suite_path, st)) refuse(shown, "is the suite file being run; choose another --out");
        if (request.resuming) {
            if (!request.force && !is_empty_or_incomplete_result_set(shown, st))
                refuse(shown, "holds something other than the interrupted run's incomplete result set; move it "
                              "away to resume the run");
        } else {
            // The journal first: a killed run's empty set and journal are
            // finished by --resume, which "pass --force" would not say.
            check_no_journal(shown, shown);
            if (!request.force) refuse(shown, "already exists; pass --force to replace it, or choose another --out");
        }
        check_directory(shown, directory_of(p));
        result.path_ = shown; // replaced at the end, atomically
        return result;
    }
    if (errno != ENOENT) refuse(shown, fmt::format("cannot be used: {}", std::strerror(errno)));
    struct stat lst {};
    if (::lstat(shown.c_str(), &lst) == 0) refuse(shown, "is a symbolic link to nothing; choose another --out");
    check_directory(shown, directory_of(p));
    if (!request.resuming) check_no_journal(shown, shown);
    if (!reserve(shown)) refuse(shown, "was created by someone else just now; choose another --out");
    return result;
}

void check_output_file(const OutputFile &f) {
    if (f.path.empty()) refuse_as(f.flag, "''", "is empty; name a file");
    std::error_code ec;
    const fs::path mine = fs::weakly_canonical(f.path, ec);
    struct stat st {};
    const bool exists = ::stat(f.path.c_str(), &st) == 0;
    // The same file by any name: its inode when it exists, else its path.
    auto same_as = [&](const std::string &other) {
        struct stat ost {};
        if (other.empty()) return false;
        if (exists && ::stat(other.c_str(), &ost) == 0) return st.st_dev == ost.st_dev && st.st_ino == ost.st_ino;
        std::error_code oec;
        return !ec && fs::weakly_canonical(other, oec) == mine && !oec;
    };
    for (const auto &[flag, other] : f.other_outputs)
        if (same_as(other))
            refuse_as(f.flag, f.path, fmt::format("is also where {} goes; give each output its own file", flag));
    // The one rule of every writer (issue 44): the running binary is never
    // replaced, whichever command writes and whatever --force says.
    if (same_as(kRunningExecutable.path))
        refuse_as(f.flag, f.path, fmt::format("is {}; choose another file", kRunningExecutable.what));
    for (const auto &in : f.inputs)
        if (same_as(in))
            refuse_as(f.flag, f.path, fmt::format("is an input of this command ({}); choose another file", in));
    for (const auto &dir : f.input_dirs) {
        std::error_code dec;
        const fs::path d = fs::weakly_canonical(dir, dec);
        if (dec || ec) continue;
        const auto rel = mine.lexically_relative(d);
        if (!rel.empty() && *rel.begin() != "..")
            refuse_as(f.flag, f.path, fmt::format("is inside {}, which this command reads; write elsewhere", dir));
    }
    if (exists) {
        if (!S_ISREG(st.st_mode))
            refuse_as(f.flag, f.path, fmt::format("is {}; name a regular file", kind_of(st.st_mode)));
        if (!f.force) refuse_as(f.flag, f.path, "already exists; pass --force to replace it");
    } else {
        struct stat lst {};
        if (::lstat(f.path.c_str(), &lst) == 0)
            refuse_as(f.flag, f.path, "is a symbolic link to nothing; choose another file");
    }
    check_directory(f.path, directory_of(f.path), f.flag);
    check_name_fits(f.path, f.path, f.flag);
}

} // namespace opbench
