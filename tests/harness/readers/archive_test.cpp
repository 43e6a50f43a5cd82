#include "readers/archive.hpp"
#include "readers/set_summaries.hpp"

#include "../result_set_fixture.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>

#include <fstream>
#include <regex>
#include <set>
#include <thread>

using namespace opbench;
using namespace opbench::test;
namespace fs = std::filesystem;

namespace {

FakeSet run_at(const std::string &timestamp, const std::string &commit, double naive_seconds) {
    FakeSet s;
    s.timestamp = timestamp;
    s.commit = commit;
    FakeCase c;
    c.medians = reps(naive_seconds);
    FakeCase o = c;
    o.backend = "onednn";
    o.medians = reps(naive_seconds / 4);
    s.cases = {c, o};
    return s;
}

} // namespace

TEST(Archive, StoresUnderMachineSuiteTimeCommitAndIndexesIt) {
    TempDir in, dir;
    const std::string p = write_fake_set(in.path, "q.json", run_at("2026-11-22T14:50:51Z", "abc123", 1e-5));
    const ResultSet set = read_result_set(p);
    const ArchiveEntry e = archive_store(dir.path, set);
    EXPECT_EQ(e.path, set.machine_id() + "/quick/20261122T145051Z-abc123.json");
    EXPECT_TRUE(fs::exists(dir.path / e.path));
    // Byte for byte: compare.py and everything else read the archived copy.
    std::ifstream a(p), b(dir.path / e.path);
    EXPECT_EQ(std::string(std::istreambuf_iterator<char>(a), {}), std::string(std::istreambuf_iterator<char>(b), {}));
    const auto entries = archive_entries(dir.path);
    ASSERT_EQ(entries.size(), 1u);
    EXPECT_EQ(entries[0].suite, "quick");
    EXPECT_EQ(entries[0].commit, "abc123");
    EXPECT_EQ(entries[0].cases, 2u);
    // Storing the same set again keeps both files.
    const ArchiveEntry e2 = archive_store(dir.path, set);
    EXPECT_NE(e2.path, e.path);
    EXPECT_EQ(archive_entries(dir.path).size(), 2u);
}

TEST(Archive, LatestPicksTheNewestOlderSetOfTheSameMachineSuiteAndBuildType) {
    TempDir in, dir;
    archive_store(dir.path,
                  read_result_set(write_fake_set(in.path, "1.json", run_at("2026-11-20T10:00:00Z", "c1", 1e-5))));
    archive_store(dir.path,
                  read_result_set(write_fake_set(in.path, "2.json", run_at("2026-11-21T10:00:00Z", "c2", 1e-5))));
    FakeSet debug = run_at("2026-11-21T12:00:00Z", "c3", 1e-5);
    debug.build_type = "debug";
    archive_store(dir.path, read_result_set(write_fake_set(in.path, "3.json", debug)));
    FakeSet other = run_at("2026-11-21T13:00:00Z", "c4", 1e-5);
    other.cpu_model = "Intel Xeon";
    archive_store(dir.path, read_result_set(write_fake_set(in.path, "4.json", other)));
    const ResultSet now =
        read_result_set(write_fake_set(in.path, "now.json", run_at("2026-11-22T10:00:00Z", "c5", 1e-5)));
    auto best = archive_latest(dir.path, now.machine_id(), "quick", "release", now.timestamp());
    ASSERT_TRUE(best);
    EXPECT_EQ(best->commit, "c2");
    // Nothing measured after it; never itself, even within the same second.
    best = archive_latest(dir.path, now.machine_id(), "quick", "release", "2026-11-19T10:00:00Z");
    EXPECT_FALSE(best);
    const std::string first = (in.path / "1.json").string();
    best = archive_latest(dir.path, now.machine_id(), "quick", "release", "2026-11-20T10:00:00Z", first);
    EXPECT_FALSE(best);
    const std::string same_second =
        write_fake_set(in.path, "1b.json", run_at("2026-11-20T10:00:00Z", "c1-other", 1e-5));
    best = archive_latest(dir.path, now.machine_id(), "quick", "release", "2026-11-20T10:00:00Z", same_second);
    ASSERT_TRUE(best);
    EXPECT_EQ(best->commit, "c1");
    EXPECT_FALSE(archive_latest(dir.path, now.machine_id(), "attention", "release"));
    EXPECT_FALSE(archive_latest(dir.path / "empty", now.machine_id(), "quick", "release"));
}

