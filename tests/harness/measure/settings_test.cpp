// The settings table: ranges, messages, overrides, and the docs listing every key.
#include "measure/settings.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

using namespace opbench;

namespace {

std::string read(const std::string &path) {
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

} // namespace

TEST(Settings, EveryKeyHasOneRowAndAFlag) {
    for (const SettingInfo &s : measurement_settings()) {
        EXPECT_EQ(find_setting(s.key), &s);
        EXPECT_EQ(s.cli_flag.substr(0, 2), "--") << s.key;
        EXPECT_FALSE(s.help.empty()) << s.key;
        EXPECT_FALSE(check_setting(s, s.get(MeasureSettings{}))) << s.key << ": the default is out of range";
    }
    EXPECT_EQ(find_setting("nope"), nullptr);
}

TEST(Settings, SweepOrderIsTheDocumentedOne) {
    std::string order;
    for (const SettingInfo *s : settings_in_sweep_order())
        order += std::string(order.empty() ? "" : ", ") + std::string(s->key);
    EXPECT_EQ(order, "threads, cache, warmup, min_time, max_time, min_samples, noise, repetitions, timeout, starved_retries, "
                     "launch, processes");
    EXPECT_NE(read(OPBENCH_SOURCE_DIR "/suites/README.md").find(order), std::string::npos)
        << "suites/README.md's expansion order lists the settings in this order";
}

TEST(Settings, RangesHaveFloorsAndCaps) {
    const SettingInfo &threads = *find_setting("threads");
    EXPECT_FALSE(check_setting(threads, 0));
    EXPECT_FALSE(check_setting(threads, kMaxThreads));
    EXPECT_EQ(*check_setting(threads, 100000), "'threads' must be between 0 and 1024, got 100000");
    EXPECT_TRUE(check_setting(*find_setting("min_time"), 1e-9)) << "a floor keeps repetitions finite";
    EXPECT_TRUE(check_setting(*find_setting("max_time"), 1e-9));
    // ... but a min_time below its floor is raised to it (with a warning) before the check.
    const FlooredValue raised = raise_to_floor(*find_setting("min_time"), 1e-9);
    EXPECT_EQ(raised.value, 1e-4);
    EXPECT_EQ(raised.warning, "'min_time' 1e-09 is below its floor; using 0.0001");
    EXPECT_EQ(raise_to_floor(*find_setting("min_time"), 0.5).warning, "");
    EXPECT_EQ(raise_to_floor(*find_setting("min_time"), -1).value, -1) << "refused by check_setting";
    EXPECT_EQ(raise_to_floor(*find_setting("max_time"), 1e-9).value, 1e-9) << "only min_time is raised";
    EXPECT_TRUE(check_setting(*find_setting("warmup"), 1.5)) << "integers only";
    EXPECT_TRUE(check_setting(*find_setting("cache"), 2));
    const auto huge = check_setting(*find_setting("noise"), 1e308);
    ASSERT_TRUE(huge);
    EXPECT_LT(huge->size(), 80u) << *huge;
}

TEST(Settings, CrossKeyCheckAndOverrides) {
    MeasureSettings m;
    SettingOverrides o;
    o.set(*find_setting("min_time"), 5);
    o.set(*find_setting("cache"), 1);
    o.set(*find_setting("min_time"), 3); // the last value wins
    o.apply(m);
    EXPECT_DOUBLE_EQ(m.min_time, 3);
    EXPECT_EQ(m.cache, CacheState::cold);
    EXPECT_EQ(*o.get("min_time"), 3);
    EXPECT_FALSE(o.get("warmup"));
    ASSERT_TRUE(check_settings(m)) << "max_time 2 < min_time 3";
    EXPECT_EQ(*check_settings(m), "max_time (2 s) is less than min_time (3 s)");
}

TEST(Settings, ThreadsZeroResolvesToTheAffinityMask) {
    EXPECT_GE(resolve_threads(0), 1);
    EXPECT_EQ(resolve_threads(3), 3);
}

TEST(Settings, CacheStateNames) {
    EXPECT_EQ(cache_state_name(CacheState::cold), "cold");
    EXPECT_EQ(cache_state_from_name("warm"), CacheState::warm);
    EXPECT_FALSE(cache_state_from_name("hot"));
}

// The docs' tables list every key (suites/README.md) and every flag
// (docs/cli.md, the `opbench run` options table).
TEST(Settings, DocsListEveryKey) {
    const std::string suites = read(OPBENCH_SOURCE_DIR "/suites/README.md");
    const std::string readme = read(OPBENCH_SOURCE_DIR "/docs/cli.md");
    for (const SettingInfo &s : measurement_settings()) {
        const std::string row = "| `" + std::string(s.key) + "` | " + range_text(s) + " | " + default_text(s) + " |";
        EXPECT_NE(suites.find(row), std::string::npos) << "suites/README.md has no row starting " << row;
        EXPECT_NE(readme.find("`" + std::string(s.cli_flag) + " "), std::string::npos)
            << "docs/cli.md does not list " << s.cli_flag;
    }
}
