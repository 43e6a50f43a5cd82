// One set through every reader view (compare, compare --by backend, report,
// analyze, history): each entry shows the same median and the same quality
// flag everywhere (issue 17, "One case, one number, everywhere"). The set
// holds one entry of each quality: clean, noisy (spread above the noise
// target) and disturbed (nine repetitions: three near 28 us that met their
// target, six at 24-32 ms that missed it; the median of all nine is 26 ms).
#include "measure/entry_summary.hpp"
#include "readers/analyze.hpp"
#include "readers/archive.hpp"
#include "readers/compare.hpp"
#include "readers/level_table.hpp"
#include "readers/report_html.hpp"
#include "readers/result_set_reader.hpp"
#include "writers/units.hpp"

#include "../result_set_fixture.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <map>

using namespace opbench;
using namespace opbench::test;

namespace {

struct Expected {
    double median;
    std::string quality;
};

FakeSet one_of_each() {
    FakeSet s;
    FakeCase clean_naive;
    clean_naive.medians = reps(40e-6);
    FakeCase disturbed = clean_naive;
    disturbed.backend = "onednn";
    disturbed.medians = {27e-6, 28e-6, 29e-6, 24e-3, 26e-3, 28e-3, 30e-3, 31e-3, 32e-3};
    disturbed.target_met = {true, true, true, false, false, false, false, false, false};
    FakeCase noisy;
    noisy.op = "matmul";
    noisy.params = {{"M", 64}, {"N", 64}, {"K", 64}};
    noisy.medians = {100e-6, 110e-6, 120e-6, 105e-6, 115e-6};
    FakeCase clean_onednn = noisy;
    clean_onednn.backend = "onednn";
    clean_onednn.medians = reps(9e-6);
    s.cases = {clean_naive, disturbed, noisy, clean_onednn};
    return s;
}

// By "label [backend]".
std::map<std::string, Expected> expected() {
    return {{"add/C:128/R:32/dt:f32 [naive]", {40e-6, "clean"}},
            {"add/C:128/R:32/dt:f32 [onednn]", {26e-3, "disturbed"}},
            {"matmul/K:64/M:64/N:64/dt:f32 [naive]", {110e-6, "noisy"}},
            {"matmul/K:64/M:64/N:64/dt:f32 [onednn]", {9e-6, "clean"}}};
}

std::string key(const std::string &label, const std::string &backend) { return label + " [" + backend + "]"; }

// The expected figures of an entry a view names; a name the set does not
// hold fails the test with the name.
const Expected &lookup(const std::map<std::string, Expected> &want, const std::string &k) {
    static const Expected none{NAN, "not in the set"};
    auto it = want.find(k);
    if (it == want.end()) ADD_FAILURE() << "a view names an entry the set does not hold: '" << k << "'";
    return it == want.end() ? none : it->second;
}

} // namespace

