// bc-train: behavioural cloning of LLVM's inlining heuristic into an MLP
// policy, from trace files (mlgo-eval run heuristic CORPUS --trace t.h5) or a
// corpus it records itself. Writes a run file (per-epoch losses and held-out
// agreement, snapshots, checkpoint; --resume continues it) and a policy file
// that es-train and ppo-train start from (--initial-policy).
#include "mlgo/results/RunFile.h"
#include "mlgo/training/BcTrainer.h"

#include "CommonOptions.h"

#include <CLI/CLI.hpp>

#include <cstdio>
#include <iostream>

using namespace mlgo;

namespace {

int fail(const Error& error) {
  std::cerr << "bc-train: error: " << error.message << "\n";
  return 1;
}

struct Args {
  std::vector<std::string> traces;
  std::string corpus;
  std::string recordedTrace;
  std::string vocabulary;
  std::string resume;
  training::BcTrainerOptions options;
  apps::EnumOption<policies::Activation> activation =
      apps::activationOption(options.mlp.activation);
  double maxGradientNorm = 0;
  std::string output = options.output.string();
  std::string policyOutput = options.policyOutput.string();
  apps::EvaluatorArgs evaluator;
};

void defineOptions(CLI::App& app, Args& args) {
  training::BcTrainerOptions& o = args.options;
  app.set_config("--config", "", "Read options from a TOML file (keys are the long flag names)");
  app.add_option("--resume", args.resume,
                 "Continue the run in this HDF5 file from its checkpoint (its stored config is "
                 "used; only evaluator flags such as --workers may be given)");

  auto* data = "Data";
  app.add_option("--trace", args.traces,
                 "Trace file(s) of the heuristic's decisions (mlgo-eval run heuristic CORPUS "
                 "--trace FILE); repeat for several")
      ->group(data);
  app.add_option("--corpus", args.corpus,
                 "Record the heuristic's decisions on this corpus first (used like a trace)")
      ->group(data);
  app.add_option("--recorded-trace", args.recordedTrace,
                 "Where the recording goes (default: beside the run file, <stem>.trace.h5; "
                 "reused when it exists)")
      ->group(data);
  app.add_option("--heldout-fraction", o.heldoutFraction,
                 "Share of the modules held out (split by module, seeded)")
      ->capture_default_str()
      ->group(data);

  auto* policy = "Policy";
  app.add_option("--vocabulary", args.vocabulary,
                 "Quantile vocabulary (.buckets directory); default: built from the training "
                 "decisions")
      ->group(policy);
  app.add_option("--vocabulary-quantiles", o.vocabularyQuantiles,
                 "Quantiles per feature when the vocabulary is built here")
      ->capture_default_str()
      ->group(policy);
  app.add_option("--hidden", o.mlp.hiddenLayers, "Hidden layer widths")
      ->delimiter(',')
      ->capture_default_str()
      ->group(policy);
  args.activation.addTo(app, "--activation", "Activation", policy);
  app.add_flag("--with-sqrt,!--no-with-sqrt", o.mlp.withSqrt,
               "Also feed sqrt of each normalised feature")
      ->group(policy);

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
  app.add_option("--l2", o.l2, "L2 coefficient on the weight matrices")
      ->capture_default_str()
      ->group(opt);

  auto* run = "Run";
  app.add_option("--epochs", o.epochs, "Passes over the training decisions")
      ->capture_default_str()
      ->group(run);
  app.add_option("--seed", o.seed, "Seeds the split, the initial weights and the order")
      ->capture_default_str()
      ->group(run);
  app.add_option("-o,--output", args.output, "The run's HDF5 file")
      ->capture_default_str()
      ->group(run);
  app.add_option("--policy-output", args.policyOutput,
                 "The final policy file (for --initial-policy and mlgo-eval)")
      ->capture_default_str()
      ->group(run);
  app.add_option("--snapshot-interval", o.snapshotInterval, "Store the policy every N epochs")
      ->capture_default_str()
      ->group(run);
  args.evaluator.addTo(app);
}

Status finishOptions(Args& args, const CLI::App& app) {
  training::BcTrainerOptions& o = args.options;
  o.traces.assign(args.traces.begin(), args.traces.end());
  if (!args.corpus.empty())
    o.corpus = args.corpus;
  if (!args.recordedTrace.empty())
    o.recordedTrace = args.recordedTrace;
  if (!args.vocabulary.empty())
    o.vocabulary = args.vocabulary;
  o.output = args.output;
  o.policyOutput = args.policyOutput;
  o.mlp.activation = args.activation.value();
  if (args.maxGradientNorm > 0)
    o.adam.maxGradientNorm = args.maxGradientNorm;
  Expected<evaluators::EvaluatorOptions> evaluator = args.evaluator.toOptions();
  if (!evaluator)
    return evaluator.error();
  o.evaluator = evaluator.take();
  apps::effectiveConfig(app, o.configToml, o.configValues);
  return Status::ok();
}

std::string percent(std::optional<double> value) {
  if (!value)
    return "-";
  char text[32];
  std::snprintf(text, sizeof text, "%.2f%%", 100 * *value);
  return text;
}

void printProgress(const training::BcProgress& p) {
  std::fprintf(stderr,
               "epoch %lld/%lld  train loss %.4f agreement %s  held-out loss %s agreement %s  "
               "elapsed %.1fs  eta %.0fs\n",
               static_cast<long long>(p.epoch + 1), static_cast<long long>(p.epochs), p.trainLoss,
               percent(p.trainAccuracy).c_str(),
               p.heldoutLoss ? std::to_string(*p.heldoutLoss).c_str() : "-",
               percent(p.heldoutAccuracy).c_str(), p.elapsedSeconds, p.etaSeconds);
}

} // namespace

