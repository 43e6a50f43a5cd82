// Tests of harness/scratch_file: unpredictable names, and no scratch file left
// behind on any way out (destructor, failure, exit()).
#include "files/scratch_file.hpp"
#include "files/atomic_file.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <sys/stat.h>
#include <unistd.h>

using namespace opbench;
namespace fs = std::filesystem;

namespace {

class ScratchTest : public ::testing::Test {
protected:
    void SetUp() override {
        char tmpl[] = "/tmp/opbench-scratch-test-XXXXXX";
        ASSERT_NE(::mkdtemp(tmpl), nullptr);
        dir_ = tmpl;
    }
    void TearDown() override { fs::remove_all(dir_); }
    std::size_t files() const {
        return static_cast<std::size_t>(std::distance(fs::directory_iterator(dir_), fs::directory_iterator()));
    }
    std::string dir_;
};

TEST_F(ScratchTest, NamesAreUnpredictableAndRemoved) {
    std::set<std::string> names;
    {
        ScratchFile a(dir_, "x-", ".json"), b(dir_, "x-", ".json");
        EXPECT_NE(a.path(), b.path());
        for (const auto *f : {&a, &b}) {
            names.insert(f->path());
            EXPECT_TRUE(fs::exists(f->path()));
            EXPECT_EQ(fs::path(f->path()).extension(), ".json");
            // Not derived from the process id, as a guessable name would be.
            EXPECT_EQ(f->path().find(std::to_string(::getpid())), std::string::npos);
        }
        EXPECT_EQ((fs::status(a.path()).permissions() & fs::perms::others_read), fs::perms::none);
        EXPECT_GE(live_scratch_files(), 2);
    }
    EXPECT_EQ(files(), 0u);
    EXPECT_EQ(live_scratch_files(), 0);
}

TEST_F(ScratchTest, PublishedFilesStayAndAreNoLongerScratch) {
    const std::string target = (fs::path(dir_) / "result.json").string();
    {
        ScratchFile s(dir_, ".result.json.tmp.");
        s.write_and_close("{}");
        s.publish(target);
    }
    EXPECT_TRUE(fs::exists(target));
    EXPECT_EQ(files(), 1u);
    EXPECT_EQ(live_scratch_files(), 0);
}

TEST_F(ScratchTest, AFailedPublishLeavesNothingBehind) {
    {
        ScratchFile s(dir_, "t.");
        s.write_and_close("{}");
        EXPECT_THROW(s.publish((fs::path(dir_) / "no-such-dir" / "r.json").string()), std::runtime_error);
    }
    EXPECT_EQ(files(), 0u);
}

TEST_F(ScratchTest, AnUnwritableDirectoryIsAnErrorNamingIt) {
    try {
        ScratchFile s(dir_ + "/missing", "t.");
        FAIL();
    } catch (const std::runtime_error &e) {
        EXPECT_NE(std::string(e.what()).find(dir_ + "/missing"), std::string::npos) << e.what();
    }
}

TEST_F(ScratchTest, RemovedWhenAPluginCallsExit) {
    // exit() skips destructors of live objects; the atexit hook removes them.
    EXPECT_EXIT(
        {
            auto *leaked = new ScratchFile(dir_, "exit-");
            (void)leaked;
            std::exit(0);
        },
        ::testing::ExitedWithCode(0), "");
    EXPECT_EQ(files(), 0u);
}

TEST_F(ScratchTest, SignalPathRemovesEveryLiveFile) {
    ScratchFile a(dir_, "a."), b(dir_, "b.");
    remove_all_scratch_files();
    EXPECT_EQ(files(), 0u);
}

TEST_F(ScratchTest, AtomicWriteLeavesOnlyTheTarget) {
    const std::string target = (fs::path(dir_) / "r.json").string();
    write_file_atomically(target, "one");
    write_file_atomically(target, "two");
    std::ifstream in(target);
    std::string text;
    in >> text;
    EXPECT_EQ(text, "two");
    EXPECT_EQ(files(), 1u);
    // A directory in the way: refused before any scratch file is made (a
    // rename would fail, and over a device it would replace the device).
    const std::string dir_target = (fs::path(dir_) / "d").string();
    fs::create_directory(dir_target);
    try {
        write_file_atomically(dir_target, "x");
        FAIL();
    } catch (const std::runtime_error &e) {
        EXPECT_NE(std::string(e.what()).find("not a regular file but a directory"), std::string::npos) << e.what();
    }
    EXPECT_EQ(files(), 2u);
}

// The scratch file is 0600, but the result is not: it takes the mode of the
// file it replaces (the run's --out reservation), else the umask's.
TEST_F(ScratchTest, AtomicWriteKeepsTheReplacedFilesMode) {
    const std::string target = (fs::path(dir_) / "r.json").string();
    std::ofstream(target).flush();
    ::chmod(target.c_str(), 0640);
    write_file_atomically(target, "one");
    struct stat st {};
    ASSERT_EQ(::stat(target.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0640u);
    const std::string fresh = (fs::path(dir_) / "fresh.json").string();
    const mode_t old_mask = ::umask(027);
    write_file_atomically(fresh, "two");
    ::umask(old_mask);
    ASSERT_EQ(::stat(fresh.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0640u);
}

} // namespace
