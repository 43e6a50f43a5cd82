// Where a result set goes, checked before the first case runs: a run that
// takes an hour must not end in "cannot write", and a careless --out must
// never replace a device, a directory, the suite being run, or an earlier
// result. The path is reserved (created empty with O_EXCL) up front, so two
// runs never share a file; the result writer later renames the finished set
// over the reservation (write_file_atomically).
#pragma once

#include <chrono>
#include <cstddef>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>
#include <sys/types.h>

namespace opbench {

// An --out that cannot be used; what() says which path, why, and what would do.
class OutputPathError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// Characters a result file's name must leave free in its directory entry:
// the atomic writer's scratch file and the run's journal beside it add to the
// name ("." + name + ".tmp.XXXXXX", name + ".journal"), and those must fit
// NAME_MAX too.
inline constexpr std::size_t kOutputNameHeadroom = 32;

// A file the command reads, and what it is ("the opbench executable", "the
// loaded plugin naive"): an output is never it, by whatever name.
struct CommandInput {
    std::string path;
    std::string what;
};

// What every output check refuses, by any name, with or without --force.
inline const CommandInput kRunningExecutable{"/proc/self/exe", "the opbench executable running"};

// Refuses (OutputPathError naming `flag`, the path and what it is) an output
// that is one of `inputs` (the same device and inode, whatever the name) or
// lies inside one of `input_dirs` (an archive: its index and every set in it).
void check_not_an_input(std::string_view flag, const std::string &path, const std::vector<CommandInput> &inputs,
                        const std::vector<std::string> &input_dirs);

struct OutputRequest {
    std::string path;       // --out as given; empty: a default name under default_dir
    bool force = false;     // --force: an existing regular file may be replaced
    std::string suite_path; // the suite being run: never written over
    std::string default_dir = "results";
    // `run --resume`: the path may hold this run's own incomplete result set
    // ("complete": false) or its empty reservation (a killed run), and is
    // replaced without --force; anything else there is still refused.
    bool resuming = false;
    // Never written over, --force or not (check_not_an_input).
    std::vector<CommandInput> inputs{};
    std::vector<std::string> input_dirs{};
};

// The result set's path, reserved for this run. Move-only. While it holds a
// reservation (an empty file it created), destroying it removes that file
// unless something else has replaced it since (the finished result set), so
// a run that stops early leaves no empty result behind.
class ResultPath {
public:
    ResultPath() = default;
    ResultPath(ResultPath &&other) noexcept;
    ResultPath &operator=(ResultPath &&other) noexcept;
    ResultPath(const ResultPath &) = delete;
    ResultPath &operator=(const ResultPath &) = delete;
    ~ResultPath();

    const std::string &path() const { return path_; }
    // True when this run created the (still empty) file at path().
    bool reserved() const { return reserved_; }
    // Gives the reservation up without removing the file: a run that failed
    // with a journal beside it keeps both, so `--resume path` finishes it.
    void keep() noexcept;

private:
    friend ResultPath reserve_result_path(const OutputRequest &, std::string_view,
                                          std::chrono::system_clock::time_point);
    void release() noexcept;
    std::string path_;
    bool reserved_ = false;
    dev_t dev_ = 0;
    ino_t ino_ = 0;
    int slot_ = -1; // in scratch_file's exit-path registry
};

// An environment failure during a run (a full disk): exit 3, keeping the
// result set's reservation and the journal of what finished, so that the
// printed `opbench <command> --resume SET` finishes the run once the cause is
// fixed. `command`: "run" or "ab".
int exit_keeping_journal(ResultPath &result_path, std::string_view command);

// Checks the request and reserves the path. With an explicit path: its
// directory must exist and be writable; the name must fit (NAME_MAX less
// kOutputNameHeadroom, PATH_MAX); an existing path is refused unless it is a
// regular file and `force` is set; a directory, device, FIFO or socket and the
// suite file itself are refused always. A journal beside the path
// (<path>.journal, an interrupted run) is refused unless resuming. Without one: default_dir (created if
// missing) / "<sanitised suite name>-<UTC yyyymmdd-hhmmss.mmm>[-N].json", the
// first such name that did not exist. Throws OutputPathError.
[[nodiscard]] ResultPath
reserve_result_path(const OutputRequest &request, std::string_view suite_name,
                    std::chrono::system_clock::time_point now = std::chrono::system_clock::now());

// Any other file a command writes (a trace, a reader's -o): the same rule as
// --out, checked before any work starts, so a run that takes an hour never
// ends in "cannot write" and no output replaces what the user did not ask to.
struct OutputFile {
    std::string flag; // as the user named it: "--trace", "-o"
    std::string path;
    bool force = false;                  // an existing regular file may be replaced
    std::vector<std::string> inputs;     // files the command reads: never written over
    std::vector<std::string> input_dirs; // directories it reads (an archive): nothing inside them
    // The command's other outputs, as (flag, path): never the same file.
    std::vector<std::pair<std::string, std::string>> other_outputs;
};

// Refused, always: an empty path; the running opbench executable
// (kRunningExecutable); a directory, device, FIFO or socket; an
// input of the command (the same file by any name) or a path inside a
// directory it reads; another output's path; a
// dangling symlink; a directory that does not exist or is not writable; a
// name too long for the temporary file beside it. An existing regular file
// without `force`. Throws OutputPathError naming the flag and the path.
void check_output_file(const OutputFile &f);

// A suite name made into one plain file-name component: letters, digits, '.',
// '-' and '_' kept, anything else (a '/', a control character, a space) an
// '_'; no leading '.', so "../x" and ".." cannot step out of the directory;
// at most 96 bytes; "suite" when nothing is left.
[[nodiscard]] std::string sanitize_file_stem(std::string_view name);

// "<stem>-<yyyymmdd-hhmmss.mmm>.json" (UTC), and "-<counter>" before ".json"
// when counter > 1.
[[nodiscard]] std::string default_result_name(std::string_view stem, std::chrono::system_clock::time_point now,
                                              int counter = 1);

} // namespace opbench
