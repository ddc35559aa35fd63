// The decision search's rounds on a made-up compiler: a module that tries
// several decisions per round (as with incremental trials, where one compile
// answers them all) tries the same decisions and keeps the same flips as one
// that tries one per round; the decisions after a kept flip are drawn again
// from the new trajectory.
#include "FakeCompiler.h"
#include "TestSupport.h"
#include "mlgo/training/DecisionSearch.h"

#include "../policies/PoliciesTestSupport.h"
#include "mlgo/rl/Decisions.h"
#include "mlgo/support/Random.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <optional>
#include <set>
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

// The guided order: the decisions where the start overrules the compiler
// first, each group by the guide's logit margin, smallest first; without an
// MLP guide, position order within the groups.
TEST(GuidedOrder, OverrulingsFirstThenTheSmallestMargins) {
  policies::ChannelHeader header = policies::testing::inlinerHeader();
  policies::Trajectory t;
  t.featureSpecs = header.features;
  for (const policies::TensorSpec& spec : header.features)
    t.width += spec.elementCount();
  RandomStream random(deriveKey({17}));
  const size_t decisions = 40;
  for (size_t d = 0; d < decisions; ++d) {
    for (size_t i = 0; i < t.width; ++i)
      t.observations.push_back(std::floor(random.uniform01() * 50));
    t.defaultDecisions.push_back(d % 3 == 0);
    t.actions.push_back(d % 5 == 0 ? 1 - t.defaultDecisions.back() : t.defaultDecisions.back());
    t.logProbabilities.push_back(0);
  }
  auto overruled = [&](size_t d) { return t.actions[d] != t.defaultDecisions[d]; };

  std::vector<size_t> plain = guidedOrder(t, nullptr);
  ASSERT_EQ(plain.size(), decisions);
  std::vector<size_t> expected;
  for (bool group : {true, false})
    for (size_t d = 0; d < decisions; ++d)
      if (overruled(d) == group)
        expected.push_back(d);
  EXPECT_EQ(plain, expected);
  std::unique_ptr<policies::Policy> constant = policies::makeConstantPolicy(1);
  EXPECT_EQ(guidedOrder(t, constant.get()), expected); // no logits: no margins

  policies::Vocabulary vocabulary = policies::testing::integerVocabulary(header, 8);
  policies::MlpOptions options = policies::testing::inlinerMlpOptions();
  options.hiddenLayers = {6};
  auto structure = policies::MlpStructure::create(header.features, vocabulary, options);
  ASSERT_TRUE(structure) << structure.error().message;
  const policies::MlpPolicy mlp = policies::MlpPolicy::initialised(structure.take(), 3);
  Expected<rl::FeatureGather> gather = rl::FeatureGather::create(t.featureSpecs, mlp.inputs());
  ASSERT_TRUE(gather) << gather.error().message;
  std::vector<double> margins(decisions), row(gather->width());
  for (size_t d = 0; d < decisions; ++d) {
    gather->gather(t.row(d), row.data());
    margins[d] = std::abs(mlp.logProbability(row, 1) - mlp.logProbability(row, 0));
  }
  std::vector<size_t> guided = guidedOrder(t, &mlp);
  ASSERT_EQ(guided.size(), decisions);
  std::set<size_t> seen(guided.begin(), guided.end());
  EXPECT_EQ(seen.size(), decisions); // a permutation
  for (size_t i = 1; i < decisions; ++i) {
    const size_t a = guided[i - 1], b = guided[i];
    if (overruled(a) != overruled(b)) {
      EXPECT_TRUE(overruled(a)) << i;
      continue;
    }
    EXPECT_LE(margins[a], margins[b]) << i;
  }
  EXPECT_NE(guided, expected); // the margins reorder something
}

} // namespace
} // namespace mlgo::training
