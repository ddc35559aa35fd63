// The task as one value: the registry, the policy architecture it gives,
// and the names a CLI offers.
#include "mlgo/evaluators/CompilerTask.h"
#include "mlgo/evaluators/Evaluator.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>

namespace mlgo::evaluators {
namespace {

TEST(CompilerTask, RegistryNamesEveryTaskOnceAndFindsItByName) {
  std::set<std::string> seen;
  for (const CompilerTask& task : CompilerTask::all()) {
    EXPECT_TRUE(seen.insert(task.name).second) << task.name;
    EXPECT_FALSE(task.summary.empty()) << task.name;
    Expected<CompilerTask> named = CompilerTask::named(task.name);
    ASSERT_TRUE(named) << named.error().message;
    EXPECT_EQ(named->adviceName, task.adviceName);
  }
  EXPECT_EQ(CompilerTask::names().size(), CompilerTask::all().size());
  Expected<CompilerTask> unknown = CompilerTask::named("no-such-task");
  ASSERT_FALSE(unknown);
  for (const std::string& name : CompilerTask::names())
    EXPECT_NE(unknown.error().message.find(name), std::string::npos) << unknown.error().message;
}

TEST(CompilerTask, MeasuresRoundTripByName) {
  for (const std::string& name : measureNames()) {
    Expected<Measure> measure = parseMeasure(name);
    ASSERT_TRUE(measure) << name;
    EXPECT_EQ(measureName(*measure), name);
    const MeasureTraits& traits = traitsOf(*measure);
    EXPECT_EQ(traits.measure, *measure) << name;
    EXPECT_FALSE(traits.noun.empty() || traits.column.empty() || traits.unit.empty() ||
                 traits.lower.empty() || traits.higher.empty())
        << name;
  }
  EXPECT_FALSE(parseMeasure("cycles"));
  EXPECT_TRUE(traitsOf(Measure::TextSize).ofObjectSize);
  EXPECT_FALSE(traitsOf(Measure::RegAllocScore).ofObjectSize);
  // The linked size is read from every backend's object, but it is not the
  // object's size: tools print its own column.
  EXPECT_TRUE(traitsOf(Measure::LinkedText).ofObjectSize);
  EXPECT_TRUE(traitsOf(Measure::LinkedText).ofCodeBase);
  EXPECT_TRUE(traitsOf(Measure::TextSize).valueIsSize());
  EXPECT_FALSE(traitsOf(Measure::LinkedText).valueIsSize());
}

// Keeping COMDAT groups needs what answers with sizes only off: replay, the
// decision cache and incremental evaluation are each refused by name.
TEST(EvaluatorOptions, ComdatGroupsNeedEveryJobCompiled) {
  EvaluatorOptions options;
  options.backend = BackendKind::Clang;
  options.replay = options.decisionCache = options.incremental = false;
  ASSERT_TRUE(options.validate()) << options.validate().error().message;
  options.comdat = true;
  EXPECT_TRUE(options.validate());
  for (bool EvaluatorOptions::*cache : {&EvaluatorOptions::replay, &EvaluatorOptions::decisionCache,
                                        &EvaluatorOptions::incremental}) {
    EvaluatorOptions with = options;
    with.*cache = true;
    Status refused = with.validate();
    ASSERT_FALSE(refused);
    EXPECT_NE(refused.error().message.find("comdat"), std::string::npos);
  }
}

// What tests/policies' inlinerMlpOptions stands for, and what the trainers
// build their policies with: the task's default decision out of the
// network's inputs and the residual's feature; a candidate-index task gets a
// candidate-scoring network.
TEST(CompilerTask, PolicyOptionsKeepTheDefaultDecisionOutOfTheInputs) {
  const CompilerTask inliner = CompilerTask::inliningForSize();
  policies::MlpOptions base;
  base.excludedFeatures = {"callee_users"};
  policies::MlpOptions options = inliner.policyOptions(base);
  EXPECT_EQ(options.excludedFeatures,
            (std::vector<std::string>{"callee_users", inliner.defaultDecisionFeature}));
  EXPECT_EQ(options.residualFeature, inliner.defaultDecisionFeature);
  EXPECT_TRUE(options.candidateMask.empty());
  // Already excluded: not twice.
  EXPECT_EQ(inliner.policyOptions(options).excludedFeatures, options.excludedFeatures);

  const CompilerTask eviction = CompilerTask::regallocEviction();
  policies::MlpOptions scoring = eviction.policyOptions({});
  EXPECT_EQ(scoring.candidateMask, eviction.candidateMask);
  EXPECT_EQ(scoring.excludedFeatures, std::vector<std::string>{eviction.defaultDecisionFeature});
  EXPECT_EQ(scoring.residualFeature, eviction.defaultDecisionFeature);

  CompilerTask noDefault = inliner;
  noDefault.defaultDecisionFeature.clear();
  EXPECT_TRUE(noDefault.policyOptions({}).excludedFeatures.empty());
  EXPECT_TRUE(noDefault.policyOptions({}).residualFeature.empty());
}

// What carries a whole task (the cluster protocol) goes through
// forEachField: a registered task copied field by field into a default one
// is the task again, so no field a task sets is left out.
TEST(CompilerTask, ForEachFieldCoversEveryField) {
  for (const CompilerTask& task : CompilerTask::all()) {
    SCOPED_TRACE(task.name);
    CompilerTask copy;
    ASSERT_FALSE(copy == task);
    CompilerTask::forEachField([](auto& to, const auto& from) { to = from; }, copy, task);
    EXPECT_TRUE(copy == task);
  }
  size_t fields = 0;
  CompilerTask task = CompilerTask::inliningForSize();
  CompilerTask::forEachField([&](const auto&) { ++fields; }, task);
  EXPECT_EQ(fields, 16u);
}

} // namespace
} // namespace mlgo::evaluators
