// ppo-train: PPO on an inlining-for-size policy, rewarded by real clang-22
// compilations against -Oz, as ml-compiler-opt trains its inliner. Every flag
// can be set in a TOML config (--config; configs/inlining-ppo.toml holds
// ml-compiler-opt's ppo_nn_agent.gin values); the effective config is printed
// and stored in the run's HDF5 file, from which --resume continues.
#include "mlgo/results/RunFile.h"
#include "mlgo/training/PpoTrainer.h"

#include "CommonOptions.h"

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
  std::string corpus;
  std::string validationCorpus;
  std::string initialPolicy;
  std::string vocabulary;
  std::string resume;
  training::PpoTrainerOptions options;
  apps::EnumOption<corpus::SamplingStrategy> moduleSampling =
      apps::samplingOption(options.sampling);
  apps::EnumOption<policies::Activation> activation =
      apps::activationOption(options.mlp.activation);
  apps::EnumOption<rl::AdvantageNormalization> normalization{
      options.advantageNormalization,
      {rl::AdvantageNormalization::None, rl::AdvantageNormalization::MiniBatch,
       rl::AdvantageNormalization::Iteration},
      rl::advantageNormalizationName};
  double maxGradientNorm = 0;
  int64_t updatesPerIteration = options.updatesPerIteration.value_or(0);
  std::string output = options.output.string();
  std::string policyOutput = options.policyOutput.string();
  apps::EvaluatorArgs evaluator;
};

