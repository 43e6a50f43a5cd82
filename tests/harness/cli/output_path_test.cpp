// Safe output: --out is checked and reserved before a run, never replaces a
// device, directory, FIFO, the suite or an earlier result, and default names
// neither collide nor leave results/.
#include "cli/output_path.hpp"

#include "files/atomic_file.hpp"
#include "files/scratch_file.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

using namespace opbench;
namespace fs = std::filesystem;

namespace {

std::chrono::system_clock::time_point fixed_time() {
    // 2026-11-22 14:53:21.590 UTC
    return std::chrono::system_clock::time_point(std::chrono::milliseconds(1795359201590LL));
}

} // namespace

// Outside the anonymous namespace: gtest's TEST_F classes derive from it.
class OutputPathTest : public ::testing::Test {
protected:
    void SetUp() override {
        dir_ = fs::temp_directory_path() / ("opbench-out-" + std::to_string(::getpid()) + "-" +
                                            ::testing::UnitTest::GetInstance()->current_test_info()->name());
        fs::remove_all(dir_);
        fs::create_directories(dir_);
    }
    void TearDown() override {
        std::error_code ec;
        fs::permissions(dir_, fs::perms::owner_all, fs::perm_options::add, ec);
        fs::remove_all(dir_, ec);
    }
    std::string at(const std::string &name) const { return (dir_ / name).string(); }
    std::string error_for(const OutputRequest &r) const {
        try {
            (void)reserve_result_path(r, "suite");
        } catch (const OutputPathError &e) {
            return e.what();
        }
        ADD_FAILURE() << "no error for --out " << r.path;
        return "";
    }
    fs::path dir_;
};

TEST(SanitizeFileStem, KeepsPlainNamesAndNeverStepsOutOfTheDirectory) {
    EXPECT_EQ(sanitize_file_stem("quick"), "quick");
    EXPECT_EQ(sanitize_file_stem("gpt-2_small.v1"), "gpt-2_small.v1");
    EXPECT_EQ(sanitize_file_stem("../x"), "_._x");
    EXPECT_EQ(sanitize_file_stem("a/b"), "a_b");
    EXPECT_EQ(sanitize_file_stem(".."), "_.");
    EXPECT_EQ(sanitize_file_stem("///"), "suite"); // nothing but replaced characters
    EXPECT_EQ(sanitize_file_stem(".hidden"), "_hidden");
    EXPECT_EQ(sanitize_file_stem("tab\there"), "tab_here");
    EXPECT_EQ(sanitize_file_stem(""), "suite");
    EXPECT_EQ(sanitize_file_stem(std::string(500, 'x')).size(), 96u);
    for (const char *bad : {"../x", "a/b", "..", "/etc/passwd", "x/../../y"}) {
        const std::string s = sanitize_file_stem(bad);
        EXPECT_EQ(s.find('/'), std::string::npos) << bad;
        EXPECT_NE(s.front(), '.') << bad;
    }
}

TEST(DefaultResultName, CarriesUtcMillisecondsAndACounter) {
    EXPECT_EQ(default_result_name("quick", fixed_time()), "quick-20261122-145321.590.json");
    EXPECT_EQ(default_result_name("quick", fixed_time(), 3), "quick-20261122-145321.590-3.json");
}

TEST_F(OutputPathTest, DefaultNamesOfRunsInTheSameMillisecondDiffer) {
    OutputRequest r;
    r.default_dir = at("results");
    ResultPath a = reserve_result_path(r, "quick", fixed_time());
    ResultPath b = reserve_result_path(r, "quick", fixed_time());
    EXPECT_NE(a.path(), b.path());
    EXPECT_EQ(fs::path(a.path()).filename(), "quick-20261122-145321.590.json");
    EXPECT_EQ(fs::path(b.path()).filename(), "quick-20261122-145321.590-2.json");
    EXPECT_TRUE(fs::is_regular_file(a.path()));
    EXPECT_TRUE(fs::is_regular_file(b.path()));
}