TEST(Archive, HistoryShowsEachCaseAcrossRuns) {
    TempDir in, dir;
    const double times[] = {1e-5, 1.1e-5, 2e-5};
    const char *stamps[] = {"2026-11-20T10:00:00Z", "2026-11-21T10:00:00Z", "2026-11-22T10:00:00Z"};
    for (int i = 0; i < 3; ++i)
        archive_store(dir.path, read_result_set(write_fake_set(in.path, std::to_string(i) + ".json",
                                                               run_at(stamps[i], "c" + std::to_string(i), times[i]))));
    HistoryOptions o;
    o.suite = "quick";
    o.case_regex = "naive";
    const Document d = archive_history(dir.path, o);
    ASSERT_EQ(d.tables.size(), 1u);
    const Table &t = d.tables[0];
    ASSERT_EQ(t.rows.size(), 1u); // only the naive case matches
    // Default (fits 100 columns): first, last, their ratio, a trend of one
    // bar per run (log scale between the lowest and highest), the quality.
    EXPECT_EQ(t.columns,
              (std::vector<std::string>{"case [backend]", "first", "last", "last/first", "trend", "last quality"}));
    EXPECT_EQ(t.rows[0][1], "10 us");
    EXPECT_EQ(t.rows[0][2], "20 us");
    EXPECT_EQ(t.rows[0][3], "2.000");
    EXPECT_EQ(t.rows[0][4], "▁▂█");
    EXPECT_EQ(t.rows[0][5], "clean");
    EXPECT_NE(t.title.find("c0, "), std::string::npos) << "the runs are listed in the header: " << t.title;
    EXPECT_EQ(d.data["cases"][0]["median_seconds"].size(), 3u);
    EXPECT_EQ(d.data["cases"][0]["quality"], (nlohmann::json{"clean", "clean", "clean"}));
    // --wide: a column per run.
    o.wide = true;
    const Table w = archive_history(dir.path, o).tables[0];
    EXPECT_EQ(w.columns.size(), 1u + 3u + 1u);
    EXPECT_EQ(w.rows[0][3], "20 us");
    EXPECT_EQ(w.rows[0][4], "2.000");
    o.wide = false;
    o.last = 2;
    EXPECT_EQ(archive_history(dir.path, o).tables[0].rows[0][1], "11 us");
    o.suite = "nope";
    EXPECT_THROW((void)archive_history(dir.path, o), ArchiveError);
    o.suite = "quick";
    o.case_regex = "(";
    EXPECT_THROW((void)archive_history(dir.path, o), std::regex_error);
}

// A newest run without a time (every repetition starved) gives no
// last/first ratio and says so in "last": an earlier run's time there read
// as 1.000, no change (as compare gives a starved entry no ratio).
TEST(Archive, HistoryGivesNoRatioWhenTheNewestRunHasNoTime) {
    TempDir in, dir;
    const char *stamps[] = {"2026-11-20T10:00:00Z", "2026-11-21T10:00:00Z", "2026-11-22T10:00:00Z"};
    for (int i = 0; i < 3; ++i) {
        FakeSet s = run_at(stamps[i], "c" + std::to_string(i), 1e-5);
        if (i == 2) {
            s.cases[0].status = "starved";
            s.cases[0].starved = {true, true, true};
        }
        archive_store(dir.path, read_result_set(write_fake_set(in.path, std::to_string(i) + ".json", s)));
    }
    HistoryOptions o;
    o.suite = "quick";
    o.case_regex = "naive";
    const Table t = archive_history(dir.path, o).tables[0];
    ASSERT_EQ(t.rows.size(), 1u);
    EXPECT_EQ(t.rows[0][1], "10 us");
    EXPECT_EQ(t.rows[0][2], "starved");
    EXPECT_EQ(t.rows[0][3], "-");
    o.wide = true;
    const Table w = archive_history(dir.path, o).tables[0];
    EXPECT_EQ(w.rows[0][3], "starved");
    EXPECT_EQ(w.rows[0][4], "-");
    // The onednn case's newest run has a time: its ratio stands.
    o.wide = false;
    o.case_regex = "onednn";
    EXPECT_EQ(archive_history(dir.path, o).tables[0].rows[0][3], "1.000");
}

TEST(Archive, HistoryCsvRecordsAreOneRowPerCaseAndRun) {
    TempDir in, dir;
    for (int i = 0; i < 3; ++i)
        archive_store(dir.path, read_result_set(write_fake_set(in.path, std::to_string(i) + ".json",
                                                               run_at(fmt::format("2026-11-2{}T10:00:00Z", i),
                                                                      "c" + std::to_string(i), 1e-5 * (i + 1)))));
    HistoryOptions o;
    o.suite = "quick";
    o.case_regex = "onednn";
    const Table &r = archive_history(dir.path, o).records;
    ASSERT_EQ(r.rows.size(), 3u); // the onednn case in each of the three runs
    const auto col = [&](const char *name) {
        return std::size_t(std::find(r.columns.begin(), r.columns.end(), name) - r.columns.begin());
    };
    ASSERT_LT(col("median_s"), r.columns.size());
    EXPECT_EQ(r.rows[0][col("commit")], "c0");
    EXPECT_EQ(r.rows[2][col("backend")], "onednn");
    EXPECT_DOUBLE_EQ(std::stod(r.rows[2][col("median_s")]), 3e-5 / 4);
}

