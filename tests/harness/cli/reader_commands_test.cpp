// The reader subcommands as a user runs them: opbench analyze / compare /
// history / archive / merge / report on synthetic result sets, their exit codes and
// every output format (CSV read back with Python's csv module).
#include "../result_set_fixture.hpp"

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

Outcome run_opbench(const std::string &args) {
    Outcome r;
    const std::string cmd = std::string(OPBENCH_EXE) + " " + args + " 2>&1";
    FILE *p = popen(cmd.c_str(), "r");
    std::array<char, 4096> buf{};
    while (std::size_t n = fread(buf.data(), 1, buf.size(), p)) r.out.append(buf.data(), n);
    const int status = pclose(p);
    r.rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return r;
}

std::string slurp(const std::string &path) {
    std::ifstream in(path);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

FakeSet quick_run(const std::string &timestamp, double naive_seconds, int threads = 0) {
    FakeSet s;
    s.timestamp = timestamp;
    FakeCase n;
    n.medians = reps(naive_seconds);
    n.threads = threads;
    FakeCase o = n;
    o.backend = "onednn";
    o.medians = reps(naive_seconds / 8);
    FakeCase sk = n;
    sk.op = "attention";
    sk.variant = "fused";
    sk.backend = "onednn";
    sk.status = "skipped";
    sk.reason = "no fused primitive";
    s.cases = {n, o, sk};
    return s;
}

class ReaderCommands : public ::testing::Test {
protected:
    TempDir dir;
    std::string base, same, slow, thr1;
    void SetUp() override {
        base = write_fake_set(dir.path, "base.json", quick_run("2026-11-20T10:00:00Z", 1e-5));
        same = write_fake_set(dir.path, "same.json", quick_run("2026-11-21T10:00:00Z", 1e-5));
        slow = write_fake_set(dir.path, "slow.json", quick_run("2026-11-22T10:00:00Z", 3e-5));
        thr1 = write_fake_set(dir.path, "thr1.json", quick_run("2026-11-22T11:00:00Z", 1e-5, 1));
    }
};

} // namespace

TEST_F(ReaderCommands, TwoAlikeRunsAreSameAndSkippedHasNoRatio) {
    const Outcome r = run_opbench("compare " + base + " " + same + " --fail-on-regression");
    EXPECT_EQ(r.rc, 0) << r.out;
    EXPECT_NE(r.out.find("2 same, 0 faster, 0 slower, 0 noisy; 1 without a ratio"), std::string::npos) << r.out;
    const auto no_ratio = r.out.find("base -> same: no ratio");
    ASSERT_NE(no_ratio, std::string::npos) << r.out;
    EXPECT_NE(r.out.find("skipped", no_ratio), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("no fused primitive", no_ratio), std::string::npos) << r.out;
}

TEST_F(ReaderCommands, ASlowdownFailsTheGate) {
    Outcome r = run_opbench("compare " + base + " " + slow);
    EXPECT_EQ(r.rc, 0) << r.out; // without --fail-on-regression: a report only
    EXPECT_NE(r.out.find("slower"), std::string::npos);
    r = run_opbench("compare " + base + " " + slow + " --fail-on-regression");
    EXPECT_EQ(r.rc, 1) << r.out;
    EXPECT_NE(r.out.find("2 case(s) slower beyond 5%"), std::string::npos) << r.out;
    // A threshold above the change lets it pass.
    r = run_opbench("compare " + base + " " + slow + " --fail-on-regression --threshold 250%");
    EXPECT_EQ(r.rc, 0) << r.out;
}

TEST_F(ReaderCommands, StrictRefusesDifferentThreadsButMatchesThemOtherwise) {
    Outcome r = run_opbench("compare " + base + " " + thr1);
    EXPECT_EQ(r.rc, 0) << r.out;
    EXPECT_NE(r.out.find("Settings that differ"), std::string::npos);
    EXPECT_NE(r.out.find("2 same"), std::string::npos) << r.out;
    r = run_opbench("compare --strict " + base + " " + thr1);
    EXPECT_EQ(r.rc, 2) << r.out;
    EXPECT_NE(r.out.find("--strict: the sets differ in threads (all cores vs 1)"), std::string::npos) << r.out;
    // Only the commit or the time differs: --strict compares.
    EXPECT_EQ(run_opbench("compare --strict " + base + " " + same).rc, 0);
}

