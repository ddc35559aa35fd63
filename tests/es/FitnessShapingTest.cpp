#include "mlgo/es/FitnessShaping.h"

#include <gtest/gtest.h>

#include <vector>

namespace mlgo::es {
namespace {

TEST(FitnessShaping, ZScoresUsePopulationStd) {
  std::vector<double> values = {1, 2, 3, 4};
  std::vector<double> z = zScores(values, 1e-5);
  // mean 2.5, population std √1.25
  std::vector<double> expected = {-1.3416407864998738, -0.4472135954999579, 0.4472135954999579,
                                  1.3416407864998738};
  for (size_t i = 0; i < 4; ++i)
    EXPECT_NEAR(z[i], expected[i], 1e-15);
}

TEST(FitnessShaping, ZScoreStdIsFloored) {
  std::vector<double> equal = {2, 2, 2};
  for (double z : zScores(equal, 1e-5))
    EXPECT_EQ(z, 0.0);
  std::vector<double> tiny = {0, 2e-6};
  std::vector<double> z = zScores(tiny, 1e-5); // std 1e-6 < floor
  EXPECT_NEAR(z[0], -0.1, 1e-12);
  EXPECT_NEAR(z[1], 0.1, 1e-12);
}

TEST(FitnessShaping, CentredRanksAverageTies) {
  std::vector<double> values = {3, 1, 2, 2};
  std::vector<double> r = centredRanks(values);
  EXPECT_DOUBLE_EQ(r[0], 0.5);
  EXPECT_DOUBLE_EQ(r[1], -0.5);
  EXPECT_DOUBLE_EQ(r[2], 0.0);
  EXPECT_DOUBLE_EQ(r[3], 0.0);
  std::vector<double> one = {7};
  EXPECT_EQ(centredRanks(one), std::vector<double>{0.0});
}

TEST(FitnessShaping, TopDirectionsRankAntitheticPairsByTheirMax) {
  // Pair maxima: 1, 5, 2.
  std::vector<double> rewards = {0, 1, 5, -9, 2, 2};
  EXPECT_EQ(topDirections(Sampling::Antithetic, rewards, 2), (std::vector<size_t>{1, 2}));
  EXPECT_EQ(topDirections(Sampling::Antithetic, rewards, 9), (std::vector<size_t>{1, 2, 0}));
}

TEST(FitnessShaping, TopDirectionsKeepBestForwardRewards) {
  std::vector<double> rewards = {3, 1, 4, 1, 5};
  EXPECT_EQ(topDirections(Sampling::ForwardDifference, rewards, 3), (std::vector<size_t>{4, 2, 0}));
  // Ties keep the lower index first.
  EXPECT_EQ(topDirections(Sampling::ForwardDifference, rewards, 5),
            (std::vector<size_t>{4, 2, 0, 1, 3}));
}

TEST(FitnessShaping, OptionsNameTheBadField) {
  ShapingOptions options;
  options.minimumStd = 0;
  Status status = options.validate();
  ASSERT_FALSE(status);
  EXPECT_EQ(status.error().message, "minimumStd: must be positive, got 0");
  options = {};
  options.topDirections = 0;
  status = options.validate();
  ASSERT_FALSE(status);
  EXPECT_EQ(status.error().message.rfind("topDirections:", 0), 0u);
}

} // namespace
} // namespace mlgo::es
