// --benchmark_* arguments: the ones opbench honours pass, the ones it would
// ignore in silence are refused with what to use instead.
#include "cli/benchmark_flags.hpp"

#include <gtest/gtest.h>

using namespace opbench;

namespace {
std::string error_for(const std::string &arg) {
    try {
        (void)sort_benchmark_flags({arg});
    } catch (const BenchmarkFlagError &e) {
        return e.what();
    }
    ADD_FAILURE() << "accepted " << arg;
    return "";
}
} // namespace

TEST(SortBenchmarkFlags, MinTimeAndRepetitionsBecomeOpbenchSettings) {
    BenchmarkFlags f = sort_benchmark_flags({"--benchmark_min_time=0.25", "--benchmark_repetitions=5"});
    ASSERT_TRUE(f.min_time && f.repetitions);
    EXPECT_DOUBLE_EQ(*f.min_time, 0.25);
    EXPECT_EQ(*f.repetitions, 5);
    EXPECT_TRUE(f.pass_through.empty());
    EXPECT_DOUBLE_EQ(*sort_benchmark_flags({"--benchmark_min_time=2s"}).min_time, 2.0);
}

TEST(SortBenchmarkFlags, PassesTheFlagsOpbenchHonours) {
    const std::vector<std::string> args = {"--benchmark_filter=matmul",
                                           "--benchmark_filter=-be:naive",
                                           "--benchmark_enable_random_interleaving=true",
                                           "--benchmark_enable_random_interleaving",
                                           "--benchmark_color=false",
                                           "--benchmark_counters_tabular=true",
                                           "--benchmark_context=host=a"};
    EXPECT_EQ(sort_benchmark_flags(args).pass_through, args);
}

TEST(SortBenchmarkFlags, RefusesFlagsItWouldIgnoreSayingWhatToUse) {
    EXPECT_NE(error_for("--benchmark_out=F").find("use --out FILE"), std::string::npos);
    EXPECT_NE(error_for("--benchmark_out_format=csv").find("--out FILE"), std::string::npos);
    EXPECT_NE(error_for("--benchmark_format=json").find("--out FILE"), std::string::npos);
    EXPECT_NE(error_for("--benchmark_list_tests=true").find("opbench validate"), std::string::npos);
    EXPECT_NE(error_for("--benchmark_report_aggregates_only=true").find("every repetition"), std::string::npos);
    EXPECT_NE(error_for("--benchmark_min_warmup_time=1").find("--warmup N"), std::string::npos);
    EXPECT_NE(error_for("--benchmark_nonsense=1").find("accepts --benchmark_filter"), std::string::npos);
}

TEST(SortBenchmarkFlags, RefusesBadValues) {
    for (const char *bad : {"--benchmark_min_time=0", "--benchmark_min_time=-1", "--benchmark_min_time=x",
                            "--benchmark_min_time=1e400", "--benchmark_min_time", "--benchmark_repetitions=0",
                            "--benchmark_repetitions=1.5", "--benchmark_repetitions=99999999999"})
        EXPECT_FALSE(error_for(bad).empty()) << bad;
    EXPECT_NE(error_for("--benchmark_filter").find("--benchmark_filter=VALUE"), std::string::npos);
    EXPECT_NE(error_for("--benchmark_filter=(").find("not a valid extended regular expression"), std::string::npos);
    EXPECT_NE(error_for("--benchmark_enable_random_interleaving=maybe").find("true or false"), std::string::npos);
}
