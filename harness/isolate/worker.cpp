#include "isolate/worker.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <stdexcept>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

namespace opbench {

namespace {

using Clock = std::chrono::steady_clock;

// Exit status of a worker that reported a fault (an exception) and stopped.
constexpr int kFaultExit = 70;

// Writes all of `text`; false when the other end is gone.
bool write_all(int fd, std::string_view text) {
    while (!text.empty()) {
        ssize_t n = ::write(fd, text.data(), text.size());
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false;
        text.remove_prefix(static_cast<std::size_t>(n));
    }
    return true;
}

// Text that is not UTF-8 (a plugin's message) becomes U+FFFD, as JSON text
// would have it: the journal and result sets must stay writable.
void replace_invalid_utf8(nlohmann::json &j) {
    if (j.is_string()) {
        const std::string &text = j.get_ref<const std::string &>();
        if (std::none_of(text.begin(), text.end(), [](char c) { return (c & 0x80) != 0; }))
            return; // ASCII: nothing to replace
        j = nlohmann::json::parse(j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
    } else if (j.is_structured()) {
        for (nlohmann::json &v : j) replace_invalid_utf8(v);
    }
}

// One frame: the message's CBOR size as 4 bytes in this machine's order
// (both ends are the same program), then its CBOR. False when the other end
// is gone (or the message is over 4 GiB).
bool send_message(int fd, nlohmann::json message) {
    replace_invalid_utf8(message);
    const std::vector<std::uint8_t> cbor = nlohmann::json::to_cbor(message);
    if (cbor.size() > UINT32_MAX) return false;
    const auto size = static_cast<std::uint32_t>(cbor.size());
    std::string frame(sizeof size, '\0');
    std::memcpy(frame.data(), &size, sizeof size);
    frame.append(cbor.begin(), cbor.end());
    return write_all(fd, frame);
}

// Pops one complete frame off the front of `buffer`, if there is one: its
// message, or a discarded value when the frame is not one CBOR value.
std::optional<nlohmann::json> pop_message(std::string &buffer) {
    std::uint32_t size = 0;
    if (buffer.size() < sizeof size) return std::nullopt;
    std::memcpy(&size, buffer.data(), sizeof size);
    if (buffer.size() - sizeof size < size) return std::nullopt;
    const auto first = buffer.begin() + sizeof size;
    nlohmann::json message = nlohmann::json::from_cbor(first, first + size, /*strict=*/true, /*allow_exceptions=*/false);
    buffer.erase(0, sizeof size + size);
    return message;
}

// A descriptor numbered at least 10, so that placing it on 3 or 4 in the
// child can never overwrite the other one.
int high_fd(int fd) {
    int moved = ::fcntl(fd, F_DUPFD_CLOEXEC, 10);
    if (moved < 0) throw std::runtime_error(fmt::format("worker: fcntl: {}", std::strerror(errno)));
    ::close(fd);
    return moved;
}

std::string seconds_g(double s) { return fmt::format("{:g} s", s); }

} // namespace

std::string signal_name(int sig) {
    if (const char *abbrev = sigabbrev_np(sig)) return std::string("SIG") + abbrev;
    return fmt::format("signal {}", sig);
}

std::string describe_exit(int wait_status, std::string_view phase) {
    const std::string where = phase.empty() ? std::string("while starting") : fmt::format("in {}", phase);
    if (WIFSIGNALED(wait_status)) return fmt::format("crashed: {} {}", signal_name(WTERMSIG(wait_status)), where);
    if (WIFEXITED(wait_status))
        return fmt::format("exited with status {} {}", WEXITSTATUS(wait_status),
                           phase.empty() ? std::string("while starting") : fmt::format("during {}", phase));
    return fmt::format("stopped (wait status {:#x}) {}", wait_status, where);
}

// ---- parent side ---------------------------------------------------------------

WorkerProcess::WorkerProcess(std::vector<std::string> argv) : argv_(std::move(argv)) {
    if (argv_.empty()) throw std::invalid_argument("worker: empty command");
}

WorkerProcess::~WorkerProcess() { stop(); }

void WorkerProcess::start() {
    // Writing to a child that died must give EPIPE, not kill the run.
    std::signal(SIGPIPE, SIG_IGN);

    int req[2], rep[2];
    if (::pipe2(req, O_CLOEXEC) != 0) throw std::runtime_error(fmt::format("worker: pipe: {}", std::strerror(errno)));
    if (::pipe2(rep, O_CLOEXEC) != 0) {
        ::close(req[0]);
        ::close(req[1]);
        throw std::runtime_error(fmt::format("worker: pipe: {}", std::strerror(errno)));
    }
    const int child_in = high_fd(req[0]), child_out = high_fd(rep[1]);

    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, child_in, kRequestFd); // dup2 clears close-on-exec
    posix_spawn_file_actions_adddup2(&actions, child_out, kReplyFd);

