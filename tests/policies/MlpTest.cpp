#include "mlgo/policies/Mlp.h"
#include "mlgo/policies/Ensemble.h"
#include "mlgo/policies/PolicyFile.h"

#include "PoliciesTestSupport.h"

#include <array>
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <optional>
#include <thread>

namespace mlgo::policies {
namespace {

using testing::inlinerHeader;
using testing::integerVocabulary;
using testing::loadHeader;
using testing::randomStates;

std::shared_ptr<const MlpStructure>
makeStructure(const std::vector<TensorSpec>& features, const Vocabulary& vocabulary,
              const MlpOptions& options = testing::inlinerMlpOptions()) {
  Expected<std::shared_ptr<const MlpStructure>> structure =
      MlpStructure::create(features, vocabulary, options);
  EXPECT_TRUE(structure) << (structure ? "" : structure.error().message);
  return structure ? structure.take() : nullptr;
}

TEST(MlpOptions, ValidateNamesTheBadField) {
  EXPECT_TRUE(MlpOptions{}.validate());
  MlpOptions options = testing::inlinerMlpOptions();
  options.hiddenLayers = {64, 0};
  ASSERT_FALSE(options.validate());
  EXPECT_EQ(options.validate().error().message, "hiddenLayers[1]: must be at least 1 (got 0)");
  options = {};
  options.actions = 1;
  ASSERT_FALSE(options.validate());
  EXPECT_EQ(options.validate().error().message, "actions: must be at least 2 (got 1)");
  options = {};
  options.excludedFeatures = {""};
  ASSERT_FALSE(options.validate());
  EXPECT_EQ(options.validate().error().message, "excludedFeatures[0]: is empty");

  Expected<Activation> activation = parseActivation("sigmoid");
  ASSERT_FALSE(activation);
  EXPECT_EQ(activation.error().message, "unknown activation \"sigmoid\" (expected relu or tanh)");
  EXPECT_EQ(*parseActivation("tanh"), Activation::Tanh);
}

TEST(MlpStructure, InlinerDefaultsDropInliningDefault) {
  ChannelHeader header = inlinerHeader();
  std::shared_ptr<const MlpStructure> structure =
      makeStructure(header.features, integerVocabulary(header));
  ASSERT_TRUE(structure);
  ASSERT_EQ(structure->inputs().size(), 38u);
  EXPECT_EQ(structure->inputs().back().name, "is_caller_avail_external");
  EXPECT_EQ(structure->featureCount(), 38u);
  EXPECT_EQ(structure->inputWidth(), 76u); // [x, x²] per feature
  EXPECT_EQ(structure->actionCount(), 2u);
  // 76·64 + 64, 64·64 + 64, 64·2 + 2
  EXPECT_EQ(structure->parameterCount(), 4928u + 4160u + 130u);
  EXPECT_EQ(structure->describe(), "mlp[64,64] relu");
  EXPECT_EQ(structure->vocabulary().size(), 38u);
  ASSERT_EQ(structure->layers().size(), 3u);
  EXPECT_EQ(structure->layers()[1].weightOffset, 4928u);
  EXPECT_EQ(structure->layers()[1].biasOffset, 4928u + 4096u);
}

// A residual policy reads inlining_default beside the network's 38 inputs,
// starts as exactly that decision, and flips one only where the network's
// logit difference beats the margin.
TEST(MlpPolicy, ResidualStartsAtTheDefaultDecisionAndFlipsPastTheMargin) {
  ChannelHeader header = inlinerHeader();
  MlpOptions options = testing::inlinerMlpOptions();
  options.hiddenLayers = {8};
  options.residualMargin = 2;
  std::shared_ptr<const MlpStructure> structure =
      makeStructure(header.features, integerVocabulary(header), options);
  ASSERT_TRUE(structure);
  ASSERT_EQ(structure->inputs().size(), 39u);
  EXPECT_EQ(structure->inputWidth(), 76u); // the decision is not a network input
  ASSERT_TRUE(structure->residualFeatureOffset());
  const size_t at = *structure->residualFeatureOffset();
  EXPECT_EQ(structure->inputs()[at].name, "inlining_default"); // one element per input here
  EXPECT_EQ(structure->describe(), "mlp[8] relu residual(inlining_default, 2)");

  MlpPolicy policy = MlpPolicy::initialised(structure, 7);
  RandomStream rng(1);
  for (std::vector<double> state : randomStates(200, structure->featureCount(), 11)) {
    for (double decision : {0.0, 1.0}) {
      state[at] = decision;
      ASSERT_EQ(policy.decide(state, DecisionMode::Deterministic, rng).advice,
                static_cast<int64_t>(decision));
    }
  }

  // Output bias b: logits = [b0 + 2·[d = 0], b1 + 2·[d = 1]].
  const MlpStructure::Layer& output = structure->layers().back();
  std::vector<double> theta(policy.parameters().begin(), policy.parameters().end());
  theta[output.biasOffset + 1] = 1.5; // short of the margin: nothing flips
  std::vector<double> state(structure->featureCount(), 1.0);
  state[at] = 0;
  EXPECT_EQ(policy.withParameters(theta).decide(state, DecisionMode::Deterministic, rng).advice, 0);
  std::array<double, 2> logits;
  policy.withParameters(theta).computeLogits(state, logits);
  EXPECT_DOUBLE_EQ(logits[0], 2.0);
  EXPECT_DOUBLE_EQ(logits[1], 1.5);
  theta[output.biasOffset + 1] = 2.5; // past it: every "no" becomes "inline"
  EXPECT_EQ(policy.withParameters(theta).decide(state, DecisionMode::Deterministic, rng).advice, 1);

  // Without inlining_default among the features, it is an error that says so.
  std::vector<TensorSpec> without;
  for (const TensorSpec& f : header.features)
    if (f.name != "inlining_default")
      without.push_back(f);
  Expected<std::shared_ptr<const MlpStructure>> missing =
      MlpStructure::create(without, integerVocabulary(header), options);
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message.find("\"inlining_default\" is not among the features"),
            std::string::npos);
  // No residual feature (a task without a default decision): valid options,
  // refused once the structure is built.
  MlpOptions noFeature = options;
  noFeature.residualFeature.clear();
  EXPECT_TRUE(noFeature.validate());
  Expected<std::shared_ptr<const MlpStructure>> featureless =
      MlpStructure::create(header.features, integerVocabulary(header), noFeature);
  ASSERT_FALSE(featureless);
  EXPECT_NE(featureless.error().message.find("needs a residual feature"), std::string::npos);
  options.residualMargin = -1;
  ASSERT_FALSE(options.validate());
  EXPECT_EQ(options.validate().error().message.substr(0, 13), "residualMargi");
}

TEST(MlpStructure, OptionsShapeTheNetwork) {
  ChannelHeader header = inlinerHeader();
  MlpOptions options = testing::inlinerMlpOptions();
  options.hiddenLayers = {8};
  options.activation = Activation::Tanh;
  options.actions = 3;
  options.withSqrt = true;
  options.excludedFeatures = {"inlining_default", "callee_users", "not_in_header"};
  std::shared_ptr<const MlpStructure> structure =
      makeStructure(header.features, integerVocabulary(header), options);
  ASSERT_TRUE(structure);
  EXPECT_EQ(structure->inputs().size(), 37u);
  EXPECT_EQ(structure->inputWidth(), 37u * 3);
  EXPECT_EQ(structure->parameterCount(), 111u * 8 + 8 + 8 * 3 + 3);
  EXPECT_EQ(structure->describe(), "mlp[8] tanh");
  EXPECT_FALSE(structure->vocabulary().contains("callee_users"));
}

TEST(MlpStructure, FeatureWithoutVocabularyIsAnError) {
  ChannelHeader header = inlinerHeader();
  Expected<std::shared_ptr<const MlpStructure>> structure = MlpStructure::create(
      header.features, integerVocabulary(header, 16, {"inlining_default", "node_count"}),
      testing::inlinerMlpOptions());
  ASSERT_FALSE(structure);
  EXPECT_EQ(structure.error().message,
            "mlp input \"node_count\" (int64_t[1]) has no vocabulary entry; only float vectors "
            "such as embeddings are passed through unnormalised");

  MlpOptions keepAll;
  keepAll.excludedFeatures = {};
  structure = MlpStructure::create(header.features, integerVocabulary(header), keepAll);
  ASSERT_FALSE(structure);
  EXPECT_NE(structure.error().message.find("\"inlining_default\""), std::string::npos);

  MlpOptions bad = testing::inlinerMlpOptions();
  bad.actions = 0;
  structure = MlpStructure::create(header.features, integerVocabulary(header), bad);
  ASSERT_FALSE(structure);
  EXPECT_EQ(structure.error().message, "mlp options: actions: must be at least 2 (got 0)");

  std::vector<TensorSpec> onlyDefault{header.features.back()};
  structure = MlpStructure::create(onlyDefault, Vocabulary{}, testing::inlinerMlpOptions());
  ASSERT_FALSE(structure);
  EXPECT_EQ(structure.error().message, "mlp: no input features left after the excluded ones");
}

TEST(MlpStructure, NormalisesAgainstTheBoundaries) {
  Vocabulary vocabulary;
  ASSERT_TRUE(vocabulary.set("a", {0, 1, 1, 5, 10}));
  ASSERT_TRUE(vocabulary.set("b", {2, 4}));
  std::vector<TensorSpec> features{{"a", TensorType::Int64, {1}, 0},
                                   {"b", TensorType::Float, {1}, 0}};
  std::shared_ptr<const MlpStructure> plain = makeStructure(features, vocabulary);
  ASSERT_TRUE(plain);
  std::vector<double> values{1, 3.5}; // a: 3 of 5 boundaries <= 1; b: 1 of 2
  std::vector<double> encoded(plain->inputWidth());
  plain->encode(values, encoded);
  EXPECT_EQ(encoded, (std::vector<double>{0.6, 0.6 * 0.6, 0.5, 0.25}));

  MlpOptions options = testing::inlinerMlpOptions();
  options.withSqrt = true;
  std::shared_ptr<const MlpStructure> withSqrt = makeStructure(features, vocabulary, options);
  ASSERT_TRUE(withSqrt);
  encoded.assign(withSqrt->inputWidth(), 0);
  withSqrt->encode(values, encoded);
  EXPECT_EQ(encoded, (std::vector<double>{0.6, 0.36, std::sqrt(0.6), 0.5, 0.25, std::sqrt(0.5)}));
}

TEST(MlpStructure, EncodingAgreesWithNormalizedQuantileOnSparseBoundaries) {
  // ml-compiler-opt-like boundaries: long runs of repeats.
  Vocabulary vocabulary;
  std::vector<double> boundaries;
  for (int i = 0; i < 1000; ++i)
    boundaries.push_back(i < 600 ? 0.0 : i < 900 ? 1.0 : static_cast<double>(i / 10));
  ASSERT_TRUE(vocabulary.set("s", boundaries));
  std::shared_ptr<const MlpStructure> structure =
      makeStructure({{"s", TensorType::Int64, {1}, 0}}, vocabulary);
  ASSERT_TRUE(structure);
  std::vector<double> encoded(2);
  for (double value = -2; value <= 101; value += 0.5) {
    std::vector<double> feature{value};
    structure->encode(feature, encoded);
    double x = normalizedQuantile(boundaries, value);
    EXPECT_EQ(encoded[0], x) << value;
    EXPECT_EQ(encoded[1], x * x) << value;
  }
  std::vector<double> zero{0};
  structure->encode(zero, encoded);
  EXPECT_EQ(encoded[0], 0.6);
}

TEST(MlpStructure, EmbeddingsPassThroughAndRowsNormalisePerElement) {
  // An inliner header with IR2Vec embeddings: they need no vocabulary.
  ChannelHeader header = inlinerHeader();
  header.features.push_back({"caller_embedding", TensorType::Float, {3}, 0});
  std::shared_ptr<const MlpStructure> structure = makeStructure(
      header.features, integerVocabulary(header, 16, {"inlining_default", "caller_embedding"}));
  ASSERT_TRUE(structure);
  EXPECT_EQ(structure->featureCount(), 38u + 3);
  EXPECT_EQ(structure->inputWidth(), 76u + 3);
  std::vector<double> values(structure->featureCount(), 0.0);
  values[38] = -0.25;
  values[39] = 7.5;
  values[40] = 1e6;
  std::vector<double> encoded(structure->inputWidth());
  structure->encode(values, encoded);
  EXPECT_EQ(encoded[76], -0.25);
  EXPECT_EQ(encoded[77], 7.5);
  EXPECT_EQ(encoded[78], 1e6);

  // A float scalar has no such exemption.
  header.features.push_back({"progress", TensorType::Float, {1}, 0});
  Expected<std::shared_ptr<const MlpStructure>> scalar = MlpStructure::create(
      header.features,
      integerVocabulary(header, 16, {"inlining_default", "caller_embedding", "progress"}),
      testing::inlinerMlpOptions());
  ASSERT_FALSE(scalar);
  EXPECT_NE(scalar.error().message.find("\"progress\" (float[1])"), std::string::npos);

  // Regalloc rows ([1,33]) with a vocabulary normalise element by element.
  ChannelHeader evict = loadHeader("regalloc-evict-header-llvm22.json");
  Vocabulary rows;
  for (const TensorSpec& feature : evict.features)
    ASSERT_TRUE(rows.set(feature.name, {0.5}));
  MlpOptions options = testing::inlinerMlpOptions();
  options.excludedFeatures = {};
  std::shared_ptr<const MlpStructure> regalloc = makeStructure(evict.features, rows, options);
  ASSERT_TRUE(regalloc);
  EXPECT_EQ(regalloc->featureCount(), 20u * 33 + 1);
  EXPECT_EQ(regalloc->inputWidth(), 2 * (20u * 33 + 1));
  std::vector<double> row(regalloc->featureCount(), 0.0);
  row[1] = 1.0; // mask[0][1] >= 0.5
  std::vector<double> out(regalloc->inputWidth());
  regalloc->encode(row, out);
  EXPECT_EQ(out[0], 0.0);
  EXPECT_EQ(out[2], 1.0);
  EXPECT_EQ(out[3], 1.0);
}

// One feature "a" -> [x, x²] -> 2 relu units -> 2 logits, weights by hand.
struct TinyNetwork {
  std::shared_ptr<const MlpStructure> structure;
  MlpPolicy policy;
};

TinyNetwork makeTinyNetwork(Activation activation = Activation::Relu) {
  Vocabulary vocabulary;
  EXPECT_TRUE(vocabulary.set("a", {0, 1, 2, 3}));
  MlpOptions options = testing::inlinerMlpOptions();
  options.hiddenLayers = {2};
  options.activation = activation;
  std::shared_ptr<const MlpStructure> structure =
      makeStructure({{"a", TensorType::Int64, {1}, 0}}, vocabulary, options);
  EXPECT_EQ(structure->parameterCount(), 12u);
  // Layer 1: W1 = [[1, -2], [0.5, 3]] column-major, b1 = [0.1, -0.2].
  // Layer 2: W2 = [[2, -1], [-1, 1]] column-major, b2 = [0.05, 0].
  Eigen::VectorXd theta(12);
  theta << 1, 0.5, -2, 3, 0.1, -0.2, 2, -1, -1, 1, 0.05, 0;
  return {structure, MlpPolicy(structure, theta)};
}

TEST(MlpPolicy, ForwardPassMatchesHandComputation) {
  TinyNetwork net = makeTinyNetwork();
  RandomStream rng(3);
  // a = 1: x = 2/4 = 0.5, inputs [0.5, 0.25].
  // h = relu([1·0.5 − 2·0.25 + 0.1, 0.5·0.5 + 3·0.25 − 0.2]) = [0.1, 0.8]
  // z = [2·0.1 − 1·0.8 + 0.05, −1·0.1 + 1·0.8] = [−0.55, 0.7]
  std::vector<double> a1{1};
  std::array<double, 2> logits;
  net.policy.computeLogits(a1, logits);
  EXPECT_NEAR(logits[0], -0.55, 1e-15);
  EXPECT_NEAR(logits[1], 0.7, 1e-15);
  Decision decision = net.policy.decide(a1, DecisionMode::Deterministic, rng);
  EXPECT_EQ(decision.advice, 1);
  EXPECT_EQ(decision.logProbability, 0.0);
  double expected = 0.7 - std::log(std::exp(-0.55) + std::exp(0.7));
  EXPECT_NEAR(net.policy.logProbability(a1, 1), expected, 1e-15);

  // a = 3: x = 1, inputs [1, 1]: h = relu([-0.9, 3.3]) = [0, 3.3]
  // z = [−3.3 + 0.05, 3.3]  -> action 1; a = -5: x = 0, h = relu([0.1, −0.2]) = [0.1, 0]
  // z = [0.25, −0.1] -> action 0.
  std::vector<double> a3{3}, aNeg{-5};
  net.policy.computeLogits(a3, logits);
  EXPECT_NEAR(logits[0], -3.25, 1e-15);
  EXPECT_NEAR(logits[1], 3.3, 1e-15);
  net.policy.computeLogits(aNeg, logits);
  EXPECT_NEAR(logits[0], 0.25, 1e-15);
  EXPECT_NEAR(logits[1], -0.1, 1e-15);
  EXPECT_EQ(net.policy.decide(aNeg, DecisionMode::Deterministic, rng).advice, 0);

  std::array<double, 2> probabilities;
  net.policy.computeProbabilities(aNeg, probabilities);
  EXPECT_NEAR(probabilities[0], 1 / (1 + std::exp(-0.35)), 1e-15);
  EXPECT_NEAR(probabilities[0] + probabilities[1], 1.0, 1e-15);
}

TEST(MlpPolicy, TanhForwardPassMatchesHandComputation) {
  TinyNetwork net = makeTinyNetwork(Activation::Tanh);
  std::vector<double> a1{1};
  std::array<double, 2> logits;
  net.policy.computeLogits(a1, logits);
  double h0 = std::tanh(0.1), h1 = std::tanh(0.8);
  EXPECT_NEAR(logits[0], 2 * h0 - h1 + 0.05, 1e-15);
  EXPECT_NEAR(logits[1], -h0 + h1, 1e-15);
}

TEST(MlpPolicy, DeterministicTiesGoToTheLowerAction) {
  TinyNetwork net = makeTinyNetwork();
  std::vector<double> theta(net.policy.parameters().begin(), net.policy.parameters().end());
  std::fill(theta.begin(), theta.end(), 0.0);
  MlpPolicy zero = net.policy.withParameters(theta);
  RandomStream rng(1);
  std::vector<double> a{2};
  EXPECT_EQ(zero.decide(a, DecisionMode::Deterministic, rng).advice, 0);
  theta[11] = 1e-12; // b2[1]
  EXPECT_EQ(net.policy.withParameters(theta).decide(a, DecisionMode::Deterministic, rng).advice, 1);
}

TEST(MlpPolicy, SamplingFrequenciesMatchSoftmax) {
  // Zero weights, output biases log p: the policy is p whatever the input.
  Vocabulary vocabulary;
  ASSERT_TRUE(vocabulary.set("a", {0}));
  MlpOptions options = testing::inlinerMlpOptions();
  options.hiddenLayers = {3};
  options.actions = 3;
  std::shared_ptr<const MlpStructure> structure =
      makeStructure({{"a", TensorType::Int64, {1}, 0}}, vocabulary, options);
  const std::array<double, 3> p{0.2, 0.3, 0.5};
  Eigen::VectorXd theta =
      Eigen::VectorXd::Zero(static_cast<Eigen::Index>(structure->parameterCount()));
  for (size_t i = 0; i < 3; ++i)
    theta[static_cast<Eigen::Index>(structure->layers().back().biasOffset + i)] =
        std::log(p[i]) + 4;
  MlpPolicy policy(structure, theta);

  RandomStream rng(deriveKey({42, 1}));
  const int draws = 200000;
  std::array<int, 3> counts{};
  std::vector<double> a{1};
  for (int i = 0; i < draws; ++i) {
    Decision decision = policy.decide(a, DecisionMode::Sampling, rng);
    ASSERT_GE(decision.advice, 0);
    ASSERT_LT(decision.advice, 3);
    EXPECT_NEAR(decision.logProbability, std::log(p[static_cast<size_t>(decision.advice)]), 1e-12);
    ++counts[static_cast<size_t>(decision.advice)];
  }
  for (size_t i = 0; i < 3; ++i) {
    double frequency = static_cast<double>(counts[i]) / draws;
    double sigma = std::sqrt(p[i] * (1 - p[i]) / draws);
    EXPECT_NEAR(frequency, p[i], 5 * sigma) << "action " << i;
  }
}

TEST(MlpPolicy, InitialisationIsSeededGlorotUniform) {
  ChannelHeader header = inlinerHeader();
  std::shared_ptr<const MlpStructure> structure =
      makeStructure(header.features, integerVocabulary(header));
  MlpPolicy a = MlpPolicy::initialised(structure, 1);
  MlpPolicy b = MlpPolicy::initialised(structure, 1);
  MlpPolicy c = MlpPolicy::initialised(structure, 2);
  EXPECT_TRUE(std::equal(a.parameters().begin(), a.parameters().end(), b.parameters().begin()));
  EXPECT_FALSE(std::equal(a.parameters().begin(), a.parameters().end(), c.parameters().begin()));
  for (const MlpStructure::Layer& layer : structure->layers()) {
    double limit = std::sqrt(6.0 / static_cast<double>(layer.inputs + layer.outputs));
    double largest = 0, sumSquares = 0;
    for (size_t i = 0; i < layer.inputs * layer.outputs; ++i) {
      double w = a.parameters()[layer.weightOffset + i];
      largest = std::max(largest, std::abs(w));
      sumSquares += w * w;
    }
    EXPECT_LE(largest, limit);
    EXPECT_GT(largest, 0.9 * limit);
    // Var U(-a, a) = a²/3
    double variance = sumSquares / static_cast<double>(layer.inputs * layer.outputs);
    EXPECT_NEAR(variance, limit * limit / 3, 0.25 * limit * limit / 3);
    for (size_t i = 0; i < layer.outputs; ++i)
      EXPECT_EQ(a.parameters()[layer.biasOffset + i], 0.0);
  }
}

TEST(MlpPolicy, CandidatesShareTheStructureAndOwnTheirWeights) {
  TinyNetwork net = makeTinyNetwork();
  std::vector<double> theta(net.policy.parameters().begin(), net.policy.parameters().end());
  theta[11] = 100; // b2[1]: always action 1
  MlpPolicy candidate = net.policy.withParameters(theta);
  EXPECT_EQ(candidate.structure().get(), net.policy.structure().get());
  EXPECT_EQ(candidate.parameters()[11], 100);
  EXPECT_EQ(net.policy.parameters()[11], 0);
  RandomStream rng(1);
  std::vector<double> a{-5};
  EXPECT_EQ(net.policy.decide(a, DecisionMode::Deterministic, rng).advice, 0);
  EXPECT_EQ(candidate.decide(a, DecisionMode::Deterministic, rng).advice, 1);
  net.policy.setParameters(theta);
  EXPECT_EQ(net.policy.decide(a, DecisionMode::Deterministic, rng).advice, 1);
}

// A small network with two normalised features and a 3-wide embedding.
struct GradientCase {
  Activation activation;
  uint64_t seed;
  friend void PrintTo(const GradientCase& c, std::ostream* os) {
    *os << activationName(c.activation) << ", seed " << c.seed;
  }
};

class MlpGradient : public ::testing::TestWithParam<GradientCase> {
protected:
  void SetUp() override {
    Vocabulary vocabulary;
    ASSERT_TRUE(vocabulary.set("a", {0, 1, 2, 4, 8}));
    ASSERT_TRUE(vocabulary.set("b", {-1, 0, 1}));
    MlpOptions options = testing::inlinerMlpOptions();
    options.hiddenLayers = {5, 4};
    options.actions = 3;
    options.withSqrt = true;
    options.activation = GetParam().activation;
    structure_ = makeStructure({{"a", TensorType::Int64, {1}, 0},
                                {"b", TensorType::Float, {1}, 0},
                                {"e", TensorType::Float, {3}, 0}},
                               vocabulary, options);
    ASSERT_TRUE(structure_);
    MlpPolicy initial = MlpPolicy::initialised(structure_, GetParam().seed);
    // Non-zero biases, so no unit sits at a ReLU kink by construction.
    Eigen::VectorXd theta = Eigen::Map<const Eigen::VectorXd>(
        initial.parameters().data(), static_cast<Eigen::Index>(initial.parameterCount()));
    RandomStream rng(GetParam().seed + 100);
    for (const MlpStructure::Layer& layer : structure_->layers())
      for (size_t i = 0; i < layer.outputs; ++i)
        theta[static_cast<Eigen::Index>(layer.biasOffset + i)] = rng.uniform01() - 0.5;
    policy_.emplace(structure_, theta);
  }

