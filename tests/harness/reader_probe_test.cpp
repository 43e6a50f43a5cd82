// Issue 19, "readers that never crash": each crash class of the probe of 371
// malformed inputs, through the real opbench program and every reader that
// can meet it (compare, report, history, merge, archive, analyze, compare
// --baseline-from). Each must exit 2 naming the file, the JSON path and what
// was expected; none may abort, crash, hang or accept the input (exit 0).
#include "result_set_fixture.hpp"

#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <sys/wait.h>

using namespace opbench::test;
namespace fs = std::filesystem;

namespace {

struct Outcome {
    int rc = -1;
    std::string out; // stdout and stderr
};

// `timeout 60`: a reader that reads forever (/dev/zero) fails with 124, not a hung test.
Outcome run_opbench(const std::string &args) {
    Outcome r;
    const std::string cmd = "timeout 60 " + std::string(OPBENCH_EXE) + " " + args + " 2>&1";
    FILE *p = popen(cmd.c_str(), "r");
    std::array<char, 4096> buf{};
    while (std::size_t n = fread(buf.data(), 1, buf.size(), p)) {
        if (r.out.size() < (1 << 20)) r.out.append(buf.data(), n);
    }
    const int status = pclose(p);
    r.rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
    return r;
}

FakeSet run_of(const std::string &timestamp) {
    FakeSet s;
    s.timestamp = timestamp;
    FakeCase n;
    n.medians = reps(1e-5, 4);
    FakeCase o = n;
    o.backend = "onednn";
    s.cases = {n, o};
    return s;
}

class ReaderProbe : public ::testing::Test {
protected:
    TempDir dir;
    std::string base, newer, bad;
    fs::path archive;
    void SetUp() override {
        base = write_fake_set(dir.path, "base.json", run_of("2026-11-20T10:00:00Z"));
        const std::string older = write_fake_set(dir.path, "older.json", run_of("2026-11-19T10:00:00Z"));
        newer = write_fake_set(dir.path, "newer.json", run_of("2026-11-22T10:00:00Z"));
        bad = (dir.path / "bad.json").string();
        archive = dir.path / "archive";
        const auto a = run_opbench("archive " + archive.string() + " " + older + " " + base);
        ASSERT_EQ(a.rc, 0) << a.out;
    }
    nlohmann::json good() const { return nlohmann::json::parse(std::ifstream(base)); }
    void write_bad(const std::string &text) const { std::ofstream(bad, std::ios::trunc) << text; }
    // Every archived set's file replaced by `make(path)` (--baseline-from
    // reads the sets the index lists), and its entry summaries removed, so
    // that history reads the set too, as it does a set archived before
    // summaries were written.
    template <class F>
    void spoil_archived_sets(F make) const {
        std::vector<fs::path> summaries;
        for (const auto &e : fs::recursive_directory_iterator(archive)) {
            if (e.is_regular_file() && e.path().extension() == ".cbor") summaries.push_back(e.path());
            if (e.is_regular_file() && e.path().filename() != "index.json" && e.path().extension() == ".json")
                make(e.path());
        }
        for (const auto &p : summaries) fs::remove(p);
    }
    // Runs every reader on `input` (which already holds the bad text) and on
    // an archive whose sets hold it; each must exit 2 with all of `expected`.
    void expect_every_reader_refuses(const std::string &input, const std::vector<std::string> &expected,
                                     bool through_archive = true) {
        const std::string out = (dir.path / "out").string();
        std::vector<std::string> commands = {
            "compare " + input + " " + base,
            "compare " + base + " " + input,
            "report " + input + " -o " + out + ".html",
            "merge " + input + " " + newer + " -o " + out + ".json",
            "archive " + (dir.path / "other-archive").string() + " " + input,
            "analyze " + input,
        };
        const std::size_t direct = commands.size(); // these name `input` in their error
        if (through_archive) {
            commands.push_back("history " + archive.string() + " --suite quick");
            commands.push_back("compare --baseline-from " + archive.string() + " " + newer);
        }
        for (std::size_t i = 0; i < commands.size(); ++i) {
            const std::string &c = commands[i];
            const Outcome r = run_opbench(c);
            if (i < direct) {
                EXPECT_NE(r.out.find(input + ":"), std::string::npos) << "opbench " << c << "\n" << r.out;
            }
            EXPECT_EQ(r.rc, 2) << "opbench " << c << "\n" << r.out;
            for (const auto &want : expected)
                EXPECT_NE(r.out.find(want), std::string::npos) << "opbench " << c << "\n" << r.out;
            EXPECT_EQ(r.out.find("terminate called"), std::string::npos) << r.out;
        }
    }
    // The set `good()` with `edit` applied, written to `bad` and into the archive.
    template <class F>
    void probe(F edit, const std::vector<std::string> &expected) {
        nlohmann::json j = good();
        edit(j);
        write_bad(j.dump(1));
        spoil_archived_sets([&](const fs::path &p) { std::ofstream(p, std::ios::trunc) << j.dump(1); });
        expect_every_reader_refuses(bad, expected);
    }
};

// Probe class 1: a number out of double's range aborted all seven readers
// (nlohmann's out_of_range was not caught).
TEST_F(ReaderProbe, ANumberOutOfRangeIsBadJsonInEveryReader) {
    std::string text = good().dump(1);
    const auto at = text.find("\"real_time\": ");
    ASSERT_NE(at, std::string::npos);
    text.insert(at + 13, "1e999999, \"was\": ");
    write_bad(text);
    spoil_archived_sets([&](const fs::path &p) { std::ofstream(p, std::ios::trunc) << text; });
    expect_every_reader_refuses(bad, {"not valid JSON", "1e999999"});
}

// Probe class 2: wrong-typed objects crashed compare, report, archive, merge.
TEST_F(ReaderProbe, StatsThatIsNotAnObjectIsRefusedWithItsPath) {
    probe([](nlohmann::json &j) { j["benchmarks"][1]["stats"] = "none"; },
          {"benchmarks[1].stats: expected an object, got the string \"none\""});
}

TEST_F(ReaderProbe, MachineThatIsNotAnObjectIsRefusedWithItsPath) {
    probe([](nlohmann::json &j) { j["context"]["opbench"]["machine"] = "m"; },
          {"context.opbench.machine: expected an object or null, got the string \"m\""});
}

// Probe class 3: wrong-typed name/status/backend/op crashed analyze.
TEST_F(ReaderProbe, WrongTypedNameStatusBackendOpAreRefused) {
    probe([](nlohmann::json &j) { j["benchmarks"][0]["name"] = 5; },
          {"benchmarks[0].name: expected a string, got the number 5"});
    probe([](nlohmann::json &j) { j["benchmarks"][2]["status"] = nlohmann::json::array({1}); },
          {"benchmarks[2].status: expected one of \"passed\", \"failed\", \"skipped\", \"starved\", got an array"});
    probe([](nlohmann::json &j) { j["benchmarks"][0]["backend"] = nlohmann::json::object(); },
          {"benchmarks[0].backend: expected a string, got an object"});
    probe([](nlohmann::json &j) { j["benchmarks"][0]["op"] = nullptr; },
          {"benchmarks[0].op: expected a string, got null"});
}

TEST_F(ReaderProbe, ADirectoryIsRefusedClearly) {
    const Outcome a = run_opbench("analyze " + dir.path.string());
    EXPECT_EQ(a.rc, 2) << a.out;
    EXPECT_NE(a.out.find(dir.path.string() + ": is a directory"), std::string::npos) << a.out;
    // An archived set that is a directory (history, --baseline-from).
    spoil_archived_sets([](const fs::path &p) {
        fs::remove(p);
        fs::create_directory(p);
    });
    for (const std::string &c : {"history " + archive.string() + " --suite quick",
                                "compare --baseline-from " + archive.string() + " " + newer}) {
        const Outcome r = run_opbench(c);
        EXPECT_EQ(r.rc, 2) << c << "\n" << r.out;
        // Issue 32: an archive row must name a regular file inside the archive.
        EXPECT_NE(r.out.find(": not read: not a regular file"), std::string::npos) << c << "\n" << r.out;
    }
}

// Probe class 4: an index of [] crashed history, --baseline-from, archive.
TEST_F(ReaderProbe, AnArchiveIndexThatIsNotAnObjectIsRefused) {
    std::ofstream(archive / "index.json", std::ios::trunc) << "[]";
    for (const std::string &c :
         {"history " + archive.string() + " --suite quick", "compare --baseline-from " + archive.string() + " " + newer,
          "archive " + archive.string() + " " + newer}) {
        const Outcome r = run_opbench(c);
        EXPECT_EQ(r.rc, 2) << c << "\n" << r.out;
        EXPECT_NE(r.out.find("index.json: not an archive index"), std::string::npos) << c << "\n" << r.out;
    }
}

// Probe class 5: /dev/zero (and /dev/stdin fed by it) grew to 14.4 GB in 60 s.
TEST_F(ReaderProbe, DevZeroAndStdinStopAtOnce) {
    expect_every_reader_refuses("/dev/zero", {"/dev/zero: a NUL byte at offset 0"}, false);
    const Outcome s = run_opbench("compare /dev/stdin " + base + " < /dev/zero");
    EXPECT_EQ(s.rc, 2) << s.out;
    EXPECT_NE(s.out.find("/dev/stdin: a NUL byte"), std::string::npos) << s.out;
    // An archived set that is /dev/zero.
    spoil_archived_sets([](const fs::path &p) {
        fs::remove(p);
        fs::create_symlink("/dev/zero", p);
    });
    const Outcome h = run_opbench("history " + archive.string() + " --suite quick");
    EXPECT_EQ(h.rc, 2) << h.out;
    // Issue 32: a row that is a symbolic link is not followed (out of the archive).
    EXPECT_NE(h.out.find("is a symbolic link"), std::string::npos) << h.out;
    // A valid set through a pipe is still read.
    const Outcome p = run_opbench("compare /dev/stdin " + base + " < " + newer);
    EXPECT_EQ(p.rc, 0) << p.out;
}

// Probe class 6: accepted with exit 0.
TEST_F(ReaderProbe, ATimeThatIsAStringIsRefused) {
    probe([](nlohmann::json &j) { j["benchmarks"][1]["real_time"] = "fast"; },
          {"benchmarks[1].real_time: expected a finite number >= 0, got the string \"fast\""});
}

TEST_F(ReaderProbe, NegativeTimesAreRefused) {
    probe([](nlohmann::json &j) { j["benchmarks"][1]["real_time"] = -5; },
          {"benchmarks[1].real_time: expected a finite number >= 0, got the number -5"});
    probe([](nlohmann::json &j) { j["benchmarks"][1]["stats"]["median"] = -5; },
          {"benchmarks[1].stats.median: expected a time in seconds from 0 to 1e+06, got the number -5"});
    probe([](nlohmann::json &j) { j["benchmarks"][1]["stats"]["sample_times"][2] = -1e-6; },
          {"benchmarks[1].stats.sample_times[2]: expected a time in seconds from 0 to 1e+06"});
}

TEST_F(ReaderProbe, DuplicatedEntriesAreRefused) {
    probe(
        [](nlohmann::json &j) {
            const nlohmann::json e = j["benchmarks"][0];
            for (int i = 0; i < 209; ++i) j["benchmarks"].push_back(e);
        },
        {"repetition_index 0 appears twice (first as benchmarks[0])"});
}

TEST_F(ReaderProbe, AnIndexRowOutsideTheArchiveIsRefusedNamingTheRow) {
    for (const std::string path : {"../../../etc/passwd", "/etc/passwd", "a/../../x.json"}) {
        nlohmann::json index = nlohmann::json::parse(std::ifstream(archive / "index.json"));
        index["sets"][1]["path"] = path;
        std::ofstream(archive / "index.json", std::ios::trunc) << index.dump(1);
        for (const std::string &c : {"history " + archive.string() + " --suite quick",
                                    "compare --baseline-from " + archive.string() + " " + newer}) {
            const Outcome r = run_opbench(c);
            EXPECT_EQ(r.rc, 2) << c << "\n" << r.out;
            EXPECT_NE(r.out.find("index.json: sets[1].path: expected a path inside the archive"), std::string::npos)
                << c << "\n"
                << r.out;
            EXPECT_EQ(r.out.find("root:"), std::string::npos) << r.out;
        }
    }
}

// What the probe must not cost: the sets themselves are still read.
TEST_F(ReaderProbe, ValidSetsAreStillRead) {
    for (const std::string &c :
         {"compare " + base + " " + newer, "analyze " + base, "history " + archive.string() + " --suite quick",
          "compare --baseline-from " + archive.string() + " " + newer}) {
        const Outcome r = run_opbench(c);
        EXPECT_EQ(r.rc, 0) << c << "\n" << r.out;
    }
}

} // namespace

namespace {

// Found by fuzz_reader: a set without context.opbench.machine crashed
// compare (its "CPUs" setting row called value() on null).
TEST_F(ReaderProbe, ASetWithoutAMachineObjectIsCompared) {
    nlohmann::json j = good();
    j["context"]["opbench"].erase("machine");
    write_bad(j.dump(1));
    const Outcome r = run_opbench("compare " + bad + " " + base);
    EXPECT_EQ(r.rc, 0) << r.out;
    EXPECT_EQ(r.out.find("terminate called"), std::string::npos) << r.out;
}

} // namespace
