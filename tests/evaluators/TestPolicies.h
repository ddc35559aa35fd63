// Fixtures and policies for evaluator tests on real corpora: the recipe's
// corpus loaded once per test, policies built from a heuristic trace of it.
#pragma once

#include "TestSupport.h"
#include "mlgo/corpus/Corpus.h"
#include "mlgo/evaluators/Evaluator.h"
#include "mlgo/policies/Mlp.h"
#include "mlgo/policies/Vocabulary.h"

#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <vector>

namespace mlgo::evaluators::testing {

// A test on one recipe's corpus (the parameter: "zlib", "lua"), loaded in
// SetUp; `modules_` lists all of it.
class RealCorpusTest : public ::testing::TestWithParam<std::string> {
protected:
  void SetUp() override {
    Expected<corpus::Corpus> loaded =
        corpus::Corpus::load(mlgo::testing::realCorpusDirectory(GetParam()));
    ASSERT_TRUE(loaded) << loaded.error().message;
    corpus_ = std::make_unique<corpus::Corpus>(loaded.take());
    for (const corpus::ModuleSpec& m : corpus_->modules())
      modules_.push_back(&m);
  }

  mlgo::testing::ScratchDirectory scratch_;
  std::unique_ptr<corpus::Corpus> corpus_;
  std::vector<const corpus::ModuleSpec*> modules_;
};

// A small tanh MLP (8 hidden units, 100-quantile vocabulary from the trace)
// whose weights are scaled up and whose "inline" logit is raised, so that it
// inlines some calls and not others: both branches of every decision path
// are exercised. `theta` is its flat parameter vector.
struct MixedMlp {
  policies::Vocabulary vocabulary;
  std::shared_ptr<const policies::MlpStructure> structure;
  std::vector<double> theta;
  std::optional<policies::MlpPolicy> policy;
  size_t inputs = 0;
  static constexpr size_t hidden = 8;
};

// `traced`: an evaluation of one candidate with recorded trajectories.
inline std::optional<MixedMlp> makeMixedMlp(const EvaluationResult& traced) {
  policies::FeatureSamples samples;
  const std::vector<policies::TensorSpec>* specs = nullptr;
  for (const JobResult& job : traced.jobs) {
    if (!job.trajectory || job.trajectory->decisions() == 0)
      continue;
    specs = &job.trajectory->featureSpecs;
    for (size_t d = 0; d < job.trajectory->decisions(); ++d)
      for (size_t f = 0; f < specs->size(); ++f)
        samples[(*specs)[f].name].push_back(job.trajectory->row(d)[f]);
  }
  if (!specs) {
    ADD_FAILURE() << "the trace has no decisions";
    return std::nullopt;
  }
  MixedMlp mixed;
  policies::VocabularyOptions vocabOptions;
  vocabOptions.quantiles = 100;
  Expected<policies::Vocabulary> vocabulary = policies::buildVocabulary(samples, vocabOptions);
  if (!vocabulary) {
    ADD_FAILURE() << vocabulary.error().message;
    return std::nullopt;
  }
  mixed.vocabulary = vocabulary.take();
  policies::MlpOptions options;
  options.hiddenLayers = {static_cast<int>(MixedMlp::hidden)};
  options.activation = policies::Activation::Tanh;
  Expected<std::shared_ptr<const policies::MlpStructure>> structure =
      policies::MlpStructure::create(*specs, mixed.vocabulary,
                                     CompilerTask::inliningForSize().policyOptions(options));
  if (!structure) {
    ADD_FAILURE() << structure.error().message;
    return std::nullopt;
  }
  mixed.structure = structure.take();
  policies::MlpPolicy initial = policies::MlpPolicy::initialised(mixed.structure, 11);
  mixed.theta.assign(initial.parameters().begin(), initial.parameters().end());
  for (double& w : mixed.theta)
    w *= 3;
  mixed.inputs = mixed.structure->inputWidth();
  const size_t outBias = MixedMlp::hidden * mixed.inputs + MixedMlp::hidden + 2 * MixedMlp::hidden;
  mixed.theta[outBias + 1] += 0.5;
  mixed.policy.emplace(initial.withParameters(mixed.theta));
  return mixed;
}

} // namespace mlgo::evaluators::testing
