// The opbench program (harness/main.cpp) against bad input and unsafe output,
// through the real binary: every bad input exits 2 with a message saying
// what and what would be valid, before any case runs; --out never replaces a
// device or an earlier result; default names never collide nor leave
// results/; a backend the loader refused is a skipped entry with the
// loader's reason; plugins others may write are not opened.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef OPBENCH_EXE
#error "OPBENCH_EXE and FAKE_PLUGIN_DIR must be defined (tests/harness/meson.build)"
#endif

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

struct Outcome {
    int rc = -1;
    std::string output; // stdout and stderr together
};

// Runs `opbench ARGS` in `cwd` with `env` ("NAME=value ..." or empty).
Outcome opbench(const std::string &args, const fs::path &cwd, const std::string &env = "") {
    const bool is_run = args.rfind("run ", 0) == 0;
    const std::string cmd = "cd '" + cwd.string() + "' && env OPBENCH_PLUGIN_PATH= " + env + " '" OPBENCH_EXE "' " +
                            args + (is_run ? " --no-progress" : "") + " 2>&1";
    Outcome o;
    std::FILE *pipe = ::popen(cmd.c_str(), "r");
    if (!pipe) return o;
    std::array<char, 4096> buf{};
    std::size_t n;
    while ((n = std::fread(buf.data(), 1, buf.size(), pipe)) > 0) o.output.append(buf.data(), n);
    const int status = ::pclose(pipe);
    o.rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    return o;
}

// A tiny suite: one 4x4 add on naive (and `extra_backend`), measured briefly.
std::string tiny_suite(const std::string &name, const std::string &extra_backend = "") {
    std::string backends = "\"naive\"" + (extra_backend.empty() ? "" : ", \"" + extra_backend + "\"");
    return "[suite]\nname = \"" + name + "\"\n[defaults]\nbackends = [" + backends +
           "]\nmin_time = 0.001\nmax_time = 0.01\nrepetitions = 1\nwarmup = 1\nmin_samples = 3\n"
           "[[case]]\nop = \"add\"\nrows = 4\ncols = 4\n";
}

class Main : public ::testing::Test {
protected:
    void SetUp() override {
        dir_ = fs::temp_directory_path() / ("opbench-main-" + std::to_string(::getpid()) + "-" +
                                            ::testing::UnitTest::GetInstance()->current_test_info()->name());
        fs::remove_all(dir_);
        fs::create_directories(dir_);
        fs::permissions(dir_, fs::perms::others_write, fs::perm_options::remove);
        write("tiny.toml", tiny_suite("tiny"));
    }
    void TearDown() override { fs::remove_all(dir_); }
    void write(const std::string &name, const std::string &text) { std::ofstream(dir_ / name) << text; }
    std::string read(const std::string &name) {
        std::ifstream in(dir_ / name);
        return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    }
    fs::path dir_;
};

// `part` in `text`, or in `text` with its wrapped lines joined: `list`
// wraps a long reason onto indented lines ("\n" + spaces reads as one space).
bool has(const std::string &text, const std::string &part) {
    if (text.find(part) != std::string::npos) return true;
    std::string joined;
    for (std::size_t i = 0; i < text.size(); ++i) {
        if (text[i] != '\n') {
            joined += text[i];
            continue;
        }
        std::size_t next = text.find_first_not_of(' ', i + 1);
        if (next == std::string::npos) break;
        joined += ' ';
        i = next - 1;
    }
    return joined.find(part) != std::string::npos;
}

} // namespace

