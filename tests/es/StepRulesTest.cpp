#include "mlgo/es/StepRules.h"

#include <gtest/gtest.h>

namespace mlgo::es {
namespace {

Eigen::VectorXd vec2(double a, double b) {
  return Eigen::Vector2d(a, b);
}

struct TwoSteps {
  Eigen::VectorXd first, second;
};

TwoSteps runTwoSteps(const StepRuleOptions& options) {
  StepRuleState state = StepRuleState::zeros(2);
  Eigen::VectorXd x = Eigen::VectorXd::Zero(2);
  TwoSteps steps;
  steps.first = ascentStep(options, state, vec2(1, -2), x).step;
  steps.second = ascentStep(options, state, vec2(0, 1), x).step;
  return steps;
}

TEST(StepRules, SgdScalesTheGradient) {
  StepRuleOptions options;
  options.rule = StepRule::Sgd;
  options.learningRate = 0.1;
  TwoSteps steps = runTwoSteps(options);
  EXPECT_NEAR(steps.first[0], 0.1, 1e-16);
  EXPECT_NEAR(steps.first[1], -0.2, 1e-16);
  EXPECT_NEAR(steps.second[1], 0.1, 1e-16);
}

TEST(StepRules, MomentumIsAnExponentialAverage) {
  StepRuleOptions options;
  options.rule = StepRule::Momentum;
  options.learningRate = 0.1;
  options.momentum = 0.9;
  TwoSteps steps = runTwoSteps(options);
  // a1 = 0.1 g1 = (0.1, −0.2); a2 = 0.9 a1 + 0.1 g2 = (0.09, −0.08)
  EXPECT_NEAR(steps.first[0], 0.01, 1e-16);
  EXPECT_NEAR(steps.first[1], -0.02, 1e-16);
  EXPECT_NEAR(steps.second[0], 0.009, 1e-16);
  EXPECT_NEAR(steps.second[1], -0.008, 1e-16);
}

TEST(StepRules, AdamStandardBiasCorrection) {
  StepRuleOptions options;
  options.rule = StepRule::Adam;
  options.learningRate = 0.1;
  options.epsilon = 1e-8;
  TwoSteps steps = runTwoSteps(options);
  EXPECT_NEAR(steps.first[0], 0.09999999900000002, 1e-15);
  EXPECT_NEAR(steps.first[1], -0.0999999995, 1e-15);
  EXPECT_NEAR(steps.second[0], 0.0670058244658113, 1e-15);
  EXPECT_NEAR(steps.second[1], -0.02663370379756845, 1e-15);
}

TEST(StepRules, AdamAsWrittenInMlCompilerOpt) {
  StepRuleOptions options;
  options.rule = StepRule::Adam;
  options.learningRate = 0.1;
  options.epsilon = 1e-7;
  options.adamVariant = AdamVariant::MlCompilerOpt;
  TwoSteps steps = runTwoSteps(options);
  EXPECT_NEAR(steps.first[0], 0.09999968377323398, 1e-15);
  EXPECT_NEAR(steps.first[1], -0.09999984188636699, 1e-15);
  EXPECT_NEAR(steps.second[0], 0.06700561341727473, 1e-15);
  EXPECT_NEAR(steps.second[1], -0.026633666285272667, 1e-15);
}

TEST(StepRules, ClippingBoundsTheGradientNorm) {
  StepRuleOptions options;
  options.rule = StepRule::Sgd;
  options.learningRate = 1;
  options.maxGradientNorm = 1;
  StepRuleState state = StepRuleState::zeros(2);
  AscentStep step = ascentStep(options, state, vec2(3, 4), Eigen::VectorXd::Zero(2));
  EXPECT_TRUE(step.clipped);
  EXPECT_NEAR(step.step[0], 0.6, 1e-15);
  EXPECT_NEAR(step.step[1], 0.8, 1e-15);
  step = ascentStep(options, state, vec2(0.3, 0.4), Eigen::VectorXd::Zero(2));
  EXPECT_FALSE(step.clipped);
  EXPECT_NEAR(step.step[0], 0.3, 1e-15);
}

TEST(StepRules, WeightDecayPullsTowardsZero) {
  StepRuleOptions options;
  options.rule = StepRule::Sgd;
  options.learningRate = 1;
  options.weightDecay = 0.5;
  StepRuleState state = StepRuleState::zeros(2);
  AscentStep step = ascentStep(options, state, vec2(1, 1), vec2(2, -2));
  EXPECT_NEAR(step.step[0], 0, 1e-15);
  EXPECT_NEAR(step.step[1], 2, 1e-15);
}

TEST(StepRules, OptionsNameTheBadField) {
  StepRuleOptions options;
  options.beta2 = 1;
  Status status = options.validate();
  ASSERT_FALSE(status);
  EXPECT_EQ(status.error().message, "beta2: must be in [0, 1), got 1");
  options = {};
  options.maxGradientNorm = -3;
  status = options.validate();
  ASSERT_FALSE(status);
  EXPECT_EQ(status.error().message, "maxGradientNorm: must be positive, got -3");
}

} // namespace
} // namespace mlgo::es