// Every option of ppo-train, bound to `args`; used twice on --resume (the
// command line, then the run's stored config).
void defineOptions(CLI::App& app, Args& args) {
  training::PpoTrainerOptions& o = args.options;
  app.set_config("--config", "", "Read options from a TOML file (keys are the long flag names)");
  app.add_option("--resume", args.resume,
                 "Continue the run in this HDF5 file from its checkpoint (its stored config is "
                 "used; only evaluator flags such as --workers may be given)");

  auto* data = "Data";
  app.add_option("--corpus", args.corpus, "Training corpus (merge several code bases)")
      ->group(data);
  app.add_option("--validation-corpus", args.validationCorpus,
                 "Held-out corpus compiled with the argmax policy; the best policy is chosen on it")
      ->group(data);
  app.add_option("--validation-interval", o.validationInterval, "Validate every N iterations")
      ->capture_default_str()
      ->group(data);
  app.add_option("--modules-per-iteration", o.modulesPerIteration,
                 "Modules compiled per iteration (ml-compiler-opt's num_modules)")
      ->capture_default_str()
      ->group(data);
  args.moduleSampling.addTo(app, "--module-sampling", "How the iteration's modules are drawn",
                            data);

  auto* policy = "Policy";
  app.add_option("--initial-policy", args.initialPolicy,
                 "Start from this MLP policy file (e.g. from bc-train); default: random MLP")
      ->group(policy);
  app.add_option("--vocabulary", args.vocabulary,
                 "Quantile vocabulary (.buckets directory) for a random start; default: built "
                 "from the heuristic's decisions on the corpus")
      ->group(policy);
  app.add_option("--vocabulary-quantiles", o.vocabularyQuantiles,
                 "Quantiles per feature when the vocabulary is built here")
      ->capture_default_str()
      ->group(policy);
  app.add_option("--hidden", o.mlp.hiddenLayers, "Hidden layer widths of a random MLP")
      ->delimiter(',')
      ->capture_default_str()
      ->group(policy);
  args.activation.addTo(app, "--activation", "Activation of a random MLP", policy);
  app.add_flag("--with-sqrt,!--no-with-sqrt", o.mlp.withSqrt,
               "Also feed sqrt of each normalised feature")
      ->group(policy);

  auto* reward = "Reward";
  app.add_option("--moving-average-decay", o.movingAverageDecay,
                 "Per-module baseline: reward against a moving average of the module's sizes "
                 "(starting at -Oz) with this decay; 1: always against -Oz")
      ->capture_default_str()
      ->group(reward);
  args.normalization.addTo(app, "--advantage-normalization",
                           "Standardise advantages over each mini-batch, the iteration, or not",
                           reward);

  auto* loss = "Loss";
  app.add_option("--clip", o.loss.clip, "Importance-ratio clipping ε (0: unclipped surrogate)")
      ->capture_default_str()
      ->group(loss);
  app.add_option("--entropy", o.loss.entropyCoefficient, "Entropy bonus coefficient")
      ->capture_default_str()
      ->group(loss);
  app.add_option("--policy-l2", o.loss.policyL2, "L2 coefficient on the weight matrices")
      ->capture_default_str()
      ->group(loss);
  app.add_option("--kl-beta", o.loss.initialKlBeta,
                 "Initial adaptive KL penalty coefficient (0: no adaptive penalty)")
      ->capture_default_str()
      ->group(loss);
  app.add_option("--kl-target", o.loss.klTarget, "KL target of the adaptive penalty")
      ->capture_default_str()
      ->group(loss);
  app.add_option("--kl-tolerance", o.loss.klTolerance, "Relative tolerance around the KL target")
      ->capture_default_str()
      ->group(loss);
  app.add_option("--kl-cutoff-factor", o.loss.klCutoffFactor,
                 "Cutoff penalty above this times the KL target (0: no cutoff penalty)")
      ->capture_default_str()
      ->group(loss);
  app.add_option("--kl-cutoff-coefficient", o.loss.klCutoffCoefficient,
                 "Coefficient of the squared KL cutoff penalty")
      ->capture_default_str()
      ->group(loss);

  auto* opt = "Optimiser";
  app.add_option("--learning-rate", o.adam.learningRate, "Adam step size")
      ->capture_default_str()
      ->group(opt);
  app.add_option("--beta1", o.adam.beta1, "Adam β1")->capture_default_str()->group(opt);
  app.add_option("--beta2", o.adam.beta2, "Adam β2")->capture_default_str()->group(opt);
  app.add_option("--epsilon", o.adam.epsilon, "Adam ε (TensorFlow 1 form)")
      ->capture_default_str()
      ->group(opt);
  app.add_option("--max-gradient-norm", args.maxGradientNorm, "Clip the gradient (0: no clipping)")
      ->capture_default_str()
      ->group(opt);
  app.add_option("--minibatch-size", o.minibatchSize, "Decisions per mini-batch")
      ->capture_default_str()
      ->group(opt);
  app.add_option("--epochs", o.epochs,
                 "Passes over each iteration's decisions (with --updates-per-iteration 0)")
      ->capture_default_str()
      ->group(opt);
  app.add_option("--updates-per-iteration", args.updatesPerIteration,
                 "Exactly this many mini-batch updates per iteration, whatever the data size "
                 "(0: --epochs decides)")
      ->capture_default_str()
      ->group(opt);

  auto* run = "Run";
  app.add_option("--iterations", o.iterations, "Policy iterations (collect, then update)")
      ->capture_default_str()
      ->group(run);
  app.add_option("--seed", o.seed, "Seeds sampling, mini-batch order and the initial policy")
      ->capture_default_str()
      ->group(run);
  app.add_option("-o,--output", args.output, "The run's HDF5 file")
      ->capture_default_str()
      ->group(run);
  app.add_option("--policy-output", args.policyOutput,
                 "The final policy file (for mlgo-eval and --initial-policy)")
      ->capture_default_str()
      ->group(run);
  app.add_option("--snapshot-interval", o.snapshotInterval, "Store the policy every N iterations")
      ->capture_default_str()
      ->group(run);
  args.evaluator.addTo(app);
}