TEST_F(Main, EveryBadInputExits2BeforeRunningWithAMessage) {
    write("exists.json", "an earlier result");
    ::mkfifo((dir_ / "fifo").c_str(), 0600);
    const std::string big(309, '9');
    struct Bad {
        std::string args, says;
    };
    const Bad cases[] = {
        {"run missing.toml", "missing.toml: cannot open suite file: No such file or directory"},
        {"validate missing.toml", "missing.toml: cannot open suite file"},
        {"run", "a suite file is required (or --resume FILE)"},
        {"run /dev/zero", "/dev/zero: is not a regular file"},
        {"validate .", ".: is a directory"},
        {"run tiny.toml --bogus", "unknown argument '--bogus'"},
        {"frobnicate", "A subcommand is required"},
        {"run tiny.toml --threads x", "Could not convert: --threads = x"},
        {"run tiny.toml --threads 100000", "'threads' must be between 0 and 1024, got 100000"},
        {"run tiny.toml --min-time 1e-9 --max-time 1e-9", "'max_time' must be between 0.001 and 3600"},
        {"run tiny.toml --min-time 1e308 --max-time 1", "got 1e+308"},
        {"run tiny.toml --min-time 1e400", "'min_time' must be a finite number"},
        {"run tiny.toml --noise " + big, "'noise' must be a finite number"},
        {"run tiny.toml --warmup " + big, "'warmup' must be between 0 and 1000000"},
        {"run tiny.toml --cache hot", "--cache"},
        {"run tiny.toml --backends ''", "--backends names no backend (known: "},
        {"run tiny.toml --backends naiv", "unknown backend 'naiv' (known: "},
        {"run tiny.toml --cpus 0-1x", "--cpus: bad CPU list entry '0-1x'"},
        {"run tiny.toml --cpus " + big, "CPU numbers go up to 1023"},
        {"run tiny.toml --benchmark_out=F", "use --out FILE"},
        {"run tiny.toml --benchmark_format=json", "use --out FILE"},
        {"run tiny.toml --benchmark_filter='('", "not a valid extended regular expression"},
        {"run tiny.toml --benchmark_repetitions=0", "--benchmark_repetitions=N takes a positive integer"},
        {"run tiny.toml --out /dev/null", "--out /dev/null: is a character device"},
        {"run tiny.toml --out /dev/null --force", "--out /dev/null: is a character device"},
        {"run tiny.toml --out .", "--out .: is a directory"},
        {"run tiny.toml --out fifo", "--out fifo: is a FIFO"},
        {"run tiny.toml --out tiny.toml --force", "is the suite file being run"},
        {"run tiny.toml --out exists.json", "--out exists.json: already exists; pass --force"},
        {"run tiny.toml --out no/dir/x.json", "its directory no/dir does not exist"},
        {"run tiny.toml --out " + std::string(245, 'a') + ".json", "the file name is 250 bytes long"},
        {"run tiny.toml --out ''", "--out is empty"},
        {"run tiny.toml --out x.json --no-out", "--out excludes --no-out"},
        // Given empty is an error, not "none" (issue 19).
        {"run tiny.toml --mem-limit ''", "--mem-limit: '' is not a size"},
        {"run tiny.toml --shard ''", "--shard '': expected i/n"},
        // --trace follows --out's rule, checked before the run (issue 19: it
        // replaced the suite, a result set, lost itself to --out or the
        // journal, and refused a device only after the run, losing the set).
        {"run tiny.toml --trace tiny.toml --force", "--trace tiny.toml: is an input of this command"},
        {"run tiny.toml --trace exists.json", "--trace exists.json: already exists; pass --force"},
        {"run tiny.toml --out x.json --trace x.json --force", "--trace x.json: is also where --out goes"},
        {"run tiny.toml --out x.json --trace x.json.journal", "is also where the run's journal goes"},
        {"run tiny.toml --trace /dev/null", "--trace /dev/null: is a character device"},
        {"run tiny.toml --trace .", "--trace .: is a directory"},
        {"run tiny.toml --trace fifo", "--trace fifo: is a FIFO"},
        {"run tiny.toml --trace ''", "--trace '': is empty"},
        // run --format: a writer's name, a document the run can print.
        {"run tiny.toml --format yaml", "--format yaml: unknown (choose: json, "},
        {"run tiny.toml --format chrome-trace", "a run writes its trace with --trace FILE"},
        {"run tiny.toml --format csv --no-out", "--format csv prints the result set's table, so it cannot go with"},
        // CPUs the machine lacks are refused, not recorded as pinned (issue 19).
        {"run tiny.toml --cpus 0-1023", "are not on this machine or not allowed to opbench (it may use "},
    };
    const std::regex long_number("[0-9]{40}");
    for (const Bad &b : cases) {
        Outcome o = opbench(b.args, dir_);
        EXPECT_EQ(o.rc, 2) << b.args << "\n" << o.output;
        EXPECT_TRUE(has(o.output, b.says)) << b.args << "\nwanted: " << b.says << "\ngot: " << o.output;
        EXPECT_FALSE(has(o.output, "passed,")) << "ran cases: " << b.args;
        EXPECT_FALSE(has(o.output, "Success")) << o.output;
        // Echoing the user's own 309 digits back once is fine; printing a range as one is not.
        std::string without_input = o.output;
        for (std::size_t at; (at = without_input.find(big)) != std::string::npos;) without_input.erase(at, big.size());
        EXPECT_FALSE(std::regex_search(without_input, long_number)) << b.args << "\n" << o.output;
    }
    struct stat st {};
    ASSERT_EQ(::stat("/dev/null", &st), 0);
    EXPECT_TRUE(S_ISCHR(st.st_mode)) << "/dev/null is no longer a character device";
    EXPECT_EQ(read("exists.json"), "an earlier result");
    EXPECT_TRUE(has(read("tiny.toml"), "[suite]"));
    EXPECT_FALSE(fs::exists(dir_ / "x.json"));
    EXPECT_FALSE(fs::exists(dir_ / "results")) << "no default result reserved by a refused run";
}

