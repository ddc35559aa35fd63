// ppo-train: PPO on an inlining-for-size policy, rewarded by real clang-22
// compilations against -Oz, as ml-compiler-opt trains its inliner. Every flag
// can be set in a TOML config (--config; configs/inlining-ppo.toml holds
// ml-compiler-opt's ppo_nn_agent.gin values); the effective config is printed
// and stored in the run's HDF5 file, from which --resume continues.
#include "mlgo/results/RunFile.h"
#include "mlgo/training/PpoTrainer.h"

#include "ClusterSession.h"
#include "CommonOptions.h"
#include "TrainerCommand.h"
#include "TrainerOptions.h"

#include <CLI/CLI.hpp>

#include <cmath>
#include <cstdio>
#include <iostream>

using namespace mlgo;

namespace {

// Every flag is PpoTrainerOptions::schema()'s, plus the evaluator's.
struct Args : apps::CorpusTrainerArgs<training::PpoTrainerOptions> {
  static constexpr const char* program = "ppo-train";
  static constexpr const char* description =
      "ppo-train: train an inlining-for-size policy with PPO on real clang-22 "
      "compilations";
};

void printProgress(const Args&, const training::PpoProgress& p) {
  const training::PpoIteration& i = p.record;
  std::string notes = apps::compileNote(i.compile) + apps::validationNote(p);
  std::fprintf(stderr,
               "iteration %lld/%lld  %.1f compiles/s  reward mean %+.5f  failed %zu  decisions %zu"
               "  updates %lld  loss %+.5f  entropy %.4f  kl %.5f  β %.3g%s  elapsed %.0fs  "
               "eta %.0fs\n",
               static_cast<long long>(p.step + 1), static_cast<long long>(p.steps),
               p.compilationsPerSecond, i.rewardMean, i.compile.failed, i.trainingDecisions,
               static_cast<long long>(i.update.updates), i.perUpdate(i.update.sums.total),
               i.trainingDecisions ? i.update.after.meanEntropy : training::kNoValue,
               i.trainingDecisions ? i.update.after.meanKl : training::kNoValue, i.adaptiveKlBeta,
               notes.c_str(), p.elapsedSeconds, p.etaSeconds);
}

void printSummary(const Args&, const training::PpoTrainerSummary& summary) {
  std::printf("done: %lld iterations (%lld this run), %llu compilations, %llu failed, %llu "
              "decisions, %lld updates, %.1f s; final mean reward %+.5f",
              static_cast<long long>(summary.stepsTotal), static_cast<long long>(summary.stepsRun),
              static_cast<unsigned long long>(summary.compiles.compilations),
              static_cast<unsigned long long>(summary.compiles.failed),
              static_cast<unsigned long long>(summary.decisions),
              static_cast<long long>(summary.updates), summary.seconds, summary.finalMeanReward);
  apps::finishCompilingSummary(summary, summary.compiles);
}

} // namespace

int main(int argc, char** argv) {
  apps::ClusterSession cluster(Args::program);
  if (cluster.exitCode())
    return *cluster.exitCode();
  return apps::runTrainerCommand<Args, training::PpoTrainer>(argc, argv);
}
