// The losses of BC and PPO: gradients through the MLP's backward pass against
// central finite differences; the clipped surrogate, the KL and entropy terms,
// advantages, the moving-average reward and the adaptive KL coefficient
// against hand-computed values; thread-count independence.
#include "mlgo/rl/Losses.h"
#include "RlTestSupport.h"

#include <gtest/gtest.h>

#include <cmath>
#include <numeric>

namespace mlgo::rl {
namespace {

using namespace testing;
using policies::Activation;

std::vector<size_t> allRows(const DecisionSet& data) {
  std::vector<size_t> rows(data.rows());
  std::iota(rows.begin(), rows.end(), size_t{0});
  return rows;
}

struct NetworkCase {
  Activation activation;
  friend void PrintTo(const NetworkCase& c, std::ostream* os) {
    *os << policies::activationName(c.activation);
  }
};

class LossGradient : public ::testing::TestWithParam<NetworkCase> {
protected:
  void SetUp() override {
    MlpOptions options;
    options.hiddenLayers = {6, 5};
    options.activation = GetParam().activation;
    options.withSqrt = true;
    structure_ = syntheticStructure(options);
    policy_.emplace(randomPolicy(structure_, 3));
    // 150 rows: three chunks, so the chunked reduction is exercised.
    data_ = randomDecisions(150, 17);
  }