// run --format csv: stdout holds the written set's tidy records alone (the
// rows `opbench compare --by backend SET --format csv` prints); the run's
// console lines, its summary included, go to stderr.
TEST_F(Main, RunFormatPrintsTheSetsDocumentAloneOnStdout) {
    const std::string cmd = "cd '" + dir_.string() + "' && env OPBENCH_PLUGIN_PATH= '" OPBENCH_EXE
                            "' run tiny.toml --no-progress --out r.json --format csv >out.csv 2>err.txt";
    ASSERT_EQ(std::system(cmd.c_str()), 0) << read("err.txt");
    const std::string csv = read("out.csv"), err = read("err.txt");
    EXPECT_EQ(csv.rfind("set,", 0), 0u) << "not the tidy records' header:\n" << csv;
    EXPECT_TRUE(has(csv, "median_s")) << csv;
    EXPECT_TRUE(has(csv, ",add,")) << "the add entry's row:\n" << csv;
    EXPECT_FALSE(has(csv, "passed,")) << "the summary line went to stdout:\n" << csv;
    // One case, which passed, or starved when the machine was busy (case_outcome.hpp).
    EXPECT_TRUE(has(err, "1 passed, 0 failed") || has(err, "0 passed, 0 failed, 0 skipped, 1 starved")) << err;
    EXPECT_TRUE(fs::exists(dir_ / "r.json"));

    const std::string md = "cd '" + dir_.string() + "' && env OPBENCH_PLUGIN_PATH= '" OPBENCH_EXE
                           "' run tiny.toml --no-progress --out m.json --format markdown >out.md 2>/dev/null";
    ASSERT_EQ(std::system(md.c_str()), 0);
    EXPECT_TRUE(has(read("out.md"), "| case | naive time |")) << read("out.md");
}

