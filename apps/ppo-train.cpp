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

struct Args : apps::CorpusTrainerArgs<training::PpoTrainerOptions> {
  static constexpr const char* program = "ppo-train";
  static constexpr const char* description =
      "ppo-train: train an inlining-for-size policy with PPO on real clang-22 "
      "compilations";

  apps::EnumOption<rl::AdvantageNormalization> normalization{
      options.update.advantageNormalization,
      {rl::AdvantageNormalization::None, rl::AdvantageNormalization::MiniBatch,
       rl::AdvantageNormalization::Iteration},
      rl::advantageNormalizationName};
  double maxGradientNorm = 0;
  int64_t updatesPerIteration = options.update.updatesPerIteration.value_or(0);
};

void defineLossOptions(CLI::App& app, Args& args) {
  rl::PpoLossOptions& loss = args.options.update.loss;
  auto* group = "Loss";
  app.add_option("--clip", loss.clip, "Importance-ratio clipping ε (0: unclipped surrogate)")
      ->capture_default_str()
      ->group(group);
  app.add_option("--entropy", loss.entropyCoefficient, "Entropy bonus coefficient")
      ->capture_default_str()
      ->group(group);
  app.add_option("--policy-l2", loss.policyL2, "L2 coefficient on the weight matrices")
      ->capture_default_str()
      ->group(group);
  app.add_option("--kl-beta", loss.initialKlBeta,
                 "Initial adaptive KL penalty coefficient (0: no adaptive penalty)")
      ->capture_default_str()
      ->group(group);
  app.add_option("--kl-target", loss.klTarget, "KL target of the adaptive penalty")
      ->capture_default_str()
      ->group(group);
  app.add_option("--kl-tolerance", loss.klTolerance, "Relative tolerance around the KL target")
      ->capture_default_str()
      ->group(group);
  app.add_option("--kl-cutoff-factor", loss.klCutoffFactor,
                 "Cutoff penalty above this times the KL target (0: no cutoff penalty)")
      ->capture_default_str()
      ->group(group);
  app.add_option("--kl-cutoff-coefficient", loss.klCutoffCoefficient,
                 "Coefficient of the squared KL cutoff penalty")
      ->capture_default_str()
      ->group(group);
}

void defineOptimizerOptions(CLI::App& app, Args& args) {
  rl::PpoUpdateOptions& update = args.options.update;
  auto* opt = "Optimiser";
  apps::addAdamOptions(app, update.adam, args.maxGradientNorm, opt);
  app.add_option("--minibatch-size", update.minibatchSize, "Decisions per mini-batch")
      ->capture_default_str()
      ->group(opt);
  app.add_option("--epochs", update.epochs,
                 "Passes over each iteration's decisions (with --updates-per-iteration 0)")
      ->capture_default_str()
      ->group(opt);
  app.add_option("--updates-per-iteration", args.updatesPerIteration,
                 "Exactly this many mini-batch updates per iteration, whatever the data size "
                 "(0: --epochs decides)")
      ->capture_default_str()
      ->group(opt);
}

// Every option of ppo-train, bound to `args`; used twice on --resume (the
// command line, then the run's stored config).
void defineOptions(CLI::App& app, Args& args) {
  training::PpoTrainerOptions& o = args.options;
  args.addDataAndPolicy(app, "--modules-per-iteration", "iteration");

  auto* reward = "Reward";
  app.add_option("--moving-average-decay", o.movingAverageDecay,
                 "Per-module baseline: reward against a moving average of the module's sizes "
                 "(starting at -Oz) with this decay; 1: always against -Oz")
      ->capture_default_str()
      ->group(reward);
  args.normalization.addTo(app, "--advantage-normalization",
                           "Standardise advantages over each mini-batch, the iteration, or not",
                           reward);
  defineLossOptions(app, args);
  defineOptimizerOptions(app, args);
  args.run.addTo(app, o.run, "--iterations", "Policy iterations (collect, then update)",
                 "iteration", "Seeds sampling, mini-batch order and the initial policy");
  args.evaluator.addTo(app);
}

Status finishOptions(Args& args, const CLI::App& app) {
  training::PpoTrainerOptions& o = args.options;
  args.finishDataAndPolicy();
  o.update.advantageNormalization = args.normalization.value();
  if (args.maxGradientNorm > 0)
    o.update.adam.maxGradientNorm = args.maxGradientNorm;
  o.update.updatesPerIteration = args.updatesPerIteration > 0
                                     ? std::optional<int64_t>(args.updatesPerIteration)
                                     : std::nullopt;
  return args.finishRun(app);
}

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
