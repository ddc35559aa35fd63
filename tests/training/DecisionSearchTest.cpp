// The greedy decision search on Lua (clang-22): every kept flip made its
// module smaller, no module ends larger than -Oz, and compiling the
// resulting flip-set policy again gives exactly the sizes the search
// measured.
#include "mlgo/training/DecisionSearch.h"
#include "TestSupport.h"
#include "mlgo/evaluators/Evaluator.h"

#include <gtest/gtest.h>

namespace mlgo::training {
namespace {

TEST(DecisionSearch, KeptFlipsShrinkLuaAndTheirPolicyReproducesTheSizes) {
  mlgo::testing::ScratchDirectory dir;
  Expected<corpus::Corpus> corpus = corpus::Corpus::load(mlgo::testing::realCorpusDirectory("lua"));
  ASSERT_TRUE(corpus) << corpus.error().message;
  std::vector<const corpus::ModuleSpec*> modules;
  for (const corpus::ModuleSpec& m : corpus->modules())
    modules.push_back(&m);
  evaluators::EvaluatorOptions options;
  options.workers = 2;
  options.scratchDirectory = dir.path();
  Expected<std::unique_ptr<evaluators::Evaluator>> evaluator =
      evaluators::Evaluator::create(options, evaluators::CompilerTask::inliningForSize());
  ASSERT_TRUE(evaluator) << evaluator.error().message;

  DecisionSearchOptions search;
  search.maxDecisions = 6;
  size_t rounds = 0;
  search.onRound = [&](size_t, size_t, const policies::FlipSetPolicy&) { return ++rounds < 100; };
  Expected<DecisionSearchResult> result = searchDecisions(**evaluator, modules, search);
  ASSERT_TRUE(result) << result.error().message;
  EXPECT_EQ(result->rounds, 6u);
  EXPECT_EQ(rounds, 6u);
  size_t kept = 0;
  uint64_t baseline = 0, best = 0;
  for (const ModuleSearch& m : result->modules) {
    ASSERT_TRUE(m.baselineBytes && m.bestBytes);
    EXPECT_LE(*m.bestBytes, *m.baselineBytes);
    EXPECT_EQ(m.kept > 0, *m.bestBytes < *m.baselineBytes);
    EXPECT_LE(m.tried, 6u);
    kept += m.kept;
    baseline += *m.baselineBytes;
    best += *m.bestBytes;
  }
  EXPECT_EQ(result->policy.flipSet().size(), kept);
  EXPECT_GT(kept, 0u) << "Lua has flips that shrink it within its first decisions";
  EXPECT_LT(best, baseline);

  evaluators::EvaluationRequest request;
  request.candidates = {&result->policy};
  request.modules = modules;
  evaluators::EvaluationResult again = (*evaluator)->evaluate(request);
  for (size_t m = 0; m < modules.size(); ++m) {
    ASSERT_TRUE(again.job(0, m).ok()) << modules[m]->name;
    EXPECT_EQ(again.job(0, m).sizeBytes, *result->modules[m].bestBytes) << modules[m]->name;
  }
}

} // namespace
} // namespace mlgo::training
