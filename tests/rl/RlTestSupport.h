// Helpers for the rl tests: small MLPs over made-up features, decision sets,
// and central finite differences.
#pragma once

#include "mlgo/policies/Mlp.h"
#include "mlgo/rl/Decisions.h"
#include "mlgo/support/Random.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <memory>
#include <vector>

namespace mlgo::rl::testing {

using policies::MlpOptions;
using policies::MlpPolicy;
using policies::MlpStructure;
using policies::TensorSpec;
using policies::TensorType;

// Three scalar features a, b, c with vocabularies, and inlining_default
// (excluded by the MLP).
inline std::vector<TensorSpec> syntheticSpecs() {
  return {{"a", TensorType::Int64, {1}, 0},
          {"b", TensorType::Int64, {1}, 0},
          {"c", TensorType::Int64, {1}, 0},
          {"inlining_default", TensorType::Int64, {1}, 0}};
}

inline policies::Vocabulary syntheticVocabulary() {
  policies::Vocabulary vocabulary;
  std::vector<double> boundaries;
  for (int i = 0; i <= 100; ++i)
    boundaries.push_back(i * 10.0);
  EXPECT_TRUE(vocabulary.set("a", boundaries));
  EXPECT_TRUE(vocabulary.set("b", boundaries));
  EXPECT_TRUE(vocabulary.set("c", {0, 1, 2, 4, 8, 16}));
  return vocabulary;
}

// `options` as the inlining task gives them: its default decision excluded.
inline std::shared_ptr<const MlpStructure> syntheticStructure(MlpOptions options) {
  options.excludedFeatures.push_back("inlining_default");
  options.residualFeature = "inlining_default";
  Expected<std::shared_ptr<const MlpStructure>> s =
      MlpStructure::create(syntheticSpecs(), syntheticVocabulary(), options);
  EXPECT_TRUE(s) << (s ? "" : s.error().message);
  return *s;
}

// A policy with random weights and non-zero biases (so no ReLU unit sits at
// its kink by construction).
inline MlpPolicy randomPolicy(std::shared_ptr<const MlpStructure> structure, uint64_t seed) {
  MlpPolicy initial = MlpPolicy::initialised(structure, seed);
  std::vector<double> theta(initial.parameters().begin(), initial.parameters().end());
  RandomStream rng(seed + 1000);
  for (const MlpStructure::Layer& layer : structure->layers())
    for (size_t i = 0; i < layer.outputs; ++i)
      theta[layer.biasOffset + i] = rng.uniform01() - 0.5;
  return initial.withParameters(theta);
}

// `rows` random decisions over a, b, c (the policy's inputs, in order).
inline DecisionSet randomDecisions(size_t rows, uint64_t seed) {
  DecisionSet data;
  data.width = 3;
  RandomStream rng(seed);
  for (size_t r = 0; r < rows; ++r) {
    data.features.push_back(static_cast<double>(rng.uniformBelow(1000)));
    data.features.push_back(static_cast<double>(rng.uniformBelow(1000)));
    data.features.push_back(static_cast<double>(rng.uniformBelow(20)));
    data.actions.push_back(static_cast<int64_t>(rng.uniformBelow(2)));
    data.modules.push_back(static_cast<int64_t>(r % 5));
  }
  return data;
}

// Central differences of f(policy) over every parameter.
template <class F> std::vector<double> numericGradient(const MlpPolicy& policy, F f) {
  std::vector<double> theta(policy.parameters().begin(), policy.parameters().end());
  std::vector<double> gradient(theta.size());
  const double h = 1e-6;
  for (size_t i = 0; i < theta.size(); ++i) {
    double saved = theta[i];
    theta[i] = saved + h;
    double up = f(policy.withParameters(theta));
    theta[i] = saved - h;
    double down = f(policy.withParameters(theta));
    theta[i] = saved;
    gradient[i] = (up - down) / (2 * h);
  }
  return gradient;
}

inline void expectGradientsClose(const std::vector<double>& analytic,
                                 const std::vector<double>& numeric, double tolerance = 1e-6) {
  ASSERT_EQ(analytic.size(), numeric.size());
  double difference = 0, norm = 0;
  for (size_t i = 0; i < analytic.size(); ++i) {
    difference += (analytic[i] - numeric[i]) * (analytic[i] - numeric[i]);
    norm += numeric[i] * numeric[i];
    EXPECT_NEAR(analytic[i], numeric[i], tolerance * std::max(1.0, std::abs(numeric[i])))
        << "parameter " << i;
  }
  ASSERT_GT(norm, 0.0);
  EXPECT_LT(std::sqrt(difference / norm), tolerance);
}

} // namespace mlgo::rl::testing