TEST(Archive, PruneKeepsTheNewestOfEachMachineSuiteAndBuildType) {
    TempDir in, dir;
    std::vector<std::string> paths;
    for (int i = 0; i < 5; ++i)
        paths.push_back(archive_store(dir.path, read_result_set(write_fake_set(
                                                    in.path, std::to_string(i) + ".json",
                                                    run_at(fmt::format("2026-11-2{}T10:00:00Z", i),
                                                           "c" + std::to_string(i), 1e-5))))
                            .path);
    FakeSet debug = run_at("2026-11-19T10:00:00Z", "d0", 1e-5); // the oldest, but alone in its group
    debug.build_type = "debug";
    archive_store(dir.path, read_result_set(write_fake_set(in.path, "d.json", debug)));
    const PruneResult r = archive_prune(dir.path, 2);
    ASSERT_EQ(r.removed.size(), 3u);
    EXPECT_EQ(r.removed[0].commit, "c0");
    EXPECT_EQ(r.removed[2].commit, "c2");
    EXPECT_EQ(r.kept, 3u);
    EXPECT_GT(r.bytes_freed, 0u);
    for (int i = 0; i < 5; ++i) EXPECT_EQ(fs::exists(dir.path / paths[i]), i >= 3) << paths[i];
    std::vector<std::string> left;
    for (const auto &e : archive_entries(dir.path)) left.push_back(e.commit);
    EXPECT_EQ(left, (std::vector<std::string>{"d0", "c3", "c4"}));
    // Pruning again changes nothing; --keep 0 and a directory without an index are errors.
    EXPECT_TRUE(archive_prune(dir.path, 2).removed.empty());
    EXPECT_THROW((void)archive_prune(dir.path, 0), ArchiveError);
    EXPECT_THROW((void)archive_prune(in.path, 2), ArchiveError);
}

TEST(Archive, ConcurrentStoresKeepEveryRow) {
    TempDir in, dir;
    std::vector<std::string> paths;
    for (int i = 0; i < 8; ++i)
        paths.push_back(write_fake_set(in.path, std::to_string(i) + ".json",
                                       run_at("2026-11-22T10:00:0" + std::to_string(i) + "Z", "c", 1e-5)));
    std::vector<std::thread> threads;
    for (const auto &p : paths) threads.emplace_back([&, p] { archive_store(dir.path, read_result_set(p)); });
    for (auto &t : threads) t.join();
    EXPECT_EQ(archive_entries(dir.path).size(), 8u);
}

TEST(Archive, CorruptIndexIsAnError) {
    TempDir dir;
    std::ofstream(dir.path / "index.json") << "{ not json";
    EXPECT_THROW((void)archive_entries(dir.path), ArchiveError);
}

// Issue 19: an index row's path stays inside the archive, and an index of
// the wrong shape is an error naming the row, never a crash.
TEST(Archive, IndexRowsAreConfinedToTheArchive) {
    const std::string ok = R"({"schema_version": 1, "sets": [{"path": "m/quick/a.json", "suite": "quick"}]})";
    EXPECT_EQ(parse_archive_index(ok, "index.json").at(0).path, "m/quick/a.json");
    const std::vector<std::pair<std::string, std::string>> bad = {
        {R"([])", "index.json: not an archive index"},
        {R"({"schema_version": 1, "sets": [{"path": "../../../etc/passwd"}]})",
         "index.json: sets[0].path: expected a path inside the archive (it has a '..' component)"},
        {R"({"schema_version": 1, "sets": [{"path": "a.json"}, {"path": "/etc/passwd"}]})",
         "index.json: sets[1].path: expected a path inside the archive (it is absolute)"},
        {R"({"schema_version": 1, "sets": [{"path": "a/../../b.json"}]})", "sets[0].path"},
        {R"({"schema_version": 1, "sets": [{"path": "a.json", "summaries": "../../a.summaries.cbor"}]})",
         "sets[0].summaries: expected a path inside the archive (it has a '..' component)"},
        {R"({"schema_version": 1, "sets": [{"path": "a.json", "summaries": 1}]})",
         "sets[0].summaries: expected a path relative to the archive"},
        {R"({"schema_version": 1, "sets": [{"path": ""}]})",
         "sets[0].path: expected a path inside the archive (it is empty)"},
        {R"({"schema_version": 1, "sets": [{"path": 3}]})", "sets[0].path: expected a path relative to the archive"},
        {R"({"schema_version": 1, "sets": [{"path": "a.json", "cases": -1}]})",
         "sets[0].cases: expected a whole number"},
        {R"({"schema_version": 1, "sets": [{"path": "a.json", "timestamp": 5}]})",
         "sets[0].timestamp: expected a string"},
        {R"({"schema_version": 1e999999, "sets": []})", "not valid JSON"},
        {R"({"schema_version": 1, "sets": {}})", "archive index schema"},
    };
    for (const auto &[text, message] : bad) {
        try {
            (void)parse_archive_index(text, "index.json");
            ADD_FAILURE() << "accepted: " << text;
        } catch (const ArchiveError &e) {
            EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
        }
    }
}

