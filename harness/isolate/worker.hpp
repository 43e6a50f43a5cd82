// Worker processes: run a plugin's work in a child process so that a crash,
// abort, exit(), uncaught exception or hang costs one request (one case on one
// backend), never the run.
//
// Process model. The worker is this same program started again through
// /proc/self/exe (posix_spawn + exec) in a hidden worker mode, never a bare
// fork: the parent may already have run OpenMP parallel regions (libgomp does
// not survive fork), and exec gives the worker fresh runtimes, its own
// allocation interposer and its own plugin instances.
//
// Protocol. Two pipes on fixed descriptors in the child (kRequestFd,
// kReplyFd), never stdin/stdout (plugins print there). Each message is one
// frame, its CBOR size (4 bytes) and nlohmann-json's CBOR of it, which keeps
// what JSON text cannot: NaN and infinities (a summary of no samples, an
// infinite check error) and binary values (measure/plain_bytes.hpp). Text
// that is not UTF-8 is replaced with U+FFFD on the way, as JSON text would.
// The messages, as JSON:
//   parent -> child  {"request": ...}
//   child -> parent  {"phase": "prepare"}           whenever the phase changes
//                    {"reply": ...}                 the request's answer
//                    {"fault": "exception: ...", "phase": "..."}  then the child exits
// The parent remembers the last phase it read, so a crash is reported with
// the phase it happened in ("crashed: SIGSEGV in execute").
#pragma once

#include <nlohmann/json.hpp>

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <sys/types.h>
#include <vector>

namespace opbench {

// Descriptors the child finds its pipes on.
inline constexpr int kRequestFd = 3;
inline constexpr int kReplyFd = 4;

// How a request to a worker ended.
struct WorkerOutcome {
    bool ok = false;          // a reply came back; `reply` holds it
    nlohmann::json reply;     // the handler's answer when ok
    std::string failure;      // when !ok: "crashed: SIGSEGV in execute", "timed out after 60 s in execute", ...
    std::string phase;        // the last phase the child reported ("" before the first)
    bool interrupted = false; // stopped by interrupt() (the run is being interrupted)
};

// Text of a signal number: "SIGSEGV" (or "signal 77").
[[nodiscard]] std::string signal_name(int sig);

// "crashed: SIGSEGV in execute", "exited with status 0 during prepare", ...
// from a waitpid() status and the last reported phase.
[[nodiscard]] std::string describe_exit(int wait_status, std::string_view phase);

// The parent's side of one worker. Started on the first request and again
// after a failure, so a crash costs one request and the next one runs in a
// fresh process. Not thread-safe except interrupt().
class WorkerProcess {
public:
    // argv[0] is the program to exec (normally /proc/self/exe); the child is
    // started with argv as given.
    explicit WorkerProcess(std::vector<std::string> argv);
    ~WorkerProcess();
    WorkerProcess(const WorkerProcess &) = delete;
    WorkerProcess &operator=(const WorkerProcess &) = delete;

    // Sends `request` and waits up to `timeout_seconds` (<= 0: no limit) for
    // its reply. Never throws for what the child does; throws
    // std::runtime_error only when no child can be started at all.
    [[nodiscard]] WorkerOutcome call(const nlohmann::json &request, double timeout_seconds);

    // Kills the running child, if any, so that the call in progress returns
    // with `interrupted` set. Safe from another thread (a signal watcher).
    void interrupt();

    // Ends the child politely (closes its request pipe, waits briefly, then
    // kills it). Called by the destructor.
    void stop();

    // The running child's process id, or -1.
    [[nodiscard]] pid_t pid() const { return pid_; }
    // How many children were started so far (1 + restarts).
    [[nodiscard]] int starts() const { return starts_; }

private:
    void start();
    void kill_and_reap(int *wait_status);
    WorkerOutcome fail(std::string failure, const std::string &phase);
    // The outcome of a worker that exited or died (wait status `st`).
    WorkerOutcome ended(int st, const std::string &phase);

    std::vector<std::string> argv_;
    volatile pid_t pid_ = -1; // read by interrupt() from another thread
    int to_child_ = -1, from_child_ = -1;
    int starts_ = 0;
    volatile bool interrupted_ = false;
    std::string buffer_; // bytes read from the child past the last full frame
};

// The child's side: reports phases to the parent.
class PhaseReporter {
public:
    explicit PhaseReporter(int fd) : fd_(fd) {}
    // Tells the parent the work now enters `phase`; only changes are sent.
    void enter(std::string_view phase);
    [[nodiscard]] const std::string &current() const { return phase_; }
    // Forgets the phase without telling the parent (between requests).
    void reset() { phase_.clear(); }

private:
    int fd_;
    std::string phase_;
};

// The worker's request handler: returns the reply. An exception it throws is
// reported to the parent as a fault of the request, and the worker then ends
// with _exit (a plugin that threw may be left in any state: none of its
// destructors or atexit handlers run).
using WorkerHandler = std::function<nlohmann::json(const nlohmann::json &request, PhaseReporter &phase)>;

// The child's main loop: reads requests from kRequestFd until it closes,
// answers each through `handler` on kReplyFd. Dies with the parent. Returns
// the process exit status.
[[nodiscard]] int serve_worker(const WorkerHandler &handler);

} // namespace opbench
