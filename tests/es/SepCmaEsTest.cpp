#include "mlgo/es/SepCmaEs.h"
#include "mlgo/es/TestProblems.h"

#include "EsTestSupport.h"

#include <gtest/gtest.h>

#include <cmath>
#include <iostream>

namespace mlgo::es {
namespace {

using testing::minimise;
using testing::rewardsFor;

SepCmaEs makeCma(const SepCmaEs::Options& options, const Eigen::VectorXd& x0) {
  Expected<SepCmaEs> es = SepCmaEs::create(options, x0);
  EXPECT_TRUE(es) << es.error().message;
  return es.take();
}

TEST(SepCmaEs, DefaultStrategyParameters) {
  SepCmaEs es = makeCma({}, Eigen::VectorXd::Zero(10));
  EXPECT_EQ(es.populationSize(), 10u); // 4 + ⌊3 ln 10⌋
  EXPECT_EQ(es.parents(), 5u);
  EXPECT_EQ(es.ask().size(), 10u);
}

TEST(SepCmaEs, SolvesTheSphere) {
  SepCmaEs::Options options;
  options.seed = 1;
  options.initialSigma = 0.5;
  SepCmaEs es = makeCma(options, Eigen::VectorXd::Ones(10));
  testing::RunResult result = minimise(es, sphere, 1e-8, 2000);
  EXPECT_TRUE(result.reached) << "f = " << result.finalValue;
  std::cout << "[ info ] sep-CMA-ES, sphere-10 to 1e-8: " << result.evaluations << " evaluations\n";
}

TEST(SepCmaEs, SolvesRosenbrock) {
  SepCmaEs::Options options;
  options.seed = 2;
  options.initialSigma = 0.5;
  SepCmaEs es = makeCma(options, Eigen::VectorXd::Zero(5));
  // Rosenbrock's valley is not separable: a diagonal model learns it slowly.
  testing::RunResult result = minimise(es, rosenbrock, 1e-6, 80000);
  EXPECT_TRUE(result.reached) << "f = " << result.finalValue;
  std::cout << "[ info ] sep-CMA-ES, rosenbrock-5 to 1e-6: " << result.evaluations
            << " evaluations\n";
}

TEST(SepCmaEs, LearnsPerParameterScalesOnAnIllConditionedEllipsoid) {
  SepCmaEs::Options options;
  options.seed = 1;
  options.initialSigma = 2;
  SepCmaEs es = makeCma(options, Eigen::VectorXd::Constant(10, 3.0));
  testing::RunResult result = minimise(es, ellipsoid, 1e-8, 5000);
  EXPECT_TRUE(result.reached) << "f = " << result.finalValue;
  std::cout << "[ info ] sep-CMA-ES, ellipsoid-10 (condition 1e6) to 1e-8: " << result.evaluations
            << " evaluations\n";
}

TEST(SepCmaEs, LargePopulationSolvesRastrigin) {
  SepCmaEs::Options options;
  options.seed = 3;
  options.initialSigma = 2;
  options.populationSize = 200; // 100 finds the global basin for half the seeds only
  SepCmaEs es = makeCma(options, Eigen::VectorXd::Constant(5, 3.0));
  testing::RunResult result = minimise(es, rastrigin, 1e-6, 15000);
  EXPECT_TRUE(result.reached) << "f = " << result.finalValue;
  std::cout << "[ info ] sep-CMA-ES, rastrigin-5 to 1e-6: " << result.evaluations
            << " evaluations\n";
}

TEST(SepCmaEs, SameSeedSameTrajectoryAndRestoreContinuesBitForBit) {
  SepCmaEs::Options options;
  options.seed = 8;
  SepCmaEs a = makeCma(options, Eigen::VectorXd::Ones(6));
  SepCmaEs b = makeCma(options, Eigen::VectorXd::Ones(6));
  StateArchive checkpoint;
  for (int step = 0; step < 20; ++step) {
    if (step == 9)
      checkpoint = a.saveState();
    ASSERT_TRUE(a.tell(rewardsFor(a, rosenbrock)));
    ASSERT_TRUE(b.tell(rewardsFor(b, rosenbrock)));
  }
  EXPECT_EQ(a.point(), b.point());
  SepCmaEs resumed = makeCma(options, Eigen::VectorXd::Zero(6));
  Status restored = resumed.restoreState(checkpoint);
  ASSERT_TRUE(restored) << restored.error().message;
  for (int step = 9; step < 20; ++step)
    ASSERT_TRUE(resumed.tell(rewardsFor(resumed, rosenbrock)));
  EXPECT_EQ(resumed.saveState(), a.saveState());
}

TEST(SepCmaEs, FailedCandidatesAreLeftOutAndTooManySkipTheStep) {
  SepCmaEs::Options options;
  options.populationSize = 8;
  SepCmaEs es = makeCma(options, Eigen::VectorXd::Ones(4));
  std::vector<std::optional<double>> rewards = rewardsFor(es, sphere);
  rewards[0] = std::nullopt;
  rewards[3] = std::nan("");
  Expected<StepRecord> record = es.tell(rewards);
  ASSERT_TRUE(record);
  EXPECT_FALSE(record->skipped);
  EXPECT_EQ(record->succeeded, 6u);
  ASSERT_TRUE(record->diagnostic(SepCmaEs::kSigma));
  EXPECT_TRUE(std::isnan(record->gradientNorm));

  Eigen::VectorXd before = es.point();
  double sigma = es.state().sigma;
  rewards = rewardsFor(es, sphere);
  for (size_t i = 0; i < 5; ++i)
    rewards[i] = std::nullopt;
  record = es.tell(rewards);
  ASSERT_TRUE(record);
  EXPECT_TRUE(record->skipped);
  EXPECT_NE(record->skipReason.find("only 3 of 8"), std::string::npos) << record->skipReason;
  EXPECT_EQ(es.point(), before);
  EXPECT_EQ(es.state().sigma, sigma);
  EXPECT_EQ(es.step(), 2);
}

TEST(SepCmaEs, BadOptionsAreRejectedWithTheFieldNamed) {
  SepCmaEs::Options options;
  options.initialSigma = -1;
  Expected<SepCmaEs> es = SepCmaEs::create(options, Eigen::VectorXd::Ones(2));
  ASSERT_FALSE(es);
  EXPECT_EQ(es.error().message, "initialSigma: must be positive, got -1");
  options = {};
  options.populationSize = 6;
  options.parents = 7;
  EXPECT_EQ(SepCmaEs::create(options, Eigen::VectorXd::Ones(2)).error().message,
            "parents: must not exceed populationSize, got 7");
}

TEST(SepCmaEs, RestoreRejectsAnotherOptimizersState) {
  SepCmaEs es = makeCma({}, Eigen::VectorXd::Ones(3));
  StateArchive archive = es.saveState();
  archive.setInteger("optimizer", static_cast<int64_t>(OptimizerKind::GradientEs));
  Status status = es.restoreState(archive);
  ASSERT_FALSE(status);
  EXPECT_NE(status.error().message.find("\"optimizer\""), std::string::npos)
      << status.error().message;
}

} // namespace
} // namespace mlgo::es