  // Central differences of f over every parameter.
  template <class F> std::vector<double> numericGradient(F f) const {
    std::vector<double> theta(policy_->parameters().begin(), policy_->parameters().end());
    std::vector<double> gradient(theta.size());
    const double h = 1e-6;
    for (size_t i = 0; i < theta.size(); ++i) {
      double saved = theta[i];
      theta[i] = saved + h;
      double up = f(policy_->withParameters(theta));
      theta[i] = saved - h;
      double down = f(policy_->withParameters(theta));
      theta[i] = saved;
      gradient[i] = (up - down) / (2 * h);
    }
    return gradient;
  }

  static void expectClose(const std::vector<double>& analytic, const std::vector<double>& numeric) {
    double difference = 0;
    for (size_t i = 0; i < analytic.size(); ++i) {
      difference += (analytic[i] - numeric[i]) * (analytic[i] - numeric[i]);
      // Per parameter: relative, or absolute for components below 1.
      EXPECT_NEAR(analytic[i], numeric[i], 1e-6 * std::max(1.0, std::abs(numeric[i])))
          << "parameter " << i;
    }
    double norm = 0;
    for (double g : numeric)
      norm += g * g;
    ASSERT_GT(norm, 0.0);
    EXPECT_LT(std::sqrt(difference / norm), 1e-6);
  }