namespace {

// A run with an entry of each kind history shows: clean, noisy, disturbed
// (repetitions 1000x apart), one whose repetitions all missed their noise
// target (timed, noisy), a partly starved one, a starved one, a skipped one
// and a failed one.
FakeSet run_of_every_kind(int i) {
    FakeSet s = run_at(fmt::format("2026-11-2{}T10:00:00Z", i), "c" + std::to_string(i), 1e-5 * (1 + 0.1 * i));
    FakeCase noisy;
    noisy.op = "matmul";
    noisy.params = {{"M", 64}, {"N", 64}, {"K", 64}};
    noisy.medians = {100e-6, 110e-6 + i * 1e-6, 120e-6, 105e-6, 115e-6};
    FakeCase disturbed = noisy;
    disturbed.backend = "onednn";
    disturbed.medians = {27e-6, 28e-6, 29e-6, 24e-3, 26e-3, 28e-3};
    disturbed.target_met = {true, true, true, false, false, false};
    disturbed.processes = {0, 1, 0, 1, 0, 1};
    FakeCase unmet = noisy;
    unmet.op = "softmax";
    unmet.params = {{"R", 8}, {"C", 64}};
    unmet.target_met = {false, false, false, false, false};
    FakeCase skipped = unmet;
    skipped.backend = "onednn";
    skipped.status = "skipped";
    skipped.reason = "bf16 not supported";
    FakeCase failed = skipped;
    failed.op = "gelu";
    failed.status = "failed";
    failed.reason = "wrong result: nmse 0.3";
    FakeCase partly_starved = noisy;
    partly_starved.op = "silu";
    partly_starved.starved = {false, true, false, false, true};
    FakeCase starved = partly_starved;
    starved.backend = "onednn";
    starved.status = "starved";
    starved.reason = "every repetition starved";
    s.cases.insert(s.cases.end(), {noisy, disturbed, unmet, skipped, failed, partly_starved, starved});
    return s;
}

// The archive's index again without its `summaries` fields: an archive
// written before they were (its rows name only the sets).
void forget_summaries(const fs::path &dir) {
    std::ifstream in(dir / "index.json");
    nlohmann::json index = nlohmann::json::parse(in);
    for (auto &row : index["sets"]) row.erase("summaries");
    std::ofstream(dir / "index.json") << index.dump(2);
}

} // namespace

// Issue 17: history reads each run's entry summaries, written beside the set
// when it is archived, instead of parsing the whole set. What it shows must
// not change: the same tables, medians, quality flags and CSV records as
// from the sets themselves (an archive without summaries), in the default
// and the --wide layout.
TEST(Archive, HistoryFromEntrySummariesEqualsHistoryFromTheSets) {
    TempDir in, dir;
    for (int i = 0; i < 4; ++i) {
        const ArchiveEntry e = archive_store(
            dir.path, read_result_set(write_fake_set(in.path, std::to_string(i) + ".json", run_of_every_kind(i))));
        EXPECT_EQ(e.summaries, e.path.substr(0, e.path.size() - 5) + ".summaries.cbor");
        EXPECT_TRUE(fs::is_regular_file(dir.path / e.summaries));
        EXPECT_LT(fs::file_size(dir.path / e.summaries), fs::file_size(dir.path / e.path));
    }
    for (const auto &row : archive_entries(dir.path)) EXPECT_FALSE(row.summaries.empty()) << row.path;
    std::vector<Document> from_summaries;
    HistoryOptions o;
    o.suite = "quick";
    for (bool wide : {false, true}) {
        o.wide = wide;
        from_summaries.push_back(archive_history(dir.path, o));
    }
    // The summaries hold what history shows: each kind of entry is in them.
    const nlohmann::json &cases = from_summaries[0].data["cases"];
    ASSERT_EQ(cases.size(), 9u);
    std::set<std::string> qualities;
    for (const auto &c : cases)
        for (const auto &q : c["quality"])
            if (q.is_string()) qualities.insert(q.get<std::string>());
    EXPECT_EQ(qualities, (std::set<std::string>{"clean", "noisy", "disturbed"}));

    forget_summaries(dir.path);
    std::size_t n = 0;
    for (bool wide : {false, true}) {
            o.wide = wide;
            const Document from_sets = archive_history(dir.path, o);
            const Document &d = from_summaries[n++];
            SCOPED_TRACE(fmt::format("wide {}", wide));
            EXPECT_EQ(d.data["cases"], from_sets.data["cases"]); // medians and quality per case and run
            nlohmann::json runs = d.data["runs"]; // the same runs, which name their summaries
            for (auto &r : runs) {
                EXPECT_TRUE(r.contains("summaries")) << r;
                r.erase("summaries");
            }
            EXPECT_EQ(runs, from_sets.data["runs"]);
            ASSERT_EQ(d.tables.size(), from_sets.tables.size());
            EXPECT_EQ(d.tables[0].title, from_sets.tables[0].title);
            EXPECT_EQ(d.tables[0].columns, from_sets.tables[0].columns);
            EXPECT_EQ(d.tables[0].rows, from_sets.tables[0].rows);
            EXPECT_EQ(d.tables[0].notes, from_sets.tables[0].notes);
            EXPECT_EQ(d.records.columns, from_sets.records.columns);
            EXPECT_EQ(d.records.rows, from_sets.records.rows);
        }
}

