// Adam in TensorFlow 1's form (what ml-compiler-opt's agents use), checked by
// hand over two steps; clipping; checkpoint round trip.
#include "mlgo/rl/Adam.h"

#include <gtest/gtest.h>

#include <cmath>

namespace mlgo::rl {
namespace {

TEST(Adam, TwoStepsMatchTensorFlowsFormula) {
  AdamOptions o;
  o.learningRate = 0.1;
  o.epsilon = 1e-3;
  AdamState state = AdamState::zeros(2);
  std::vector<double> theta = {1.0, -2.0};
  const double g1[] = {0.5, -1.0}, g2[] = {-0.25, 2.0};

  adamStep(o, state, g1, theta);
  // m = 0.1 g1, v = 0.001 g1², lr_t = 0.1 · √(1 − 0.999) / (1 − 0.9)
  double m[2], v[2], expected[2] = {1.0, -2.0};
  double rate = 0.1 * std::sqrt(1 - 0.999) / (1 - 0.9);
  for (int i = 0; i < 2; ++i) {
    m[i] = 0.1 * g1[i];
    v[i] = 0.001 * g1[i] * g1[i];
    expected[i] -= rate * m[i] / (std::sqrt(v[i]) + 1e-3);
    EXPECT_NEAR(theta[i], expected[i], 1e-14) << i;
  }
  adamStep(o, state, g2, theta);
  rate = 0.1 * std::sqrt(1 - 0.999 * 0.999) / (1 - 0.9 * 0.9);
  for (int i = 0; i < 2; ++i) {
    m[i] = 0.9 * m[i] + 0.1 * g2[i];
    v[i] = 0.999 * v[i] + 0.001 * g2[i] * g2[i];
    expected[i] -= rate * m[i] / (std::sqrt(v[i]) + 1e-3);
    EXPECT_NEAR(theta[i], expected[i], 1e-14) << i;
  }
  EXPECT_EQ(state.t, 2);
  // Minimisation: the first step moved against the gradient's sign.
  EXPECT_LT(expected[0], 1.0);
}

TEST(Adam, ClipsTheGlobalNorm) {
  AdamOptions o;
  o.maxGradientNorm = 0.5;
  AdamState clipped = AdamState::zeros(2), scaled = AdamState::zeros(2);
  std::vector<double> a = {0, 0}, b = {0, 0};
  const double g[] = {3.0, 4.0};       // norm 5
  const double gScaled[] = {0.3, 0.4}; // norm 0.5
  AdamUpdate update = adamStep(o, clipped, g, a);
  EXPECT_TRUE(update.clipped);
  EXPECT_DOUBLE_EQ(update.gradientNorm, 5.0);
  o.maxGradientNorm.reset();
  adamStep(o, scaled, gScaled, b);
  EXPECT_NEAR(a[0], b[0], 1e-15);
  EXPECT_NEAR(a[1], b[1], 1e-15);
  EXPECT_NEAR(clipped.v[1], scaled.v[1], 1e-18);
}

TEST(Adam, StateRoundTripsThroughAStateArchive) {
  AdamState state = AdamState::zeros(3);
  std::vector<double> theta = {1, 2, 3};
  const double g[] = {0.1, -0.2, 0.3};
  adamStep({}, state, g, theta);
  StateArchive values;
  state.saveTo(values);
  Expected<AdamState> back = AdamState::restore(values, 3);
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(back->m, state.m);
  EXPECT_EQ(back->v, state.v);
  EXPECT_EQ(back->t, 1);
  EXPECT_FALSE(AdamState::restore(values, 4)); // another policy's size
  EXPECT_FALSE(AdamState::restore({}, 3));
}

TEST(Adam, ValidateNamesTheField) {
  AdamOptions o;
  o.learningRate = 0;
  ASSERT_FALSE(o.validate("adam"));
  EXPECT_NE(o.validate("adam").error().message.find("adam.learningRate"), std::string::npos);
  o = {};
  o.beta2 = 1;
  EXPECT_NE(o.validate("adam").error().message.find("adam.beta2"), std::string::npos);
  EXPECT_EQ(mlCompilerOptAdam(3e-5).epsilon, 3.125e-4);
}

} // namespace
} // namespace mlgo::rl
