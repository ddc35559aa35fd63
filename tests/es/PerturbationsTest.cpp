#include "mlgo/es/Perturbations.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace mlgo::es {
namespace {

TEST(GaussianNoise, IsAPureFunctionOfItsIntegers) {
  GaussianNoise a(7), b(7);
  EXPECT_EQ(a.direction(3, 11, 100), b.direction(3, 11, 100));
  EXPECT_NE(a.direction(3, 11, 100), a.direction(3, 12, 100));
  EXPECT_NE(a.direction(3, 11, 100), a.direction(4, 11, 100));
  EXPECT_NE(a.direction(3, 11, 100), GaussianNoise(8).direction(3, 11, 100));
}

TEST(GaussianNoise, AnySliceOfCoordinatesRegeneratesTheSameValues) {
  GaussianNoise noise(123);
  Eigen::VectorXd full = noise.direction(5, 9, 37);
  for (size_t first : {0u, 1u, 3u, 4u, 5u, 17u, 36u})
    for (size_t length : {1u, 2u, 7u}) {
      if (first + length > 37)
        continue;
      std::vector<double> slice(length);
      noise.fill(5, 9, first, slice);
      for (size_t k = 0; k < length; ++k)
        EXPECT_EQ(slice[k], full[static_cast<Eigen::Index>(first + k)]) << first << "+" << k;
    }
  // A longer vector starts with the shorter one.
  EXPECT_EQ(noise.direction(5, 9, 100).head(37), full);
}

TEST(GaussianNoise, LooksStandardNormal) {
  GaussianNoise noise(2024);
  const size_t n = 200000;
  Eigen::VectorXd z = noise.direction(0, 0, n);
  double mean = z.mean();
  double variance = (z.array() - mean).square().mean();
  double kurtosis = (z.array() - mean).pow(4).mean() / (variance * variance);
  // Standard errors: mean 0.0022, variance 0.0032, kurtosis ≈ 0.011.
  EXPECT_NEAR(mean, 0.0, 0.012);
  EXPECT_NEAR(variance, 1.0, 0.02);
  EXPECT_NEAR(kurtosis, 3.0, 0.07);
  size_t beyondTwo = (z.array().abs() > 2.0).count();
  EXPECT_NEAR(double(beyondTwo) / double(n), 0.0455, 0.003);
}

TEST(Population, AntitheticCandidatesMirrorEachOther) {
  Eigen::VectorXd center(3), scale(3);
  center << 1, 2, 3;
  scale << 0.1, 0.2, 0.3;
  Population population(9, 4, Sampling::Antithetic, 5, /*withCenter=*/true, center, scale);
  ASSERT_EQ(population.size(), 11u);
  EXPECT_EQ(population.perturbedSize(), 10u);
  EXPECT_TRUE(population.isCenter(10));
  EXPECT_EQ(population.candidate(10), center);
  for (size_t d = 0; d < 5; ++d) {
    Eigen::VectorXd plus = population.candidate(2 * d), minus = population.candidate(2 * d + 1);
    EXPECT_EQ(population.member(2 * d).direction, int64_t(d));
    EXPECT_EQ(population.member(2 * d + 1).sign, -1);
    EXPECT_LT(((plus + minus) / 2 - center).norm(), 1e-15);
    // Regenerated from (seed, step, direction) alone.
    Eigen::VectorXd epsilon = GaussianNoise(9).direction(4, int64_t(d), 3);
    EXPECT_LT((plus - (center + scale.cwiseProduct(epsilon))).norm(), 1e-15);
    Eigen::VectorXd displacement(3);
    population.displacement(d, {displacement.data(), 3});
    EXPECT_EQ(displacement, scale.cwiseProduct(epsilon));
  }
}

TEST(Population, ForwardCandidatesUseOneDirectionEach) {
  Eigen::VectorXd center = Eigen::VectorXd::Zero(4), scale = Eigen::VectorXd::Ones(4);
  Population population(1, 0, Sampling::ForwardDifference, 3, false, center, scale);
  ASSERT_EQ(population.size(), 3u);
  for (size_t i = 0; i < 3; ++i)
    EXPECT_EQ(population.candidate(i), GaussianNoise(1).direction(0, int64_t(i), 4));
}

TEST(Population, PretrainedScaleIsAbsolutePlusFloor) {
  Eigen::VectorXd w(3);
  w << -2, 0, 0.5;
  Eigen::VectorXd expected(3);
  expected << 2.01, 0.01, 0.51;
  EXPECT_LT((pretrainedScale(w) - expected).norm(), 1e-15);
}

} // namespace
} // namespace mlgo::es