// History reads the summaries, not the sets (a set whose file is gone is
// still shown), and falls back to the set where a row names no summaries
// or its summaries file is gone. prune deletes both files.
TEST(Archive, HistoryReadsSummariesAndFallsBackToTheSet) {
    TempDir in, dir;
    std::vector<ArchiveEntry> stored;
    for (int i = 0; i < 3; ++i)
        stored.push_back(archive_store(
            dir.path, read_result_set(write_fake_set(in.path, std::to_string(i) + ".json", run_of_every_kind(i)))));
    HistoryOptions o;
    o.suite = "quick";
    const nlohmann::json before = archive_history(dir.path, o).data;
    fs::rename(dir.path / stored[0].path, in.path / "moved.json");
    EXPECT_EQ(archive_history(dir.path, o).data, before);
    fs::rename(in.path / "moved.json", dir.path / stored[0].path);
    fs::remove(dir.path / stored[1].summaries);
    EXPECT_EQ(archive_history(dir.path, o).data, before);
    // A summaries file that is not one is an error naming it.
    std::ofstream(dir.path / stored[2].summaries) << R"({"schema_version": 7})";
    try {
        (void)archive_history(dir.path, o);
        ADD_FAILURE() << "a corrupt summaries file was accepted";
    } catch (const ArchiveError &e) {
        EXPECT_NE(std::string(e.what()).find(stored[2].summaries), std::string::npos) << e.what();
    }
    const PruneResult r = archive_prune(dir.path, 1);
    ASSERT_EQ(r.removed.size(), 2u);
    EXPECT_FALSE(fs::exists(dir.path / stored[0].summaries));
    EXPECT_FALSE(fs::exists(dir.path / stored[0].path));
    EXPECT_TRUE(fs::exists(dir.path / stored[2].summaries));
}

// More runs than the trend's 10 bars (--last 1000): each bar is the median
// of a group of consecutive runs, and the header names the first and last
// run instead of listing every one, so the table still fits 100 columns.
TEST(Archive, HistoryOfManyRunsGroupsTheTrend) {
    TempDir in, dir;
    for (int i = 0; i < 12; ++i)
        archive_store(dir.path, read_result_set(write_fake_set(
                                    in.path, std::to_string(i) + ".json",
                                    run_at(fmt::format("2026-11-{:02}T10:00:00Z", i + 1), fmt::format("c{:02}", i),
                                           1e-5 * (1 + i)))));
    HistoryOptions o;
    o.suite = "quick";
    o.last = 100;
    o.case_regex = "naive";
    const Table t = archive_history(dir.path, o).tables[0];
    ASSERT_EQ(t.rows.size(), 1u);
    EXPECT_EQ(t.rows[0][4], "▁▄▅▇▇█"); // 6 bars of 2 runs each: 15, 35, ..., 115 us on a log scale
    EXPECT_NE(t.title.find("a bar per 2 runs: their median): 12 from 2026-11-01T10:00 c00"), std::string::npos)
        << t.title;
    EXPECT_NE(t.title.find("2026-11-12T10:00 c11"), std::string::npos) << t.title;
    EXPECT_EQ(t.title.find("c05"), std::string::npos) << "the runs between are not listed:\n" << t.title;
}

