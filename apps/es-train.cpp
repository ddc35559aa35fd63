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

struct Args : apps::CorpusTrainerArgs<training::EsTrainerOptions> {
  static constexpr const char* program = "es-train";
  static constexpr const char* description =
      "es-train: train an inlining-for-size policy with evolution strategies on real "
      "clang-22 compilations";

  using CandidateReward = training::EsTrainerOptions::CandidateReward;
  apps::EnumOption<CandidateReward> candidateReward{options.candidateReward,
                                                    {CandidateReward::Mean, CandidateReward::Total},
                                                    [](CandidateReward r) -> std::string_view {
                                                      return r == CandidateReward::Total ? "total"
                                                                                         : "mean";
                                                    }};
  // Every optimiser's options as the flags set them; finishOptions gives
  // the chosen one to the trainer.
  es::GradientEs::Options gradientEs;
  es::TrustRegionEs::Options trustRegion;
  es::SepCmaEs::Options sepCma;
  es::OptimizerKind optimizerKind = es::kindOf(options.optimizer);
  apps::EnumOption<es::OptimizerKind> optimizer{optimizerKind, es::optimizerKinds(),
                                                es::optimizerKindName};
  apps::EnumOption<es::Sampling> perturbations{
      gradientEs.sampling.sampling,
      {es::Sampling::Antithetic, es::Sampling::ForwardDifference},
      es::samplingName};
  apps::EnumOption<es::FitnessShaping> shaping{
      gradientEs.shaping.method,
      {es::FitnessShaping::None, es::FitnessShaping::ZScore, es::FitnessShaping::CentredRank},
      es::fitnessShapingName};
  apps::EnumOption<es::GradientEstimator> estimator{
      gradientEs.estimator.method,
      {es::GradientEstimator::MonteCarlo, es::GradientEstimator::LeastSquares,
       es::GradientEstimator::Ridge, es::GradientEstimator::Lasso},
      es::gradientEstimatorName};
  apps::EnumOption<es::StepRule> stepRule{
      gradientEs.stepRule.rule,
      {es::StepRule::Sgd, es::StepRule::Momentum, es::StepRule::Adam},
      es::stepRuleName};
  apps::EnumOption<es::Convention> convention{
      gradientEs.convention,
      {es::Convention::Native, es::Convention::MlCompilerOpt},
      es::conventionName};
  int topDirections = 0;
  double maxGradientNorm = 0;
  int cmaPopulation = 0;
};

