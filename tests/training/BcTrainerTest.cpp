// BcTrainer on synthetic traces (no clang): it learns a separable labelling
// to ≥ 99 % held-out accuracy, splits by module, writes a valid run file and a
// loadable policy, does not depend on the number of threads, and a run
// stopped after k epochs and resumed ends bit for bit where an uninterrupted
// one does.
#include "mlgo/training/BcTrainer.h"
#include "SyntheticTraces.h"
#include "TestSupport.h"
#include "mlgo/policies/PolicyFile.h"
#include "mlgo/results/RunFile.h"
#include "mlgo/training/TraceRecording.h"

#include <gtest/gtest.h>

#include <cmath>
#include <set>

namespace fs = std::filesystem;

namespace mlgo::training {
namespace {

using namespace rl::testing;

// Inline iff a > b, with a margin of 50 so the classes are separable in the
// quantile-normalised space as well; c is noise.
int64_t separable(double a, double b, double) {
  if (std::abs(a - b) < 50)
    return -1; // rejected: draw again
  return a > b ? 1 : 0;
}

BcTrainerOptions syntheticRun(const mlgo::testing::ScratchDirectory& dir, const fs::path& trace) {
  BcTrainerOptions o;
  o.traces = {trace};
  o.heldoutFraction = 0.25;
  o.policy.vocabularyQuantiles = 100;
  o.policy.mlp.hiddenLayers = {16, 8};
  o.policy.mlp.activation = policies::Activation::Tanh;
  o.update.adam.learningRate = 0.01;
  o.update.minibatchSize = 32;
  o.run.steps = 40;
  o.run.seed = 4;
  o.run.snapshotInterval = 10;
  o.run.output = dir / "bc.h5";
  o.run.policyOutput = dir / "bc.json";
  o.run.threads = 1;
  o.run.configToml = "# test\n";
  return o;
}

bool isTiming(const std::string& name) {
  return name.rfind("seconds_", 0) == 0 || name == "elapsed_seconds";
}

void expectSameNumbers(const results::RunRecord& a, const results::RunRecord& b) {
  ASSERT_EQ(a.steps(), b.steps());
  for (const auto& [name, values] : a.stepScalars) {
    if (isTiming(name))
      continue;
    ASSERT_TRUE(b.stepScalars.count(name)) << name;
    EXPECT_EQ(values, b.stepScalars.at(name)) << name;
  }
  EXPECT_EQ(a.snapshots, b.snapshots);
  EXPECT_EQ(a.bestPolicy, b.bestPolicy);
  ASSERT_TRUE(a.finalPolicy && b.finalPolicy);
  EXPECT_EQ(a.finalPolicy->policyJson, b.finalPolicy->policyJson);
  ASSERT_TRUE(a.checkpoint && b.checkpoint);
  EXPECT_EQ(a.checkpoint->optimizerState, b.checkpoint->optimizerState);
  EXPECT_EQ(a.checkpoint->trainerState, b.checkpoint->trainerState);
  EXPECT_EQ(a.moduleNames, b.moduleNames);
  EXPECT_EQ(a.validationModuleNames, b.validationModuleNames);
}

TEST(BcTrainer, LearnsASeparableLabellingOnHeldOutModules) {
  mlgo::testing::ScratchDirectory dir;
  fs::path trace = dir / "synthetic.h5";
  writeSyntheticTrace(trace, 24, 60, 11, separable);
  Expected<BcTrainer> trainer = BcTrainer::create(syntheticRun(dir, trace));
  ASSERT_TRUE(trainer) << trainer.error().message;
  Expected<BcTrainerSummary> summary = trainer->run();
  ASSERT_TRUE(summary) << summary.error().message;
  EXPECT_EQ(summary->stepsTotal, 40);
  EXPECT_EQ(summary->trainingModules, 18u);
  EXPECT_EQ(summary->heldoutModules, 6u);
  EXPECT_EQ(summary->trainingDecisions, 18u * 60u);
  EXPECT_EQ(summary->heldoutDecisions, 6u * 60u);
  ASSERT_TRUE(summary->finalHeldoutAccuracy);
  EXPECT_GE(*summary->finalHeldoutAccuracy, 0.99);
  EXPECT_GE(summary->finalTrainAccuracy, 0.99);
  ASSERT_TRUE(summary->heldoutMajorityAccuracy);
  EXPECT_LT(*summary->heldoutMajorityAccuracy, 0.7); // the task is not trivial

  // The run file: one row per epoch, no compilations, the modules split.
  Expected<results::RunRecord> stored = results::readRunFile(dir / "bc.h5");
  ASSERT_TRUE(stored) << stored.error().message;
  EXPECT_EQ(stored->trainer, "bc-train");
  EXPECT_EQ(stored->steps(), 40u);
  EXPECT_TRUE(stored->candidateRewards.front().empty());
  EXPECT_TRUE(stored->stepModules.empty());
  for (const char* scalar : {"train_loss", "train_accuracy", "heldout_loss", "heldout_accuracy",
                             "seconds_step", "heldout_inline_share"})
    ASSERT_EQ(stored->stepScalars.at(scalar).size(), 40u) << scalar;
  EXPECT_GE(stored->stepScalars.at("heldout_accuracy").back(), 0.99);
  EXPECT_LT(stored->stepScalars.at("train_loss").back(),
            stored->stepScalars.at("train_loss").front());
  std::set<std::string> training(stored->moduleNames.begin(), stored->moduleNames.end());
  for (const std::string& name : stored->validationModuleNames)
    EXPECT_FALSE(training.count(name)) << name << " is in both sets";
  EXPECT_EQ(training.size() + stored->validationModuleNames.size(), 24u);
  EXPECT_EQ(stored->snapshots.size(), 5u); // the start, and every 10 epochs
  ASSERT_TRUE(stored->finalPolicy && stored->bestPolicy && stored->checkpoint);
  EXPECT_EQ(stored->checkpoint->step, 40);
  EXPECT_EQ(stored->checkpoint->optimizer, "adam");
  EXPECT_EQ(stored->checkpoint->optimizerState.integers().at("adam_t"), 40 * ((18 * 60 + 31) / 32));

  // The policy file is the final policy, loadable as an MLP that does not
  // read the label.
  Expected<policies::MlpPolicy> policy = policies::loadMlpPolicy(dir / "bc.json");
  ASSERT_TRUE(policy) << policy.error().message;
  for (const policies::TensorSpec& input : policy->inputs())
    EXPECT_NE(input.name, "inlining_default");
  EXPECT_EQ(policies::policyToJson(*policy).hasValue() ? *policies::policyToJson(*policy) : "",
            stored->finalPolicy->policyJson);
}

// Imitating the actions of a trace whose policy overrode the heuristic
// (labels only in the actions; the defaults all 0) learns the actions; the
// heuristic's labels would teach "never".
TEST(BcTrainer, ImitatesTheTracesActionsWhenAsked) {
  mlgo::testing::ScratchDirectory dir;
  fs::path trace = dir / "searched.h5";
  writeSyntheticTrace(trace, 24, 60, 11, separable, "m", /*labelOnlyActions=*/true);
  BcTrainerOptions options = syntheticRun(dir, trace);
  options.imitateActions = true;
  Expected<BcTrainer> trainer = BcTrainer::create(options);
  ASSERT_TRUE(trainer) << trainer.error().message;
  Expected<BcTrainerSummary> summary = trainer->run();
  ASSERT_TRUE(summary) << summary.error().message;
  ASSERT_TRUE(summary->finalHeldoutAccuracy);
  EXPECT_GE(*summary->finalHeldoutAccuracy, 0.99);
  Expected<results::RunRecord> stored = results::readRunFile(dir / "bc.h5");
  ASSERT_TRUE(stored);
  EXPECT_EQ(stored->attributes.at("label").substr(0, 7), "actions");

  options.imitateActions = false;
  options.run.output = dir / "bc-heuristic.h5";
  options.run.policyOutput = dir / "bc-heuristic.json";
  Expected<BcTrainer> heuristic = BcTrainer::create(options);
  ASSERT_TRUE(heuristic) << heuristic.error().message;
  Expected<BcTrainerSummary> cloned = heuristic->run();
  ASSERT_TRUE(cloned) << cloned.error().message;
  ASSERT_TRUE(cloned->heldoutMajorityAccuracy);
  EXPECT_EQ(*cloned->heldoutMajorityAccuracy, 1.0); // every label is "do not inline"
}

// Distillation: a student labelled by a teacher policy (here one trained on
// the traces' actions) learns the teacher's decisions from a trace whose own
// labels (the heuristic's, all "do not inline") would teach "never"; the
// teacher excludes the other label sources.
TEST(BcTrainer, DistilsATeachersDecisions) {
  mlgo::testing::ScratchDirectory dir;
  fs::path trace = dir / "searched.h5";
  writeSyntheticTrace(trace, 24, 60, 11, separable, "m", /*labelOnlyActions=*/true);
  BcTrainerOptions teacherRun = syntheticRun(dir, trace);
  teacherRun.imitateActions = true;
  teacherRun.run.output = dir / "teacher.h5";
  teacherRun.run.policyOutput = dir / "teacher.json";
  Expected<BcTrainer> teacher = BcTrainer::create(teacherRun);
  ASSERT_TRUE(teacher) << teacher.error().message;
  ASSERT_TRUE(teacher->run());

  BcTrainerOptions student = syntheticRun(dir, trace);
  student.teacher = dir / "teacher.json";
  student.policy.mlp.hiddenLayers = {8};
  Expected<BcTrainer> distilled = BcTrainer::create(student);
  ASSERT_TRUE(distilled) << distilled.error().message;
  Expected<BcTrainerSummary> summary = distilled->run();
  ASSERT_TRUE(summary) << summary.error().message;
  ASSERT_TRUE(summary->finalHeldoutAccuracy && summary->heldoutMajorityAccuracy);
  EXPECT_LT(*summary->heldoutMajorityAccuracy, 0.7); // the teacher's labels, not all 0
  EXPECT_GE(*summary->finalHeldoutAccuracy, 0.97);
  Expected<results::RunRecord> stored = results::readRunFile(dir / "bc.h5");
  ASSERT_TRUE(stored);
  EXPECT_NE(stored->attributes.at("label").find("teacher"), std::string::npos);

  student.imitateActions = true;
  EXPECT_FALSE(student.validate());
  student.imitateActions = false;
  student.teacher = dir / "missing.json";
  // Refused when the trainer opens its data or at the latest when it runs,
  // naming the file.
  Expected<BcTrainer> missing = BcTrainer::create(student);
  std::string message = missing.hasValue() ? "" : missing.error().message;
  if (missing) {
    Expected<BcTrainerSummary> failed = missing->run();
    ASSERT_FALSE(failed);
    message = failed.error().message;
  }
  EXPECT_NE(message.find("missing.json"), std::string::npos) << message;
}

TEST(BcTrainer, ThreadsDoNotChangeTheNumbers) {
  mlgo::testing::ScratchDirectory dir;
  fs::path trace = dir / "synthetic.h5";
  writeSyntheticTrace(trace, 10, 40, 3, separable);
  results::RunRecord records[2];
  for (size_t workers : {size_t{1}, size_t{2}}) {
    BcTrainerOptions o = syntheticRun(dir, trace);
    o.run.steps = 3;
    o.update.minibatchSize = 200; // several chunks per mini-batch
    o.run.threads = workers;
    o.run.output = dir / ("bc-" + std::to_string(workers) + ".h5");
    Expected<BcTrainer> trainer = BcTrainer::create(o);
    ASSERT_TRUE(trainer) << trainer.error().message;
    ASSERT_TRUE(trainer->run());
    records[workers - 1] = trainer->record();
  }
  expectSameNumbers(records[0], records[1]);
}

TEST(BcTrainer, ResumedRunEndsWhereAnUninterruptedOneDoes) {
  mlgo::testing::ScratchDirectory dir;
  fs::path trace = dir / "synthetic.h5";
  writeSyntheticTrace(trace, 10, 40, 5, separable);
  BcTrainerOptions whole = syntheticRun(dir, trace);
  whole.run.steps = 7;
  whole.run.snapshotInterval = 2;
  whole.run.output = dir / "whole.h5";
  BcTrainerOptions parts = whole;
  parts.run.output = dir / "parts.h5";
  parts.run.policyOutput = dir / "parts.json";

  Expected<BcTrainer> a = BcTrainer::create(whole);
  ASSERT_TRUE(a) << a.error().message;
  ASSERT_TRUE(a->run());
  {
    Expected<BcTrainer> first = BcTrainer::create(parts);
    ASSERT_TRUE(first) << first.error().message;
    Expected<BcTrainerSummary> stopped = first->run({}, 3);
    ASSERT_TRUE(stopped);
    EXPECT_EQ(stopped->stepsRun, 3);
    EXPECT_EQ(stopped->termination, Termination::StepLimit);
    EXPECT_FALSE(stopped->policyOutput); // not finished: no policy file yet
    EXPECT_FALSE(fs::exists(*parts.run.policyOutput));
  }
  Expected<BcTrainer> b = BcTrainer::resume(parts);
  ASSERT_TRUE(b) << b.error().message;
  Expected<BcTrainerSummary> rest = b->run();
  ASSERT_TRUE(rest) << rest.error().message;
  EXPECT_EQ(rest->stepsRun, 4);
  EXPECT_EQ(rest->stepsTotal, 7);
  EXPECT_EQ(rest->termination, Termination::Completed);
  Expected<results::RunRecord> ra = results::readRunFile(whole.run.output);
  Expected<results::RunRecord> rb = results::readRunFile(parts.run.output);
  ASSERT_TRUE(ra && rb);
  expectSameNumbers(*ra, *rb);
  Expected<policies::MlpPolicy> pa = policies::loadMlpPolicy(*whole.run.policyOutput);
  Expected<policies::MlpPolicy> pb = policies::loadMlpPolicy(*parts.run.policyOutput);
  ASSERT_TRUE(pa && pb);
  EXPECT_TRUE(std::equal(pa->parameters().begin(), pa->parameters().end(), pb->parameters().begin(),
                         pb->parameters().end()));

  // Resuming another trainer's file is refused, naming it.
  results::RunRecord other = *ra;
  other.trainer = "ppo-train";
  ASSERT_TRUE(results::writeRunFile(dir / "other.h5", other));
  BcTrainerOptions wrong = whole;
  wrong.run.output = dir / "other.h5";
  Expected<BcTrainer> refused = BcTrainer::resume(wrong);
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message.find("ppo-train"), std::string::npos);
}

TEST(BcTrainerOptions, ValidateNamesTheField) {
  BcTrainerOptions o;
  EXPECT_NE(o.validate().error().message.find("traces"), std::string::npos);
  o.traces = {"t.h5"};
  EXPECT_TRUE(o.validate());
  o.heldoutFraction = 1;
  EXPECT_NE(o.validate().error().message.find("heldoutFraction"), std::string::npos);
  o.heldoutFraction = 0.2;
  o.deviationWeight = 0;
  EXPECT_NE(o.validate().error().message.find("deviationWeight"), std::string::npos);
  o.deviationWeight = 1;
  o.outcomeWeightFloor = -1;
  EXPECT_NE(o.validate().error().message.find("outcomeWeightFloor"), std::string::npos);
  o.outcomeWeightFloor = 1;
  o.update.adam.epsilon = 0;
  EXPECT_NE(o.validate().error().message.find("adam.epsilon"), std::string::npos);
}

// A trace of tried decisions (mlgo-eval search --tried): one row per flip
// tried, named after its module. Everywhere, 70 % of the flips saved 1 byte
// and 30 % cost 100. Counting decisions, flipping is right (agreement 0.7);
// counting bytes, keeping the compiler's decision is (0.3 × 100 > 0.7 × 1).
// Every flip is from the compiler's 0 (its decision feature is 0 throughout).
void writeTriedDecisions(const fs::path& path, results::TraceAttributes attributes = {}) {
  attributes["policy"] = "tried";
  Expected<results::TraceWriter> writer =
      results::TraceWriter::create(path, syntheticSpecs(), attributes);
  ASSERT_TRUE(writer) << writer.error().message;
  RandomStream rng(5);
  for (size_t row = 0; row < 800; ++row) {
    const bool saved = rng.uniformBelow(10) < 7;
    results::TraceModule outcome;
    outcome.name = "m" + std::to_string(row % 40);
    outcome.status = results::kTraceStatusOk;
    outcome.baselineBytes = 1000;
    outcome.sizeBytes = saved ? 999 : 1100;
    outcome.reward = 0;
    policies::Trajectory t;
    t.featureSpecs = syntheticSpecs();
    t.width = 4;
    t.observations = {double(rng.uniformBelow(1000)), double(rng.uniformBelow(1000)),
                      double(rng.uniformBelow(20)), 0};
    t.defaultDecisions = {0};
    t.actions = {saved ? 1 : 0};
    t.logProbabilities = {0};
    ASSERT_TRUE(writer->addModule(outcome, &t));
  }
  ASSERT_TRUE(writer->close());
}

TEST(BcTrainer, OutcomeWeightsCountBytesNotDecisions) {
  mlgo::testing::ScratchDirectory dir;
  writeTriedDecisions(dir / "tried.h5");
  BcTrainerOptions options = syntheticRun(dir, dir / "tried.h5");
  options.imitateActions = true;
  options.run.steps = 10;
  Expected<BcTrainerSummary> byDecisions = BcTrainer::create(options)->run();
  ASSERT_TRUE(byDecisions) << byDecisions.error().message;
  ASSERT_TRUE(byDecisions->finalHeldoutAccuracy);
  EXPECT_GT(*byDecisions->finalHeldoutAccuracy, 0.6); // flips: the majority

  options.outcomeWeights = true;
  options.run.output = dir / "bytes.h5";
  options.run.policyOutput = dir / "bytes.json";
  Expected<BcTrainerSummary> byBytes = BcTrainer::create(options)->run();
  ASSERT_TRUE(byBytes) << byBytes.error().message;
  ASSERT_TRUE(byBytes->finalHeldoutAccuracy);
  EXPECT_LT(*byBytes->finalHeldoutAccuracy, 0.4); // keeps: the bytes
  Expected<results::RunRecord> stored = results::readRunFile(dir / "bytes.h5");
  ASSERT_TRUE(stored && stored->bestPolicy);
  // The best epoch is chosen on the bytes decided right, which keeping gets
  // mostly (all but the 1-byte savings).
  EXPECT_GT(stored->bestPolicyValue, 0.9);
  EXPECT_EQ(stored->bestPolicyMetric.substr(0, 14), "held-out bytes");
}

// A one-way search's tried decisions never show the compiler's other
// decision: the policy trained on them keeps it (written in its file), needs
// a residual margin to, and one trace of both ways lifts the restriction.
TEST(BcTrainer, OneWayTracesMakeAOneWayPolicy) {
  mlgo::testing::ScratchDirectory dir;
  writeTriedDecisions(dir / "one-way.h5", {{kFlipsFromAttribute, "0"}});
  writeTriedDecisions(dir / "both-ways.h5");
  BcTrainerOptions options = syntheticRun(dir, dir / "one-way.h5");
  options.imitateActions = true;
  options.run.steps = 2;
  Expected<BcTrainer> plain = BcTrainer::create(options);
  ASSERT_FALSE(plain);
  EXPECT_NE(plain.error().message.find("one-way.h5"), std::string::npos) << plain.error().message;
  EXPECT_NE(plain.error().message.find("--residual-margin"), std::string::npos);

  options.policy.mlp.residualMargin = 0.5;
  Expected<BcTrainer> oneWay = BcTrainer::create(options);
  ASSERT_TRUE(oneWay) << oneWay.error().message;
  ASSERT_TRUE(oneWay->run());
  Expected<policies::MlpPolicy> written = policies::loadMlpPolicy(dir / "bc.json");
  ASSERT_TRUE(written) << written.error().message;
  EXPECT_EQ(written->structure()->options().residualKept, std::vector<int>{1});

  options.traces.push_back(dir / "both-ways.h5");
  options.run.output = dir / "mixed.h5";
  options.run.policyOutput = dir / "mixed.json";
  ASSERT_TRUE(BcTrainer::create(options)->run());
  Expected<policies::MlpPolicy> mixed = policies::loadMlpPolicy(dir / "mixed.json");
  ASSERT_TRUE(mixed) << mixed.error().message;
  EXPECT_TRUE(mixed->structure()->options().residualKept.empty());

  writeTriedDecisions(dir / "odd.h5", {{kFlipsFromAttribute, "2"}});
  options.traces = {dir / "odd.h5"};
  Expected<BcTrainer> odd = BcTrainer::create(options);
  ASSERT_FALSE(odd);
  EXPECT_NE(odd.error().message.find("odd.h5"), std::string::npos) << odd.error().message;
}

TEST(BcTrainer, TracesWithOtherFeaturesAreRefused) {
  mlgo::testing::ScratchDirectory dir;
  writeSyntheticTrace(dir / "a.h5", 3, 10, 1, separable);
  Expected<results::TraceWriter> writer =
      results::TraceWriter::create(dir / "b.h5", {{"a", policies::TensorType::Int64, {1}, 0}}, {});
  ASSERT_TRUE(writer);
  ASSERT_TRUE(writer->close());
  BcTrainerOptions o = syntheticRun(dir, dir / "a.h5");
  o.traces.push_back(dir / "b.h5");
  Expected<BcTrainer> trainer = BcTrainer::create(o);
  ASSERT_FALSE(trainer);
  EXPECT_NE(trainer.error().message.find("b.h5"), std::string::npos);
}

} // namespace
} // namespace mlgo::training
