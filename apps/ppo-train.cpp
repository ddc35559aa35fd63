// ppo-train: PPO on an inlining-for-size policy, rewarded by real clang-22
// compilations against -Oz, as ml-compiler-opt trains its inliner. Every flag
// can be set in a TOML config (--config; configs/inlining-ppo.toml holds
// ml-compiler-opt's ppo_nn_agent.gin values); the effective config is printed
// and stored in the run's HDF5 file, from which --resume continues.
#include "mlgo/results/RunFile.h"
#include "mlgo/training/PpoTrainer.h"

#include "CommonOptions.h"
#include "TrainerOptions.h"

#include <CLI/CLI.hpp>

#include <cmath>
#include <cstdio>
#include <iostream>

using namespace mlgo;

namespace {

int fail(const Error& error) {
  std::cerr << "ppo-train: error: " << error.message << "\n";
  return 1;
}

struct Args {
  std::string resume;
  training::PpoTrainerOptions options;
  apps::CorpusArgs data;
  apps::PolicyArgs policy;
  apps::EnumOption<rl::AdvantageNormalization> normalization{
      options.update.advantageNormalization,
      {rl::AdvantageNormalization::None, rl::AdvantageNormalization::MiniBatch,
       rl::AdvantageNormalization::Iteration},
      rl::advantageNormalizationName};
  double maxGradientNorm = 0;
  int64_t updatesPerIteration = options.update.updatesPerIteration.value_or(0);
  apps::RunArgs run;
  apps::EvaluatorArgs evaluator;

  const std::string& configToml() const { return options.run.configToml; }
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
  app.set_config("--config", "", "Read options from a TOML file (keys are the long flag names)");
  app.add_option("--resume", args.resume,
                 "Continue the run in this HDF5 file from its checkpoint (its stored config is "
                 "used; only evaluator flags such as --workers may be given)");
  args.data.addTo(app, o.data, "--modules-per-iteration", "iteration");
  args.policy.addTo(app, o.policy, true);

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
  args.data.finish(o.data);
  args.policy.finish(o.policy);
  o.update.advantageNormalization = args.normalization.value();
  if (args.maxGradientNorm > 0)
    o.update.adam.maxGradientNorm = args.maxGradientNorm;
  o.update.updatesPerIteration = args.updatesPerIteration > 0
                                     ? std::optional<int64_t>(args.updatesPerIteration)
                                     : std::nullopt;
  args.run.finish(o.run, args.evaluator.workers);
  apps::effectiveConfig(app, o.run.configToml, o.run.configValues);
  return Status::ok();
}

bool hasCorpus(const Args& args) {
  return !args.data.corpus.empty();
}

void printProgress(const training::PpoProgress& p) {
  const training::PpoIteration& i = p.record;
  std::string validation =
      p.validationTotalReward ? "  validation " + std::to_string(*p.validationTotalReward) : "";
  std::fprintf(stderr,
               "iteration %lld/%lld  %.1f compiles/s  reward mean %+.5f  failed %zu  decisions %zu"
               "  updates %lld  loss %+.5f  entropy %.4f  kl %.5f  β %.3g%s  elapsed %.0fs  "
               "eta %.0fs\n",
               static_cast<long long>(p.step + 1), static_cast<long long>(p.steps),
               p.compilationsPerSecond, i.rewardMean, i.compile.failed, i.trainingDecisions,
               static_cast<long long>(i.update.updates), i.perUpdate(i.update.sums.total),
               i.trainingDecisions ? i.update.after.meanEntropy : training::kNoValue,
               i.trainingDecisions ? i.update.after.meanKl : training::kNoValue, i.adaptiveKlBeta,
               validation.c_str(), p.elapsedSeconds, p.etaSeconds);
}

void printSummary(const training::PpoTrainerSummary& summary) {
  std::printf("done: %lld iterations (%lld this run), %llu compilations, %llu failed, %llu "
              "decisions, %lld updates, %.1f s; final mean reward %+.5f",
              static_cast<long long>(summary.stepsTotal), static_cast<long long>(summary.stepsRun),
              static_cast<unsigned long long>(summary.compilations),
              static_cast<unsigned long long>(summary.failedCompilations),
              static_cast<unsigned long long>(summary.decisions),
              static_cast<long long>(summary.updates), summary.seconds, summary.finalMeanReward);
  if (summary.bestValidationTotalReward)
    std::printf("; best validation reward %+.5f", *summary.bestValidationTotalReward);
  std::printf("\n");
  apps::printEnding(summary);
}

} // namespace

int main(int argc, char** argv) {
  CLI::App app{"ppo-train: train an inlining-for-size policy with PPO on real clang-22 "
               "compilations"};
  Args args;
  defineOptions(app, args);
  CLI11_PARSE(app, argc, argv);
  const bool resuming = !args.resume.empty();
  if (Status s = apps::prepareTrainerArguments(app, args, "ppo-train", defineOptions, finishOptions,
                                               hasCorpus, "--corpus is required");
      !s)
    return fail(s.error());
  Expected<evaluators::EvaluatorOptions> evaluatorOptions = args.evaluator.toOptions();
  if (!evaluatorOptions)
    return fail(evaluatorOptions.error());
  Expected<std::unique_ptr<evaluators::Evaluator>> evaluator =
      apps::createEvaluator(*evaluatorOptions);
  if (!evaluator)
    return fail(evaluator.error());

  Expected<training::PpoTrainer> trainer =
      resuming ? training::PpoTrainer::resume(args.options, **evaluator)
               : training::PpoTrainer::create(args.options, **evaluator);
  if (!trainer)
    return fail(trainer.error());
  apps::printRunHeader(trainer->record(), resuming ? "resuming" : "training",
                       args.options.run.output);
  apps::StopOnInterrupt interrupt;
  Expected<training::PpoTrainerSummary> summary = trainer->run([&](const training::PpoProgress& p) {
    printProgress(p);
    return interrupt.action();
  });
  if (!summary)
    return fail(summary.error());
  printSummary(*summary);
  return 0;
}
