// Candidate scoring (MlpOptions::candidateMask), ml-compiler-opt's eviction
// network on the register allocator's real header (LLVM 22): one shared MLP
// scores each of the 33 candidates from its own column of every [1, 33]
// feature plus the shared scalars; only candidates the mask allows are ever
// chosen; the policy file keeps the mode.
#include "mlgo/policies/Ensemble.h"
#include "mlgo/policies/Mlp.h"
#include "mlgo/policies/PolicyFile.h"

#include "PoliciesTestSupport.h"

#include <gtest/gtest.h>

#include <cmath>
#include <set>

namespace mlgo::policies {
namespace {

using testing::loadHeader;

constexpr size_t kCandidates = 33;

// Boundaries 0 … 9 for every feature (each value of a row a sample).
Vocabulary evictionVocabulary(const ChannelHeader& header) {
  Vocabulary vocabulary;
  for (const TensorSpec& f : header.features) {
    std::vector<double> boundaries;
    for (int i = 0; i < 10; ++i)
      boundaries.push_back(i);
    EXPECT_TRUE(vocabulary.set(f.name, boundaries));
  }
  return vocabulary;
}

MlpPolicy evictionPolicy(uint64_t seed = 3) {
  ChannelHeader header = loadHeader("regalloc-evict-header-llvm22.json");
  MlpOptions options;
  options.hiddenLayers = {8};
  options.candidateMask = "mask";
  auto structure = MlpStructure::create(header.features, evictionVocabulary(header), options);
  EXPECT_TRUE(structure) << (structure ? "" : structure.error().message);
  return MlpPolicy::initialised(structure.take(), seed);
}

// One observation: 20 features of 33 values, then `progress`; the mask
// allows the candidates in `valid`.
std::vector<double> observation(const std::set<size_t>& valid, uint64_t seed) {
  RandomStream rng(seed);
  std::vector<double> values;
  for (size_t f = 0; f < 20; ++f)
    for (size_t c = 0; c < kCandidates; ++c)
      values.push_back(f == 0 ? (valid.count(c) ? 1.0 : 0.0)
                              : static_cast<double>(rng.uniformBelow(12)));
  values.push_back(0.5); // progress
  return values;
}

TEST(CandidateMlp, OneScorePerCandidateFromItsOwnColumn) {
  MlpPolicy policy = evictionPolicy();
  const MlpStructure& s = *policy.structure();
  EXPECT_EQ(s.candidates(), kCandidates);
  EXPECT_EQ(s.featureCount(), 20 * kCandidates + 1);
  EXPECT_EQ(s.inputWidth(), 21u * 2); // [x, x²] of each feature's one value
  EXPECT_EQ(s.layers().back().outputs, 1u);
  EXPECT_NE(s.describe().find("scoring 33 candidates"), std::string::npos);
}

TEST(CandidateMlp, ChoosesOnlyValidCandidatesAndTheBestScore) {
  MlpPolicy policy = evictionPolicy();
  RandomStream rng(1);
  for (uint64_t seed = 0; seed < 50; ++seed) {
    const std::set<size_t> valid = {seed % 32, (seed * 7) % 32, 32};
    std::vector<double> values = observation(valid, seed);
    Decision deterministic = policy.decide(values, DecisionMode::Deterministic, rng);
    ASSERT_TRUE(valid.count(static_cast<size_t>(deterministic.advice))) << deterministic.advice;
    for (int draw = 0; draw < 5; ++draw) {
      Decision sampled = policy.decide(values, DecisionMode::Sampling, rng);
      ASSERT_TRUE(valid.count(static_cast<size_t>(sampled.advice))) << sampled.advice;
      EXPECT_LE(sampled.logProbability, 0.0);
      EXPECT_TRUE(std::isfinite(sampled.logProbability));
    }
  }
}

TEST(CandidateMlp, ScoresFollowTheCandidatesColumn) {
  // Swapping two valid candidates' columns swaps the choice.
  MlpPolicy policy = evictionPolicy(5);
  RandomStream rng(1);
  std::vector<double> values = observation({3, 9, 32}, 11);
  const int64_t first = policy.decide(values, DecisionMode::Deterministic, rng).advice;
  ASSERT_NE(first, 32); // the seeds pick a case where an eviction wins
  const size_t other = first == 3 ? 9 : 3;
  for (size_t f = 1; f < 20; ++f)
    std::swap(values[f * kCandidates + static_cast<size_t>(first)],
              values[f * kCandidates + other]);
  EXPECT_EQ(policy.decide(values, DecisionMode::Deterministic, rng).advice,
            static_cast<int64_t>(other));
}

// BC and PPO need d log π(a) / dθ and d H / dθ over the masked softmax of
// the candidates' scores: checked against central differences.
TEST(CandidateMlp, GradientsMatchFiniteDifferences) {
  MlpPolicy policy = evictionPolicy(5);
  const std::vector<double> x = observation({0, 4, 7, 32}, 11);
  const size_t n = policy.parameterCount();
  std::vector<double> logPGradient(n, 0.0), entropyGradient(n, 0.0);
  const double logP = policy.accumulateLogProbabilityGradient(x, 7, 1.0, logPGradient);
  policy.accumulateEntropyGradient(x, 1.0, entropyGradient);
  EXPECT_NEAR(logP, policy.logProbability(x, 7), 1e-12);
  std::vector<double> logits(policy.structure()->logitCount());
  policy.computeLogits(x, logits);
  EXPECT_TRUE(std::isinf(logits[1]) && logits[1] < 0) << "a masked candidate has a finite logit";
  std::vector<double> theta(policy.parameters().begin(), policy.parameters().end());
  const double h = 1e-6;
  size_t checked = 0;
  for (size_t p = 0; p < n; p += 7) {
    std::vector<double> up = theta, down = theta;
    up[p] += h;
    down[p] -= h;
    MlpPolicy a = policy.withParameters(up), b = policy.withParameters(down);
    EXPECT_NEAR(logPGradient[p], (a.logProbability(x, 7) - b.logProbability(x, 7)) / (2 * h), 1e-5)
        << "parameter " << p;
    EXPECT_NEAR(entropyGradient[p], (a.entropy(x) - b.entropy(x)) / (2 * h), 1e-5)
        << "parameter " << p;
    checked += logPGradient[p] != 0;
  }
  EXPECT_GT(checked, n / 20) << "almost every gradient entry is zero";
}

// A residual candidate scorer (the in-process eviction task appends the
// default advisor's choice) starts exactly at that choice: its output layer
// is zero, so every candidate scores alike but for the margin.
TEST(CandidateMlp, ResidualStartsAtTheDefaultCandidate) {
  ChannelHeader header = loadHeader("regalloc-evict-header-llvm22.json");
  header.features.push_back(TensorSpec{"index_to_evict_default", TensorType::Int64, {1}, 0});
  MlpOptions options;
  options.hiddenLayers = {8};
  options.candidateMask = "mask";
  options.excludedFeatures = {"index_to_evict_default"};
  options.residualFeature = "index_to_evict_default";
  options.residualMargin = 0.5;
  auto structure = MlpStructure::create(header.features, evictionVocabulary(header), options);
  ASSERT_TRUE(structure) << structure.error().message;
  MlpPolicy policy = MlpPolicy::initialised(structure.take(), 9);
  RandomStream rng(1);
  for (int64_t chosen : {0, 5, 32}) {
    std::vector<double> x = observation({0, 5, 9, 32}, 20 + static_cast<uint64_t>(chosen));
    x.push_back(static_cast<double>(chosen));
    EXPECT_EQ(policy.decide(x, DecisionMode::Deterministic, rng).advice, chosen);
  }
  // A perturbation of the weights moves some decisions away from it.
  std::vector<double> theta(policy.parameters().begin(), policy.parameters().end());
  RandomStream noise(3);
  for (double& t : theta)
    t += 2 * (noise.uniform01() - 0.5);
  MlpPolicy moved = policy.withParameters(theta);
  size_t differ = 0;
  for (uint64_t seed = 0; seed < 20; ++seed) {
    std::vector<double> x = observation({0, 5, 9, 32}, seed);
    x.push_back(32);
    differ += moved.decide(x, DecisionMode::Deterministic, rng).advice != 32;
  }
  EXPECT_GT(differ, 0u);
}

TEST(CandidateMlp, PolicyFileKeepsTheMode) {
  MlpPolicy policy = evictionPolicy();
  Expected<std::string> json = policyToJson(policy);
  ASSERT_TRUE(json) << json.error().message;
  EXPECT_NE(json->find("candidate_mask"), std::string::npos);
  Expected<std::unique_ptr<Policy>> loaded = policyFromJson(*json, "test");
  ASSERT_TRUE(loaded) << loaded.error().message;
  auto* mlp = dynamic_cast<const MlpPolicy*>(loaded->get());
  ASSERT_NE(mlp, nullptr);
  EXPECT_EQ(mlp->structure()->candidates(), kCandidates);
  RandomStream rng(1);
  for (uint64_t seed = 0; seed < 20; ++seed) {
    std::vector<double> values = observation({1, 2, 5, 8, 13, 21, 32}, seed);
    EXPECT_EQ((*loaded)->decide(values, DecisionMode::Deterministic, rng).advice,
              policy.decide(values, DecisionMode::Deterministic, rng).advice);
  }
}

TEST(CandidateMlp, RefusesMaskOfOneValueAndMixedShapes) {
  ChannelHeader header = loadHeader("regalloc-evict-header-llvm22.json");
  MlpOptions options;
  options.candidateMask = "progress";
  EXPECT_FALSE(MlpStructure::create(header.features, evictionVocabulary(header), options));
  options.candidateMask = "mask";
  std::vector<TensorSpec> features = header.features;
  features.push_back({"odd", TensorType::Int64, {1, 5}, 0});
  Vocabulary vocabulary = evictionVocabulary(header);
  ASSERT_TRUE(vocabulary.set("odd", {0, 1}));
  Expected<std::shared_ptr<const MlpStructure>> mixed =
      MlpStructure::create(features, vocabulary, options);
  ASSERT_FALSE(mixed);
  EXPECT_NE(mixed.error().message.find("\"odd\""), std::string::npos);
}

// A candidate-scoring ensemble's scores are the mean of its members'.
TEST(CandidateMlp, EnsembleScoresAreTheMeanOfTheMembers) {
  const MlpPolicy a = evictionPolicy(3), b = evictionPolicy(4);
  const MlpPolicy* members[] = {&a, &b};
  Expected<MlpPolicy> ensemble = meanLogitEnsemble(members);
  ASSERT_TRUE(ensemble) << ensemble.error().message;
  for (uint64_t seed = 0; seed < 10; ++seed) {
    std::vector<double> values = observation({seed % 32, 7, 32}, seed);
    std::vector<double> scores(kCandidates), sa(kCandidates), sb(kCandidates);
    ensemble->computeLogits(values, scores);
    a.computeLogits(values, sa);
    b.computeLogits(values, sb);
    for (size_t c = 0; c < kCandidates; ++c)
      if (std::isfinite(sa[c]))
        EXPECT_NEAR(scores[c], (sa[c] + sb[c]) / 2, 1e-9) << "candidate " << c;
      else
        EXPECT_EQ(scores[c], sa[c]) << "candidate " << c; // masked in both
  }
}

} // namespace
} // namespace mlgo::policies