Status finishOptions(Args& args, const CLI::App& app) {
  training::PpoTrainerOptions& o = args.options;
  o.corpus = args.corpus;
  if (!args.validationCorpus.empty())
    o.validationCorpus = args.validationCorpus;
  if (!args.initialPolicy.empty())
    o.initialPolicy = args.initialPolicy;
  if (!args.vocabulary.empty())
    o.vocabulary = args.vocabulary;
  o.output = args.output;
  o.policyOutput = args.policyOutput;
  o.sampling = args.moduleSampling.value();
  o.mlp.activation = args.activation.value();
  o.advantageNormalization = args.normalization.value();
  if (args.maxGradientNorm > 0)
    o.adam.maxGradientNorm = args.maxGradientNorm;
  o.updatesPerIteration = args.updatesPerIteration > 0
                              ? std::optional<int64_t>(args.updatesPerIteration)
                              : std::nullopt;
  Expected<evaluators::EvaluatorOptions> evaluator = args.evaluator.toOptions();
  if (!evaluator)
    return evaluator.error();
  o.evaluator = evaluator.take();
  apps::effectiveConfig(app, o.configToml, o.configValues);
  return Status::ok();
}

void printProgress(const training::PpoProgress& p) {
  std::string validation =
      p.validationTotalReward ? "  validation " + std::to_string(*p.validationTotalReward) : "";
  std::fprintf(stderr,
               "iteration %lld/%lld  %.1f compiles/s  reward mean %+.5f  failed %zu  decisions %zu"
               "  updates %lld  loss %+.5f  entropy %.4f  kl %.5f  β %.3g%s  elapsed %.0fs  "
               "eta %.0fs\n",
               static_cast<long long>(p.iteration + 1), static_cast<long long>(p.iterations),
               p.compilationsPerSecond, p.meanReward, p.failedCompilations, p.decisions,
               static_cast<long long>(p.updates), p.loss, p.entropy, p.kl, p.klBeta,
               validation.c_str(), p.elapsedSeconds, p.etaSeconds);
}

} // namespace

int main(int argc, char** argv) {
  CLI::App app{"ppo-train: train an inlining-for-size policy with PPO on real clang-22 "
               "compilations"};
  Args args;
  defineOptions(app, args);
  CLI11_PARSE(app, argc, argv);

  const bool resuming = !args.resume.empty();
  if (resuming) {
    // The run's own config, with this command line's evaluator flags on top.
    if (Status s = apps::resumeArguments(args, app, "ppo-train", defineOptions, finishOptions); !s)
      return fail(s.error());
  } else {
    if (args.corpus.empty())
      return fail(makeError("--corpus is required (or --resume RUN.h5)"));
    if (Status s = finishOptions(args, app); !s)
      return fail(s.error());
    std::printf("# effective config\n%s\n", args.options.configToml.c_str());
    std::fflush(stdout);
  }

  Expected<training::PpoTrainer> trainer = resuming ? training::PpoTrainer::resume(args.options)
                                                    : training::PpoTrainer::create(args.options);
  if (!trainer)
    return fail(trainer.error());
  const results::RunRecord& record = trainer->record();
  std::string validation =
      record.validationModuleNames.empty()
          ? ""
          : ", " + std::to_string(record.validationModuleNames.size()) + " validation modules";
  std::fprintf(stderr, "%s %s, %s parameters, %zu training modules%s; run file %s\n",
               resuming ? "resuming" : "training", record.attributes.at("policy").c_str(),
               record.attributes.at("parameters").c_str(), record.moduleNames.size(),
               validation.c_str(), args.options.output.c_str());
  Expected<training::PpoTrainerSummary> summary = trainer->run(printProgress);
  if (!summary)
    return fail(summary.error());
  std::printf("done: %lld iterations (%lld this run), %llu compilations, %llu failed, %llu "
              "decisions, %lld updates, %.1f s; final mean reward %+.5f",
              static_cast<long long>(summary->iterationsTotal),
              static_cast<long long>(summary->iterationsRun),
              static_cast<unsigned long long>(summary->compilations),
              static_cast<unsigned long long>(summary->failedCompilations),
              static_cast<unsigned long long>(summary->decisions),
              static_cast<long long>(summary->updates), summary->seconds, summary->finalMeanReward);
  if (summary->bestValidationTotalReward)
    std::printf("; best validation reward %+.5f", *summary->bestValidationTotalReward);
  std::printf("\nresults: %s\n", summary->output.c_str());
  if (summary->policyOutput)
    std::printf("policy: %s\n", summary->policyOutput->c_str());
  return 0;
}