void defineOptimizerOptions(CLI::App& app, Args& args) {
  training::EsTrainerOptions& o = args.options;
  auto* opt = "Optimiser";
  args.optimizer.addTo(app, "--optimizer", "Blackbox optimiser", opt);
  es::SamplingOptions& sampling = args.gradientEs.sampling;
  args.perturbations.addTo(app, "--perturbations", "Perturbation sampling", opt);
  app.add_option("--directions", sampling.directions,
                 "Perturbation directions per step (antithetic: 2 candidates each)")
      ->capture_default_str()
      ->group(opt);
  app.add_option("--sigma", sampling.sigma, "Perturbation scale σ")
      ->capture_default_str()
      ->group(opt);
  app.add_flag("--evaluate-center,!--no-evaluate-center", sampling.evaluateCenter,
               "Also compile the unperturbed policy each step")
      ->group(opt);
  app.add_option("--min-success-share", sampling.minSuccessShare,
                 "Skip a step when fewer candidates than this share compiled everywhere")
      ->capture_default_str()
      ->group(opt);
  args.shaping.addTo(app, "--shaping", "Fitness shaping", opt);
  app.add_option("--top-directions", args.topDirections, "Keep only the k best directions (0: all)")
      ->capture_default_str()
      ->group(opt);
  args.estimator.addTo(app, "--estimator", "Gradient estimator", opt);
  app.add_option("--regularization", args.gradientEs.estimator.regularization,
                 "Ridge/lasso penalty α")
      ->capture_default_str()
      ->group(opt);
  es::StepRuleOptions& rule = args.gradientEs.stepRule;
  args.stepRule.addTo(app, "--step-rule", "Step rule", opt);
  app.add_option("--learning-rate", rule.learningRate, "Step size")
      ->capture_default_str()
      ->group(opt);
  app.add_option("--momentum", rule.momentum, "Momentum μ")->capture_default_str()->group(opt);
  app.add_option("--beta1", rule.beta1, "Adam β1")->capture_default_str()->group(opt);
  app.add_option("--beta2", rule.beta2, "Adam β2")->capture_default_str()->group(opt);
  app.add_option("--epsilon", rule.epsilon, "Adam ε")->capture_default_str()->group(opt);
  app.add_option("--weight-decay", rule.weightDecay, "L2 weight decay λ")
      ->capture_default_str()
      ->group(opt);
  app.add_option("--max-gradient-norm", args.maxGradientNorm, "Clip the gradient (0: no clipping)")
      ->capture_default_str()
      ->group(opt);
  args.convention.addTo(
      app, "--convention",
      "native, or ml-compiler-opt's normalisation and Adam (to carry its hyperparameters over)",
      opt);
  es::TrustRegionOptions& tr = args.trustRegion.trustRegion;
  app.add_option("--tr-initial-radius", tr.initialRadius, "Trust region: initial radius")
      ->capture_default_str()
      ->group(opt);
  app.add_option("--tr-minimum-radius", tr.minimumRadius, "Trust region: smallest radius")
      ->capture_default_str()
      ->group(opt);
  app.add_option("--cma-sigma", args.sepCma.initialSigma, "sep-CMA-ES: initial σ")
      ->capture_default_str()
      ->group(opt);
  app.add_option("--cma-population", args.cmaPopulation,
                 "sep-CMA-ES: candidates per step (0: 4 + 3 ln n)")
      ->capture_default_str()
      ->group(opt);
}

// Every option of es-train, bound to `args`. Used twice on --resume: once
// for the command line, once for the config stored in the run file.
void defineOptions(CLI::App& app, Args& args) {
  training::EsTrainerOptions& o = args.options;
  args.addDataAndPolicy(app, "--modules-per-step", "step");
  app.add_flag("--scale-by-weights,!--no-scale-by-weights", o.scaleByWeights,
               "Perturb each weight by |w| + 0.01 (for a pretrained start)")
      ->group("Policy");
  args.candidateReward.addTo(app, "--candidate-reward",
                             "A candidate's reward over the step's modules: the mean of the "
                             "modules' relative rewards (each module alike), or the relative "
                             "reward of their total size or score (large modules weigh more)",
                             "Optimiser");
  defineOptimizerOptions(app, args);
  args.run.addTo(app, o.run, "--steps", "Training steps", "step",
                 "Seeds perturbations, module sampling, initial policy");
  args.evaluator.addTo(app);
}

