#include "mlgo/es/GradientEstimators.h"

#include <gtest/gtest.h>

namespace mlgo::es {
namespace {

Eigen::VectorXd vec(std::initializer_list<double> values) {
  Eigen::VectorXd v(static_cast<Eigen::Index>(values.size()));
  Eigen::Index i = 0;
  for (double x : values)
    v[i++] = x;
  return v;
}

// Columns are the displacements.
Eigen::MatrixXd columns(std::initializer_list<std::initializer_list<double>> cols) {
  Eigen::Index rows = static_cast<Eigen::Index>(cols.begin()->size());
  Eigen::MatrixXd m(rows, static_cast<Eigen::Index>(cols.size()));
  Eigen::Index j = 0;
  for (auto col : cols)
    m.col(j++) = vec(col);
  return m;
}

TEST(MonteCarloGradient, AntitheticMatchesHandComputedValue) {
  DirectionalSamples samples;
  samples.sampling = Sampling::Antithetic;
  samples.displacements = columns({{1, 0}, {0, 2}});
  samples.plus = vec({3, 1});
  samples.minus = vec({1, 2});
  // [(3−1)(1,0) + (1−2)(0,2)] / (2·2·0.25) = (2, −2)
  Eigen::VectorXd g = monteCarloGradient(samples, 0.5);
  EXPECT_NEAR(g[0], 2, 1e-15);
  EXPECT_NEAR(g[1], -2, 1e-15);
}

TEST(MonteCarloGradient, ForwardDifferenceSubtractsTheBaseline) {
  DirectionalSamples samples;
  samples.sampling = Sampling::ForwardDifference;
  samples.displacements = columns({{1, 0}, {0, 2}});
  samples.plus = vec({3, 1});
  samples.baseline = 2;
  // [(3−2)(1,0) + (1−2)(0,2)] / (2·0.25) = (2, −4)
  Eigen::VectorXd g = monteCarloGradient(samples, 0.5);
  EXPECT_NEAR(g[0], 2, 1e-15);
  EXPECT_NEAR(g[1], -4, 1e-15);
}

TEST(RegressionGradient, LeastSquaresRecoversALinearFunctionWithIntercept) {
  DirectionalSamples samples;
  samples.sampling = Sampling::ForwardDifference;
  samples.displacements = columns({{1, 0}, {0, 1}, {1, 1}, {-1, 2}});
  // f − f0 = 2 x − 3 y + 0.7: the intercept is fitted away.
  samples.plus = vec({2.7, -2.3, -0.3, -7.3});
  samples.baseline = 0;
  EstimatorOptions options;
  options.method = GradientEstimator::LeastSquares;
  Eigen::VectorXd g = regressionGradient(samples, options);
  EXPECT_NEAR(g[0], 2, 1e-12);
  EXPECT_NEAR(g[1], -3, 1e-12);
}

TEST(RegressionGradient, LeastSquaresIsMinimumNormWhenUnderdetermined) {
  DirectionalSamples samples;
  samples.sampling = Sampling::ForwardDifference;
  samples.displacements = columns({{1, 0, 0}, {0, 1, 0}});
  samples.plus = vec({1, 3});
  EstimatorOptions options;
  options.method = GradientEstimator::LeastSquares;
  // Centred: rows ±(0.5, −0.5, 0), targets ∓1 → g = (−1, 1, 0).
  Eigen::VectorXd g = regressionGradient(samples, options);
  EXPECT_NEAR(g[0], -1, 1e-12);
  EXPECT_NEAR(g[1], 1, 1e-12);
  EXPECT_NEAR(g[2], 0, 1e-12);
}

TEST(RegressionGradient, RidgeMatchesHandComputedValue) {
  DirectionalSamples samples;
  samples.sampling = Sampling::ForwardDifference;
  samples.displacements = columns({{1, 0, 0}, {0, 1, 0}});
  samples.plus = vec({1, 3});
  EstimatorOptions options;
  options.method = GradientEstimator::Ridge;
  options.regularization = 0.5;
  // min 2(1 + t/2)² + α t²/2 over t = g0 − g1 → t = −4/3, g = (−2/3, 2/3, 0).
  Eigen::VectorXd g = regressionGradient(samples, options);
  EXPECT_NEAR(g[0], -2.0 / 3, 1e-12);
  EXPECT_NEAR(g[1], 2.0 / 3, 1e-12);
  EXPECT_NEAR(g[2], 0, 1e-12);
}

TEST(RegressionGradient, RidgeSatisfiesItsNormalEquationsInBothRegimes) {
  for (auto [n, m] : {std::pair{4, 9}, std::pair{9, 4}}) {
    DirectionalSamples samples;
    samples.sampling = Sampling::Antithetic;
    samples.displacements = Eigen::MatrixXd::Random(n, m);
    samples.plus = Eigen::VectorXd::Random(m);
    samples.minus = Eigen::VectorXd::Random(m);
    EstimatorOptions options;
    options.method = GradientEstimator::Ridge;
    options.regularization = 0.3;
    Eigen::VectorXd g = regressionGradient(samples, options);
    Eigen::MatrixXd centred = samples.displacements;
    centred.colwise() -= samples.displacements.rowwise().mean();
    Eigen::VectorXd targets = 0.5 * (samples.plus - samples.minus);
    targets.array() -= targets.mean();
    Eigen::VectorXd residual = centred * (centred.transpose() * g - targets) + 0.3 * g;
    EXPECT_LT(residual.norm(), 1e-10) << n << "x" << m;
  }
}

TEST(RegressionGradient, LassoSoftThresholdsAnOrthogonalDesign) {
  DirectionalSamples samples;
  samples.sampling = Sampling::ForwardDifference;
  samples.displacements = columns({{1, 0}, {-1, 0}, {0, 1}, {0, -1}});
  samples.plus = vec({2, -2, 1, -1});
  EstimatorOptions options;
  options.method = GradientEstimator::Lasso;
  // g_j = S(X_jᵀ b, M α) / ‖X_j‖²: X_0ᵀb = 4, X_1ᵀb = 2, ‖X_j‖² = 2, M = 4.
  options.regularization = 0.25;
  Eigen::VectorXd g = regressionGradient(samples, options);
  EXPECT_NEAR(g[0], 1.5, 1e-12);
  EXPECT_NEAR(g[1], 0.5, 1e-12);
  options.regularization = 0.6;
  g = regressionGradient(samples, options);
  EXPECT_NEAR(g[0], 0.8, 1e-12);
  EXPECT_EQ(g[1], 0.0);
  options.method = GradientEstimator::LeastSquares;
  g = regressionGradient(samples, options);
  EXPECT_NEAR(g[0], 2, 1e-12);
  EXPECT_NEAR(g[1], 1, 1e-12);
}

TEST(RegressionGradient, AntitheticTargetsAreHalfDifferences) {
  DirectionalSamples samples;
  samples.sampling = Sampling::Antithetic;
  samples.displacements = columns({{1, 0}, {0, 1}, {1, 1}});
  // f(x ± p) = ±(1.5 x + 0.5 y) + 4: b = 1.5 x + 0.5 y.
  samples.plus = vec({5.5, 4.5, 6});
  samples.minus = vec({2.5, 3.5, 2});
  EstimatorOptions options;
  options.method = GradientEstimator::LeastSquares;
  Eigen::VectorXd g = regressionGradient(samples, options);
  EXPECT_NEAR(g[0], 1.5, 1e-12);
  EXPECT_NEAR(g[1], 0.5, 1e-12);
}

TEST(EstimatorOptions, NameTheBadField) {
  EstimatorOptions options;
  options.method = GradientEstimator::Ridge;
  options.regularization = -1;
  Status status = options.validate();
  ASSERT_FALSE(status);
  EXPECT_EQ(status.error().message, "regularization: must be positive, got -1");
}

} // namespace
} // namespace mlgo::es
