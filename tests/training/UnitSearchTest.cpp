// One translation unit's build-time search (training/UnitSearch.h) on the
// made-up compiler: the chosen decisions are never larger than -Oz, their
// policy file reproduces the size the search reports, the start is the
// smallest of -Oz, the policy and the previous choice, and a previous choice
// is never lost.
#include "mlgo/training/UnitSearch.h"
#include "FakeCompiler.h"
#include "TestSupport.h"
#include "mlgo/policies/PolicyFile.h"

#include <gtest/gtest.h>

namespace mlgo::training {
namespace {

using mlgo::testing::FakeCompiler;

// The size a policy file's decisions give on the module.
uint64_t sizeWith(FakeCompiler& compiler, const corpus::ModuleSpec& module,
                  const std::string& policyText) {
  Expected<std::unique_ptr<policies::Policy>> policy = policies::policyFromJson(policyText, "t");
  EXPECT_TRUE(policy) << policy.error().message;
  evaluators::EvaluationRequest request;
  request.candidates = {policy->get()};
  request.modules = {&module};
  return compiler.evaluate(request).job(0, 0).sizeBytes;
}

TEST(UnitSearch, NeverLargerThanOzAndTheChoiceReproducesItsSize) {
  mlgo::testing::ScratchDirectory dir;
  Expected<corpus::Corpus> corpus =
      corpus::Corpus::load(mlgo::testing::writeFakeCorpus(dir / "corpus", {"plain", "inverted"}));
  ASSERT_TRUE(corpus) << corpus.error().message;
  for (int64_t constant : {0, 1})
    for (const corpus::ModuleSpec& module : corpus->modules()) {
      SCOPED_TRACE(module.name + (constant ? ", always inline" : ", never inline"));
      FakeCompiler compiler;
      compiler.sitesPerModule = 24;
      compiler.invertedModules = {"inverted"};
      const std::string policyFile = (dir / "policy.json").string();
      ASSERT_TRUE(policies::savePolicy(*policies::makeConstantPolicy(constant), policyFile));
      deploy::UnitSearchRequest request;
      request.module = module;
      request.policyFile = policyFile;
      request.budget = 6;
      Expected<deploy::UnitSearchOutcome> outcome = searchTranslationUnit(compiler, request);
      ASSERT_TRUE(outcome) << outcome.error().message;
      const corpus::ModuleSpec* modules[] = {&module};
      const uint64_t oz = *compiler.baselines(modules)[0].sizeBytes;
      EXPECT_EQ(outcome->ozBytes, oz);
      EXPECT_LE(outcome->chosenBytes, oz);
      if (outcome->chosenPolicy.empty()) {
        EXPECT_EQ(outcome->chosenBytes, oz);
        continue;
      }
      EXPECT_LT(outcome->chosenBytes, oz);
      EXPECT_EQ(sizeWith(compiler, module, outcome->chosenPolicy), outcome->chosenBytes);

      // Searched again from that choice (an edit that changed nothing): the
      // search starts there and keeps at least as much.
      request.previousPolicy = outcome->chosenPolicy;
      Expected<deploy::UnitSearchOutcome> again = searchTranslationUnit(compiler, request);
      ASSERT_TRUE(again) << again.error().message;
      EXPECT_LE(again->chosenBytes, outcome->chosenBytes);
      EXPECT_NE(again->summary.find("from its previous choice"), std::string::npos)
          << again->summary;
    }
}

TEST(UnitSearch, ABudgetOfZeroKeepsTheBestStart) {
  mlgo::testing::ScratchDirectory dir;
  Expected<corpus::Corpus> corpus =
      corpus::Corpus::load(mlgo::testing::writeFakeCorpus(dir / "corpus", {"m"}));
  ASSERT_TRUE(corpus) << corpus.error().message;
  FakeCompiler compiler;
  const std::string policyFile = (dir / "policy.json").string();
  ASSERT_TRUE(policies::savePolicy(*policies::makeConstantPolicy(1), policyFile));
  deploy::UnitSearchRequest request;
  request.module = corpus->modules().front();
  request.policyFile = policyFile;
  request.budget = 0;
  Expected<deploy::UnitSearchOutcome> outcome = searchTranslationUnit(compiler, request);
  ASSERT_TRUE(outcome) << outcome.error().message;
  EXPECT_LE(outcome->chosenBytes, outcome->ozBytes);
  EXPECT_NE(outcome->summary.find("0 decisions tried"), std::string::npos) << outcome->summary;
}

} // namespace
} // namespace mlgo::training