  std::shared_ptr<const MlpStructure> structure_;
  std::optional<MlpPolicy> policy_;
  const std::vector<std::vector<double>> states_{{3, 0.5, 0.3, -1.2, 0.7}, {0, -2, 1.5, 0.1, -0.4}};
};

TEST_P(MlpGradient, LogProbabilityMatchesFiniteDifferences) {
  for (const std::vector<double>& state : states_) {
    for (int64_t action = 0; action < 3; ++action) {
      std::vector<double> analytic(policy_->parameterCount(), 0.0);
      double logP = policy_->accumulateLogProbabilityGradient(state, action, 1.0, analytic);
      EXPECT_NEAR(logP, policy_->logProbability(state, action), 1e-15);
      expectClose(analytic, numericGradient([&](const MlpPolicy& p) {
                    return p.logProbability(state, action);
                  }));
    }
  }
}

TEST_P(MlpGradient, EntropyMatchesFiniteDifferences) {
  for (const std::vector<double>& state : states_) {
    std::vector<double> analytic(policy_->parameterCount(), 0.0);
    double h = policy_->accumulateEntropyGradient(state, 1.0, analytic);
    std::array<double, 3> p;
    policy_->computeProbabilities(state, p);
    EXPECT_NEAR(h, -(p[0] * std::log(p[0]) + p[1] * std::log(p[1]) + p[2] * std::log(p[2])), 1e-14);
    EXPECT_NEAR(h, policy_->entropy(state), 1e-15);
    expectClose(analytic,
                numericGradient([&](const MlpPolicy& policy) { return policy.entropy(state); }));
  }
}

TEST_P(MlpGradient, LogitVectorProductMatchesFiniteDifferences) {
  const std::array<double, 3> dLogits{0.7, -1.3, 0.25};
  for (const std::vector<double>& state : states_) {
    std::vector<double> analytic(policy_->parameterCount(), 0.0);
    policy_->accumulateGradient(state, dLogits, analytic);
    expectClose(analytic, numericGradient([&](const MlpPolicy& p) {
                  std::array<double, 3> z;
                  p.computeLogits(state, z);
                  return dLogits[0] * z[0] + dLogits[1] * z[1] + dLogits[2] * z[2];
                }));
  }
}

TEST_P(MlpGradient, GradientsAccumulateWithScale) {
  const std::vector<double>& state = states_[0];
  std::vector<double> once(policy_->parameterCount(), 0.0);
  std::vector<double> summed(policy_->parameterCount(), 0.0);
  (void)policy_->accumulateLogProbabilityGradient(state, 1, 1.0, once);
  (void)policy_->accumulateLogProbabilityGradient(state, 1, 2.0, summed);
  (void)policy_->accumulateLogProbabilityGradient(state, 1, -0.5, summed);
  for (size_t i = 0; i < once.size(); ++i)
    EXPECT_NEAR(summed[i], 1.5 * once[i], 1e-14 * std::max(1.0, std::abs(once[i])));
}

INSTANTIATE_TEST_SUITE_P(Activations, MlpGradient,
                         ::testing::Values(GradientCase{Activation::Tanh, 11},
                                           GradientCase{Activation::Relu, 12}),
                         [](const auto& info) {
                           return std::string(activationName(info.param.activation));
                         });

TEST(MlpPolicy, DecideIsThreadSafe) {
  ChannelHeader header = inlinerHeader();
  std::shared_ptr<const MlpStructure> structure =
      makeStructure(header.features, integerVocabulary(header));
  MlpPolicy policy = MlpPolicy::initialised(structure, 5);
  const size_t states = 2000;
  std::vector<std::vector<double>> features(states, std::vector<double>(38));
  RandomStream gen(9);
  for (auto& state : features)
    for (double& v : state)
      v = static_cast<double>(gen.uniformBelow(20));

  auto run = [&](std::vector<Decision>& out, uint64_t stream) {
    RandomStream rng(stream);
    out.clear();
    for (const auto& state : features) {
      out.push_back(policy.decide(state, DecisionMode::Deterministic, rng));
      out.push_back(policy.decide(state, DecisionMode::Sampling, rng));
    }
  };
  std::vector<Decision> serial;
  run(serial, 77);
  std::vector<std::vector<Decision>> parallel(4);
  std::vector<std::thread> threads;
  for (auto& out : parallel)
    threads.emplace_back([&] { run(out, 77); });
  for (std::thread& thread : threads)
    thread.join();
  int inlined = 0;
  for (const Decision& d : serial)
    inlined += d.advice == 1;
  EXPECT_GT(inlined, 0); // the comparison below is not between constant answers
  EXPECT_LT(inlined, static_cast<int>(serial.size()));
  for (const auto& out : parallel) {
    ASSERT_EQ(out.size(), serial.size());
    for (size_t i = 0; i < out.size(); ++i) {
      EXPECT_EQ(out[i].advice, serial[i].advice) << i;
      EXPECT_EQ(out[i].logProbability, serial[i].logProbability) << i;
    }
  }
}

// Not an assertion: prints the cost of one decision for the default 64x64
// network on the 38 inliner features.
TEST(MlpPolicy, DecideTiming) {
  ChannelHeader header = inlinerHeader();
  std::shared_ptr<const MlpStructure> structure =
      makeStructure(header.features, integerVocabulary(header, 1000));
  MlpPolicy policy = MlpPolicy::initialised(structure, 1);
  std::vector<std::vector<double>> features(256, std::vector<double>(38));
  RandomStream gen(3);
  for (auto& state : features)
    for (double& v : state)
      v = static_cast<double>(gen.uniformBelow(1000));
  RandomStream rng(4);
  int64_t sink = 0;
  for (const auto& state : features) // warm-up: allocates the workspace
    sink += policy.decide(state, DecisionMode::Deterministic, rng).advice;
  const int rounds = 200;
  for (DecisionMode mode : {DecisionMode::Deterministic, DecisionMode::Sampling}) {
    auto start = std::chrono::steady_clock::now();
    for (int r = 0; r < rounds; ++r)
      for (const auto& state : features)
        sink += policy.decide(state, mode, rng).advice;
    double ns =
        std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start).count() /
        (rounds * static_cast<double>(features.size()));
    const char* name = mode == DecisionMode::Deterministic ? "deterministic" : "sampling";
    std::printf("[ timing   ] mlp[64,64] relu, 38 inliner features, %s: %.0f ns per decide()\n",
                name, ns);
    RecordProperty(std::string("ns_per_decide_") + name, static_cast<int>(ns));
  }
  RecordProperty("inline_answers", static_cast<int>(sink)); // keeps the loops alive
}