namespace {

// An archive of two sets of one group, whose index rows the test rewrites.
struct TwoRunArchive {
    TempDir in, dir;
    std::vector<ArchiveEntry> stored;
    TwoRunArchive() {
        for (int i = 0; i < 2; ++i)
            stored.push_back(archive_store(
                dir.path, read_result_set(write_fake_set(in.path, std::to_string(i) + ".json",
                                                         run_at(fmt::format("2026-11-2{}T10:00:00Z", i),
                                                                "c" + std::to_string(i), 1e-5)))));
    }
    nlohmann::json index() const {
        std::ifstream f(dir.path / "index.json");
        return nlohmann::json::parse(f);
    }
    void set_index(const nlohmann::json &j) const { std::ofstream(dir.path / "index.json") << j.dump(); }
    // The older row (the one --keep 1 prunes) now names `path`, without summaries.
    void point_oldest_at(const std::string &path) const {
        nlohmann::json j = index();
        j["sets"][0]["path"] = path;
        j["sets"][0].erase("summaries");
        set_index(j);
    }
};

bool mentions(const std::vector<std::string> &lines, const std::string &what) {
    return std::any_of(lines.begin(), lines.end(), [&](const std::string &l) { return l.find(what) != std::string::npos; });
}

} // namespace

// Issue 32: a row `<machine>/lnk/victim.json` where lnk is a symlink to a
// directory outside the archive must not delete the file outside.
TEST(ArchivePrune, RefusesAPathThroughASymlinkOutOfTheArchive) {
    TwoRunArchive a;
    TempDir outside;
    std::ofstream(outside.path / "victim.json") << "precious";
    const std::string machine = fs::path(a.stored[0].path).begin()->string();
    fs::create_directory_symlink(outside.path, a.dir.path / machine / "lnk");
    a.point_oldest_at(machine + "/lnk/victim.json");
    const PruneResult r = archive_prune(a.dir.path, 1);
    EXPECT_TRUE(fs::exists(outside.path / "victim.json"));
    EXPECT_TRUE(r.removed_files.empty());
    EXPECT_TRUE(mentions(r.refused, "symbolic link"));
    // A row that is itself a symlink to a file outside is not followed either.
    TwoRunArchive b;
    fs::create_symlink(outside.path / "victim.json", b.dir.path / "link.json");
    b.point_oldest_at("link.json");
    (void)archive_prune(b.dir.path, 1);
    EXPECT_TRUE(fs::exists(outside.path / "victim.json"));
}

// Issue 32: a row whose path is index.json must not delete the index.
TEST(ArchivePrune, NeverDeletesTheIndex) {
    TwoRunArchive a;
    a.point_oldest_at("index.json");
    const PruneResult r = archive_prune(a.dir.path, 1);
    EXPECT_TRUE(fs::exists(a.dir.path / "index.json"));
    EXPECT_EQ(archive_entries(a.dir.path).size(), 1u);
    EXPECT_TRUE(mentions(r.refused, "index.json"));
}

// Issue 32: duplicate rows must not delete the file a kept row points to.
TEST(ArchivePrune, DuplicateRowsKeepTheKeptRowsFile) {
    TwoRunArchive a;
    nlohmann::json j = a.index();
    j["sets"][0]["path"] = a.stored[1].path;
    j["sets"][0]["summaries"] = a.stored[1].summaries;
    a.set_index(j);
    const PruneResult r = archive_prune(a.dir.path, 1);
    EXPECT_TRUE(fs::exists(a.dir.path / a.stored[1].path));
    EXPECT_TRUE(fs::exists(a.dir.path / a.stored[1].summaries));
    EXPECT_TRUE(r.removed_files.empty());
    EXPECT_EQ(archive_entries(a.dir.path).size(), 1u);
    // Two rows naming one file count once towards --keep.
    TwoRunArchive b;
    j = b.index();
    j["sets"].push_back(j["sets"][1]);
    b.set_index(j);
    (void)archive_prune(b.dir.path, 2);
    EXPECT_TRUE(fs::exists(b.dir.path / b.stored[0].path));
}

// Issue 32: a row naming a directory is reported as refused, not "removed".
TEST(ArchivePrune, ADirectoryRowIsRefusedNotReportedRemoved) {
    TwoRunArchive a;
    fs::create_directory(a.dir.path / "adir");
    a.point_oldest_at("adir");
    const PruneResult r = archive_prune(a.dir.path, 1);
    EXPECT_TRUE(fs::is_directory(a.dir.path / "adir"));
    EXPECT_TRUE(r.removed_files.empty());
    EXPECT_TRUE(mentions(r.refused, "adir: not removed: not a regular file"));
}

