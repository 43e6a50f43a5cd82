// The U test against SciPy 1.10.1: scipy.stats.mannwhitneyu(x, y,
// alternative="two-sided", method="exact" | "asymptotic"), computed once
// with Debian's /usr/bin/python3 (the script is in the comment of each case).
#include "readers/mann_whitney.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <vector>

using namespace opbench;

namespace {

struct Known {
    const char *name;
    std::vector<double> x, y;
    double u;
    double p_exact, p_asymptotic;
};

const std::vector<Known> &known() {
    static const std::vector<Known> k = {
        {"separated", {1, 2, 3, 4}, {5, 6, 7, 8, 9}, 0.0, 0.015873015873015872, 0.019964453305216043},
        {"overlapping",
         {1.1, 2.3, 3.0, 4.7, 5.2},
         {2.0, 3.5, 4.1, 6.0, 7.2, 8.8},
         8.0,
         0.24675324675324672,
         0.23533326650958586},
        // With ties SciPy's exact method ignores them (as ours does); the
        // asymptotic one corrects the variance for them.
        {"ties", {1, 2, 2, 3, 3, 3, 4}, {2, 3, 3, 4, 4, 5, 5, 6}, 11.0, 0.054079254079254076, 0.04988443697992588},
        {"all_equal", {5, 5, 5, 5, 5, 5}, {5, 5, 5, 5, 5, 5, 5}, 21.0, 1.0, 1.0},
    };
    return k;
}

} // namespace

TEST(MannWhitney, ExactMatchesScipy) {
    for (const auto &k : known()) {
        const UTestResult r = mann_whitney_u(k.x, k.y, UTestMethod::exact);
        EXPECT_DOUBLE_EQ(r.u, k.u) << k.name;
        EXPECT_NEAR(r.p_value, k.p_exact, 1e-12) << k.name;
        EXPECT_TRUE(r.exact) << k.name;
    }
}

TEST(MannWhitney, AsymptoticMatchesScipyWithTieAndContinuityCorrection) {
    for (const auto &k : known()) {
        const UTestResult r = mann_whitney_u(k.x, k.y, UTestMethod::asymptotic);
        EXPECT_DOUBLE_EQ(r.u, k.u) << k.name;
        EXPECT_NEAR(r.p_value, k.p_asymptotic, 1e-12) << k.name;
        EXPECT_FALSE(r.exact) << k.name;
    }
}

TEST(MannWhitney, LargeSamplesMatchScipy) {
    // x = [i % 17 + 0.5 i for i in range(30)], y = [i % 13 + 0.5 i + 3 for i in range(25)]
    std::vector<double> x, y;
    for (int i = 0; i < 30; ++i) x.push_back(double(i % 17) + 0.5 * i);
    for (int i = 0; i < 25; ++i) y.push_back(double(i % 13) + 0.5 * i + 3);
    const UTestResult a = mann_whitney_u(x, y, UTestMethod::asymptotic);
    EXPECT_DOUBLE_EQ(a.u, 367.5);
    EXPECT_NEAR(a.p_value, 0.9057908561710649, 1e-12);
    const UTestResult e = mann_whitney_u(x, y, UTestMethod::exact);
    EXPECT_NEAR(e.p_value, 0.9132367239854627, 1e-12);
}

TEST(MannWhitney, AutomaticIsExactWithoutTiesAndAsymptoticWithThem) {
    EXPECT_TRUE(mann_whitney_u(known()[0].x, known()[0].y).exact);
    EXPECT_FALSE(mann_whitney_u(known()[2].x, known()[2].y).exact);
    std::vector<double> big(60), other(60);
    for (int i = 0; i < 60; ++i) big[i] = i, other[i] = i + 0.5;
    EXPECT_FALSE(mann_whitney_u(big, other).exact); // over kExactMaxSize
}

TEST(MannWhitney, SymmetricInItsPValue) {
    const auto &k = known()[1];
    const UTestResult ab = mann_whitney_u(k.x, k.y), ba = mann_whitney_u(k.y, k.x);
    EXPECT_DOUBLE_EQ(ab.p_value, ba.p_value);
    EXPECT_DOUBLE_EQ(ab.u + ba.u, double(k.x.size() * k.y.size()));
}

TEST(MannWhitney, NineRepetitionsApartAreSignificantThreeAreNot) {
    std::vector<double> a{1, 1.01, 1.02, 0.99, 1.0, 1.005, 0.995, 1.015, 0.985};
    std::vector<double> b;
    for (double v : a) b.push_back(v * 1.2);
    EXPECT_LT(mann_whitney_u(a, b).p_value, 0.001);
    // 3 vs 3 can never reach 0.05: the smallest p is 2 / C(6, 3) = 0.1.
    EXPECT_NEAR(min_two_sided_p(3, 3), 0.1, 1e-12);
    EXPECT_NEAR(mann_whitney_u(std::vector<double>{1, 2, 3}, std::vector<double>{4, 5, 6}).p_value, 0.1, 1e-12);
    EXPECT_LT(min_two_sided_p(4, 4), 0.05);
    EXPECT_GT(min_two_sided_p(3, 4), 0.05);
}

TEST(MannWhitney, EmptyAndBadInput) {
    const std::vector<double> none, some{1, 2, 3};
    EXPECT_EQ(mann_whitney_u(none, some).p_value, 1.0);
    EXPECT_THROW((void)mann_whitney_u(std::vector<double>{NAN}, some), std::invalid_argument);
}
