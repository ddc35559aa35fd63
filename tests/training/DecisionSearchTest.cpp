// The greedy decision search on Lua (clang-22): every kept flip made its
// module smaller, no module ends larger than -Oz, and compiling the
// resulting flip-set policy again gives exactly the sizes the search
// measured.
#include "mlgo/training/DecisionSearch.h"
#include "TestSupport.h"
#include "mlgo/evaluators/Evaluator.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <set>

namespace mlgo::training {
namespace {

// Lua's modules (the first `count`) and an in-process evaluator for them.
struct LuaSearch {
  mlgo::testing::ScratchDirectory dir;
  std::optional<corpus::Corpus> corpus;
  std::vector<const corpus::ModuleSpec*> modules;
  std::unique_ptr<evaluators::Evaluator> evaluator;

  void load(size_t count = SIZE_MAX) {
    Expected<corpus::Corpus> loaded =
        corpus::Corpus::load(mlgo::testing::realCorpusDirectory("lua"));
    ASSERT_TRUE(loaded) << loaded.error().message;
    corpus.emplace(loaded.take());
    for (const corpus::ModuleSpec& m : corpus->modules())
      if (modules.size() < count)
        modules.push_back(&m);
    evaluators::EvaluatorOptions options;
    options.workers = 2;
    options.scratchDirectory = dir.path();
    Expected<std::unique_ptr<evaluators::Evaluator>> created =
        evaluators::Evaluator::create(options, evaluators::CompilerTask::inliningForSize());
    ASSERT_TRUE(created) << created.error().message;
    evaluator = created.take();
  }
};

TEST(DecisionSearch, KeptFlipsShrinkLuaAndTheirPolicyReproducesTheSizes) {
  LuaSearch lua;
  ASSERT_NO_FATAL_FAILURE(lua.load());
  std::vector<const corpus::ModuleSpec*>& modules = lua.modules;
  auto& evaluator = lua.evaluator;

  DecisionSearchOptions search;
  search.maxDecisions = 6;
  size_t rounds = 0;
  search.onRound = [&](size_t, size_t, const policies::FlipSetPolicy&) { return ++rounds < 100; };
  Expected<DecisionSearchResult> result = searchDecisions(*evaluator, modules, search);
  ASSERT_TRUE(result) << result.error().message;
  // Six decisions per module, several per round with incremental trials.
  EXPECT_LE(result->rounds, 6u);
  EXPECT_GE(result->rounds, 1u);
  EXPECT_EQ(rounds, result->rounds);
  size_t kept = 0;
  double baseline = 0, best = 0;
  for (const ModuleSearch& m : result->modules) {
    ASSERT_TRUE(m.baseline && m.best);
    EXPECT_LE(*m.best, *m.baseline);
    EXPECT_EQ(m.kept > 0, *m.best < *m.baseline);
    EXPECT_LE(m.tried, 6u);
    kept += m.kept;
    baseline += *m.baseline;
    best += *m.best;
  }
  EXPECT_EQ(result->policy.flipSet().size(), kept);
  EXPECT_GT(kept, 0u) << "Lua has flips that shrink it within its first decisions";
  EXPECT_LT(best, baseline);

  evaluators::EvaluationRequest request;
  request.candidates = {&result->policy};
  request.modules = modules;
  evaluators::EvaluationResult again = evaluator->evaluate(request);
  for (size_t m = 0; m < modules.size(); ++m) {
    ASSERT_TRUE(again.job(0, m).ok()) << modules[m]->name;
    EXPECT_EQ(static_cast<double>(again.job(0, m).sizeBytes), *result->modules[m].best)
        << modules[m]->name;
  }
}

// A random-order search over whole trajectories, writing its tried
// decisions as a trace: one row per decision tried, the better action as
// label, sizes that say what the flip did.
TEST(DecisionSearch, RandomOrderTriesWholeTrajectoriesAndRecordsEveryTriedDecision) {
  LuaSearch lua;
  ASSERT_NO_FATAL_FAILURE(lua.load(8));
  std::vector<const corpus::ModuleSpec*>& modules = lua.modules;
  auto& evaluator = lua.evaluator;
  const mlgo::testing::ScratchDirectory& dir = lua.dir;

  DecisionSearchOptions search;
  search.maxDecisions = 3;
  search.order = SearchOrder::Random;
  search.seed = 7;
  // A reward unlike the default δ's: the trace's rewards must be the task's.
  evaluators::RelativeReward reward{.delta = 50};
  TriedDecisionTrace trace(dir / "tried.h5", {{"policy", "tried"}}, reward);
  std::map<size_t, std::set<size_t>> positions;
  size_t kept = 0;
  search.onTried = [&](const TriedDecision& tried) {
    EXPECT_TRUE(positions[tried.module].insert(tried.decision).second) << "tried twice";
    EXPECT_LT(tried.decision, tried.before->decisions());
    if (tried.kept) {
      ++kept;
      EXPECT_LT(tried.trial->sizeBytes, tried.bytesBefore);
    }
    ASSERT_TRUE(trace.add(tried, modules[tried.module]->name));
  };
  Expected<DecisionSearchResult> result = searchDecisions(*evaluator, modules, search);
  ASSERT_TRUE(result) << result.error().message;
  ASSERT_TRUE(trace.close());
  size_t tried = 0, beyondTheStart = 0;
  for (const ModuleSearch& m : result->modules)
    tried += m.tried;
  for (const auto& [module, tries] : positions)
    beyondTheStart += *tries.rbegin() >= 3;
  EXPECT_EQ(trace.rows(), tried);
  EXPECT_EQ(result->policy.flipSet().size(), kept);
  EXPECT_GT(beyondTheStart, 0u) << "a random order reaches past the first decisions";

  Expected<results::Trace> read = results::readTrace(dir / "tried.h5");
  ASSERT_TRUE(read) << read.error().message;
  ASSERT_EQ(read->decisions(), tried);
  size_t flips = 0;
  for (size_t d = 0; d < read->decisions(); ++d) {
    const results::TraceModule& row = read->modules[static_cast<size_t>(read->decisionModules[d])];
    ASSERT_TRUE(row.ok() && row.baselineBytes) << row.name;
    const bool flipped = read->actions[d] != read->defaultDecisions[d];
    flips += flipped;
    // The label is the flip exactly when it shrank the module.
    EXPECT_EQ(flipped, row.sizeBytes < *row.baselineBytes) << row.name;
    EXPECT_DOUBLE_EQ(row.reward, reward(row.sizeBytes, *row.baselineBytes)) << row.name;
  }
  EXPECT_EQ(flips, kept);
}

// One way only (--flips-from 1): every decision tried is one the trajectory
// inlines, so every kept flip declines, while the same decisions on both
// ways also try calls -Oz declines; an action that is not one is refused.
TEST(DecisionSearch, OneWayTriesOnlyDecisionsOnThatAction) {
  LuaSearch lua;
  ASSERT_NO_FATAL_FAILURE(lua.load(6));
  DecisionSearchOptions search;
  search.maxDecisions = 12;
  search.flipsFrom = 1;
  size_t tried = 0, keptDeclines = 0, kept = 0, passedOver = 0;
  search.onTried = [&](const TriedDecision& t) {
    ++tried;
    EXPECT_EQ(t.before->actions[t.decision], 1) << "tried a call the trajectory declines";
    if (t.kept) {
      ++kept;
      keptDeclines += t.before->defaultDecisions[t.decision] == 1;
    }
    // Calls the trajectory declines within the budget: passed over.
    const size_t end = std::min<size_t>(t.before->decisions(), search.maxDecisions);
    for (size_t d = 0; d < end; ++d)
      passedOver += t.before->actions[d] == 0;
  };
  Expected<DecisionSearchResult> result = searchDecisions(*lua.evaluator, lua.modules, search);
  ASSERT_TRUE(result) << result.error().message;
  EXPECT_GT(tried, 0u);
  EXPECT_GT(passedOver, 0u) << "the modules' first decisions include declined calls";
  EXPECT_EQ(keptDeclines, kept); // from -Oz, a kept flip declines an inline -Oz made
  for (const ModuleSearch& m : result->modules)
    EXPECT_LE(*m.best, *m.baseline);

  search.flipsFrom = 2;
  Expected<DecisionSearchResult> refused = searchDecisions(*lua.evaluator, lua.modules, search);
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message.find("flipsFrom"), std::string::npos);
}

// From a policy's decisions (here never-inline, far from -Oz): the search
// starts at exactly that policy's sizes, a kept flip is an inlining the
// policy did not do, and the result reproduces the sizes it measured.
TEST(DecisionSearch, StartsFromAPolicysDecisionsAndLabelsAgainstThem) {
  LuaSearch lua;
  ASSERT_NO_FATAL_FAILURE(lua.load(8));
  std::vector<const corpus::ModuleSpec*>& modules = lua.modules;
  auto& evaluator = lua.evaluator;
  std::unique_ptr<policies::Policy> never = policies::makeConstantPolicy(0);
  evaluators::EvaluationRequest request;
  request.candidates = {never.get()};
  request.modules = modules;
  evaluators::EvaluationResult direct = evaluator->evaluate(request);

  DecisionSearchOptions search;
  search.maxDecisions = 3;
  search.order = SearchOrder::Random;
  search.start = never.get();
  TriedDecisionTrace trace(lua.dir / "tried.h5", {{"policy", "tried"}},
                           lua.evaluator->task().reward);
  std::vector<int64_t> taken; // the decision at each tried state before the flip
  search.onTried = [&](const TriedDecision& tried) {
    taken.push_back(tried.before->actions[tried.decision]);
    ASSERT_TRUE(trace.add(tried, modules[tried.module]->name));
  };
  Expected<DecisionSearchResult> result = searchDecisions(*evaluator, modules, search);
  ASSERT_TRUE(result) << result.error().message;
  ASSERT_TRUE(trace.close());
  size_t kept = 0;
  for (size_t m = 0; m < modules.size(); ++m) {
    const ModuleSearch& r = result->modules[m];
    ASSERT_TRUE(direct.job(0, m).ok() && r.start && r.best) << modules[m]->name;
    EXPECT_EQ(*r.start, static_cast<double>(direct.job(0, m).sizeBytes)) << modules[m]->name;
    EXPECT_LE(*r.best, *r.start);
    kept += r.kept;
  }
  EXPECT_GT(kept, 0u) << "inlining something shrinks some never-inline Lua module";

  Expected<results::Trace> read = results::readTrace(lua.dir / "tried.h5");
  ASSERT_TRUE(read) << read.error().message;
  ASSERT_EQ(read->decisions(), taken.size());
  size_t notInlined = 0;
  for (size_t d = 0; d < read->decisions(); ++d) {
    const results::TraceModule& row = read->modules[static_cast<size_t>(read->decisionModules[d])];
    ASSERT_TRUE(row.ok() && row.baselineBytes) << row.name;
    // The label is the other decision than the one taken exactly when
    // taking it shrank the module, whatever the compiler's own decision was.
    const bool flipped = read->actions[d] != taken[d];
    EXPECT_EQ(flipped, row.sizeBytes < *row.baselineBytes) << row.name;
    notInlined += taken[d] == 0;
  }
  // Mostly states where the policy did not inline (a later round can try a
  // state whose call an earlier kept flip inlined).
  EXPECT_GT(notInlined, read->decisions() / 2);

  request.candidates = {&result->policy};
  evaluators::EvaluationResult again = evaluator->evaluate(request);
  for (size_t m = 0; m < modules.size(); ++m)
    EXPECT_EQ(static_cast<double>(again.job(0, m).sizeBytes), *result->modules[m].best)
        << modules[m]->name;
}

// The pair phase on Lua: modules whose first decisions' single flips find
// nothing try pairs from their cheapest tried flips; a pair is kept only if
// its module gets smaller than its start, and the result's policy, pairs
// included, compiles to exactly the sizes the search measured.
TEST(DecisionSearch, PairsWhereSingleFlipsFindNothingReproduceTheirSizes) {
  LuaSearch lua;
  ASSERT_NO_FATAL_FAILURE(lua.load(10));
  std::vector<const corpus::ModuleSpec*>& modules = lua.modules;
  DecisionSearchOptions search;
  search.maxDecisions = 3;
  search.pairFirsts = 2;
  search.pairSeconds = 6;
  size_t rows = 0, keptRows = 0;
  search.onTried = [&](const TriedDecision& t) {
    ++rows;
    keptRows += t.kept;
    EXPECT_LT(t.decision, t.before->decisions());
  };
  Expected<DecisionSearchResult> result = searchDecisions(*lua.evaluator, modules, search);
  ASSERT_TRUE(result) << result.error().message;
  EXPECT_GT(result->pairTrials, 0u) << "some Lua module's first three decisions find nothing";
  size_t tried = 0, singles = 0, kept = 0;
  for (const ModuleSearch& m : result->modules) {
    ASSERT_TRUE(m.baseline && m.best);
    EXPECT_LE(*m.best, *m.baseline);
    EXPECT_EQ(m.kept > 0, *m.best < *m.baseline);
    tried += m.tried;
    singles += std::min<size_t>(m.decisions, 3);
    kept += m.kept;
  }
  EXPECT_EQ(rows, tried);
  EXPECT_GT(tried, singles) << "the pairs' trials come after the singles'";
  // A kept pair is one row (its second flip) for two flips.
  EXPECT_EQ(kept, keptRows + result->pairModules);
  EXPECT_EQ(result->policy.flipSet().size(), kept);

  evaluators::EvaluationRequest request;
  request.candidates = {&result->policy};
  request.modules = modules;
  evaluators::EvaluationResult again = lua.evaluator->evaluate(request);
  for (size_t m = 0; m < modules.size(); ++m) {
    ASSERT_TRUE(again.job(0, m).ok()) << modules[m]->name;
    EXPECT_EQ(static_cast<double>(again.job(0, m).sizeBytes), *result->modules[m].best)
        << modules[m]->name;
  }
}

} // namespace
} // namespace mlgo::training
