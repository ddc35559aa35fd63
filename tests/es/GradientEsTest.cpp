#include "mlgo/es/GradientEs.h"
#include "mlgo/es/TestProblems.h"

#include "EsTestSupport.h"

#include <gtest/gtest.h>

#include <cmath>
#include <iostream>

namespace mlgo::es {
namespace {

using testing::minimise;
using testing::rewardsFor;

GradientEs makeEs(const GradientEs::Options& options, const Eigen::VectorXd& x0) {
  Expected<GradientEs> es = GradientEs::create(options, x0);
  EXPECT_TRUE(es) << es.error().message;
  return es.take();
}

// Sphere in 10 dimensions from (1, …, 1) (f = 10) down to f < 1e-3. Forward
// differences use a smaller σ: their σ² ‖ε‖² term is noise that antithetic
// pairs cancel.
struct SphereCase {
  const char* name;
  GradientEs::Options options;
  size_t budget; // evaluations allowed
};

GradientEs::Options sphereOptions(Sampling sampling, GradientEstimator estimator) {
  GradientEs::Options options;
  options.sampling.seed = 17;
  options.sampling.sampling = sampling;
  options.sampling.sigma = 0.05;
  options.shaping.method = FitnessShaping::None;
  options.estimator.method = estimator;
  options.stepRule.rule = StepRule::Sgd;
  return options;
}

TEST(GradientEs, EachEstimatorSolvesTheSphere) {
  std::vector<SphereCase> cases;
  {
    GradientEs::Options o = sphereOptions(Sampling::Antithetic, GradientEstimator::MonteCarlo);
    o.sampling.directions = 10;
    o.stepRule.learningRate = 0.1;
    cases.push_back({"monte-carlo antithetic", o, 800});
  }
  {
    GradientEs::Options o =
        sphereOptions(Sampling::ForwardDifference, GradientEstimator::MonteCarlo);
    o.sampling.directions = 20;
    o.sampling.sigma = 0.01;
    o.sampling.evaluateCenter = true;
    o.stepRule.learningRate = 0.1;
    cases.push_back({"monte-carlo forward", o, 900});
  }
  // The penalties must stay small next to the data term (of order M σ² |g|
  // for lasso, M σ² for ridge), or they shrink the estimate to nothing.
  for (GradientEstimator method :
       {GradientEstimator::LeastSquares, GradientEstimator::Ridge, GradientEstimator::Lasso}) {
    GradientEs::Options o = sphereOptions(Sampling::ForwardDifference, method);
    o.sampling.directions = 15;
    o.sampling.sigma = 0.01;
    o.estimator.regularization = method == GradientEstimator::Lasso ? 1e-7 : 1e-5;
    o.stepRule.learningRate = 0.25;
    cases.push_back({"regression forward", o, 400});
    GradientEs::Options a = sphereOptions(Sampling::Antithetic, method);
    a.sampling.directions = 12;
    a.estimator.regularization = method == GradientEstimator::Lasso ? 1e-6 : 1e-4;
    a.stepRule.learningRate = 0.25;
    cases.push_back({"regression antithetic", a, 400});
  }
  for (const SphereCase& c : cases) {
    SCOPED_TRACE(std::string(c.name) + " " +
                 std::string(gradientEstimatorName(c.options.estimator.method)));
    GradientEs es = makeEs(c.options, Eigen::VectorXd::Ones(10));
    testing::RunResult result = minimise(es, sphere, 1e-3, c.budget);
    EXPECT_TRUE(result.reached) << "f = " << result.finalValue << " after " << result.evaluations
                                << " evaluations";
    std::cout << "[ info ] " << c.name << " " << gradientEstimatorName(c.options.estimator.method)
              << ": " << result.evaluations << " evaluations\n";
  }
}

TEST(GradientEs, AdamWithShapingSolvesRosenbrock) {
  GradientEs::Options options;
  options.sampling.seed = 5;
  options.sampling.directions = 20;
  options.sampling.sigma = 0.02;
  options.shaping.method = FitnessShaping::CentredRank;
  options.stepRule.rule = StepRule::Adam;
  options.stepRule.learningRate = 0.03;
  GradientEs es = makeEs(options, Eigen::VectorXd::Zero(4));
  // From f = 3 into the valley floor; ten seeds needed at most 6240 evaluations.
  testing::RunResult result = minimise(es, rosenbrock, 5e-2, 12000);
  EXPECT_TRUE(result.reached) << "f = " << result.finalValue;
  std::cout << "[ info ] rosenbrock-4 adam/centred-rank: " << result.evaluations
            << " evaluations\n";
}

TEST(GradientEs, SameSeedSameTrajectory) {
  GradientEs::Options options;
  options.sampling.seed = 99;
  options.sampling.directions = 6;
  GradientEs a = makeEs(options, Eigen::VectorXd::Constant(8, 0.5));
  GradientEs b = makeEs(options, Eigen::VectorXd::Constant(8, 0.5));
  options.sampling.seed = 100;
  GradientEs c = makeEs(options, Eigen::VectorXd::Constant(8, 0.5));
  for (int step = 0; step < 10; ++step) {
    ASSERT_TRUE(a.tell(rewardsFor(a, rastrigin)));
    ASSERT_TRUE(b.tell(rewardsFor(b, rastrigin)));
    ASSERT_TRUE(c.tell(rewardsFor(c, rastrigin)));
  }
  EXPECT_EQ(a.point(), b.point()); // bit for bit
  EXPECT_NE(a.point(), c.point());
}

TEST(GradientEs, CandidatesRegenerateFromSeedStepAndIndex) {
  GradientEs::Options options;
  options.sampling.seed = 3;
  options.sampling.directions = 4;
  options.sampling.sigma = 0.2;
  Eigen::VectorXd x0 = Eigen::VectorXd::LinSpaced(7, -1, 1);
  Eigen::VectorXd scale = pretrainedScale(x0);
  Expected<GradientEs> created = GradientEs::create(options, x0, scale);
  ASSERT_TRUE(created);
  GradientEs es = created.take();
  for (int step = 0; step < 3; ++step)
    ASSERT_TRUE(es.tell(rewardsFor(es, sphere)));
  Population population = es.ask();
  EXPECT_EQ(population.step(), 3);
  for (size_t i = 0; i < population.size(); ++i) {
    Population::Member member = population.member(i);
    // A worker knowing only (seed, step, direction) and the shared state.
    Eigen::VectorXd epsilon = GaussianNoise(3).direction(3, member.direction, 7);
    Eigen::VectorXd expected =
        es.point() + double(member.sign) * (0.2 * scale).cwiseProduct(epsilon);
    EXPECT_EQ(population.candidate(i), expected) << "candidate " << i;
  }
}

TEST(GradientEs, RestoreMidRunContinuesBitForBit) {
  for (StepRule rule : {StepRule::Adam, StepRule::Momentum}) {
    GradientEs::Options options;
    options.sampling.seed = 11;
    options.sampling.directions = 5;
    options.sampling.sampling = Sampling::ForwardDifference;
    options.stepRule.rule = rule;
    options.stepRule.weightDecay = 0.01;
    GradientEs uninterrupted = makeEs(options, Eigen::VectorXd::Ones(6));
    StateArchive checkpoint;
    for (int step = 0; step < 12; ++step) {
      if (step == 5)
        checkpoint = uninterrupted.saveState();
      ASSERT_TRUE(uninterrupted.tell(rewardsFor(uninterrupted, rosenbrock)));
    }
    // A new process: same options, any starting point, then the checkpoint.
    GradientEs resumed = makeEs(options, Eigen::VectorXd::Zero(6));
    Status restored = resumed.restoreState(checkpoint);
    ASSERT_TRUE(restored) << restored.error().message;
    EXPECT_EQ(resumed.step(), 5);
    for (int step = 5; step < 12; ++step)
      ASSERT_TRUE(resumed.tell(rewardsFor(resumed, rosenbrock)));
    EXPECT_EQ(resumed.point(), uninterrupted.point());
    EXPECT_EQ(resumed.saveState(), uninterrupted.saveState());
  }
}

TEST(GradientEs, RestoreRejectsMissingOrForeignFields) {
  GradientEs es = makeEs({}, Eigen::VectorXd::Ones(3));
  StateArchive archive = es.saveState();
  StateArchive missing;
  for (const auto& [name, value] : archive.integers())
    missing.setInteger(name, value);
  for (const auto& [name, values] : archive.vectors())
    if (name != "stepRule.second")
      missing.setVector(name, values);
  Status status = es.restoreState(missing);
  ASSERT_FALSE(status);
  EXPECT_NE(status.error().message.find("stepRule.second"), std::string::npos)
      << status.error().message;

  StateArchive wrongSize = archive;
  wrongSize.setVector("scale", std::vector<double>{1, 1});
  status = es.restoreState(wrongSize);
  ASSERT_FALSE(status);
  EXPECT_NE(status.error().message.find("\"scale\""), std::string::npos) << status.error().message;

  GradientEs bigger = makeEs({}, Eigen::VectorXd::Ones(4));
  status = bigger.restoreState(archive);
  ASSERT_FALSE(status);
  EXPECT_NE(status.error().message.find("dimension"), std::string::npos);

  StateArchive foreign = archive;
  foreign.setInteger("optimizer", static_cast<int64_t>(OptimizerKind::SepCmaEs));
  status = es.restoreState(foreign);
  ASSERT_FALSE(status);
  EXPECT_NE(status.error().message.find("sep-cma-es"), std::string::npos);
}

TEST(GradientEs, PairWithAFailedMemberIsDropped) {
  GradientEs::Options options;
  options.sampling.directions = 3;
  options.sampling.sigma = 0.5;
  Eigen::VectorXd x0 = Eigen::VectorXd::Zero(2);
  GradientEs::ExplicitSamples all;
  all.displacements.resize(2, 3);
  all.displacements << 1, 0, 0.5, 0, 1, -0.5;
  all.rewards = {1.0, 0.5, std::nullopt, 2.0, 3.0, -1.0};
  GradientEs withFailure = makeEs(options, x0);
  Expected<StepRecord> record = withFailure.update(all);
  ASSERT_TRUE(record);
  EXPECT_FALSE(record->skipped);
  EXPECT_EQ(record->succeeded, 5u);
  EXPECT_EQ(record->droppedPairs, 1u);
  EXPECT_EQ(record->usedRewards, 4u);

  // The same as never having had direction 1.
  options.sampling.directions = 2;
  GradientEs::ExplicitSamples kept;
  kept.displacements.resize(2, 2);
  kept.displacements << 1, 0.5, 0, -0.5;
  kept.rewards = {1.0, 0.5, 3.0, -1.0};
  GradientEs without = makeEs(options, x0);
  ASSERT_TRUE(without.update(kept));
  EXPECT_EQ(withFailure.point(), without.point());
}

TEST(GradientEs, StepWithTooFewSuccessesIsSkippedAndRecorded) {
  GradientEs::Options options;
  options.sampling.directions = 5;
  options.sampling.sampling = Sampling::ForwardDifference;
  options.sampling.minSuccessShare = 0.6;
  GradientEs es = makeEs(options, Eigen::VectorXd::Ones(3));
  std::vector<std::optional<double>> rewards = {1.0, std::nullopt, std::nan(""), 2.0,
                                                std::numeric_limits<double>::infinity()};
  Expected<StepRecord> record = es.tell(rewards);
  ASSERT_TRUE(record);
  EXPECT_TRUE(record->skipped);
  EXPECT_EQ(record->succeeded, 2u);
  EXPECT_NE(record->skipReason.find("only 2 of 5"), std::string::npos) << record->skipReason;
  EXPECT_EQ(es.point(), Eigen::VectorXd::Ones(3));
  EXPECT_EQ(es.step(), 1); // fresh noise next time

  rewards = {1.0, std::nullopt, 1.5, 2.0, 0.5};
  record = es.tell(rewards);
  ASSERT_TRUE(record);
  EXPECT_FALSE(record->skipped);
  EXPECT_EQ(record->usedRewards, 4u);
  EXPECT_NE(es.point(), Eigen::VectorXd::Ones(3));
}

TEST(GradientEs, WrongNumberOfRewardsIsAnError) {
  GradientEs::Options options;
  options.sampling.directions = 4;
  options.sampling.evaluateCenter = true;
  GradientEs es = makeEs(options, Eigen::VectorXd::Ones(3));
  EXPECT_EQ(es.ask().size(), 9u);
  std::vector<std::optional<double>> rewards(8, 1.0);
  Expected<StepRecord> record = es.tell(rewards);
  ASSERT_FALSE(record);
  EXPECT_EQ(record.error().message,
            "rewards: expected 9 values (one per candidate of step 0), got 8");
}

TEST(GradientEs, RecordReportsTheStep) {
  GradientEs::Options options;
  options.sampling.directions = 4;
  options.sampling.evaluateCenter = true;
  options.stepRule.maxGradientNorm = 1e-3;
  GradientEs es = makeEs(options, Eigen::VectorXd::Ones(3));
  Eigen::VectorXd before = es.point();
  std::vector<std::optional<double>> rewards = rewardsFor(es, sphere);
  Expected<StepRecord> record = es.tell(rewards);
  ASSERT_TRUE(record);
  EXPECT_EQ(record->step, 0);
  EXPECT_EQ(record->candidates, 8u);
  EXPECT_EQ(record->succeeded, 8u);
  EXPECT_EQ(record->usedRewards, 8u);
  ASSERT_TRUE(record->centerReward);
  EXPECT_EQ(*record->centerReward, -3.0);
  EXPECT_EQ(record->currentValue, -3.0);
  EXPECT_TRUE(record->gradientClipped);
  EXPECT_GT(record->gradientNorm, 1e-3);
  EXPECT_NEAR(record->stepNorm, (es.point() - before).norm(), 1e-15);
  EXPECT_TRUE(record->diagnostics.empty());
}

TEST(GradientEs, BadOptionsAreRejectedWithTheFieldNamed) {
  GradientEs::Options options;
  options.sampling.sigma = -1;
  Expected<GradientEs> es = GradientEs::create(options, Eigen::VectorXd::Ones(2));
  ASSERT_FALSE(es);
  EXPECT_EQ(es.error().message, "sampling.sigma: must be positive, got -1");

  options = {};
  options.sampling.directions = 0;
  EXPECT_EQ(GradientEs::create(options, Eigen::VectorXd::Ones(2)).error().message,
            "sampling.directions: must be at least 1, got 0");
  options = {};
  options.stepRule.learningRate = 0;
  EXPECT_EQ(GradientEs::create(options, Eigen::VectorXd::Ones(2)).error().message,
            "stepRule.learningRate: must be positive, got 0");
  options = {};
  options.shaping.topDirections = -2;
  EXPECT_EQ(GradientEs::create(options, Eigen::VectorXd::Ones(2)).error().message,
            "shaping.topDirections: must be at least 1 when set, got -2");
  options = {};
  options.sampling.minSuccessShare = 1.5;
  EXPECT_EQ(GradientEs::create(options, Eigen::VectorXd::Ones(2)).error().message,
            "sampling.minSuccessShare: must be in [0, 1], got 1.5");

  Expected<GradientEs> badScale =
      GradientEs::create({}, Eigen::VectorXd::Ones(2), Eigen::VectorXd::Zero(2));
  ASSERT_FALSE(badScale);
  EXPECT_EQ(badScale.error().message, "scale: value 0 must be positive, got 0");
}

} // namespace
} // namespace mlgo::es