    // The child starts with no blocked signals and default handlers (the
    // parent blocks SIGINT/SIGTERM/SIGHUP/SIGQUIT for its signal watcher and
    // ignores SIGPIPE and SIGXFSZ),
    // in its own process group: a Ctrl-C at the terminal reaches opbench,
    // which decides what happens to the case in progress.
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    sigset_t none, defaults;
    sigemptyset(&none);
    sigemptyset(&defaults);
    for (int s : {SIGINT, SIGTERM, SIGPIPE, SIGHUP, SIGQUIT, SIGXFSZ}) sigaddset(&defaults, s);
    posix_spawnattr_setsigmask(&attr, &none);
    posix_spawnattr_setsigdefault(&attr, &defaults);
    posix_spawnattr_setpgroup(&attr, 0);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP);

    std::vector<char *> argv;
    for (auto &a : argv_) argv.push_back(a.data());
    argv.push_back(nullptr);
    pid_t pid = -1;
    const int rc = ::posix_spawn(&pid, argv[0], &actions, &attr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
    ::close(child_in);
    ::close(child_out);
    if (rc != 0) {
        ::close(req[1]);
        ::close(rep[0]);
        throw std::runtime_error(fmt::format("worker: cannot start {}: {}", argv_[0], std::strerror(rc)));
    }
    to_child_ = req[1];
    from_child_ = rep[0];
    buffer_.clear();
    pid_ = pid;
    ++starts_;
}

void WorkerProcess::kill_and_reap(int *wait_status) {
    const pid_t pid = pid_;
    if (pid <= 0) return;
    ::kill(pid, SIGKILL);
    int st = 0;
    while (::waitpid(pid, &st, 0) < 0 && errno == EINTR) {}
    if (wait_status) *wait_status = st;
    pid_ = -1;
    if (to_child_ >= 0) ::close(to_child_);
    if (from_child_ >= 0) ::close(from_child_);
    to_child_ = from_child_ = -1;
}

WorkerOutcome WorkerProcess::fail(std::string failure, const std::string &phase) {
    WorkerOutcome o;
    o.phase = phase;
    o.interrupted = interrupted_;
    o.failure = interrupted_ ? std::string("interrupted") : std::move(failure);
    interrupted_ = false;
    return o;
}

// A worker ended by SIGTERM, SIGINT or SIGHUP was stopped from outside, not
// crashed by its plugin: Slurm's scancel and requeue signal every process of
// the job, the worker as well as opbench, and the worker can die before
// opbench's own handler has run (a real Slurm recorded the case in progress
// as "crashed: SIGTERM", a false failure that --resume then kept). Its case
// is abandoned as on an interrupt and runs again on --resume.
WorkerOutcome WorkerProcess::ended(int st, const std::string &phase) {
    if (WIFSIGNALED(st) && (WTERMSIG(st) == SIGTERM || WTERMSIG(st) == SIGINT || WTERMSIG(st) == SIGHUP))
        interrupted_ = true;
    return fail(describe_exit(st, phase), phase);
}

WorkerOutcome WorkerProcess::call(const nlohmann::json &request, double timeout_seconds) {
    if (pid_ <= 0) start();
    std::string phase;
    const auto started = Clock::now();

    // Reaps a child whose reply pipe closed: it is exiting (a plugin called
    // exit(), or crashed). A child that closed the pipe but lingers is killed
    // after a short grace.
    auto reap_exited = [&]() -> int {
        const pid_t pid = pid_;
        int st = 0;
        for (int i = 0; i < 200; ++i) {
            pid_t r = ::waitpid(pid, &st, WNOHANG);
            if (r == pid) {
                pid_ = -1;
                ::close(to_child_);
                ::close(from_child_);
                to_child_ = from_child_ = -1;
                return st;
            }
            ::usleep(10000);
        }
        kill_and_reap(&st);
        return st;
    };

    if (!send_message(to_child_, nlohmann::json{{"request", request}})) {
        const int st = reap_exited();
        return ended(st, phase);
    }
    char chunk[65536];
    for (;;) {
        while (auto message = pop_message(buffer_)) {
            nlohmann::json &msg = *message;
            if (msg.is_discarded() || !msg.is_object()) {
                int st = 0;
                kill_and_reap(&st);
                return fail(fmt::format("protocol error: unreadable message from the worker in {}",
                                        phase.empty() ? "start-up" : phase),
                            phase);
            }
            if (msg.contains("phase")) phase = msg["phase"].get<std::string>();
            if (msg.contains("reply")) {
                WorkerOutcome o;
                o.ok = true;
                o.reply = std::move(msg["reply"]);
                o.phase = phase;
                return o;
            }
            if (msg.contains("fault")) {
                const std::string what = msg["fault"].get<std::string>();
                reap_exited();
                return fail(phase.empty() ? what : fmt::format("{} in {}", what, phase), phase);
            }
        }
        int wait_ms = -1;
        if (timeout_seconds > 0) {
            const double left = timeout_seconds - std::chrono::duration<double>(Clock::now() - started).count();
            if (left <= 0) {
                kill_and_reap(nullptr);
                return fail(fmt::format("timed out after {} in {}", seconds_g(timeout_seconds),
                                        phase.empty() ? "start-up" : phase),
                            phase);
            }
            wait_ms = static_cast<int>(std::min(left * 1000.0 + 1.0, 3.6e6));
        }
        pollfd pfd{from_child_, POLLIN, 0};
        const int ready = ::poll(&pfd, 1, wait_ms);
        if (ready < 0 && errno == EINTR) continue;
        if (ready == 0) continue; // the deadline check above ends it
        const ssize_t n = ::read(from_child_, chunk, sizeof chunk);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            const int st = reap_exited();
            return ended(st, phase);
        }
        buffer_.append(chunk, static_cast<std::size_t>(n));
    }
}