// Issue 32: an index nested 100,000 deep or a summaries CBOR nested 200,000
// deep killed every archive command (SIGSEGV); now each is an ArchiveError.
TEST(ArchiveReaders, RefuseNestingBeyondTheBound) {
    TwoRunArchive a;
    std::string deep = R"({"schema_version": 1, "sets": [)" + std::string(100000, '[') + std::string(100000, ']') + "]}";
    std::ofstream(a.dir.path / "index.json") << deep;
    EXPECT_THROW((void)archive_entries(a.dir.path), ArchiveError);
    EXPECT_THROW((void)archive_prune(a.dir.path, 1), ArchiveError);

    TwoRunArchive b;
    std::string cbor(200000, '\x81'); // arrays of one, 200,000 deep
    cbor += '\x01';
    std::ofstream(b.dir.path / b.stored[1].summaries, std::ios::binary) << cbor;
    HistoryOptions o;
    o.suite = b.stored[1].suite;
    try {
        (void)archive_history(b.dir.path, o);
        ADD_FAILURE() << "a summaries file nested 200,000 deep was read";
    } catch (const ArchiveError &e) {
        EXPECT_NE(std::string(e.what()).find("nested deeper than"), std::string::npos) << e.what();
    }
}

// Issue 32: a set with an entry that is not one (`{}` in benchmarks) was
// dropped silently by every reader; archive and history refuse it, naming it.
TEST(ArchiveReaders, RefuseASetWithAnEntryThatIsNotOne) {
    TempDir in, dir;
    const std::string p = write_fake_set(in.path, "s.json", run_at("2026-11-20T10:00:00Z", "c0", 1e-5));
    nlohmann::json j;
    {
        std::ifstream f(p);
        j = nlohmann::json::parse(f);
    }
    j["benchmarks"].push_back(nlohmann::json::object());
    const std::size_t at = j["benchmarks"].size() - 1;
    std::ofstream(p) << j.dump();
    try {
        (void)read_result_set(p);
        ADD_FAILURE() << "a set with {} in benchmarks was read";
    } catch (const ResultSetError &e) {
        EXPECT_NE(std::string(e.what()).find(fmt::format("benchmarks[{}]", at)), std::string::npos) << e.what();
    }
}

// Issue 32: `archive` took a set with a 100,000-character backend name, after
// which history died with SIGSEGV (std::regex recursion). archive refuses
// names over 1 KiB or with control characters, naming the field; history
// without --case runs no regex, so such a row already in an archive is read.
TEST(ArchiveReaders, LongOrControlNamesAreRefusedAndHistoryDoesNotCrash) {
    TwoRunArchive a;
    FakeSet s = run_at("2026-11-19T10:00:00Z", "long", 1e-5);
    s.cases[1].backend = std::string(100000, 'b');
    const std::string p = write_fake_set(a.in.path, "long.json", s);
    try {
        (void)archive_store(a.dir.path, read_result_set(p));
        ADD_FAILURE() << "a 100,000-character backend name was archived";
    } catch (const ArchiveError &e) {
        EXPECT_NE(std::string(e.what()).find("backend is 100000 bytes long"), std::string::npos) << e.what();
    }
    FakeSet c = run_at("2026-11-19T10:00:00Z", "ctl", 1e-5);
    c.cases[1].backend = "one\x1b[2Jdnn";
    try {
        (void)archive_store(a.dir.path, read_result_set(write_fake_set(a.in.path, "ctl.json", c)));
        ADD_FAILURE() << "a backend name with ESC was archived";
    } catch (const ArchiveError &e) {
        EXPECT_NE(std::string(e.what()).find("control character 0x1b"), std::string::npos) << e.what();
    }
    fs::copy_file(p, a.dir.path / "long.json");
    a.point_oldest_at("long.json");
    HistoryOptions o;
    o.suite = a.stored[1].suite;
    EXPECT_EQ(archive_history(a.dir.path, o).data["runs"].size(), 2u);
}

// Issue 32: an archive row that is a symlink to a file outside the archive
// was read by history; now it is an ArchiveError naming the row.
TEST(ArchiveReaders, RefuseARowThatIsASymlinkOutOfTheArchive) {
    TwoRunArchive a;
    TempDir outside;
    fs::copy_file(a.dir.path / a.stored[0].path, outside.path / "elsewhere.json");
    fs::create_symlink(outside.path / "elsewhere.json", a.dir.path / "link.json");
    a.point_oldest_at("link.json");
    HistoryOptions o;
    o.suite = a.stored[1].suite;
    try {
        (void)archive_history(a.dir.path, o);
        ADD_FAILURE() << "a row that is a symlink out of the archive was read";
    } catch (const ArchiveError &e) {
        EXPECT_NE(std::string(e.what()).find("link.json is a symbolic link"), std::string::npos) << e.what();
    }
    EXPECT_THROW((void)confined_file(a.dir.path, "link.json"), ArchiveError);
    EXPECT_EQ(confined_file(a.dir.path, a.stored[1].path), (a.dir.path / a.stored[1].path).string());
}

