#include "run/journal.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

namespace opbench {

namespace {

constexpr const char *kMagic = "opbench_journal";

std::string line_of(const nlohmann::json &j) {
    // Invalid UTF-8 in a name must not make the journal unwritable.
    return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

void write_line(int fd, const std::string &path, const std::string &line) {
    std::string_view rest = line;
    while (!rest.empty()) {
        ssize_t n = ::write(fd, rest.data(), rest.size());
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0)
            throw JournalError(fmt::format("{}: cannot append: {}", path, n < 0 ? std::strerror(errno) : "short write"),
                               true);
        rest.remove_prefix(static_cast<std::size_t>(n));
    }
    if (::fsync(fd) != 0) throw JournalError(fmt::format("{}: cannot sync: {}", path, std::strerror(errno)), true);
}

// Bytes up to and including the last newline: the journal's complete lines.
off_t complete_length(const std::string &path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw JournalError(fmt::format("{}: cannot open: {}", path, std::strerror(errno)));
    std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const std::size_t nl = all.rfind('\n');
    return nl == std::string::npos ? 0 : static_cast<off_t>(nl + 1);
}

// Takes the run's lock on the journal; refuses one a live run holds.
void lock_or_refuse(int fd, const std::string &path) {
    if (::flock(fd, LOCK_EX | LOCK_NB) == 0) return;
    const int e = errno;
    ::close(fd);
    if (e == EWOULDBLOCK)
        throw JournalError(fmt::format("{}: a run still going holds this journal; wait for it to finish", path));
    throw JournalError(fmt::format("{}: cannot lock: {}", path, std::strerror(e)));
}

} // namespace

bool journal_is_live(const std::string &path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) return false;
    const bool live = ::flock(fd, LOCK_SH | LOCK_NB) != 0 && errno == EWOULDBLOCK;
    ::close(fd);
    return live;
}

std::string journal_path_for(const std::string &out_path) { return out_path + ".journal"; }

Journal Journal::create(const std::string &path, const nlohmann::json &header) {
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0) {
        if (errno == EEXIST)
            throw JournalError(fmt::format("{}: a journal of another run is there (resume it with "
                                           "`{} {}`, or remove it)",
                                           path, resume_command_of(path), path));
        throw JournalError(fmt::format("{}: cannot create: {}", path, std::strerror(errno)));
    }
    lock_or_refuse(fd, path);
    Journal j(path, fd);
    nlohmann::json first = header;
    first[kMagic] = kJournalVersion;
    j.append(first);
    return j;
}

Journal Journal::reopen(const std::string &path) {
    const int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
    if (fd < 0) throw JournalError(fmt::format("{}: cannot open: {}", path, std::strerror(errno)));
    lock_or_refuse(fd, path); // before measuring what to keep: a live run may be appending
    const off_t keep = complete_length(path);
    if (::ftruncate(fd, keep) != 0) {
        const int e = errno;
        ::close(fd);
        throw JournalError(fmt::format("{}: cannot cut its torn last line: {}", path, std::strerror(e)));
    }
    return Journal(path, fd);
}

Journal::Journal(Journal &&other) noexcept : path_(std::move(other.path_)), fd_(other.fd_) { other.fd_ = -1; }

Journal::~Journal() {
    if (fd_ >= 0) ::close(fd_);
}

void Journal::append(const nlohmann::json &entry) {
    const std::string line = line_of(entry);
    std::lock_guard lock(mutex_);
    if (fd_ < 0) throw JournalError(fmt::format("{}: already closed", path_));
    write_line(fd_, path_, line);
}

void Journal::remove() {
    std::lock_guard lock(mutex_);
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
    if (::unlink(path_.c_str()) != 0 && errno != ENOENT)
        throw JournalError(fmt::format("{}: cannot remove: {}", path_, std::strerror(errno)));
}

namespace {

// "" for a valid record line; else what is wrong with it. A case line names
// its case, its status and at least one result-set entry (the run's own
// lines: run/run_log.cpp add_case); other lines carry context.
std::string record_problem(const nlohmann::json &j) {
    if (j.is_discarded() || !j.is_object()) return "not a JSON object";
    if (!j.contains("case")) return "";
    if (!j["case"].is_string() || j["case"].get_ref<const std::string &>().empty()) return "\"case\" is not a name";
    if (!j.contains("status") || !j["status"].is_string()) return "no \"status\" string";
    const std::string &status = j["status"].get_ref<const std::string &>();
    if (status != "passed" && status != "failed" && status != "skipped" && status != "starved")
        return fmt::format("\"status\" is '{}', not passed, failed, skipped or starved", status);
    if (!j.contains("entries") || !j["entries"].is_array() || j["entries"].empty())
        return "no \"entries\" array of the case's result-set entries";
    for (const auto &e : j["entries"])
        if (!e.is_object() || !e.contains("name") || !e["name"].is_string()) return "an entry without a \"name\"";
    if (j.contains("index") && !j["index"].is_number_unsigned()) return "\"index\" is not a count";
    return "";
}

} // namespace

JournalContents read_journal(const std::string &path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw JournalError(fmt::format("{}: cannot open: {}", path, std::strerror(errno)));
    std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    JournalContents c;
    std::size_t start = 0;
    int line_no = 0;
    while (start < all.size()) {
        ++line_no;
        const std::size_t nl = all.find('\n', start);
        if (nl == std::string::npos) { // torn: the writer died mid-line
            c.torn_tail = true;
            break;
        }
        nlohmann::json j = nlohmann::json::parse(all.begin() + static_cast<std::ptrdiff_t>(start),
                                                 all.begin() + static_cast<std::ptrdiff_t>(nl), nullptr, false);
        start = nl + 1;
        if (line_no == 1 && (j.is_discarded() || !j.is_object()))
            throw JournalError(fmt::format("{}:1: not a JSON object (the journal is damaged)", path));
        if (line_no > 1) {
            if (std::string why = record_problem(j); !why.empty()) {
                c.dropped.push_back(fmt::format("{}:{}: {}", path, line_no, why));
                continue;
            }
        }
        if (line_no == 1) {
            if (!j.contains(kMagic))
                throw JournalError(fmt::format("{}:1: not an opbench journal (no \"{}\" field)", path, kMagic));
            if (j[kMagic] != kJournalVersion)
                throw JournalError(fmt::format("{}:1: journal version {}, this opbench reads version {}", path,
                                               j[kMagic].dump(), kJournalVersion));
            j.erase(kMagic);
            c.header = std::move(j);
            continue;
        }
        c.entries.push_back(std::move(j));
    }
    if (line_no == 0 || c.header.is_null()) throw JournalError(fmt::format("{}: empty; not an opbench journal", path));
    return c;
}

std::string resume_command_of(const std::string &path) {
    std::ifstream in(path, std::ios::binary);
    std::string first;
    if (in && std::getline(in, first)) {
        const nlohmann::json j = nlohmann::json::parse(first, nullptr, false);
        if (j.is_object() && j.contains(kMagic) && j.value("command", nlohmann::json()) == "ab")
            return "opbench ab --resume";
    }
    return "opbench run --resume";
}

bool looks_like_journal(const std::string &path) {
    std::ifstream in(path, std::ios::binary);
    std::string first;
    if (!in || !std::getline(in, first)) return false;
    nlohmann::json j = nlohmann::json::parse(first, nullptr, false);
    return !j.is_discarded() && j.is_object() && j.contains(kMagic);
}

} // namespace opbench