TEST_F(OutputPathTest, ADefaultNameStaysInTheResultsDirectory) {
    OutputRequest r;
    r.default_dir = at("results");
    ResultPath p = reserve_result_path(r, "../../escape/a/b", fixed_time());
    EXPECT_EQ(fs::path(p.path()).parent_path(), fs::path(at("results")));
    EXPECT_EQ(std::distance(fs::directory_iterator(dir_), fs::directory_iterator()), 1); // only results/
}

TEST_F(OutputPathTest, AnUnusedReservationIsRemovedAndAWrittenResultKept) {
    OutputRequest r;
    r.path = at("unused.json");
    {
        ResultPath p = reserve_result_path(r, "suite");
        EXPECT_TRUE(fs::exists(r.path));
    }
    EXPECT_FALSE(fs::exists(r.path)) << "an empty reservation must not outlive a run that wrote nothing";

    r.path = at("written.json");
    {
        ResultPath p = reserve_result_path(r, "suite");
        EXPECT_TRUE(p.reserved());
        write_file_atomically(p.path(), "{}\n");
    }
    ASSERT_TRUE(fs::exists(r.path));
    EXPECT_EQ(fs::file_size(r.path), 3u);
}

TEST_F(OutputPathTest, RefusesAnExistingFileUnlessForcedAndKeepsItUntouched) {
    { std::ofstream(at("old.json")) << "earlier result"; }
    OutputRequest r;
    r.path = at("old.json");
    EXPECT_NE(error_for(r).find("already exists; pass --force"), std::string::npos);
    r.force = true;
    ResultPath p = reserve_result_path(r, "suite");
    EXPECT_FALSE(p.reserved());
    EXPECT_EQ(fs::file_size(r.path), 14u) << "checked, not truncated, before the run";
}

TEST_F(OutputPathTest, RefusesDevicesDirectoriesAndFifosEvenWhenForced) {
    ASSERT_EQ(::mkfifo(at("fifo").c_str(), 0600), 0);
    struct Case {
        std::string path, kind;
    };
    for (const Case &c :
         {Case{"/dev/null", "a character device"}, Case{dir_.string(), "a directory"}, Case{at("fifo"), "a FIFO"}}) {
        for (bool force : {false, true}) {
            OutputRequest r;
            r.path = c.path;
            r.force = force;
            const std::string why = error_for(r);
            EXPECT_NE(why.find("is " + c.kind), std::string::npos) << why;
            EXPECT_EQ(why.find("Success"), std::string::npos) << why;
        }
    }
    struct stat st {};
    ASSERT_EQ(::stat("/dev/null", &st), 0);
    EXPECT_TRUE(S_ISCHR(st.st_mode)) << "/dev/null must remain a character device";
}

TEST_F(OutputPathTest, RefusesTheSuiteFileItselfAlsoThroughAnotherName) {
    { std::ofstream(at("s.toml")) << "[suite]\n"; }
    fs::create_symlink(at("s.toml"), at("link.toml"));
    OutputRequest r;
    r.path = at("link.toml");
    r.suite_path = at("s.toml");
    r.force = true;
    EXPECT_NE(error_for(r).find("is the suite file being run"), std::string::npos);
}

TEST_F(OutputPathTest, RefusesAMissingOrUnwritableDirectoryAndATooLongName) {
    OutputRequest r;
    r.path = at("no/such/dir/x.json");
    EXPECT_NE(error_for(r).find("does not exist"), std::string::npos);

    r.path = at(std::string(245, 'a') + ".json");
    const std::string why = error_for(r);
    EXPECT_NE(why.find("the file name is 250 bytes long"), std::string::npos) << why;

    r.path = dir_.string() + "/";
    EXPECT_NE(error_for(r).find("names a directory"), std::string::npos);

    if (::geteuid() != 0) { // root writes anywhere
        fs::create_directories(at("ro"));
        fs::permissions(at("ro"), fs::perms::owner_read | fs::perms::owner_exec);
        r.path = at("ro/x.json");
        EXPECT_NE(error_for(r).find("is not writable"), std::string::npos);
    }
}

