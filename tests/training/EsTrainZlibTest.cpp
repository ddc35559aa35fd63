// es-train on the real zlib corpus: a short run writes a valid run file; the
// numbers do not depend on the number of workers; a run killed with SIGKILL
// and resumed from its file ends with the same policy, bit for bit, as an
// uninterrupted one.
#include "RunRecordAssertions.h"
#include "TestSupport.h"
#include "TrainingTestSupport.h"
#include "mlgo/results/RunFile.h"
#include "mlgo/training/EsTrainer.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>

namespace fs = std::filesystem;

namespace mlgo::training {
namespace {

EsTrainerOptions smallRun(const fs::path& output) {
  EsTrainerOptions o;
  o.data.corpus = mlgo::testing::realCorpusDirectory("zlib");
  o.data.modulesPerStep = 3;
  o.policy.vocabularyQuantiles = 50;
  o.policy.mlp.hiddenLayers = {8};
  std::get<es::GradientEs::Options>(o.optimizer).sampling.directions = 3;
  std::get<es::GradientEs::Options>(o.optimizer).sampling.sigma = 0.5;
  std::get<es::GradientEs::Options>(o.optimizer).stepRule.learningRate = 0.05;
  o.run.steps = 3;
  o.run.seed = 7;
  o.run.snapshotInterval = 1;
  o.run.output = output;
  o.run.configToml = "# test\n";
  return o;
}

void expectSameNumbers(const results::RunRecord& a, const results::RunRecord& b) {
  mlgo::testing::expectSameStepNumbers(a, b);
  if (::testing::Test::HasFatalFailure())
    return;
  for (size_t s = 0; s < a.steps(); ++s)
    for (size_t c = 0; c < a.candidateRewards[s].size(); ++c)
      EXPECT_TRUE(mlgo::testing::sameOrBothNaN(a.candidateRewards[s][c], b.candidateRewards[s][c]))
          << "step " << s << " candidate " << c;
}

TEST(EsTrain, ShortRunWritesAValidRunFileIndependentOfWorkers) {
  mlgo::testing::ScratchDirectory dir;
  results::RunRecord records[2];
  for (size_t workers : {size_t{1}, size_t{2}}) {
    fs::path output = dir / ("run-" + std::to_string(workers) + ".h5");
    std::unique_ptr<evaluators::Evaluator> evaluator =
        mlgo::testing::testEvaluator(workers, dir.path());
    ASSERT_TRUE(evaluator);
    Expected<EsTrainer> trainer = EsTrainer::create(smallRun(output), *evaluator);
    ASSERT_TRUE(trainer) << trainer.error().message;
    Expected<EsTrainerSummary> summary = trainer->run();
    ASSERT_TRUE(summary) << summary.error().message;
    EXPECT_EQ(summary->stepsTotal, 3);
    EXPECT_EQ(summary->compiles.compilations, 3u * 6u * 3u);
    Expected<results::RunRecord> stored = results::readRunFile(output);
    ASSERT_TRUE(stored) << stored.error().message;
    EXPECT_EQ(stored->trainer, "es-train");
    EXPECT_EQ(stored->steps(), 3u);
    EXPECT_EQ(stored->candidateRewards.front().size(), 6u);
    EXPECT_EQ(stored->stepSizes.front().size(), 6u * 3u);
    EXPECT_EQ(stored->moduleNames.size(), 15u);
    EXPECT_EQ(stored->snapshots.size(), 4u); // the start and after each step
    ASSERT_TRUE(stored->checkpoint);
    EXPECT_EQ(stored->checkpoint->step, 3);
    // Rewards are real: compiled sizes against -Oz, not all zero.
    bool anyNonZero = false;
    for (const auto& row : stored->candidateRewards)
      for (double r : row)
        anyNonZero |= std::isfinite(r) && r != 0.0;
    EXPECT_TRUE(anyNonZero);
    records[workers - 1] = stored.take();
  }
  expectSameNumbers(records[0], records[1]);
}

TEST(EsTrain, ResumeAfterSigkillReachesTheSameFinalPolicy) {
  const char* esTrain = std::getenv("MLGO_ES_TRAIN");
  ASSERT_NE(esTrain, nullptr) << "set MLGO_ES_TRAIN to the es-train binary";
  mlgo::testing::ScratchDirectory dir;
  auto command = [&](const fs::path& output) {
    return mlgo::testing::zlibTrainerCommand(esTrain,
                                             {"--modules-per-step", "3", "--directions", "3",
                                              "--sigma", "0.5", "--learning-rate", "0.05",
                                              "--steps", "5", "--seed", "11"},
                                             dir.path(), output);
  };
  results::RunRecord whole, resumed;
  ASSERT_NO_FATAL_FAILURE(
      mlgo::testing::runKilledAndResumed(esTrain, command, 5, dir.path(), whole, resumed));
  expectSameNumbers(whole, resumed);
  EXPECT_EQ(whole.snapshots.size(), resumed.snapshots.size());
}

} // namespace
} // namespace mlgo::training