TEST_F(ReaderCommands, CsvIsOneTidyTableThatPythonsCsvModuleReads) {
    // One header, then a row per entry and set (3 entries x 2 sets), no blank
    // line; times are numbers in seconds; the skipped entry says so in
    // `status` and leaves median_s empty.
    const std::string csv = (dir.path / "cmp.csv").string();
    ASSERT_EQ(run_opbench("compare " + base + " " + slow + " --format csv -o " + csv).rc, 0);
    const std::string py = "/usr/bin/python3 -c \"import csv,sys; rows=list(csv.reader(open(sys.argv[1], newline='')));"
                           "h=rows[0]; body=rows[1:]; assert [] not in rows and len(body)==6, rows;"
                           "assert all(len(r)==len(h) for r in body);"
                           "c=lambda r,k: r[h.index(k)];"
                           "assert {c(r,'verdict') for r in body if c(r,'set')=='base'}=={'base'};"
                           "assert {c(r,'verdict') for r in body if c(r,'set')=='slow' and c(r,'status')=='ok'}=={'slower'};"
                           "assert all(float(c(r,'median_s'))>0 for r in body if c(r,'status')=='ok');"
                           "sk=[r for r in body if c(r,'status')=='skipped']; assert len(sk)==2, sk;"
                           "assert all(c(r,'median_s')=='' and c(r,'reason')=='no fused primitive' for r in sk);"
                           "print('csv ok', len(rows))\" " +
                           csv;
    FILE *p = popen((py + " 2>&1").c_str(), "r");
    std::array<char, 4096> buf{};
    std::string out(buf.data(), fread(buf.data(), 1, buf.size(), p));
    EXPECT_EQ(pclose(p), 0) << out;
    EXPECT_NE(out.find("csv ok"), std::string::npos) << out;
}

TEST_F(ReaderCommands, ArchivePruneKeepsTheNewestAndRefusesBadInput) {
    const std::string archive = (dir.path / "pruned").string();
    ASSERT_EQ(run_opbench("archive " + archive + " " + base + " " + same + " " + slow).rc, 0);
    Outcome r = run_opbench("archive prune " + archive + " --keep 1");
    EXPECT_EQ(r.rc, 0) << r.out;
    EXPECT_NE(r.out.find("removed 2 set(s)"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("kept 1"), std::string::npos) << r.out;
    r = run_opbench("archive prune " + archive + " --keep 0");
    EXPECT_EQ(r.rc, 2) << r.out;
    EXPECT_NE(r.out.find("--keep: give 1 or more"), std::string::npos) << r.out;
    r = run_opbench("archive prune " + dir.path.string() + " --keep 1"); // no index.json
    EXPECT_EQ(r.rc, 2) << r.out;
    EXPECT_NE(r.out.find("not an archive"), std::string::npos) << r.out;
    r = run_opbench("archive " + archive); // no sets
    EXPECT_EQ(r.rc, 2) << r.out;
    EXPECT_NE(r.out.find("opbench archive prune DIR --keep N"), std::string::npos) << r.out;
}

TEST_F(ReaderCommands, MarkdownIsAPipeTableAndJsonParses) {
    Outcome r = run_opbench("compare " + base + " " + slow + " --format markdown");
    ASSERT_EQ(r.rc, 0);
    // Markdown keeps every column (the fitted layout is the console's), the quality last.
    EXPECT_NE(r.out.find("### base -> slow\n\n| case | backend | base | new | ratio | change | p | test | verdict | "
                         "quality |\n| --- | --- | ---: | ---: | ---: | ---: | ---: | --- | --- | --- |\n"),
              std::string::npos)
        << r.out;
    r = run_opbench("compare " + base + " " + slow + " --format json");
    ASSERT_EQ(r.rc, 0);
    const auto j = nlohmann::json::parse(r.out);
    EXPECT_TRUE(j["regression"].get<bool>());
    EXPECT_EQ(j["comparisons"][0]["counts"]["slower"], 2);
}

// analyze through the writers (issue 16): json data, CSV, -o like every
// reader's, and bad formats exit 2.
TEST_F(ReaderCommands, AnalyzeWritesEveryFormatThroughTheWriters) {
    Outcome r = run_opbench("analyze " + base + " --format json");
    ASSERT_EQ(r.rc, 0) << r.out;
    const auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["measured"], 2); // naive and onednn; the skipped case is left out
    ASSERT_EQ(j["entries"].size(), 2u);
    for (const auto &e : j["entries"]) EXPECT_FALSE(e["bottleneck"]["kind"].get<std::string>().empty()) << e;
    const std::string csv = (dir.path / "analyze.csv").string();
    ASSERT_EQ(run_opbench("analyze " + base + " --format csv -o " + csv).rc, 0);
    EXPECT_EQ(slurp(csv).rfind("#,case x backend,kind,severity,utilisation,time/call,could save,quality\r\n", 0), 0u)
        << slurp(csv);
    r = run_opbench("analyze " + base + " --format csv");
    EXPECT_EQ(r.out, slurp(csv)); // -o holds exactly what stdout shows
    r = run_opbench("analyze " + base);
    EXPECT_EQ(r.rc, 0);
    EXPECT_NE(r.out.find("Bottlenecks, largest (time per call x headroom) first"), std::string::npos) << r.out;
    r = run_opbench("analyze " + base + " --format yaml");
    EXPECT_EQ(r.rc, 2);
    EXPECT_NE(r.out.find("--format yaml: unknown"), std::string::npos) << r.out;
    EXPECT_EQ(run_opbench("analyze " + base + " --format chrome-trace").rc, 2);
}