// A plain (not residual) inliner MLP with random weights.
MlpPolicy plainMlp(const ChannelHeader& header, std::vector<int> hidden, uint64_t seed) {
  MlpOptions plain = testing::inlinerMlpOptions();
  plain.hiddenLayers = std::move(hidden);
  return MlpPolicy::initialised(makeStructure(header.features, integerVocabulary(header), plain),
                                seed);
}

// A residual inliner MLP's structure (null if it cannot be built).
std::shared_ptr<const MlpStructure> residualStructure(const ChannelHeader& header,
                                                      std::vector<int> hidden, double margin) {
  MlpOptions options = testing::inlinerMlpOptions();
  options.hiddenLayers = std::move(hidden);
  options.residualMargin = margin;
  return makeStructure(header.features, integerVocabulary(header), options);
}

// A residual policy on `structure` with random output weights too (a
// residual policy starts with zero ones, exactly the compiler's decisions).
MlpPolicy withRandomOutputLayer(const std::shared_ptr<const MlpStructure>& structure,
                                uint64_t seed) {
  const MlpPolicy random = plainMlp(inlinerHeader(), structure->options().hiddenLayers, seed);
  return MlpPolicy::initialised(structure, seed).withParameters(random.parameters());
}

// The ensemble's logits are the mean of its members' exactly (to rounding),
// for a two-hidden-layer residual MLP and a linear one; an ensemble of one
// policy with itself decides as it does; members that differ are refused by
// name.
TEST(MeanLogitEnsemble, LogitsAreTheMeanOfTheMembers) {
  ChannelHeader header = inlinerHeader();
  for (std::vector<int> hidden : {std::vector<int>{6, 5}, std::vector<int>{}}) {
    MlpOptions options = testing::inlinerMlpOptions();
    options.hiddenLayers = hidden;
    options.residualMargin = 0.75;
    std::shared_ptr<const MlpStructure> structure =
        makeStructure(header.features, integerVocabulary(header), options);
    ASSERT_TRUE(structure);
    const MlpPolicy a = MlpPolicy::initialised(structure, 1),
                    b = MlpPolicy::initialised(structure, 2),
                    c = MlpPolicy::initialised(structure, 3);
    const MlpPolicy* members[] = {&a, &b, &c};
    Expected<MlpPolicy> ensemble = meanLogitEnsemble(members);
    ASSERT_TRUE(ensemble) << ensemble.error().message;
    ASSERT_EQ(ensemble->structure()->options().hiddenLayers.size(), hidden.size());
    for (size_t l = 0; l < hidden.size(); ++l)
      EXPECT_EQ(ensemble->structure()->options().hiddenLayers[l], 3 * hidden[l]);
    const MlpPolicy* twice[] = {&a, &a};
    Expected<MlpPolicy> self = meanLogitEnsemble(twice);
    ASSERT_TRUE(self);
    RandomStream rng(0);
    for (const std::vector<double>& state : randomStates(40, structure->featureCount(), 9)) {
      std::vector<double> logits(2), mean(2, 0.0), member(2), own(2), selfLogits(2);
      ensemble->computeLogits(state, logits);
      for (const MlpPolicy* m : members) {
        m->computeLogits(state, member);
        for (size_t i = 0; i < 2; ++i)
          mean[i] += member[i] / 3;
      }
      for (size_t i = 0; i < 2; ++i)
        EXPECT_NEAR(logits[i], mean[i], 1e-9);
      a.computeLogits(state, own);
      self->computeLogits(state, selfLogits);
      for (size_t i = 0; i < 2; ++i)
        EXPECT_NEAR(selfLogits[i], own[i], 1e-12);
      EXPECT_EQ(self->decide(state, DecisionMode::Deterministic, rng).advice,
                a.decide(state, DecisionMode::Deterministic, rng).advice);
    }
  }
  MlpOptions narrow = testing::inlinerMlpOptions();
  narrow.hiddenLayers = {4};
  MlpOptions wide = narrow;
  wide.hiddenLayers = {5};
  const MlpPolicy n = MlpPolicy::initialised(
                      makeStructure(header.features, integerVocabulary(header), narrow), 1),
                  w = MlpPolicy::initialised(
                      makeStructure(header.features, integerVocabulary(header), wide), 1);
  const MlpPolicy* mixed[] = {&n, &n, &w};
  Expected<MlpPolicy> refused = meanLogitEnsemble(mixed);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().message, "policy 3 differs from policy 1 in its architecture");
  EXPECT_FALSE(meanLogitEnsemble(std::span<const MlpPolicy* const>()));
}

