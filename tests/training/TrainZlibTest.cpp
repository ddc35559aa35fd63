// ppo-train and bc-train on the real zlib corpus with clang-22: short runs
// write valid run files; PPO's numbers do not depend on the number of workers;
// a PPO run stopped after k iterations and resumed (in-process, and through
// the CLI after SIGKILL) ends with the same policy bit for bit as an
// uninterrupted one; BC's policy warm-starts PPO.
#include "RunRecordAssertions.h"
#include "TestSupport.h"
#include "TrainingTestSupport.h"
#include "mlgo/policies/PolicyFile.h"
#include "mlgo/results/RunFile.h"
#include "mlgo/results/TraceFile.h"
#include "mlgo/training/BcTrainer.h"
#include "mlgo/training/PpoTrainer.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <spawn.h>
#include <sys/wait.h>
#include <thread>

extern char** environ;

namespace fs = std::filesystem;

namespace mlgo::training {
namespace {

PpoTrainerOptions smallPpo(const fs::path& output, size_t threads) {
  PpoTrainerOptions o;
  o.data.corpus = mlgo::testing::realCorpusDirectory("zlib");
  o.data.modulesPerStep = 4;
  o.policy.vocabularyQuantiles = 50;
  o.policy.mlp.hiddenLayers = {8};
  o.update.adam.learningRate = 0.01; // visible movement in a few updates
  o.update.minibatchSize = 32;
  o.update.updatesPerIteration = 6;
  o.run.steps = 3;
  o.run.seed = 5;
  o.run.snapshotInterval = 1;
  o.run.output = output;
  o.run.policyOutput = fs::path(output).replace_extension(".json");
  o.run.threads = threads;
  o.run.configToml = "# test\n";
  return o;
}

void expectSameNumbers(const results::RunRecord& a, const results::RunRecord& b) {
  mlgo::testing::expectSameStepNumbers(a, b);
  if (::testing::Test::HasFatalFailure())
    return;
  EXPECT_EQ(a.snapshots, b.snapshots);
  // Moving baselines and β: NaN (not yet compiled) compares unequal with ==.
  const auto& ta = a.checkpoint->trainerState.vectors();
  const auto& tb = b.checkpoint->trainerState.vectors();
  ASSERT_EQ(ta.size(), tb.size());
  for (const auto& [key, values] : ta) {
    ASSERT_EQ(values.size(), tb.at(key).size()) << key;
    for (size_t i = 0; i < values.size(); ++i)
      EXPECT_TRUE(mlgo::testing::sameOrBothNaN(values[i], tb.at(key)[i])) << key << "[" << i << "]";
  }
}

TEST(PpoTrain, ShortRunWritesAValidRunFileIndependentOfWorkers) {
  mlgo::testing::ScratchDirectory dir;
  results::RunRecord records[2];
  for (size_t workers : {size_t{1}, size_t{2}}) {
    fs::path output = dir / ("ppo-" + std::to_string(workers) + ".h5");
    std::unique_ptr<evaluators::Evaluator> evaluator =
        mlgo::testing::testEvaluator(workers, dir.path());
    ASSERT_TRUE(evaluator);
    Expected<PpoTrainer> trainer = PpoTrainer::create(smallPpo(output, workers), *evaluator);
    ASSERT_TRUE(trainer) << trainer.error().message;
    const std::vector<double> initial(trainer->policy().parameters().begin(),
                                      trainer->policy().parameters().end());
    Expected<PpoTrainerSummary> summary = trainer->run();
    ASSERT_TRUE(summary) << summary.error().message;
    EXPECT_EQ(summary->stepsTotal, 3);
    EXPECT_EQ(summary->compiles.compilations, 3u * 4u);
    EXPECT_EQ(summary->compiles.failed, 0u);
    EXPECT_EQ(summary->updates, 3 * 6);
    EXPECT_GT(summary->decisions, 0u);
    // The policy learned something: its weights moved.
    EXPECT_FALSE(
        std::equal(initial.begin(), initial.end(), trainer->policy().parameters().begin()));

    Expected<results::RunRecord> stored = results::readRunFile(output);
    ASSERT_TRUE(stored) << stored.error().message;
    EXPECT_EQ(stored->trainer, "ppo-train");
    EXPECT_EQ(stored->steps(), 3u);
    EXPECT_EQ(stored->candidateRewards.front().size(), 1u);
    EXPECT_EQ(stored->stepModules.front().size(), 4u);
    EXPECT_EQ(stored->stepSizes.front().size(), 4u);
    EXPECT_EQ(stored->moduleNames.size(), 15u);
    EXPECT_EQ(stored->snapshots.size(), 4u); // the start and after each iteration
    for (const char* scalar : {"reward_mean", "loss_total", "loss_policy_gradient", "loss_entropy",
                               "loss_kl_penalty", "kl_old_new", "entropy_after", "adaptive_kl_beta",
                               "training_decisions", "seconds_update"}) {
      ASSERT_TRUE(stored->stepScalars.count(scalar)) << scalar;
      for (double v : stored->stepScalars.at(scalar))
        EXPECT_TRUE(std::isfinite(v)) << scalar;
    }
    // Rewards are real: sizes against -Oz, and sampling does change sizes.
    bool anyNonZero = false;
    for (const auto& row : stored->candidateRewards)
      anyNonZero |= std::isfinite(row[0]) && row[0] != 0.0;
    EXPECT_TRUE(anyNonZero);
    ASSERT_TRUE(stored->checkpoint);
    EXPECT_EQ(stored->checkpoint->step, 3);
    EXPECT_EQ(stored->checkpoint->optimizer, "adam");
    EXPECT_EQ(stored->checkpoint->optimizerState.integers().at("adam_t"), 18);
    const std::vector<double>& averages =
        stored->checkpoint->trainerState.vectors().at("moving_average_sizes");
    ASSERT_EQ(averages.size(), 15u);
    size_t visited = 0;
    for (double a : averages)
      visited += !std::isnan(a);
    EXPECT_GT(visited, 0u);
    ASSERT_TRUE(stored->finalPolicy);
    // The policy file is the final policy.
    ASSERT_TRUE(summary->policyOutput);
    Expected<policies::MlpPolicy> saved = policies::loadMlpPolicy(*summary->policyOutput);
    ASSERT_TRUE(saved) << saved.error().message;
    EXPECT_EQ(*policies::policyToJson(*saved), stored->finalPolicy->policyJson);
    records[workers - 1] = stored.take();
  }
  expectSameNumbers(records[0], records[1]);
}

TEST(PpoTrain, ResumedRunEndsWhereAnUninterruptedOneDoes) {
  mlgo::testing::ScratchDirectory dir;
  PpoTrainerOptions whole = smallPpo(dir / "whole.h5", 2);
  whole.run.steps = 3;
  whole.data.validationCorpus = mlgo::testing::realCorpusDirectory("zlib");
  whole.data.validationInterval = 2;
  PpoTrainerOptions parts = whole;
  parts.run.output = dir / "parts.h5";
  std::unique_ptr<evaluators::Evaluator> evaluator = mlgo::testing::testEvaluator(2, dir.path());
  ASSERT_TRUE(evaluator);

  Expected<PpoTrainer> a = PpoTrainer::create(whole, *evaluator);
  ASSERT_TRUE(a) << a.error().message;
  Expected<PpoTrainerSummary> all = a->run();
  ASSERT_TRUE(all) << all.error().message;
  ASSERT_TRUE(all->bestValidationTotalReward());
  {
    Expected<PpoTrainer> first = PpoTrainer::create(parts, *evaluator);
    ASSERT_TRUE(first) << first.error().message;
    Expected<PpoTrainerSummary> stopped = first->run({}, 2);
    ASSERT_TRUE(stopped) << stopped.error().message;
    EXPECT_EQ(stopped->stepsRun, 2);
  }
  // How compilations run may differ on resume.
  parts.run.threads = 1;
  std::unique_ptr<evaluators::Evaluator> serial = mlgo::testing::testEvaluator(1, dir.path());
  ASSERT_TRUE(serial);
  Expected<PpoTrainer> b = PpoTrainer::resume(parts, *serial);
  ASSERT_TRUE(b) << b.error().message;
  Expected<PpoTrainerSummary> rest = b->run();
  ASSERT_TRUE(rest) << rest.error().message;
  EXPECT_EQ(rest->stepsRun, 1);
  Expected<results::RunRecord> ra = results::readRunFile(whole.run.output);
  Expected<results::RunRecord> rb = results::readRunFile(parts.run.output);
  ASSERT_TRUE(ra && rb);
  expectSameNumbers(*ra, *rb);
  EXPECT_EQ(ra->validations, rb->validations);
  EXPECT_EQ(ra->validations.size(), 3u); // the start, iterations 2 and 3
  EXPECT_EQ(ra->validations.front().step, 0);
  EXPECT_EQ(ra->bestPolicy, rb->bestPolicy);
}

TEST(BcTrain, RecordsTheCorpusAndWarmStartsPpo) {
  mlgo::testing::ScratchDirectory dir;
  BcTrainerOptions bc;
  bc.corpus = mlgo::testing::realCorpusDirectory("zlib");
  bc.policy.vocabularyQuantiles = 50;
  bc.policy.mlp.hiddenLayers = {8};
  bc.run.steps = 60;
  bc.run.output = dir / "bc.h5";
  bc.run.policyOutput = dir / "bc.json";
  bc.run.threads = 2;
  bc.run.configToml = "# test\n";
  std::unique_ptr<evaluators::Evaluator> evaluator = mlgo::testing::testEvaluator(2, dir.path());
  ASSERT_TRUE(evaluator);
  Expected<BcTrainer> trainer = BcTrainer::create(bc, *evaluator);
  ASSERT_TRUE(trainer) << trainer.error().message;
  Expected<BcTrainerSummary> summary = trainer->run();
  ASSERT_TRUE(summary) << summary.error().message;
  EXPECT_EQ(summary->trainingModules + summary->heldoutModules, 15u);
  EXPECT_EQ(summary->heldoutModules, 3u);
  EXPECT_GT(summary->trainingDecisions, 100u);
  ASSERT_TRUE(summary->finalHeldoutAccuracy);
  EXPECT_GT(*summary->finalHeldoutAccuracy, 0.5);

  // The recording: the heuristic's decisions on every module.
  Expected<results::Trace> trace = results::readTrace(dir / "bc.trace.h5");
  ASSERT_TRUE(trace) << trace.error().message;
  EXPECT_EQ(trace->modules.size(), 15u);
  EXPECT_EQ(trace->actions, trace->defaultDecisions);
  Expected<results::RunRecord> stored = results::readRunFile(dir / "bc.h5");
  ASSERT_TRUE(stored) << stored.error().message;
  EXPECT_EQ(stored->trainer, "bc-train");
  EXPECT_EQ(stored->steps(), 60u);
  EXPECT_EQ(stored->baselineSizes.size(), stored->moduleNames.size());
  for (uint64_t size : stored->baselineSizes)
    EXPECT_GT(size, 0u);

  // PPO starts from the cloned policy; its first iteration samples around
  // it, so it agrees with the heuristic far more than a coin does.
  PpoTrainerOptions ppo = smallPpo(dir / "ppo.h5", 2);
  ppo.policy.initialPolicy = dir / "bc.json";
  ppo.run.steps = 1;
  ppo.data.modulesPerStep = 15;
  Expected<PpoTrainer> warm = PpoTrainer::create(ppo, *evaluator);
  ASSERT_TRUE(warm) << warm.error().message;
  ASSERT_TRUE(warm->run());
  EXPECT_EQ(warm->record().attributes.at("initial_policy"), (dir / "bc.json").string());
  EXPECT_GT(warm->record().stepScalars.at("heuristic_agreement").front(), 0.7);
}

TEST(PpoTrainCli, ResumeAfterSigkillReachesTheSameFinalPolicy) {
  const char* ppoTrain = std::getenv("MLGO_PPO_TRAIN");
  ASSERT_NE(ppoTrain, nullptr) << "set MLGO_PPO_TRAIN to the ppo-train binary";
  mlgo::testing::ScratchDirectory dir;
  auto command = [&](const fs::path& output) {
    std::vector<std::string> command = mlgo::testing::zlibTrainerCommand(
        ppoTrain,
        {"--modules-per-iteration", "3", "--learning-rate", "0.01", "--minibatch-size", "32",
         "--updates-per-iteration", "4", "--iterations", "5", "--seed", "13"},
        dir.path(), output);
    command.insert(command.end(), {"--policy-output", output.string() + ".json"});
    return command;
  };
  results::RunRecord whole, resumed;
  ASSERT_NO_FATAL_FAILURE(
      mlgo::testing::runKilledAndResumed(ppoTrain, command, 5, dir.path(), whole, resumed));
  expectSameNumbers(whole, resumed);
}

TEST(BcTrainCli, TrainsFromATraceAndResumes) {
  const char* bcTrain = std::getenv("MLGO_BC_TRAIN");
  ASSERT_NE(bcTrain, nullptr) << "set MLGO_BC_TRAIN to the bc-train binary";
  mlgo::testing::ScratchDirectory dir;
  // bc-train records the corpus itself the first time; the run is then
  // resumed from its file (a completed run resumes to a no-op).
  std::vector<std::string> args{bcTrain,
                                "--config",
                                (fs::path(MLGO_SOURCE_DIR) / "configs/inlining-bc.toml").string(),
                                "--corpus",
                                mlgo::testing::realCorpusDirectory("zlib").string(),
                                "--epochs",
                                "3",
                                "--vocabulary-quantiles",
                                "50",
                                "--workers",
                                "2",
                                "--scratch",
                                dir.path().string(),
                                "-o",
                                (dir / "bc.h5").string(),
                                "--policy-output",
                                (dir / "bc.json").string()};
  ASSERT_TRUE(mlgo::testing::runsToCompletion(args));
  Expected<results::RunRecord> stored = results::readRunFile(dir / "bc.h5");
  ASSERT_TRUE(stored) << stored.error().message;
  EXPECT_EQ(stored->steps(), 3u);
  EXPECT_EQ(stored->config.at("hidden"), "40,40,20"); // from the config file
  EXPECT_EQ(stored->config.at("epochs"), "3");        // the command line wins
  EXPECT_TRUE(policies::loadMlpPolicy(dir / "bc.json"));
  ASSERT_TRUE(mlgo::testing::runsToCompletion({bcTrain, "--resume", (dir / "bc.h5").string()}));
  Expected<results::RunRecord> again = results::readRunFile(dir / "bc.h5");
  ASSERT_TRUE(again);
  EXPECT_EQ(again->steps(), 3u);
}

} // namespace
} // namespace mlgo::training