TEST_F(Main, DefaultNamesOfBackToBackRunsDifferAndStayInResults) {
    write("escape.toml", tiny_suite("../escape/a b"));
    Outcome a = opbench("run escape.toml", dir_);
    Outcome b = opbench("run escape.toml", dir_);
    ASSERT_EQ(a.rc, 0) << a.output;
    ASSERT_EQ(b.rc, 0) << b.output;
    std::vector<fs::path> files;
    for (const auto &e : fs::directory_iterator(dir_ / "results")) files.push_back(e.path());
    ASSERT_EQ(files.size(), 2u);
    EXPECT_NE(files[0], files[1]);
    for (const auto &f : files) {
        EXPECT_EQ(f.filename().string().rfind("_._escape_a_b-", 0), 0u) << f;
        EXPECT_GT(fs::file_size(f), 100u) << f << " holds the result set, not the empty reservation";
        std::ifstream in(f);
        EXPECT_TRUE(json::accept(in)) << f;
    }
    EXPECT_FALSE(fs::exists(dir_.parent_path() / "escape")) << "the suite name stepped out of results/";
    EXPECT_EQ(std::distance(fs::directory_iterator(dir_), fs::directory_iterator()), 3); // 2 suites + results/
}

TEST_F(Main, ForceReplacesAnEarlierResultAndCaseNamesAreEscaped) {
    write("named.toml", tiny_suite("named") + "name = 'q\"b\\\\s'\n");
    write("old.json", "an earlier result");
    Outcome o = opbench("run named.toml --out old.json --force", dir_);
    ASSERT_EQ(o.rc, 0) << o.output;
    std::ifstream in(dir_ / "old.json");
    json set = json::parse(in);
    ASSERT_FALSE(set.at("benchmarks").empty());
    EXPECT_EQ(set["benchmarks"][0].at("case"), "q\"b\\\\s");
}

// A min_time below its floor is a request for "as short as measurable": it
// is raised to the floor with one warning line, and the run finishes.
TEST_F(Main, AMinTimeBelowItsFloorIsRaisedWithAWarning) {
    write("short.toml", tiny_suite("short") + "min_time = 1e-9\n");
    const std::string warning = "short.toml:14:12: warning: 'min_time' 1e-09 is below its floor; using 0.0001";
    Outcome v = opbench("validate short.toml", dir_);
    EXPECT_EQ(v.rc, 0) << v.output;
    EXPECT_TRUE(has(v.output, warning + "\n")) << v.output;
    EXPECT_TRUE(has(v.output, "short.toml: ok")) << v.output;

    Outcome o = opbench("run short.toml --out s.json", dir_);
    ASSERT_EQ(o.rc, 0) << o.output;
    EXPECT_TRUE(has(o.output, warning)) << o.output;
    std::ifstream in(dir_ / "s.json");
    json set = json::parse(in);
    ASSERT_FALSE(set.at("benchmarks").empty());
    EXPECT_EQ(set["benchmarks"][0].at("settings").at("min_time"), 0.0001) << "the value used is recorded";
    EXPECT_NE(set["context"]["opbench"]["warnings"].dump().find("'min_time' 1e-09 is below its floor"),
              std::string::npos);

    // The command line and Google Benchmark's spelling of it alike.
    for (const std::string flag : {"--min-time 1e-9", "--benchmark_min_time=1e-9"}) {
        Outcome c = opbench("run tiny.toml --no-out " + flag, dir_);
        EXPECT_EQ(c.rc, 0) << flag << "\n" << c.output;
        EXPECT_TRUE(has(c.output, "warning: 'min_time' 1e-09 is below its floor; using 0.0001")) << c.output;
    }
}

TEST_F(Main, ABackendTheLoaderRefusedIsSkippedWithTheLoadersReason) {
    fs::create_directories(dir_ / "plugins");
    fs::copy_file(FAKE_PLUGIN_DIR "/fake-wrong-major.so", dir_ / "plugins" / "opbench-backend-wrongabi.so");
    write("refused.toml", tiny_suite("refused", "wrongabi"));
    const std::string env = "OPBENCH_PLUGIN_PATH='" + (dir_ / "plugins").string() + "'";
    Outcome o = opbench("run refused.toml --out r.json", dir_, env);
    ASSERT_EQ(o.rc, 0) << "a refused backend is skipped, not an error\n" << o.output;
    std::ifstream in(dir_ / "r.json");
    json set = json::parse(in);
    bool found = false;
    for (const auto &b : set.at("benchmarks")) {
        if (b.value("backend", "") != "wrongabi") continue;
        found = true;
        EXPECT_EQ(b.at("status"), "skipped");
        const std::string reason = b.at("reason");
        EXPECT_TRUE(has(reason, "backend 'wrongabi' was refused by the loader")) << reason;
        EXPECT_TRUE(has(reason, "plugin ABI version 2.0, host ABI version 1.")) << reason;
    }
    EXPECT_TRUE(found) << set.dump(1);

    // A typo in --backends is still an error listing what is known, refused ones included.
    Outcome typo = opbench("run refused.toml --no-out --backends wrongab", dir_, env);
    EXPECT_EQ(typo.rc, 2);
    EXPECT_TRUE(has(typo.output, "unknown backend 'wrongab' (known: cuda, naive, onednn, wrongabi)")) << typo.output;
}