  std::shared_ptr<const MlpStructure> structure_;
  std::optional<MlpPolicy> policy_;
  DecisionSet data_;
};

TEST_P(LossGradient, CrossEntropyMatchesFiniteDifferences) {
  std::vector<size_t> rows = allRows(data_);
  RowParallelism serial(1);
  std::vector<double> analytic(policy_->parameterCount(), 0.0);
  ClassificationStats stats = crossEntropy(*policy_, data_, rows, analytic, serial);
  EXPECT_GT(stats.loss, 0);
  EXPECT_EQ(stats.rows, rows.size());
  expectGradientsClose(analytic, numericGradient(*policy_, [&](const MlpPolicy& p) {
                         return crossEntropy(p, data_, rows, {}, serial).loss;
                       }));
}

TEST_P(LossGradient, L2PenaltyMatchesFiniteDifferences) {
  std::vector<double> analytic(policy_->parameterCount(), 0.0);
  double penalty = l2Penalty(*policy_, 0.3, analytic);
  EXPECT_GT(penalty, 0);
  expectGradientsClose(analytic, numericGradient(*policy_, [&](const MlpPolicy& p) {
                         return l2Penalty(p, 0.3, {});
                       }));
  // Biases are not penalised.
  for (const MlpStructure::Layer& layer : structure_->layers())
    for (size_t i = 0; i < layer.outputs; ++i)
      EXPECT_EQ(analytic[layer.biasOffset + i], 0.0);
}

// Old distributions from another policy, so ratios spread out, some clipped;
// the KL is large enough that the cutoff penalty is active too.
TEST_P(LossGradient, PpoLossMatchesFiniteDifferences) {
  RowParallelism serial(1);
  MlpPolicy old = randomPolicy(structure_, 99);
  data_.oldLogDistributions = logDistributions(old, data_, serial);
  for (size_t r = 0; r < data_.rows(); ++r)
    data_.logProbabilities.push_back(
        data_.oldLogDistributions[r * 2 + static_cast<size_t>(data_.actions[r])]);
  std::vector<size_t> rows = allRows(data_);
  std::vector<double> advantages;
  RandomStream rng(5);
  for (size_t i = 0; i < rows.size(); ++i)
    advantages.push_back(rng.uniform01() * 2 - 1);

  PpoLossOptions options;
  options.clip = 0.2;
  options.entropyCoefficient = 0.05;
  options.policyL2 = 0.01;
  options.klTarget = 0.01;
  options.klCutoffFactor = 2.0;
  options.klCutoffCoefficient = 10.0;
  const double beta = 0.7;

  // Finite differences are only valid away from the clipping kinks.
  auto terms = ppoLoss(*policy_, data_, rows, advantages, beta, options, {}, serial);
  ASSERT_GT(terms.clipFraction, 0.05) << "no row clipped: the test would not test clipping";
  ASSERT_LT(terms.clipFraction, 0.95);
  ASSERT_GT(terms.meanKl, options.klCutoffFactor * options.klTarget) << "cutoff inactive";
  std::vector<double> lp(2);
  for (size_t r : rows) {
    policy_->computeProbabilities(data_.row(r), lp);
    double ratio = lp[static_cast<size_t>(data_.actions[r])] / std::exp(data_.logProbabilities[r]);
    ASSERT_GT(std::min(std::abs(ratio - 0.8), std::abs(ratio - 1.2)), 1e-4) << "row " << r;
  }

  std::vector<double> analytic(policy_->parameterCount(), 0.0);
  PpoLossTerms withGradient =
      ppoLoss(*policy_, data_, rows, advantages, beta, options, analytic, serial);
  EXPECT_EQ(withGradient.total, terms.total);
  EXPECT_DOUBLE_EQ(terms.total, terms.policyGradient + terms.entropy + terms.klPenalty + terms.l2);
  expectGradientsClose(
      analytic, numericGradient(*policy_, [&](const MlpPolicy& p) {
        return ppoLoss(p, data_, rows, advantages, beta, options, {}, serial).total;
      }));
}

TEST_P(LossGradient, ResultsDoNotDependOnTheNumberOfThreads) {
  MlpPolicy old = randomPolicy(structure_, 98);
  RowParallelism serial(1), parallel(2);
  data_.oldLogDistributions = logDistributions(old, data_, serial);
  EXPECT_EQ(data_.oldLogDistributions, logDistributions(old, data_, parallel));
  for (size_t r = 0; r < data_.rows(); ++r)
    data_.logProbabilities.push_back(
        data_.oldLogDistributions[r * 2 + static_cast<size_t>(data_.actions[r])]);
  std::vector<size_t> rows = allRows(data_);
  std::vector<double> advantages(rows.size());
  for (size_t i = 0; i < rows.size(); ++i)
    advantages[i] = std::sin(double(i));
  std::vector<double> a(policy_->parameterCount(), 0.0), b(a);
  PpoLossTerms ta = ppoLoss(*policy_, data_, rows, advantages, 0.5, {}, a, serial);
  PpoLossTerms tb = ppoLoss(*policy_, data_, rows, advantages, 0.5, {}, b, parallel);
  EXPECT_EQ(a, b);
  EXPECT_EQ(ta.total, tb.total);
  std::fill(a.begin(), a.end(), 0.0);
  std::fill(b.begin(), b.end(), 0.0);
  crossEntropy(*policy_, data_, rows, a, serial);
  crossEntropy(*policy_, data_, rows, b, parallel);
  EXPECT_EQ(a, b);
}

INSTANTIATE_TEST_SUITE_P(Activations, LossGradient,
                         ::testing::Values(NetworkCase{Activation::Tanh},
                                           NetworkCase{Activation::Relu}),
                         [](const auto& info) {
                           return std::string(policies::activationName(info.param.activation));
                         });

// A linear policy with zero weights: π(·|x) = (1/2, 1/2) everywhere, so every
// term can be worked out by hand.
class UniformPolicyLoss : public ::testing::Test {
protected:
  void SetUp() override {
    MlpOptions options;
    options.hiddenLayers = {};
    structure_ = syntheticStructure(options);
    policy_.emplace(structure_,
                    Eigen::VectorXd::Zero(static_cast<Eigen::Index>(structure_->parameterCount())));
    data_ = randomDecisions(5, 1);
    // Recorded old probabilities of the taken action: ratios 2, 2, 0.625,
    // 0.625, 1; the old distribution of each row follows from them.
    const double oldP[] = {0.25, 0.25, 0.8, 0.8, 0.5};
    for (size_t r = 0; r < 5; ++r) {
      const auto a = static_cast<size_t>(data_.actions[r]);
      data_.logProbabilities.push_back(std::log(oldP[r]));
      double q[2];
      q[a] = oldP[r];
      q[1 - a] = 1 - oldP[r];
      data_.oldLogDistributions.push_back(std::log(q[0]));
      data_.oldLogDistributions.push_back(std::log(q[1]));
    }
  }