TEST(OneSummary, EveryViewShowsTheSameMedianAndQualityForEachEntry) {
    TempDir tmp;
    const FakeSet fake = one_of_each();
    const std::string path_a = write_fake_set(tmp.path, "a.json", fake);
    FakeSet later = fake;
    later.timestamp = "2026-11-22T15:50:51Z";
    const std::string path_b = write_fake_set(tmp.path, "b.json", later);
    const ResultSet a = read_result_set(path_a), b = read_result_set(path_b);
    const auto want = expected();
    // The disturbed entry's median is that of all nine repetitions, not of the
    // three that met their target (28 us), as compare used to show.
    ASSERT_EQ(want.at("add/C:128/R:32/dt:f32 [onednn]").median, 26e-3);

    // compare: each case's base and new medians and both sides' quality.
    const Comparison cmp = compare_sets({a, b}, {});
    std::size_t seen = 0;
    for (const auto &cc : cmp.pairs.at(0).cases) {
        const Expected &w = lookup(want, key(cc.label, cc.backend));
        ASSERT_TRUE(cc.compared) << cc.label << " " << cc.reason;
        EXPECT_DOUBLE_EQ(cc.base_median, w.median) << "compare " << cc.label << " " << cc.backend;
        EXPECT_DOUBLE_EQ(cc.new_median, w.median);
        EXPECT_EQ(cc.base_summary.flag(), w.quality) << "compare " << cc.label << " " << cc.backend;
        EXPECT_EQ(cc.new_summary.flag(), w.quality);
        ++seen;
    }
    EXPECT_EQ(seen, want.size());
    // ... and in its JSON and console table.
    const Document cdoc = comparison_document(cmp);
    for (const auto &cj : cdoc.data["comparisons"][0]["cases"]) {
        const Expected &w = lookup(want, key(cj["case"], cj["backend"]));
        EXPECT_DOUBLE_EQ(cj["base_summary"]["median_seconds"].get<double>(), w.median);
        EXPECT_EQ(cj["base_summary"]["quality"], w.quality);
    }

    // compare --by backend: each level's median and quality; the speed-up
    // (and so its geomean) is the ratio of those same medians.
    const Document levels = by_backend({a}, {});
    seen = 0;
    for (const auto &row : levels.data["rows"])
        for (const auto &[backend, level] : row["levels"].items()) {
            const Expected &w = lookup(want, key(row["case"], backend));
            EXPECT_DOUBLE_EQ(level["median_seconds"].get<double>(), w.median) << "--by backend " << row["case"];
            EXPECT_EQ(level["quality"], w.quality) << "--by backend " << row["case"] << " " << backend;
            if (backend != "naive") {
                const double naive = lookup(want, key(row["case"], "naive")).median;
                EXPECT_DOUBLE_EQ(level["speedup"].get<double>(), naive / w.median);
            }
            ++seen;
        }
    EXPECT_EQ(seen, want.size());

    // report: every bar's tooltip carries that median, and the quality when
    // not clean.
    const std::string html = render_report_html({a}, {});
    for (const auto &[k, w] : want) {
        const std::string shown = fmt::format("{}: {}", k, format_seconds(w.median));
        const std::size_t at = html.find(shown);
        ASSERT_NE(at, std::string::npos) << "report: " << shown;
        const std::string after = html.substr(at + shown.size(), 12);
        if (w.quality == "clean")
            EXPECT_NE(after.rfind(" (", 0), 0u) << "report: a clean entry carries no quality note: " << after;
        else
            EXPECT_EQ(after.rfind(" (" + w.quality, 0), 0u) << "report: " << k << after;
    }

    // analyze: the same median; the disturbed entry is never a kernel diagnosis.
    const auto analysed = analyse_result_set(a.raw, path_a);
    ASSERT_EQ(analysed.size(), want.size());
    for (const auto &e : analysed) {
        std::string label = e.name.substr(0, e.name.rfind("/be:"));
        const Expected &w = lookup(want, key(label, e.backend));
        EXPECT_DOUBLE_EQ(e.seconds, w.median) << "analyze " << e.name;
        EXPECT_EQ(e.summary.flag(), w.quality) << "analyze " << e.name;
        if (w.quality == "disturbed") {
            EXPECT_EQ(e.bottleneck.kind, "disturbed");
            EXPECT_NE(e.bottleneck.suggestion.find("--threads 1"), std::string::npos) << e.bottleneck.suggestion;
        } else {
            EXPECT_NE(e.bottleneck.kind, "disturbed");
        }
    }
    EXPECT_EQ(analysed.back().summary.flag(), "disturbed") << "ranked after every diagnosis";

    // history: the archived set's median and quality per run.
    const auto archive = tmp.path / "archive";
    (void)archive_store(archive, a);
    HistoryOptions ho;
    ho.suite = fake.suite;
    const Document hist = archive_history(archive, ho);
    seen = 0;
    for (const auto &cj : hist.data["cases"]) {
        const Expected &w = lookup(want, cj["case"].get<std::string>());
        EXPECT_DOUBLE_EQ(cj["median_seconds"][0].get<double>(), w.median) << "history " << cj["case"];
        EXPECT_EQ(cj["quality"][0], w.quality) << "history " << cj["case"];
        ++seen;
    }
    EXPECT_EQ(seen, want.size());
}

TEST(OneSummary, ADisturbedSideNeverReadsAsFasterOrSlower) {
    // Base clean at 28 us; new disturbed (bimodal, median 26 ms): a 900x
    // "regression" that is the machine's, not the code's.
    FakeSet base, next;
    FakeCase c;
    c.backend = "onednn";
    c.medians = reps(28e-6);
    base.cases = {c};
    c.medians = {27e-6, 28e-6, 29e-6, 24e-3, 26e-3, 28e-3, 30e-3, 31e-3, 32e-3};
    next.cases = {c};
    TempDir tmp;
    const ResultSet a = read_result_set(write_fake_set(tmp.path, "a.json", base));
    const ResultSet b = read_result_set(write_fake_set(tmp.path, "b.json", next));
    const Comparison cmp = compare_sets({a, b}, {});
    const CaseComparison &cc = cmp.pairs.at(0).cases.at(0);
    EXPECT_EQ(cc.verdict, "noisy");
    EXPECT_TRUE(cc.disturbed);
    EXPECT_NE(cc.note.find("new disturbed: bimodal"), std::string::npos) << cc.note;
}
