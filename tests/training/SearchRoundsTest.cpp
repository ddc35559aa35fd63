// The decision search's rounds on a made-up compiler: a module that tries
// several decisions per round (as with incremental trials, where one compile
// answers them all) tries the same decisions and keeps the same flips as one
// that tries one per round; the decisions after a kept flip are drawn again
// from the new trajectory.
#include "FakeCompiler.h"
#include "TestSupport.h"
#include "mlgo/training/DecisionSearch.h"

#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <tuple>
#include <vector>

namespace mlgo::training {
namespace {

using mlgo::testing::FakeCompiler;

struct SearchRun {
  std::optional<DecisionSearchResult> result;
  // Per module, what it tried in order: (position, size with the flip, kept).
  std::map<size_t, std::vector<std::tuple<size_t, uint64_t, bool>>> tried;
};

SearchRun search(const std::vector<const corpus::ModuleSpec*>& modules, bool incremental,
                 size_t perRound, SearchOrder order, bool fromNever) {
  FakeCompiler compiler;
  compiler.sitesPerModule = 20;
  compiler.incremental = incremental;
  SearchRun run;
  std::unique_ptr<policies::Policy> never = policies::makeConstantPolicy(0);
  DecisionSearchOptions options;
  options.maxDecisions = 15;
  options.order = order;
  options.seed = 5;
  options.trialsPerRound = perRound;
  if (fromNever)
    options.start = never.get();
  options.onTried = [&](const TriedDecision& t) {
    run.tried[t.module].emplace_back(t.decision, t.trial->sizeBytes, t.kept);
  };
  Expected<DecisionSearchResult> result = searchDecisions(compiler, modules, options);
  EXPECT_TRUE(result) << result.error().message;
  if (result)
    run.result = result.take();
  return run;
}

TEST(DecisionSearchRounds, SeveralTrialsPerRoundGiveTheSameSearch) {
  mlgo::testing::ScratchDirectory dir;
  std::vector<std::string> names;
  for (int i = 0; i < 6; ++i)
    names.push_back("m" + std::to_string(i));
  Expected<corpus::Corpus> corpus =
      corpus::Corpus::load(mlgo::testing::writeFakeCorpus(dir / "corpus", names));
  ASSERT_TRUE(corpus) << corpus.error().message;
  std::vector<const corpus::ModuleSpec*> modules;
  for (const corpus::ModuleSpec& m : corpus->modules())
    modules.push_back(&m);

  for (SearchOrder order : {SearchOrder::First, SearchOrder::Random})
    for (bool fromNever : {false, true}) {
      SCOPED_TRACE(std::string(order == SearchOrder::First ? "first" : "random") +
                   (fromNever ? ", from never-inline" : ", from -Oz"));
      SearchRun one = search(modules, false, 8, order, fromNever);
      size_t kept = 0;
      for (const ModuleSearch& m : one.result->modules)
        kept += m.kept;
      EXPECT_GT(kept, 0u) << "the made-up compiler has flips that pay";
      for (size_t perRound : {2, 8, 100}) {
        SearchRun batched = search(modules, true, perRound, order, fromNever);
        EXPECT_EQ(batched.tried, one.tried) << perRound << " per round";
        EXPECT_EQ(batched.result->policy.flipSet(), one.result->policy.flipSet());
        ASSERT_EQ(batched.result->modules.size(), one.result->modules.size());
        for (size_t m = 0; m < modules.size(); ++m) {
          EXPECT_EQ(batched.result->modules[m].best, one.result->modules[m].best);
          EXPECT_EQ(batched.result->modules[m].kept, one.result->modules[m].kept);
          EXPECT_EQ(batched.result->modules[m].tried, one.result->modules[m].tried);
        }
        EXPECT_LT(batched.result->rounds, one.result->rounds) << "fewer, fuller rounds";
        // Trials after a kept flip are tried again later: never fewer.
        EXPECT_GE(batched.result->compilations, one.result->compilations);
      }
    }
}

TEST(DecisionSearchRounds, TrialsPerRoundMustBePositive) {
  DecisionSearchOptions options;
  options.trialsPerRound = 0;
  EXPECT_FALSE(options.validate());
}

} // namespace
} // namespace mlgo::training