// A larger margin flips a subset of the decisions a smaller one flips: the
// weights stay, only where the network's logit difference exceeds the new
// margin does the policy overrule the compiler. A policy that is not residual
// and a margin <= 0 are refused.
TEST(WithResidualMargin, FlipsOnlyWhereTheLogitDifferenceExceedsTheMargin) {
  ChannelHeader header = inlinerHeader();
  std::shared_ptr<const MlpStructure> structure = residualStructure(header, {6}, 0.1);
  ASSERT_TRUE(structure);
  const size_t at = *structure->residualFeatureOffset();
  const MlpPolicy random = plainMlp(header, {6}, 3);
  const MlpPolicy policy = withRandomOutputLayer(structure, 3);
  Expected<MlpPolicy> confident = withResidualMargin(policy, 0.6);
  ASSERT_TRUE(confident) << confident.error().message;
  EXPECT_EQ(confident->structure()->options().residualMargin, 0.6);
  EXPECT_EQ(confident->structure()->inputs(), structure->inputs());
  RandomStream rng(0);
  size_t flippedBefore = 0, flippedAfter = 0;
  for (std::vector<double> state : randomStates(400, structure->featureCount(), 5)) {
    for (double decision : {0.0, 1.0}) {
      state[at] = decision;
      std::vector<double> logits(2);
      policy.computeLogits(state, logits);
      // The network's own difference, without the margin the policy adds.
      const double towardsFlip =
          decision == 0 ? (logits[1] - (logits[0] - 0.1)) : (logits[0] - (logits[1] - 0.1));
      const bool before = policy.decide(state, DecisionMode::Deterministic, rng).advice != decision;
      const bool after =
          confident->decide(state, DecisionMode::Deterministic, rng).advice != decision;
      EXPECT_EQ(before, towardsFlip > 0.1);
      EXPECT_EQ(after, towardsFlip > 0.6);
      EXPECT_TRUE(!after || before); // a subset
      flippedBefore += before;
      flippedAfter += after;
    }
  }
  EXPECT_GT(flippedBefore, flippedAfter); // the test's states do reach both sides
  EXPECT_GT(flippedAfter, 0u);

  EXPECT_FALSE(withResidualMargin(policy, 0));
  EXPECT_FALSE(withResidualMargin(random, 0.5)); // not residual
}