void WorkerProcess::interrupt() {
    interrupted_ = true;
    const pid_t pid = pid_;
    if (pid > 0) ::kill(pid, SIGKILL);
}

void WorkerProcess::stop() {
    if (pid_ <= 0) return;
    // Closing the request pipe asks the child to finish; it gets a moment to
    // release its plugins (a device context, a thread pool) before the kill.
    ::close(to_child_);
    to_child_ = -1;
    const pid_t pid = pid_;
    int st = 0;
    for (int i = 0; i < 300; ++i) {
        if (::waitpid(pid, &st, WNOHANG) == pid) {
            pid_ = -1;
            ::close(from_child_);
            from_child_ = -1;
            return;
        }
        ::usleep(10000);
    }
    kill_and_reap(nullptr);
}

// ---- child side ------------------------------------------------------------------

void PhaseReporter::enter(std::string_view phase) {
    if (phase == phase_) return;
    phase_ = std::string(phase);
    // A parent that is gone cannot be told; the next reply write ends the worker.
    (void)send_message(fd_, nlohmann::json{{"phase", phase_}});
}

int serve_worker(const WorkerHandler &handler) {
    // Die with the parent (a SIGKILLed opbench must not leave workers running).
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() == 1) return 1;
    std::signal(SIGPIPE, SIG_IGN);

    PhaseReporter phase(kReplyFd);
    std::string buffer;
    char chunk[65536];
    for (;;) {
        std::optional<nlohmann::json> msg = pop_message(buffer);
        if (!msg) {
            const ssize_t n = ::read(kRequestFd, chunk, sizeof chunk);
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) return 0; // the parent closed the pipe: done
            buffer.append(chunk, static_cast<std::size_t>(n));
            continue;
        }
        if (msg->is_discarded() || !msg->is_object() || !msg->contains("request")) {
            (void)send_message(kReplyFd, nlohmann::json{{"fault", "protocol error: unreadable request"}});
            return kFaultExit;
        }
        nlohmann::json reply;
        std::string fault;
        try {
            reply = handler((*msg)["request"], phase);
        } catch (const std::exception &e) {
            fault = fmt::format("exception: {}", e.what());
        } catch (...) {
            fault = "exception: of a type that is not std::exception";
        }
        if (!fault.empty()) {
            (void)send_message(kReplyFd, nlohmann::json{{"fault", fault}, {"phase", phase.current()}});
            // A plugin that threw may be in any state: no destructors, no
            // atexit handlers of its libraries; the parent starts afresh.
            std::fflush(nullptr);
            ::_exit(kFaultExit);
        }
        if (!send_message(kReplyFd, nlohmann::json{{"reply", std::move(reply)}})) return 1;
        phase.reset(); // the parent starts each request with no phase, too
    }
}

} // namespace opbench