// Issue 32: `report` on medians of 1e308 grew to the memory limit and
// aborted: the validating reader bounds times (0 to 1e6 s), naming the field;
// the entry summaries history reads are bounded alike.
TEST(ArchiveReaders, RefuseTimesThatAreNotTimes) {
    TempDir in;
    const std::string p = write_fake_set(in.path, "huge.json", run_at("2026-11-20T10:00:00Z", "c0", 1e-5));
    nlohmann::json j;
    {
        std::ifstream f(p);
        j = nlohmann::json::parse(f);
    }
    for (auto &e : j["benchmarks"])
        if (e.contains("stats")) e["stats"]["median"] = 1e308;
    std::ofstream(p) << j.dump();
    try {
        (void)read_result_set(p);
        ADD_FAILURE() << "a median of 1e308 s was read";
    } catch (const ResultSetError &e) {
        EXPECT_NE(std::string(e.what()).find("expected a time in seconds from 0 to 1e+06"), std::string::npos)
            << e.what();
    }
    TwoRunArchive a;
    nlohmann::json summaries = nlohmann::json::from_cbor(std::ifstream(a.dir.path / a.stored[1].summaries, std::ios::binary));
    summaries["entries"]["repetitions"][0] = 1e308;
    const std::vector<std::uint8_t> cbor = nlohmann::json::to_cbor(summaries);
    std::ofstream(a.dir.path / a.stored[1].summaries, std::ios::binary)
        .write(reinterpret_cast<const char *>(cbor.data()), static_cast<std::streamsize>(cbor.size()));
    HistoryOptions o;
    o.suite = a.stored[1].suite;
    EXPECT_THROW((void)archive_history(a.dir.path, o), ArchiveError);
}

// Issue 32, found by tests/fuzz/fuzz_summaries.cpp and fuzz_history.cpp: a
// summaries file whose string is not UTF-8 (CBOR does not check it when
// read), or whose integer column holds a float far out of int's range (a cast
// of undefined behaviour), is refused as not the entry summaries of a set.
TEST(Archive, SummariesWithBadTextOrIntegersAreRefused) {
    TempDir in;
    const ResultSet set = read_result_set(write_fake_set(in.path, "s.json", run_at("2026-11-20T10:00:00Z", "c1", 1e-5)));
    const nlohmann::json good = set_summaries(set);
    const auto refused = [](const nlohmann::json &summaries, const std::string &why) {
        const std::vector<std::uint8_t> cbor = nlohmann::json::to_cbor(summaries);
        try {
            (void)set_from_summaries_bytes(std::string(cbor.begin(), cbor.end()), "s.summaries.cbor", "s.json");
            ADD_FAILURE() << "accepted summaries with " << why;
        } catch (const ResultSetError &e) {
            EXPECT_NE(std::string(e.what()).find("not the entry summaries of an archived set"), std::string::npos)
                << e.what();
        }
    };
    EXPECT_NO_THROW((void)set_from_summaries_bytes(set_summaries_bytes(set), "s.summaries.cbor", "s.json"));
    nlohmann::json bad_text = good;
    bad_text["entries"]["backend"][0] = std::string("naive\xff");
    refused(bad_text, "a backend that is not UTF-8");
    // The check walks the strings (issue 43: no dump of the whole file): each
    // ill-formed kind, in a value and in a key, and well-formed text passes.
    for (const char *bad : {"\xC0\xAF", "\xED\xA0\x80", "\xE2\x82", "\xF4\x90\x80\x80", "\x80", "\xF8\x88\x80\x80\x80"}) {
        nlohmann::json v = good, k = good;
        v["entries"]["backend"][0] = std::string("naive") + bad;
        k["context"][std::string("key") + bad] = 1;
        refused(v, std::string("a value with ") + bad);
        refused(k, std::string("a key with ") + bad);
    }
    nlohmann::json fine = good;
    fine["entries"]["backend"][0] = "naive \u00b5s \u00b1 \u2026 \U0001F600";
    EXPECT_NO_THROW((void)set_from_summaries_bytes(
        [&] { const auto c = nlohmann::json::to_cbor(fine); return std::string(c.begin(), c.end()); }(), "s.summaries.cbor", "s.json"));
    nlohmann::json bad_process = good;
    bad_process["entries"]["repetitions"][5] = -4.05648e+31; // the first repetition's process
    refused(bad_process, "a process number of -4e31");
    nlohmann::json bad_count = good;
    bad_count["entries"]["repetition_counts"][0] = 1.5;
    refused(bad_count, "a repetition count of 1.5");
}