TEST_F(ReaderCommands, ByBackendPrintsTheLevelTable) {
    const Outcome r = run_opbench("compare --by backend " + base);
    ASSERT_EQ(r.rc, 0) << r.out;
    EXPECT_NE(r.out.find(" speed-up "), std::string::npos) << r.out; // fitted: one speed-up column per level
    EXPECT_NE(r.out.find(" quality"), std::string::npos) << r.out;
    const Outcome wide = run_opbench("compare --by backend --wide " + base);
    EXPECT_NE(wide.out.find("naive time"), std::string::npos) << wide.out;
    EXPECT_NE(wide.out.find("onednn speed-up"), std::string::npos) << wide.out;
    EXPECT_NE(r.out.find("8x"), std::string::npos) << r.out;
    // The geomean names the rows it left out (issue 26): the set's other row has no onednn time.
    EXPECT_NE(r.out.find("Geomean speed-up against naive: onednn 8x over 1 cases (1 left out: no time on it or on "
                         "naive)."),
              std::string::npos)
        << r.out;
    EXPECT_EQ(run_opbench("compare --by backend --baseline cuda " + base).rc, 2);
}

TEST_F(ReaderCommands, BadInputExitsTwoWithAMessage) {
    std::ofstream(dir.path / "broken.json") << "{\"benchmarks\": [\n,]}";
    Outcome r = run_opbench("compare " + base + " " + (dir.path / "broken.json").string());
    EXPECT_EQ(r.rc, 2);
    EXPECT_NE(r.out.find("broken.json:2:1: not valid JSON"), std::string::npos) << r.out;
    r = run_opbench("compare " + base);
    EXPECT_EQ(r.rc, 2);
    EXPECT_NE(r.out.find("compare needs BASE.json and NEW.json"), std::string::npos) << r.out;
    r = run_opbench("compare " + base + " " + same + " --threshold 7");
    EXPECT_EQ(r.rc, 2);
    EXPECT_NE(r.out.find("--threshold 7: give a fraction below 1 (0.05) or a percentage (5%)"), std::string::npos);
    EXPECT_EQ(run_opbench("compare " + base + " " + same + " --format yaml").rc, 2);
    EXPECT_EQ(run_opbench("compare " + base + " /nonexistent.json").rc, 2); // CLI11's ExistingFile check
}

// Every reader's -o follows --out's rule, checked before anything is read:
// never an input or a file inside the archive read, never a device or
// directory, an existing file only with --force (issue 19's probe: report X
// -o X, compare X Y -o X, history -o into the archive and compare -o
// suite.toml all replaced the file and exited 0).
TEST_F(ReaderCommands, OutputsNeverReplaceAnInputOrAnExistingFileWithoutForce) {
    const std::string base_before = slurp(base);
    const std::string suite = (dir.path / "suite.toml").string();
    std::ofstream(suite) << "[suite]\nname = \"x\"\n";
    const std::string archive = (dir.path / "arch").string();
    ASSERT_EQ(run_opbench("archive " + archive + " " + base).rc, 0);
    struct Door {
        std::string args, says;
    };
    const Door doors[] = {
        {"report " + base + " -o " + base, "is an input of this command"},
        {"report " + base + " -o " + base + " --force", "is an input of this command"},
        {"compare " + base + " " + same + " -o " + base + " --force", "is an input of this command"},
        {"merge " + base + " " + same + " -o " + same + " --force", "is an input of this command"},
        {"analyze " + base + " -o " + base + " --force", "is an input of this command"},
        {"compare --by backend " + base + " -o " + suite, "already exists; pass --force to replace it"},
        {"history " + archive + " --suite quick -o " + archive + "/index.json --force", "which this command reads"},
        {"compare " + base + " " + same + " -o /dev/null", "is a character device"},
        {"compare " + base + " " + same + " -o " + dir.path.string(), "is a directory"},
        {"compare " + base + " " + same + " -o ''", "is empty"},
    };
    for (const Door &d : doors) {
        const Outcome o = run_opbench(d.args);
        EXPECT_EQ(o.rc, 2) << d.args << "\n" << o.out;
        EXPECT_NE(o.out.find(d.says), std::string::npos) << d.args << "\n" << o.out;
    }
    EXPECT_EQ(slurp(base), base_before);
    EXPECT_EQ(slurp(suite), "[suite]\nname = \"x\"\n");
    // --force replaces an existing file that is no input.
    const std::string old_out = (dir.path / "old.md").string();
    std::ofstream(old_out) << "old";
    EXPECT_EQ(run_opbench("compare " + base + " " + same + " --format markdown -o " + old_out + " --force").rc, 0);
    EXPECT_NE(slurp(old_out), "old");
}

