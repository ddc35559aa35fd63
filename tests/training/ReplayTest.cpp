// Trajectory replay on real corpora (zlib and Lua, clang-22): ES and PPO runs
// with --replay-verify (every replayed job compiled anyway and found
// identical), and the same seed giving the same run file with replay, with
// verification and without replay — how jobs were answered aside.
#include "RunRecordAssertions.h"
#include "TestSupport.h"
#include "TrainingTestSupport.h"
#include "mlgo/results/RunFile.h"
#include "mlgo/training/EsTrainer.h"
#include "mlgo/training/PpoTrainer.h"

#include <gtest/gtest.h>

namespace fs = std::filesystem;

namespace mlgo::training {
namespace {

enum class Replay { Off, On, Verify };

std::unique_ptr<evaluators::Evaluator> evaluatorWith(Replay replay, const fs::path& scratch) {
  evaluators::EvaluatorOptions options;
  options.workers = 2;
  options.scratchDirectory = scratch;
  options.replay = replay != Replay::Off;
  options.replayVerify = replay == Replay::Verify;
  Expected<std::unique_ptr<evaluators::Evaluator>> evaluator =
      evaluators::Evaluator::create(options, evaluators::CompilerTask::inliningForSize());
  EXPECT_TRUE(evaluator) << evaluator.error().message;
  return evaluator ? evaluator.take() : nullptr;
}

// How the jobs were answered: the only datasets replay may change.
const std::set<std::string> kAnswering = {
    "replays",       "replays_verified",     "full_compiles",      "cache_hits",
    "cache_lookups", "replay_seconds_saved", "cache_seconds_saved"};

class ReplayOnRealCorpus : public ::testing::TestWithParam<std::string> {
protected:
  fs::path corpus() const { return mlgo::testing::realCorpusDirectory(GetParam()); }
  // The same run three ways; returns the records, checks the verification.
  template <class Trainer, class Options, class Summary>
  void expectReplayChangesNothing(Options options) {
    results::RunRecord records[3];
    size_t verified = 0, replayed = 0;
    for (Replay replay : {Replay::Off, Replay::On, Replay::Verify}) {
      std::unique_ptr<evaluators::Evaluator> evaluator = evaluatorWith(replay, dir.path());
      ASSERT_TRUE(evaluator);
      Expected<Trainer> trainer = Trainer::create(options, *evaluator);
      ASSERT_TRUE(trainer) << trainer.error().message;
      Expected<Summary> summary = trainer->run();
      ASSERT_TRUE(summary) << summary.error().message; // verification passed
      const CompileStats& c = summary->compiles;
      if (replay == Replay::Off) {
        EXPECT_EQ(c.replays, 0u);
      } else if (replay == Replay::On) {
        replayed = c.replays;
      }
      if (replay == Replay::Verify) {
        EXPECT_EQ(c.replaysVerified, c.replays);
        verified = c.replaysVerified;
      }
      records[static_cast<int>(replay)] = trainer->record();
    }
    EXPECT_GT(replayed, 0u) << "nothing was replayed: the test shows nothing";
    EXPECT_GT(verified, 0u);
    for (int r : {1, 2}) {
      std::optional<std::string> difference =
          results::firstDifferenceButTimings(records[0], records[r], kAnswering);
      if (difference)
        ADD_FAILURE() << "replay mode " << r << ": " << *difference;
    }
    std::printf("%s: %zu of the jobs replayed, %zu verified\n", GetParam().c_str(), replayed,
                verified);
  }

  mlgo::testing::ScratchDirectory dir;
};

TEST_P(ReplayOnRealCorpus, EsRunsAreTheSameWithVerifiedReplayWithoutAndWithoutReplay) {
  EsTrainerOptions o;
  o.data.corpus = corpus();
  o.data.validationCorpus = corpus();
  o.data.validationInterval = 2;
  o.data.modulesPerStep = 4;
  o.policy.vocabularyQuantiles = 50;
  o.policy.mlp.hiddenLayers = {8};
  std::get<es::GradientEs::Options>(o.optimizer).sampling.directions = 4;
  std::get<es::GradientEs::Options>(o.optimizer).sampling.sigma = 0.1;
  std::get<es::GradientEs::Options>(o.optimizer).stepRule.learningRate = 0.05;
  o.run.steps = 4;
  o.run.seed = 17;
  o.run.output = dir / "es.h5";
  o.run.configToml = "# test\n";
  expectReplayChangesNothing<EsTrainer, EsTrainerOptions, EsTrainerSummary>(o);
}

TEST_P(ReplayOnRealCorpus, PpoRunsAreTheSameWithVerifiedReplayWithoutAndWithoutReplay) {
  PpoTrainerOptions o;
  o.data.corpus = corpus();
  o.data.modulesPerStep = 8;
  o.policy.vocabularyQuantiles = 50;
  o.policy.mlp.hiddenLayers = {8};
  o.update.minibatchSize = 64;
  o.update.updatesPerIteration = 4;
  o.run.steps = 4;
  o.run.seed = 23;
  o.run.output = dir / "ppo.h5";
  o.run.policyOutput = dir / "ppo.json";
  o.run.threads = 2;
  o.run.configToml = "# test\n";
  expectReplayChangesNothing<PpoTrainer, PpoTrainerOptions, PpoTrainerSummary>(o);
}

INSTANTIATE_TEST_SUITE_P(Recipes, ReplayOnRealCorpus, ::testing::Values("zlib", "lua"),
                         [](const auto& info) { return info.param; });

} // namespace
} // namespace mlgo::training