int main(int argc, char** argv) {
  CLI::App app{"bc-train: clone LLVM's inlining heuristic into an MLP policy (behavioural "
               "cloning), the warm start for es-train and ppo-train"};
  Args args;
  defineOptions(app, args);
  CLI11_PARSE(app, argc, argv);

  const bool resuming = !args.resume.empty();
  if (resuming) {
    // The run's own config, with this command line's evaluator flags on top.
    if (Status s = apps::resumeArguments(args, app, "bc-train", defineOptions, finishOptions); !s)
      return fail(s.error());
  } else {
    if (args.traces.empty() && args.corpus.empty())
      return fail(makeError("give --trace FILE (repeatable) and/or --corpus DIR (or --resume "
                            "RUN.h5)"));
    if (Status s = finishOptions(args, app); !s)
      return fail(s.error());
    std::printf("# effective config\n%s\n", args.options.configToml.c_str());
    std::fflush(stdout);
  }

  Expected<training::BcTrainer> trainer = resuming ? training::BcTrainer::resume(args.options)
                                                   : training::BcTrainer::create(args.options);
  if (!trainer)
    return fail(trainer.error());
  const results::RunRecord& record = trainer->record();
  std::fprintf(stderr,
               "%s %s, %s parameters; %zu training modules (%s decisions), %zu held-out modules "
               "(%s decisions); run file %s\n",
               resuming ? "resuming" : "cloning", record.attributes.at("policy").c_str(),
               record.attributes.at("parameters").c_str(), record.moduleNames.size(),
               record.attributes.at("training_decisions").c_str(),
               record.validationModuleNames.size(),
               record.attributes.at("heldout_decisions").c_str(), args.options.output.c_str());
  Expected<training::BcTrainerSummary> summary = trainer->run(printProgress);
  if (!summary)
    return fail(summary.error());
  std::printf("done: %lld epochs (%lld this run), %.1f s; training agreement %s",
              static_cast<long long>(summary->epochsTotal),
              static_cast<long long>(summary->epochsRun), summary->seconds,
              percent(summary->finalTrainAccuracy).c_str());
  if (summary->finalHeldoutAccuracy)
    std::printf("; held-out agreement %s over %zu decisions of %zu modules (majority label: %s; "
                "best %s after epoch %lld)",
                percent(summary->finalHeldoutAccuracy).c_str(), summary->heldoutDecisions,
                summary->heldoutModules, percent(summary->heldoutMajorityAccuracy).c_str(),
                percent(summary->bestHeldoutAccuracy).c_str(),
                static_cast<long long>(summary->bestEpoch));
  std::printf("\nresults: %s\n", summary->output.c_str());
  if (summary->policyOutput)
    std::printf("policy: %s\n", summary->policyOutput->c_str());
  return 0;
}