  std::shared_ptr<const MlpStructure> structure_;
  std::optional<MlpPolicy> policy_;
  DecisionSet data_;
};

TEST_F(UniformPolicyLoss, ClippedSurrogateAndPenaltiesMatchHandComputation) {
  const std::vector<size_t> rows = {0, 1, 2, 3, 4};
  const std::vector<double> advantages = {1, -1, 1, -1, 0.5};
  PpoLossOptions options;
  options.clip = 0.2;
  options.entropyCoefficient = 0.003;
  options.policyL2 = 1e-6;
  options.klTarget = 0.01;
  options.klCutoffFactor = 2;
  options.klCutoffCoefficient = 1000;
  const double beta = 1.0;
  PpoLossTerms t = ppoLoss(*policy_, data_, rows, advantages, beta, options, {}, RowParallelism());

  // min(rA, clip(r)A): r=2,A=1 → 1.2; r=2,A=−1 → −2; r=0.625,A=1 → 0.625;
  // r=0.625,A=−1 → −0.8; r=1,A=0.5 → 0.5. Mean −0.095, loss +0.095.
  EXPECT_NEAR(t.policyGradient, 0.095, 1e-12);
  EXPECT_NEAR(t.meanRatio, 1.25, 1e-12);
  EXPECT_NEAR(t.clipFraction, 0.8, 1e-12);
  EXPECT_NEAR(t.meanEntropy, std::log(2.0), 1e-12);
  EXPECT_NEAR(t.entropy, -0.003 * std::log(2.0), 1e-12);
  // KL(q ‖ uniform) = Σ q log(2q): rows with q = (0.25, 0.75) twice, (0.8,
  // 0.2) twice, (0.5, 0.5) once.
  const double kl1 = 0.25 * std::log(0.5) + 0.75 * std::log(1.5);
  const double kl2 = 0.8 * std::log(1.6) + 0.2 * std::log(0.4);
  const double meanKl = (2 * kl1 + 2 * kl2) / 5;
  EXPECT_NEAR(t.meanKl, meanKl, 1e-12);
  const double over = meanKl - 0.02;
  ASSERT_GT(over, 0);
  EXPECT_NEAR(t.klPenalty, beta * meanKl + 1000 * over * over, 1e-9);
  EXPECT_EQ(t.l2, 0.0); // zero weights
  EXPECT_NEAR(t.total, 0.095 - 0.003 * std::log(2.0) + beta * meanKl + 1000 * over * over, 1e-9);

  // Unclipped (clip = 0): −mean(rA) = −(2 − 2 + 0.625 − 0.625 + 0.5)/5.
  options.clip = 0;
  PpoLossTerms unclipped =
      ppoLoss(*policy_, data_, rows, advantages, beta, options, {}, RowParallelism());
  EXPECT_NEAR(unclipped.policyGradient, -0.1, 1e-12);
  EXPECT_EQ(unclipped.clipFraction, 0.0);
}

TEST_F(UniformPolicyLoss, ClippedRowsGiveNoPolicyGradient) {
  // Only rows 0 (r=2, A>0: clipped at 1.2) and 3 (r=0.625, A<0: clipped at
  // 0.8): the surrogate is constant there, so with no entropy, KL or L2 the
  // gradient is zero.
  const std::vector<size_t> rows = {0, 3};
  const std::vector<double> advantages = {1, -1};
  PpoLossOptions options;
  options.entropyCoefficient = 0;
  options.policyL2 = 0;
  options.initialKlBeta = 0;
  options.klCutoffFactor = 0;
  std::vector<double> gradient(policy_->parameterCount(), 0.0);
  PpoLossTerms t =
      ppoLoss(*policy_, data_, rows, advantages, 0.0, options, gradient, RowParallelism());
  EXPECT_NEAR(t.policyGradient, -(1.2 - 0.8) / 2, 1e-12);
  for (double g : gradient)
    EXPECT_EQ(g, 0.0);
  // Rows 1 (r=2, A<0) and 2 (r=0.625, A>0) are not clipped: the gradient
  // flows through the unclipped r A.
  std::fill(gradient.begin(), gradient.end(), 0.0);
  ppoLoss(*policy_, data_, std::vector<size_t>{1, 2}, std::vector<double>{-1, 1}, 0.0, options,
          gradient, RowParallelism());
  double norm = 0;
  for (double g : gradient)
    norm += g * g;
  EXPECT_GT(norm, 0);
}

TEST(Advantages, NormalisationMatchesHandComputation) {
  // tf_agents: (a − mean) / sqrt(var + 1e-8), population variance.
  std::vector<double> a = normalizeAdvantages(std::vector<double>{1, 2, 3, 4});
  const double s = std::sqrt(1.25 + 1e-8);
  ASSERT_EQ(a.size(), 4u);
  EXPECT_NEAR(a[0], -1.5 / s, 1e-15);
  EXPECT_NEAR(a[1], -0.5 / s, 1e-15);
  EXPECT_NEAR(a[2], 0.5 / s, 1e-15);
  EXPECT_NEAR(a[3], 1.5 / s, 1e-15);
  // Every decision gets its module's reward (discount 0): a module with
  // reward 0.1 and three decisions, one with −0.2 and one decision.
  std::vector<double> perDecision = {0.1, 0.1, 0.1, -0.2};
  std::vector<double> b = normalizeAdvantages(perDecision);
  const double mean = 0.025, var = (3 * 0.075 * 0.075 + 0.225 * 0.225) / 4;
  for (size_t i = 0; i < 4; ++i)
    EXPECT_NEAR(b[i], (perDecision[i] - mean) / std::sqrt(var + 1e-8), 1e-12);
  // Equal rewards: all zero, not NaN.
  for (double x : normalizeAdvantages(std::vector<double>{0.3, 0.3}))
    EXPECT_EQ(x, 0.0);
  EXPECT_TRUE(normalizeAdvantages(std::vector<double>{}).empty());
}

TEST(MovingAverageReward, FollowsMlCompilerOpt) {
  // -Oz size 100; the policy compiles the module to 90 bytes twice. (The
  // reward against the average is the task's: RelativeReward.)
  double average = 100; // starts at the -Oz size
  average = nextMovingAverage(average, 90, 0.8);
  EXPECT_NEAR(average, 98, 1e-12);
  average = nextMovingAverage(average, 90, 0.8);
  EXPECT_NEAR(average, 96.4, 1e-12);
  // decay 1 keeps the -Oz baseline.
  EXPECT_EQ(nextMovingAverage(100, 90, 1.0), 100);
}

TEST(AdaptiveKl, FollowsTfAgents) {
  PpoLossOptions o; // target 0.01, tolerance 0.3
  EXPECT_DOUBLE_EQ(adaptKlBeta(1.0, 0.02, o), 1.5);
  EXPECT_DOUBLE_EQ(adaptKlBeta(1.0, 0.005, o), 1.0 / 1.5);
  EXPECT_DOUBLE_EQ(adaptKlBeta(1.0, 0.01, o), 1.0);
  EXPECT_DOUBLE_EQ(adaptKlBeta(1.0, 0.0129, o), 1.0);
  EXPECT_DOUBLE_EQ(adaptKlBeta(1e-15, 0.0, o), 1e-15); // floor
  o.initialKlBeta = 0;
  EXPECT_EQ(adaptKlBeta(1.0, 0.5, o), 0.0); // off stays off
}

TEST(PpoLossOptions, ValidateNamesTheField) {
  PpoLossOptions o;
  EXPECT_TRUE(o.validate());
  o.clip = 1.5;
  ASSERT_FALSE(o.validate());
  EXPECT_NE(o.validate().error().message.find("loss.clip"), std::string::npos);
  o = {};
  o.entropyCoefficient = -1;
  EXPECT_NE(o.validate().error().message.find("loss.entropyCoefficient"), std::string::npos);
}

} // namespace
} // namespace mlgo::rl
