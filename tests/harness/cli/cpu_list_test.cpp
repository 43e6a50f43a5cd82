// --cpus: taskset(1)'s CPU list syntax, exactly; anything else refused.
#include "cli/cpu_list.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

using namespace opbench;

namespace {
std::string cpu_list_error(const std::string &text) {
    try {
        (void)parse_cpu_list(text);
    } catch (const std::invalid_argument &e) {
        return e.what();
    }
    ADD_FAILURE() << "accepted '" << text << "'";
    return "";
}
} // namespace

TEST(ParseCpuList, ReadsNumbersRangesAndStrides) {
    EXPECT_EQ(parse_cpu_list("0"), (std::vector<int>{0}));
    EXPECT_EQ(parse_cpu_list("0-1"), (std::vector<int>{0, 1})) << "a range is both ends, not its first CPU";
    EXPECT_EQ(parse_cpu_list("0-3,6"), (std::vector<int>{0, 1, 2, 3, 6}));
    EXPECT_EQ(parse_cpu_list("0-10:4"), (std::vector<int>{0, 4, 8}));
    EXPECT_EQ(parse_cpu_list("6,0-2,1"), (std::vector<int>{0, 1, 2, 6})) << "sorted, each once";
    EXPECT_EQ(parse_cpu_list("5-5"), (std::vector<int>{5}));
    EXPECT_EQ(parse_cpu_list("1023"), (std::vector<int>{1023}));
}

TEST(ParseCpuList, RefusesWhatItCannotParseNamingTheEntry) {
    EXPECT_NE(cpu_list_error("").find("empty"), std::string::npos);
    EXPECT_NE(cpu_list_error("0,").find("empty entry"), std::string::npos);
    EXPECT_NE(cpu_list_error(",1").find("empty entry"), std::string::npos);
    EXPECT_NE(cpu_list_error("0,,1").find("empty entry"), std::string::npos);
    EXPECT_NE(cpu_list_error("3-1").find("runs backwards"), std::string::npos);
    EXPECT_NE(cpu_list_error("-1").find("'-1'"), std::string::npos);
    EXPECT_NE(cpu_list_error("0-1x").find("'1x' is not a CPU number"), std::string::npos);
    EXPECT_NE(cpu_list_error("a").find("'a' is not a CPU number"), std::string::npos);
    EXPECT_NE(cpu_list_error(" 1").find("is not a CPU number"), std::string::npos);
    EXPECT_NE(cpu_list_error("0-4:0").find("stride must be at least 1"), std::string::npos);
    EXPECT_NE(cpu_list_error("0-4:").find("a number is missing"), std::string::npos);
    EXPECT_NE(cpu_list_error("1024").find("go up to 1023"), std::string::npos);
    EXPECT_NE(cpu_list_error("0-1-2").find("is not a CPU number"), std::string::npos);
}

TEST(ParseCpuList, NeverEchoesAHugeNumberWhole) {
    const std::string huge(309, '9');
    const std::string why = cpu_list_error(huge);
    EXPECT_NE(why.find("go up to 1023"), std::string::npos) << why;
    EXPECT_LT(why.size(), 250u) << why;
}
