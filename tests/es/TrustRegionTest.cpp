#include "mlgo/es/TrustRegion.h"
#include "mlgo/es/TestProblems.h"

#include "EsTestSupport.h"

#include <gtest/gtest.h>

#include <cmath>
#include <iostream>

namespace mlgo::es {
namespace {

using testing::minimise;
using testing::rewardsFor;

TrustRegionSubproblem diagonalProblem(Eigen::Vector2d hessian, Eigen::Vector2d linear,
                                      double radius) {
  TrustRegionSubproblem problem;
  problem.hessianTimes = [hessian](const Eigen::VectorXd& v) -> Eigen::VectorXd {
    return hessian.cwiseProduct(v);
  };
  problem.linear = linear;
  problem.radius = radius;
  problem.tolerance = 1e-13;
  problem.maxIterations = 500;
  return problem;
}

TEST(TrustRegionSubproblem, InteriorSolutionIsTheNewtonStep) {
  // m(s) = ½ (s1² + 4 s2²) − s1 − 4 s2: minimum at (1, 1), inside radius 10.
  SubproblemSolution solution = solveTrustRegionSubproblem(diagonalProblem({1, 4}, {-1, -4}, 10));
  EXPECT_NEAR(solution.step[0], 1, 1e-9);
  EXPECT_NEAR(solution.step[1], 1, 1e-9);
  EXPECT_NEAR(solution.modelValue, -2.5, 1e-12);
}

TEST(TrustRegionSubproblem, BoundarySolutionSatisfiesTheKktConditions) {
  // On ‖s‖ = 1: s = −(H + λI)⁻¹ b, i.e. s = (1/(1+λ), 4/(4+λ)) with ‖s‖ = 1.
  double low = 0, high = 10;
  for (int i = 0; i < 200; ++i) {
    double lambda = 0.5 * (low + high);
    double norm = std::hypot(1 / (1 + lambda), 4 / (4 + lambda));
    (norm > 1 ? low : high) = lambda;
  }
  double lambda = 0.5 * (low + high);
  SubproblemSolution solution = solveTrustRegionSubproblem(diagonalProblem({1, 4}, {-1, -4}, 1));
  EXPECT_NEAR(solution.step.norm(), 1, 1e-12);
  EXPECT_NEAR(solution.step[0], 1 / (1 + lambda), 1e-6);
  EXPECT_NEAR(solution.step[1], 4 / (4 + lambda), 1e-6);
}

TEST(TrustRegionSubproblem, NegativeCurvatureGoesToTheBoundary) {
  // m(s) = ½ (−s1² + s2²) + 0.1 s1 + s2: unbounded below, so ‖s‖ = radius.
  SubproblemSolution solution = solveTrustRegionSubproblem(diagonalProblem({-1, 1}, {0.1, 1}, 2));
  EXPECT_NEAR(solution.step.norm(), 2, 1e-9);
  EXPECT_LT(solution.step[0], -1.5); // along the negative-curvature direction
  EXPECT_LT(solution.modelValue, -1.5);
}

TrustRegionEs::Options sphereOptions() {
  TrustRegionEs::Options options;
  options.sampling.seed = 21;
  options.sampling.sampling = Sampling::Antithetic;
  options.sampling.directions = 10;
  options.sampling.sigma = 0.05;
  options.sampling.evaluateCenter = true;
  options.shaping.method = FitnessShaping::None;
  options.trustRegion.initialRadius = 0.5;
  options.trustRegion.minimumRadius = 1e-3;
  return options;
}

TEST(TrustRegionEs, SolvesTheSphere) {
  Expected<TrustRegionEs> es = TrustRegionEs::create(sphereOptions(), Eigen::VectorXd::Ones(10));
  ASSERT_TRUE(es) << es.error().message;
  testing::RunResult result = minimise(*es, sphere, 1e-3, 1200);
  EXPECT_TRUE(result.reached) << "f = " << result.finalValue;
  std::cout << "[ info ] trust region, sphere-10: " << result.evaluations << " evaluations\n";
}

TEST(TrustRegionEs, SolvesTheSphereWithARegressionGradient) {
  TrustRegionEs::Options options = sphereOptions();
  options.sampling.sampling = Sampling::ForwardDifference;
  options.sampling.directions = 15;
  options.estimator.method = GradientEstimator::Ridge;
  options.estimator.regularization = 1e-4;
  Expected<TrustRegionEs> es = TrustRegionEs::create(options, Eigen::VectorXd::Ones(10));
  ASSERT_TRUE(es) << es.error().message;
  testing::RunResult result = minimise(*es, sphere, 1e-3, 2000);
  EXPECT_TRUE(result.reached) << "f = " << result.finalValue;
  std::cout << "[ info ] trust region (ridge), sphere-10: " << result.evaluations
            << " evaluations\n";
}

// Rewards of a linear function a·x + offset around the current point, with
// the centre's reward set to `center`.
std::vector<std::optional<double>> linearRewards(const TrustRegionEs& es, double center) {
  Population population = es.ask();
  std::vector<std::optional<double>> rewards(population.size());
  for (size_t i = 0; i + 1 < population.size(); ++i)
    rewards[i] = population.candidate(i).sum() + center;
  rewards.back() = center;
  return rewards;
}

TEST(TrustRegionEs, RejectsAWorseStepAndShrinks) {
  TrustRegionEs::Options options = sphereOptions();
  options.trustRegion.initialRadius = 1;
  options.trustRegion.minimumRadius = 0.1;
  Eigen::VectorXd x0 = Eigen::VectorXd::Zero(3);
  TrustRegionEs es = TrustRegionEs::create(options, x0).take();

  Expected<StepRecord> first = es.tell(linearRewards(es, 1.0));
  ASSERT_TRUE(first);
  EXPECT_FALSE(first->diagnostic(TrustRegionEs::kStepAccepted)); // nothing to judge yet
  EXPECT_NEAR(first->stepNorm, 1.0, 1e-12); // a linear model steps to the boundary
  Eigen::VectorXd proposal = es.point();

  // Much worse at the proposal: |−1 − 1| / 1 > rejectThreshold.
  Expected<StepRecord> second = es.tell(linearRewards(es, -1.0));
  ASSERT_TRUE(second);
  ASSERT_TRUE(second->diagnostic(TrustRegionEs::kStepAccepted));
  EXPECT_EQ(*second->diagnostic(TrustRegionEs::kStepAccepted), 0.0);
  EXPECT_EQ(*second->diagnostic(TrustRegionEs::kRadius), 0.5);
  EXPECT_EQ(es.point(), x0);
  EXPECT_TRUE(es.state().returnedAfterReject);

  // Back at x0: the model is averaged, a shorter step is proposed.
  Expected<StepRecord> third = es.tell(linearRewards(es, 1.0));
  ASSERT_TRUE(third);
  EXPECT_FALSE(third->diagnostic(TrustRegionEs::kStepAccepted));
  EXPECT_NEAR(third->stepNorm, 0.5, 1e-12);
  EXPECT_EQ(es.state().hessianCoefficients.size(), 20u); // both steps' samples
  EXPECT_NE(es.point(), proposal);

  // Better this time: accepted and grown.
  Expected<StepRecord> fourth = es.tell(linearRewards(es, 2.0));
  ASSERT_TRUE(fourth);
  EXPECT_EQ(*fourth->diagnostic(TrustRegionEs::kStepAccepted), 1.0);
  EXPECT_NEAR(*fourth->diagnostic(TrustRegionEs::kRadius), 0.55, 1e-15);
}

TEST(TrustRegionEs, RestoreMidRunContinuesBitForBit) {
  TrustRegionEs::Options options = sphereOptions();
  // A sphere with rugged noise: some steps get rejected (the first at step 14).
  auto noisy = [](std::span<const double> x) { return sphere(x) + 0.3 * std::sin(1e4 * x[0]); };
  TrustRegionEs uninterrupted = TrustRegionEs::create(options, Eigen::VectorXd::Ones(5)).take();
  StateArchive checkpoint;
  bool checkpointAfterRejection = false;
  int rejections = 0;
  for (int step = 0; step < 24; ++step) {
    if (step == 15) {
      checkpoint = uninterrupted.saveState();
      checkpointAfterRejection = uninterrupted.state().returnedAfterReject;
    }
    Expected<StepRecord> record = uninterrupted.tell(rewardsFor(uninterrupted, noisy));
    ASSERT_TRUE(record);
    rejections += record->diagnostic(TrustRegionEs::kStepAccepted) == std::optional<double>(0.0);
  }
  EXPECT_GT(rejections, 0);
  EXPECT_TRUE(checkpointAfterRejection); // the model's averaged samples are in the checkpoint
  TrustRegionEs resumed = TrustRegionEs::create(options, Eigen::VectorXd::Zero(5)).take();
  Status restored = resumed.restoreState(checkpoint);
  ASSERT_TRUE(restored) << restored.error().message;
  for (int step = 15; step < 24; ++step)
    ASSERT_TRUE(resumed.tell(rewardsFor(resumed, noisy)));
  EXPECT_EQ(resumed.point(), uninterrupted.point());
  EXPECT_EQ(resumed.saveState(), uninterrupted.saveState());
}

TEST(TrustRegionEs, BadOptionsAreRejectedWithTheFieldNamed) {
  TrustRegionEs::Options options;
  options.trustRegion.growFactor = 0.5;
  Expected<TrustRegionEs> es = TrustRegionEs::create(options, Eigen::VectorXd::Ones(2));
  ASSERT_FALSE(es);
  EXPECT_EQ(es.error().message, "trustRegion.growFactor: must be at least 1, got 0.5");
  options = {};
  options.trustRegion.minimumRadius = 2;
  EXPECT_EQ(TrustRegionEs::create(options, Eigen::VectorXd::Ones(2)).error().message,
            "trustRegion.minimumRadius: must not exceed initialRadius, got 2");
}

} // namespace
} // namespace mlgo::es
