// es-train: evolution strategies on an inlining-for-size policy, rewarded by
// real clang-22 compilations against -Oz. Every flag can be set in a TOML
// config (--config); the effective config is printed and stored in the run's
// HDF5 file, from which --resume continues a killed run.
#include "mlgo/results/RunFile.h"
#include "mlgo/training/EsTrainer.h"

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

// Every flag is EsTrainerOptions::schema()'s (the optimisers' own come from
// es/), plus the evaluator's.
struct Args : apps::CorpusTrainerArgs<training::EsTrainerOptions> {
  static constexpr const char* program = "es-train";
  static constexpr const char* description =
      "es-train: train an inlining-for-size policy with evolution strategies on real "
      "clang-22 compilations";
};

void printProgress(const Args&, const training::EsProgress& p) {
  const training::EsStep& s = p.record;
  std::string cache = apps::compileNote(s.compile);
  std::string validation = apps::validationNote(p);
  std::fprintf(stderr,
               "step %lld/%lld  %.1f evals/s  reward mean %+.5f best %+.5f  failed %zu%s%s%s  "
               "elapsed %.0fs  eta %.0fs\n",
               static_cast<long long>(p.step + 1), static_cast<long long>(p.steps),
               p.evaluationsPerSecond, s.rewardMean, s.rewardMax, s.compile.failed,
               s.skipped ? "  (skipped)" : "", cache.c_str(), validation.c_str(), p.elapsedSeconds,
               p.etaSeconds);
}

void printSummary(const Args&, const training::EsTrainerSummary& summary) {
  std::printf("done: %lld steps (%lld this run), %llu compilations, %llu failed, %lld skipped "
              "steps, %.1f s; final mean reward %+.5f",
              static_cast<long long>(summary.stepsTotal), static_cast<long long>(summary.stepsRun),
              static_cast<unsigned long long>(summary.compiles.compilations),
              static_cast<unsigned long long>(summary.compiles.failed),
              static_cast<long long>(summary.skippedSteps), summary.seconds,
              summary.finalMeanReward);
  apps::finishCompilingSummary(summary, summary.compiles);
}

} // namespace

int main(int argc, char** argv) {
  apps::ClusterSession cluster(Args::program);
  if (cluster.exitCode())
    return *cluster.exitCode();
  return apps::runTrainerCommand<Args, training::EsTrainer>(argc, argv);
}