// Kept decisions (mlgo-eval margin --keep): the policy flips exactly where
// the two-way policy flips, except from a kept decision, which it never
// overrules; the same holds for a unanimous ensemble's members; bad values
// are refused.
TEST(WithResidualMargin, KeptDecisionsAreNeverOverruled) {
  ChannelHeader header = inlinerHeader();
  std::shared_ptr<const MlpStructure> structure = residualStructure(header, {6}, 0.1);
  ASSERT_TRUE(structure);
  const size_t at = *structure->residualFeatureOffset();
  const MlpPolicy policy = withRandomOutputLayer(structure, 3);
  const MlpPolicy second = withRandomOutputLayer(structure, 7);
  const MlpPolicy* pair[] = {&policy, &second};
  Expected<MlpPolicy> unanimous = unanimousEnsemble(pair);
  ASSERT_TRUE(unanimous) << unanimous.error().message;
  for (const MlpPolicy* both : std::array<const MlpPolicy*, 2>{&policy, &*unanimous}) {
    size_t twoWayFlips = 0;
    // Each kept decision in turn: a direction the two-way policy takes is
    // suppressed under one and left alone under the other.
    for (int keep : {0, 1}) {
      Expected<MlpPolicy> oneWay = withResidualMargin(*both, 0.1, std::vector<int>{keep});
      ASSERT_TRUE(oneWay) << oneWay.error().message;
      EXPECT_EQ(oneWay->structure()->options().residualKept, std::vector<int>{keep});
      EXPECT_NE(oneWay->describe().find("keeps " + std::to_string(keep)), std::string::npos);
      RandomStream rng(0);
      for (std::vector<double> state : randomStates(400, structure->featureCount(), 7)) {
        for (int decision : {0, 1}) {
          state[at] = decision;
          const bool twoWay =
              both->decide(state, DecisionMode::Deterministic, rng).advice != decision;
          const bool flipped =
              oneWay->decide(state, DecisionMode::Deterministic, rng).advice != decision;
          EXPECT_EQ(flipped, decision == keep ? false : twoWay);
          twoWayFlips += twoWay;
        }
      }
    }
    EXPECT_GT(twoWayFlips, 0u); // the states do reach flips
  }
  // --keep-none: both ways again, the same decisions as the original.
  Expected<MlpPolicy> kept = withResidualMargin(policy, 0.1, std::vector<int>{0});
  ASSERT_TRUE(kept);
  Expected<MlpPolicy> again = withResidualMargin(*kept, 0.1, std::vector<int>{});
  ASSERT_TRUE(again);
  EXPECT_TRUE(again->structure()->options() == policy.structure()->options());

  EXPECT_FALSE(withResidualMargin(policy, 0.1, std::vector<int>{2}));    // not an action
  EXPECT_FALSE(withResidualMargin(policy, 0.1, std::vector<int>{1, 1})); // twice
  MlpOptions plain = testing::inlinerMlpOptions();
  plain.residualKept = {1}; // keeping needs a residual policy
  EXPECT_FALSE(plain.validate());
}