TEST_F(OutputPathTest, RefusesADanglingSymlink) {
    fs::create_symlink(at("nowhere"), at("dangling.json"));
    OutputRequest r;
    r.path = at("dangling.json");
    EXPECT_NE(error_for(r).find("symbolic link to nothing"), std::string::npos);
    EXPECT_FALSE(fs::exists(at("nowhere")));
}

TEST_F(OutputPathTest, TheAtomicWriterNeverReplacesADirectory) {
    fs::create_directories(at("d"));
    try {
        write_file_atomically(at("d"), "{}");
        FAIL() << "wrote over a directory";
    } catch (const std::runtime_error &e) {
        EXPECT_NE(std::string(e.what()).find("not a regular file but a directory"), std::string::npos) << e.what();
        EXPECT_EQ(std::string(e.what()).find("Success"), std::string::npos) << e.what();
    }
    EXPECT_TRUE(fs::is_directory(at("d")));
}

// --resume writes over its own interrupted result set: the incomplete set (or
// the empty reservation of a killed run) is taken without --force, anything
// else is still refused; a fresh run refuses a path whose journal lies beside it.
TEST_F(OutputPathTest, ResumeReplacesOnlyItsOwnIncompleteSet) {
    const std::string incomplete = at("incomplete.json");
    std::ofstream(incomplete) << R"({"context": {"opbench": {"complete": false}}, "benchmarks": []})";
    OutputRequest resume{incomplete, false, ""};
    resume.resuming = true;
    ResultPath p = reserve_result_path(resume, "suite");
    EXPECT_EQ(p.path(), incomplete);
    EXPECT_FALSE(p.reserved()); // not ours to remove: it holds the finished cases

    const std::string killed = at("killed.json");
    std::ofstream(killed).flush(); // empty: the reservation of a run killed before writing
    resume.path = killed;
    EXPECT_EQ(reserve_result_path(resume, "suite").path(), killed);

    const std::string complete = at("complete.json");
    std::ofstream(complete) << R"({"context": {"opbench": {"complete": true}}, "benchmarks": []})";
    resume.path = complete;
    EXPECT_NE(error_for(resume).find("other than the interrupted run's incomplete result set"), std::string::npos);

    // Without --resume the same incomplete set is an existing file: refused.
    OutputRequest fresh{incomplete, false, ""};
    EXPECT_NE(error_for(fresh).find("already exists; pass --force"), std::string::npos);
    // A new name with a journal beside it: that run should be resumed, not overwritten.
    const std::string journaled = at("journaled.json");
    std::ofstream(journaled + ".journal") << "{}\n";
    fresh.path = journaled;
    const std::string why = error_for(fresh);
    EXPECT_NE(why.find("the journal of an interrupted run lies beside it"), std::string::npos) << why;
    EXPECT_NE(why.find("opbench run --resume " + journaled), std::string::npos) << why;
    EXPECT_FALSE(fs::exists(journaled)); // nothing reserved
    // A killed run's empty set and its journal, the same command again without
    // --force: the journal is named, not "pass --force" (issue 44).
    std::ofstream(journaled).flush();
    const std::string again = error_for(fresh);
    EXPECT_NE(again.find("opbench run --resume " + journaled), std::string::npos) << again;
    EXPECT_EQ(again.find("already exists"), std::string::npos) << again;
}

// The reservation is removed on the exit paths that skip destructors (the
// scratch-file registry), but only while it is still the empty file it made.
TEST_F(OutputPathTest, ExitPathsRemoveTheReservationButNeverTheResult) {
    const std::string empty = at("empty.json"), written = at("written.json");
    ResultPath a = reserve_result_path(OutputRequest{empty, false, ""}, "suite");
    ResultPath b = reserve_result_path(OutputRequest{written, false, ""}, "suite");
    write_file_atomically(written, "{\"benchmarks\": []}");
    remove_all_scratch_files(); // what the signal path and atexit do
    EXPECT_FALSE(fs::exists(empty));
    EXPECT_TRUE(fs::exists(written));
    EXPECT_EQ(fs::file_size(written), 18u);
}