// The flags set away from their defaults that the chosen optimiser does not
// read (sep-CMA-ES has no directions or step rule, only the trust region a
// radius, …): said at the start rather than silently ignored.
std::vector<std::string> unusedOptimizerFlags(const Args& args) {
  const Args d;
  const es::GradientEs::Options &g = args.gradientEs, &dg = d.gradientEs;
  const bool cma = args.optimizerKind == es::OptimizerKind::SepCmaEs;
  const bool gradient = args.optimizerKind == es::OptimizerKind::GradientEs;
  const bool trust = args.optimizerKind == es::OptimizerKind::TrustRegionEs;
  std::vector<std::string> unused;
  auto unless = [&](bool used, std::initializer_list<std::pair<bool, const char*>> flags) {
    if (!used)
      for (const auto& [set, flag] : flags)
        if (set)
          unused.push_back(flag);
  };
  unless(!cma, {{g.sampling.sampling != dg.sampling.sampling, "--perturbations"},
                {g.sampling.directions != dg.sampling.directions, "--directions"},
                {g.sampling.sigma != dg.sampling.sigma, "--sigma"},
                {g.sampling.evaluateCenter != dg.sampling.evaluateCenter, "--evaluate-center"},
                {g.shaping.method != dg.shaping.method, "--shaping"},
                {args.topDirections > 0, "--top-directions"},
                {g.estimator.method != dg.estimator.method, "--estimator"},
                {g.estimator.regularization != dg.estimator.regularization, "--regularization"},
                {g.convention != dg.convention, "--convention"}});
  const es::StepRuleOptions &r = g.stepRule, &dr = dg.stepRule;
  unless(gradient, {{r.rule != dr.rule, "--step-rule"},
                    {r.learningRate != dr.learningRate, "--learning-rate"},
                    {r.momentum != dr.momentum, "--momentum"},
                    {r.beta1 != dr.beta1, "--beta1"},
                    {r.beta2 != dr.beta2, "--beta2"},
                    {r.epsilon != dr.epsilon, "--epsilon"},
                    {r.weightDecay != dr.weightDecay, "--weight-decay"},
                    {args.maxGradientNorm > 0, "--max-gradient-norm"}});
  const es::TrustRegionOptions &t = args.trustRegion.trustRegion, &dt = d.trustRegion.trustRegion;
  unless(trust, {{t.initialRadius != dt.initialRadius, "--tr-initial-radius"},
                 {t.minimumRadius != dt.minimumRadius, "--tr-minimum-radius"}});
  unless(cma, {{args.sepCma.initialSigma != d.sepCma.initialSigma, "--cma-sigma"},
               {args.cmaPopulation > 0, "--cma-population"}});
  return unused;
}

// Applies the flags that need translation and the shared sampling settings.
Status finishOptions(Args& args, const CLI::App& app) {
  training::EsTrainerOptions& o = args.options;
  args.finishDataAndPolicy();
  args.optimizerKind = args.optimizer.value();
  o.candidateReward = args.candidateReward.value();
  es::GradientEs::Options& g = args.gradientEs;
  g.sampling.sampling = args.perturbations.value();
  g.shaping.method = args.shaping.value();
  g.estimator.method = args.estimator.value();
  g.stepRule.rule = args.stepRule.value();
  g.convention = args.convention.value();
  if (args.topDirections > g.sampling.directions)
    return makeError("--top-directions " + std::to_string(args.topDirections) +
                     " keeps more directions than a step has (--directions " +
                     std::to_string(g.sampling.directions) + ")");
  if (args.topDirections > 0)
    g.shaping.topDirections = args.topDirections;
  if (std::vector<std::string> unused = unusedOptimizerFlags(args); !unused.empty()) {
    std::string flags;
    for (const std::string& flag : unused)
      flags += (flags.empty() ? "" : ", ") + flag;
    std::fprintf(stderr, "%s: warning: --optimizer %s does not use %s (set away from %s)\n",
                 Args::program, args.optimizer.text.c_str(), flags.c_str(),
                 unused.size() == 1 ? "its default" : "their defaults");
  }
  if (args.maxGradientNorm > 0)
    g.stepRule.maxGradientNorm = args.maxGradientNorm;
  if (args.cmaPopulation > 0)
    args.sepCma.populationSize = args.cmaPopulation;
  // The trust region shares the sampling, shaping and estimator settings.
  args.trustRegion.sampling = g.sampling;
  args.trustRegion.shaping = g.shaping;
  args.trustRegion.estimator = g.estimator;
  args.trustRegion.convention = g.convention;
  args.sepCma.minSuccessShare = g.sampling.minSuccessShare;
  for (const es::OptimizerOptions& chosen :
       {es::OptimizerOptions(g), es::OptimizerOptions(args.trustRegion),
        es::OptimizerOptions(args.sepCma)})
    if (es::kindOf(chosen) == args.optimizerKind)
      o.optimizer = chosen;
  return args.finishRun(app);
}

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