// Unanimity: the ensemble flips the compiler's decision exactly where every
// member flips it (so its flips are a subset of each member's), its logits
// are 0 for the compiler's action and the least member preference for the
// other, their gradient matches finite differences, it survives a policy file
// byte for byte, and what it cannot be is refused.
TEST(UnanimousEnsemble, FlipsOnlyWhereEveryMemberFlips) {
  ChannelHeader header = inlinerHeader();
  std::shared_ptr<const MlpStructure> structure = residualStructure(header, {5}, 0.2);
  ASSERT_TRUE(structure);
  const size_t at = *structure->residualFeatureOffset();
  const MlpPolicy a = withRandomOutputLayer(structure, 1), b = withRandomOutputLayer(structure, 2),
                  c = withRandomOutputLayer(structure, 3);
  const MlpPolicy* members[] = {&a, &b, &c};
  Expected<MlpPolicy> unanimous = unanimousEnsemble(members);
  ASSERT_TRUE(unanimous) << unanimous.error().message;
  EXPECT_EQ(unanimous->structure()->members(), 3u);
  EXPECT_EQ(unanimous->structure()->actionCount(), 2u);
  EXPECT_NE(unanimous->describe().find("unanimous of 3"), std::string::npos);

  testing::ScratchDirectory dir;
  ASSERT_TRUE(savePolicy(*unanimous, dir / "unanimous.json"));
  Expected<MlpPolicy> loaded = loadMlpPolicy(dir / "unanimous.json");
  ASSERT_TRUE(loaded) << loaded.error().message;
  EXPECT_EQ(loaded->structure()->options(), unanimous->structure()->options());

  RandomStream rng(0);
  size_t memberFlips = 0, unanimousFlips = 0;
  std::vector<double> gradient(unanimous->parameterCount());
  for (std::vector<double> state : randomStates(300, structure->featureCount(), 7)) {
    for (double decision : {0.0, 1.0}) {
      state[at] = decision;
      bool every = true;
      double least = std::numeric_limits<double>::infinity();
      for (const MlpPolicy* member : members) {
        std::vector<double> logits(2);
        member->computeLogits(state, logits);
        const size_t other = decision == 0 ? 1 : 0;
        least = std::min(least, logits[other] - logits[static_cast<size_t>(decision)]);
        const bool flips =
            member->decide(state, DecisionMode::Deterministic, rng).advice != decision;
        every = every && flips;
        memberFlips += flips;
      }
      const bool flips =
          unanimous->decide(state, DecisionMode::Deterministic, rng).advice != decision;
      EXPECT_EQ(flips, every);
      EXPECT_EQ(loaded->decide(state, DecisionMode::Deterministic, rng).advice,
                unanimous->decide(state, DecisionMode::Deterministic, rng).advice);
      unanimousFlips += flips;
      std::vector<double> logits(2);
      unanimous->computeLogits(state, logits);
      EXPECT_EQ(logits[static_cast<size_t>(decision)], 0.0);
      EXPECT_NEAR(logits[decision == 0 ? 1 : 0], least, 1e-12);
    }
  }
  EXPECT_GT(unanimousFlips, 0u); // the states reach both sides
  EXPECT_LT(3 * unanimousFlips, memberFlips);

  // d logit(other) / d parameters against central differences on a few parameters.
  std::vector<double> state = randomStates(1, structure->featureCount(), 8).front();
  state[at] = 0;
  const double dLogits[] = {0.0, 1.0};
  std::fill(gradient.begin(), gradient.end(), 0.0);
  unanimous->accumulateGradient(state, dLogits, gradient);
  std::vector<double> theta(unanimous->parameters().begin(), unanimous->parameters().end());
  for (size_t i = 0; i < theta.size(); i += 7) {
    const double h = 1e-6, saved = theta[i];
    std::vector<double> up(2), down(2);
    theta[i] = saved + h;
    unanimous->withParameters(theta).computeLogits(state, up);
    theta[i] = saved - h;
    unanimous->withParameters(theta).computeLogits(state, down);
    theta[i] = saved;
    EXPECT_NEAR(gradient[i], (up[1] - down[1]) / (2 * h), 1e-5) << "parameter " << i;
  }

  const MlpPolicy* one[] = {&a};
  EXPECT_FALSE(unanimousEnsemble(one));
  const MlpPolicy plain = plainMlp(header, {5}, 1);
  const MlpPolicy* notResidual[] = {&plain, &plain};
  EXPECT_FALSE(unanimousEnsemble(notResidual));
  const MlpPolicy* nested[] = {&*unanimous, &*unanimous};
  EXPECT_FALSE(meanLogitEnsemble(nested));
}

} // namespace
} // namespace mlgo::policies
