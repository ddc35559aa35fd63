// The register allocator's eviction task in-process on the -O2 zlib and Lua
// corpora: the default advisor's choice, which clang's channel does not send,
// is observed beside the ML advisor's question; a policy echoing it gives
// plain -O2's object, section for section, and plain -O2's RegAllocScore.
#include "TestPolicies.h"
#include "TestSupport.h"
#include "mlgo/evaluators/Evaluator.h"
#include "mlgo/policies/Policy.h"

#include <vector>

#include <gtest/gtest.h>

namespace mlgo::evaluators {
namespace {

class EvictionDefault : public testing::RealCorpusTest {
protected:
  std::unique_ptr<Evaluator> make(CompilerTask task) {
    EvaluatorOptions options;
    options.backend = BackendKind::InProcess;
    options.replay = false; // every job compiled: the objects are compared
    options.workers = 2;
    options.scratchDirectory = scratch_.path();
    options.baselineCacheDirectory.reset();
    Expected<std::unique_ptr<Evaluator>> evaluator = Evaluator::create(options, std::move(task));
    EXPECT_TRUE(evaluator) << evaluator.error().message;
    return evaluator ? evaluator.take() : nullptr;
  }
};

TEST_P(EvictionDefault, EchoingTheDefaultAdvisorGivesPlainO2) {
  CompilerTask task = CompilerTask::regallocEviction();
  // Every section whose name starts with '.' (code, relocations, unwind
  // tables, symbols, the embedded bitcode), not only the code.
  task.sizeSections = {"."};
  std::unique_ptr<Evaluator> evaluator = make(task);
  ASSERT_TRUE(evaluator);
  std::unique_ptr<policies::Policy> echo =
      policies::makeHeuristicEchoPolicy(task.defaultDecisionFeature);
  EvaluationRequest request;
  request.candidates = {nullptr, echo.get()};
  request.modules = modules_;
  request.recordTrajectories = true;
  EvaluationResult result = evaluator->evaluate(request);

  size_t decisions = 0, evictions = 0;
  for (size_t m = 0; m < modules_.size(); ++m) {
    SCOPED_TRACE(modules_[m]->name);
    const JobResult &plain = result.job(0, m), &echoed = result.job(1, m);
    ASSERT_TRUE(plain.ok()) << plain.message;
    ASSERT_TRUE(echoed.ok()) << echoed.message;
    EXPECT_EQ(echoed.codeHash, plain.codeHash);
    EXPECT_EQ(echoed.sizeBytes, plain.sizeBytes);
    ASSERT_TRUE(plain.measured && echoed.measured);
    EXPECT_EQ(*echoed.measured, *plain.measured);
    EXPECT_EQ(*result.baselineMeasures[m], *plain.measured);
    if (!echoed.trajectory) { // the allocator asked nothing (no eviction question)
      EXPECT_EQ(echoed.decisions, 0u);
      continue;
    }
    const policies::Trajectory& t = *echoed.trajectory;
    // The mask's column and the appended default's, in the recorded rows.
    size_t maskColumn = 0, column = 0;
    for (const policies::TensorSpec& spec : t.featureSpecs) {
      if (spec.name == task.candidateMask)
        maskColumn = column;
      column += spec.elementCount();
    }
    ASSERT_EQ(t.featureSpecs.back().name, task.defaultDecisionFeature);
    for (size_t d = 0; d < t.decisions(); ++d) {
      const int64_t chosen = t.defaultDecisions[d];
      ASSERT_GE(chosen, 0) << "decision " << d;
      ASSERT_LE(chosen, 32) << "decision " << d;
      EXPECT_EQ(t.row(d)[maskColumn + static_cast<size_t>(chosen)], 1.0)
          << "decision " << d << ": the default chose candidate " << chosen
          << ", which the ML advisor masks";
      EXPECT_EQ(t.actions[d], chosen);
      evictions += chosen != 32;
    }
    decisions += t.decisions();
  }
  EXPECT_GT(evictions, 0u) << "the default advisor never evicted: nothing was tested";
  std::printf("%s: %zu modules, %zu eviction decisions, %zu of them evict a register\n",
              GetParam().c_str(), modules_.size(), decisions, evictions);
}

TEST_P(EvictionDefault, ScoresMeasureOnlyInProcess) {
  EvaluatorOptions options;
  options.backend = BackendKind::Clang;
  options.scratchDirectory = scratch_.path();
  Expected<std::unique_ptr<Evaluator>> refused =
      Evaluator::create(options, CompilerTask::regallocEviction());
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message.find("in-process only"), std::string::npos)
      << refused.error().message;
  CompilerTask bySize = CompilerTask::regallocEviction();
  bySize.measure = Measure::TextSize;
  EXPECT_TRUE(Evaluator::create(options, bySize));
}

// The toy third task (the allocator's priority advisor: float advice, no
// default decision, no in-process route) evaluates on both backends: the
// in-process one sends its jobs to clang processes, with the same results.
// Its channel is live (most modules ask; some answer changes the code), and
// the measure it cannot take is refused by name.
TEST_P(EvictionDefault, ThePriorityToyTaskEvaluatesOnBothBackends) {
  const CompilerTask task = CompilerTask::regallocPriority();
  std::unique_ptr<policies::Policy> low = policies::makeConstantPolicy(0);
  std::unique_ptr<policies::Policy> high = policies::makeConstantPolicy(1);
  EvaluationRequest request;
  request.candidates = {nullptr, low.get(), high.get()};
  request.modules = modules_;
  std::vector<EvaluationResult> results;
  for (BackendKind backend : {BackendKind::Clang, BackendKind::InProcess}) {
    EvaluatorOptions options;
    options.backend = backend;
    options.workers = 2;
    options.scratchDirectory = scratch_.path();
    options.baselineCacheDirectory.reset();
    Expected<std::unique_ptr<Evaluator>> evaluator = Evaluator::create(options, task);
    ASSERT_TRUE(evaluator) << evaluator.error().message;
    results.push_back((*evaluator)->evaluate(request));
    EXPECT_EQ((*evaluator)->statistics().inprocessJobs, 0u);
  }
  size_t asked = 0, changed = 0;
  for (size_t m = 0; m < modules_.size(); ++m) {
    SCOPED_TRACE(modules_[m]->name);
    for (size_t c = 0; c < request.candidates.size(); ++c) {
      const JobResult &clang = results[0].job(c, m), &inprocess = results[1].job(c, m);
      ASSERT_TRUE(clang.ok()) << clang.message;
      ASSERT_TRUE(inprocess.ok()) << inprocess.message;
      EXPECT_EQ(clang.codeHash, inprocess.codeHash) << "candidate " << c;
      EXPECT_EQ(clang.measured, static_cast<double>(clang.sizeBytes));
    }
    EXPECT_EQ(results[0].job(0, m).measured, results[0].baselineMeasure(m)); // plain -O2
    asked += results[0].job(1, m).decisions > 0;
    changed += results[0].job(1, m).codeHash != results[0].job(0, m).codeHash;
  }
  EXPECT_GT(2 * asked, modules_.size()) << "most modules' allocators asked no priority";
  EXPECT_GT(changed, 0u) << "equal priorities everywhere changed no module's code";
  std::printf("%s: %zu modules, %zu asked for priorities, %zu changed by equal priorities\n",
              GetParam().c_str(), modules_.size(), asked, changed);

  EvaluatorOptions inprocess;
  inprocess.backend = BackendKind::InProcess;
  inprocess.scratchDirectory = scratch_.path();
  CompilerTask scored = task;
  scored.measure = Measure::RegAllocScore;
  Expected<std::unique_ptr<Evaluator>> refused = Evaluator::create(inprocess, scored);
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message.find(
                "regalloc-score measure is taken by the in-process worker of another task"),
            std::string::npos)
      << refused.error().message;
}

INSTANTIATE_TEST_SUITE_P(Recipes, EvictionDefault, ::testing::Values("zlib-O2", "lua-O2"),
                         [](const auto& info) {
                           std::string name = info.param;
                           name.erase(name.find('-'), 1);
                           return name;
                         });

} // namespace
} // namespace mlgo::evaluators