TEST_F(Main, PluginsOthersMayWriteAreRefusedUnlessAllowed) {
    fs::create_directories(dir_ / "open");
    fs::copy_file(FAKE_PLUGIN_DIR "/fake-good.so", dir_ / "open" / "opbench-backend-fake.so");
    fs::permissions(dir_ / "open", fs::perms::all); // 0777, as a shared scratch directory
    const std::string env = "OPBENCH_PLUGIN_PATH='" + (dir_ / "open").string() + "'";
    Outcome refused = opbench("list", dir_, env);
    EXPECT_EQ(refused.rc, 0) << refused.output;
    EXPECT_TRUE(has(refused.output,
                    "refused: " + (dir_ / "open" / "opbench-backend-fake.so").string() + ": not loaded: its directory"))
        << refused.output;
    EXPECT_TRUE(has(refused.output, "is writable by others (mode 0777)")) << refused.output;
    EXPECT_TRUE(has(refused.output, "--allow-insecure-plugins")) << refused.output;
    EXPECT_FALSE(has(refused.output, "the fake backend")) << "its code ran\n" << refused.output;

    Outcome allowed = opbench("list --allow-insecure-plugins", dir_, env);
    EXPECT_EQ(allowed.rc, 0) << allowed.output;
    EXPECT_TRUE(has(allowed.output, "from " + (dir_ / "open" / "opbench-backend-fake.so").string())) << allowed.output;

    // A file others may write, in a safe directory, named directly.
    fs::create_directories(dir_ / "safe");
    fs::copy_file(FAKE_PLUGIN_DIR "/fake-good.so", dir_ / "safe" / "fake.so");
    fs::permissions(dir_ / "safe" / "fake.so", fs::perms::others_write, fs::perm_options::add);
    Outcome file = opbench("list", dir_, "OPBENCH_PLUGIN_PATH='" + (dir_ / "safe" / "fake.so").string() + "'");
    EXPECT_TRUE(has(file.output, "not loaded: the file is writable by others")) << file.output;
}

TEST_F(Main, PluginDirectoriesLoadOnlyBackendFilesAndListTheRest) {
    fs::create_directories(dir_ / "mixed");
    fs::copy_file(FAKE_PLUGIN_DIR "/fake-good.so", dir_ / "mixed" / "opbench-backend-fake.so");
    fs::copy_file(FAKE_PLUGIN_DIR "/fake-newer-minor.so", dir_ / "mixed" / "libhelper.so");
    Outcome o = opbench("list", dir_, "OPBENCH_PLUGIN_PATH='" + (dir_ / "mixed").string() + "'");
    EXPECT_EQ(o.rc, 0) << o.output;
    EXPECT_TRUE(has(o.output, "from " + (dir_ / "mixed" / "opbench-backend-fake.so").string())) << o.output;
    EXPECT_TRUE(has(o.output, "ignored: " + (dir_ / "mixed" / "libhelper.so").string() +
                                  " (plugin directories load only opbench-backend-*.so files)"))
        << o.output;
    EXPECT_FALSE(has(o.output, "fake_newer")) << "libhelper.so was opened\n" << o.output;
}
