// ES populations as candidate families (what MPI ranks receive instead of
// every candidate): a rank's decoded candidate i is bit for bit the
// trainer's, for every sampling; a damaged description is refused.
#include "mlgo/training/CandidateFamilies.h"

#include "../policies/PoliciesTestSupport.h"
#include "mlgo/policies/PolicyFile.h"

#include <gtest/gtest.h>

namespace mlgo::training {
namespace {

policies::MlpPolicy smallPolicy() {
  policies::ChannelHeader header = policies::testing::inlinerHeader();
  policies::Vocabulary vocabulary = policies::testing::integerVocabulary(header, 8);
  // A boundary that only prints exactly with 17 digits.
  EXPECT_TRUE(vocabulary.set("threshold", {0.1, 1.0 / 3, 225.00000000000003}));
  policies::MlpOptions options = policies::testing::inlinerMlpOptions();
  options.hiddenLayers = {6};
  auto structure = policies::MlpStructure::create(header.features, vocabulary, options);
  EXPECT_TRUE(structure) << (structure ? "" : structure.error().message);
  return policies::MlpPolicy::initialised(structure.take(), 7);
}

es::Population populationAround(const policies::MlpPolicy& policy, es::Sampling sampling,
                                bool withCenter) {
  Eigen::VectorXd center = Eigen::Map<const Eigen::VectorXd>(
      policy.parameters().data(), static_cast<Eigen::Index>(policy.parameterCount()));
  Eigen::VectorXd scale = es::pretrainedScale(center);
  return es::Population(11, 4, sampling, 3, withCenter, center * 1.5, scale * 0.1);
}

TEST(CandidateFamilies, RankRebuildsEveryCandidateBitForBit) {
  const policies::MlpPolicy policy = smallPolicy();
  const evaluators::FamilyDecoders decoders = candidateFamilyDecoders();
  for (es::Sampling sampling : {es::Sampling::Antithetic, es::Sampling::ForwardDifference})
    for (bool withCenter : {false, true}) {
      es::Population population = populationAround(policy, sampling, withCenter);
      Expected<evaluators::CandidateFamily> family = describePopulation(population, policy);
      ASSERT_TRUE(family) << family.error().message;
      auto decoder = decoders.find(family->kind);
      ASSERT_NE(decoder, decoders.end());
      Expected<std::unique_ptr<evaluators::DecodedFamily>> decoded =
          decoder->second(family->description);
      ASSERT_TRUE(decoded) << decoded.error().message;
      ASSERT_EQ((*decoded)->size(), population.size());
      for (size_t c = 0; c < population.size(); ++c) {
        Eigen::VectorXd weights = population.candidate(c);
        policies::MlpPolicy trainers =
            policy.withParameters({weights.data(), static_cast<size_t>(weights.size())});
        std::unique_ptr<policies::Policy> ranks = (*decoded)->candidate(c);
        // The policy file is what workers get: equal text, equal decisions.
        EXPECT_EQ(*policies::policyToJson(*ranks), *policies::policyToJson(trainers))
            << "candidate " << c;
      }
    }
}

TEST(CandidateFamilies, DamagedDescriptionIsRefused) {
  const policies::MlpPolicy policy = smallPolicy();
  es::Population population = populationAround(policy, es::Sampling::Antithetic, false);
  Expected<evaluators::CandidateFamily> family = describePopulation(population, policy);
  ASSERT_TRUE(family);
  const evaluators::FamilyDecoder& decode = candidateFamilyDecoders().at(family->kind);
  EXPECT_FALSE(decode(family->description.substr(0, 40)));
  std::string noPolicy = family->description;
  noPolicy.resize(noPolicy.size() - 10);
  EXPECT_FALSE(decode(noPolicy));
}

} // namespace
} // namespace mlgo::training