TEST_F(ReaderCommands, ArchiveHistoryAndBaselineFromEndToEnd) {
    const std::string archive = (dir.path / "archive").string();
    // No baseline yet: an error, or a note with --allow-no-baseline (CI's first run).
    Outcome r = run_opbench("compare --baseline-from " + archive + " " + same);
    EXPECT_EQ(r.rc, 2) << r.out;
    r = run_opbench("compare --baseline-from " + archive + " --allow-no-baseline " + same);
    EXPECT_EQ(r.rc, 0) << r.out;
    EXPECT_NE(r.out.find("nothing to compare"), std::string::npos);

    r = run_opbench("archive " + archive + " " + base + " " + same);
    ASSERT_EQ(r.rc, 0) << r.out;
    EXPECT_TRUE(fs::exists(fs::path(archive) / "index.json"));
    // The newest older set of this machine, suite and build type is `same`.
    r = run_opbench("compare --baseline-from " + archive + " " + slow + " --fail-on-regression");
    EXPECT_EQ(r.rc, 1) << r.out;
    EXPECT_NE(r.out.find("20261121T100000Z"), std::string::npos) << r.out; // picked `same`
    EXPECT_EQ(run_opbench("archive " + archive + " " + slow).rc, 0);
    r = run_opbench("history " + archive + " --suite quick --case naive");
    ASSERT_EQ(r.rc, 0) << r.out;
    EXPECT_NE(r.out.find("History of suite 'quick'"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("add/C:128/R:32/dt:f32 [naive]"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("30 us      3.000"), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("[onednn]"), std::string::npos) << r.out; // filtered out
    EXPECT_EQ(run_opbench("history " + archive + " --suite nope").rc, 2);
    // The report charts the history.
    const std::string html = (dir.path / "r.html").string();
    ASSERT_EQ(run_opbench("report " + slow + " -o " + html + " --history " + archive).rc, 0);
    std::ifstream in(html);
    const std::string text(std::istreambuf_iterator<char>(in), {});
    EXPECT_NE(text.find("data-chart=\"history\""), std::string::npos);
    // Issue 32: a broken archive was an error only inside the HTML, exit 0;
    // now the command exits 2 and says it on stderr.
    std::ofstream(fs::path(archive) / "index.json") << "{\"schema_version\": 1, \"sets\": [{}]}";
    r = run_opbench("report " + slow + " -o " + html + " --force --history " + archive);
    EXPECT_EQ(r.rc, 2) << r.out;
    EXPECT_NE(r.out.find("index.json: sets[0]"), std::string::npos) << r.out;
}

TEST_F(ReaderCommands, MergeRefusesOtherSuites) {
    FakeSet other = quick_run("2026-11-22T10:00:00Z", 1e-5);
    other.suite = "norms";
    const std::string o = write_fake_set(dir.path, "other.json", other);
    const Outcome r = run_opbench("merge " + base + " " + o + " -o " + (dir.path / "all.json").string());
    EXPECT_EQ(r.rc, 2);
    EXPECT_NE(r.out.find("only shards of one suite merge"), std::string::npos) << r.out;
}

// A profiling run's timings are never compared with a plain run's (issue 12):
// compare refuses the pair, with or without --strict, and says why.
TEST_F(ReaderCommands, RefusesToMixAProfilingRunWithAPlainOne) {
    nlohmann::json set;
    {
        std::ifstream in(same);
        in >> set;
    }
    set["context"]["opbench"]["profiling"] = {{"enabled", true}, {"hot_path", true}};
    const std::string profiled = (fs::path(dir.path) / "profiled.json").string();
    std::ofstream(profiled) << set.dump(2);
    const Outcome r = run_opbench("compare " + base + " " + profiled);
    EXPECT_EQ(r.rc, 2) << r.out;
    EXPECT_NE(
        r.out.find("a profiling run (--profile / --trace) cannot be compared with a plain one (profiling: off vs on)"),
        std::string::npos)
        << r.out;
    // Two profiling runs compare as usual.
    EXPECT_EQ(run_opbench("compare " + profiled + " " + profiled).rc, 0);
}
