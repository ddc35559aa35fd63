// bc-train: behavioural cloning of LLVM's inlining heuristic into an MLP
// policy, from trace files (mlgo-eval run heuristic CORPUS --trace t.h5) or a
// corpus it records itself. Writes a run file (per-epoch losses and held-out
// agreement, snapshots, checkpoint; --resume continues it) and a policy file
// that es-train and ppo-train start from (--initial-policy).
#include "mlgo/results/RunFile.h"
#include "mlgo/training/BcTrainer.h"

#include "CommonOptions.h"
#include "TrainerOptions.h"

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
  std::string resume;
  training::BcTrainerOptions options;
  apps::PolicyArgs policy;
  double maxGradientNorm = 0;
  apps::RunArgs run;
  apps::EvaluatorArgs evaluator;

  const std::string& configToml() const { return options.run.configToml; }
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
  args.policy.addTo(app, o.policy, false);

  auto* opt = "Optimiser";
  apps::addAdamOptions(app, o.update.adam, args.maxGradientNorm, opt);
  app.add_option("--minibatch-size", o.update.minibatchSize, "Decisions per mini-batch")
      ->capture_default_str()
      ->group(opt);
  app.add_option("--l2", o.update.l2, "L2 coefficient on the weight matrices")
      ->capture_default_str()
      ->group(opt);
  args.run.addTo(app, o.run, "--epochs", "Passes over the training decisions", "epoch",
                 "Seeds the split, the initial weights and the order");
  args.evaluator.addTo(app);
}

Status finishOptions(Args& args, const CLI::App& app) {
  training::BcTrainerOptions& o = args.options;
  o.traces.assign(args.traces.begin(), args.traces.end());
  o.corpus.reset();
  if (!args.corpus.empty())
    o.corpus = args.corpus;
  o.recordedTrace.reset();
  if (!args.recordedTrace.empty())
    o.recordedTrace = args.recordedTrace;
  args.policy.finish(o.policy);
  if (args.maxGradientNorm > 0)
    o.update.adam.maxGradientNorm = args.maxGradientNorm;
  args.run.finish(o.run, args.evaluator.workers);
  apps::effectiveConfig(app, o.run.configToml, o.run.configValues);
  return Status::ok();
}

bool hasData(const Args& args) {
  return !args.traces.empty() || !args.corpus.empty();
}

std::string percent(std::optional<double> value) {
  if (!value)
    return "-";
  char text[32];
  std::snprintf(text, sizeof text, "%.2f%%", 100 * *value);
  return text;
}

void printProgress(const training::BcProgress& p) {
  const training::BcEpoch& e = p.record;
  const bool held = e.heldout.rows > 0;
  std::fprintf(stderr,
               "epoch %lld/%lld  train loss %.4f agreement %s  held-out loss %s agreement %s  "
               "elapsed %.1fs  eta %.0fs\n",
               static_cast<long long>(p.step + 1), static_cast<long long>(p.steps), e.train.loss,
               percent(e.train.accuracy()).c_str(),
               held ? std::to_string(e.heldout.loss).c_str() : "-",
               percent(held ? std::optional(e.heldout.accuracy()) : std::nullopt).c_str(),
               p.elapsedSeconds, p.etaSeconds);
}

void printSummary(const training::BcTrainerSummary& summary) {
  std::printf("done: %lld epochs (%lld this run), %.1f s; training agreement %s",
              static_cast<long long>(summary.stepsTotal), static_cast<long long>(summary.stepsRun),
              summary.seconds, percent(summary.finalTrainAccuracy).c_str());
  if (summary.finalHeldoutAccuracy)
    std::printf("; held-out agreement %s over %zu decisions of %zu modules (majority label: %s; "
                "best %s after epoch %lld)",
                percent(summary.finalHeldoutAccuracy).c_str(), summary.heldoutDecisions,
                summary.heldoutModules, percent(summary.heldoutMajorityAccuracy).c_str(),
                percent(summary.bestHeldoutAccuracy).c_str(),
                static_cast<long long>(summary.bestEpoch));
  std::printf("\n");
  apps::printEnding(summary);
}

} // namespace

int main(int argc, char** argv) {
  CLI::App app{"bc-train: clone LLVM's inlining heuristic into an MLP policy (behavioural "
               "cloning), the warm start for es-train and ppo-train"};
  Args args;
  defineOptions(app, args);
  CLI11_PARSE(app, argc, argv);
  const bool resuming = !args.resume.empty();
  if (Status s = apps::prepareTrainerArguments(
          app, args, "bc-train", defineOptions, finishOptions, hasData,
          "give --trace FILE (repeatable) and/or --corpus DIR");
      !s)
    return fail(s.error());
  // Only a corpus is compiled (its heuristic decisions recorded).
  std::unique_ptr<evaluators::Evaluator> evaluator;
  if (args.options.corpus) {
    Expected<evaluators::EvaluatorOptions> evaluatorOptions = args.evaluator.toOptions();
    if (!evaluatorOptions)
      return fail(evaluatorOptions.error());
    Expected<std::unique_ptr<evaluators::Evaluator>> created =
        apps::createEvaluator(*evaluatorOptions);
    if (!created)
      return fail(created.error());
    evaluator = created.take();
  }

  Expected<training::BcTrainer> trainer =
      resuming ? training::BcTrainer::resume(args.options, evaluator.get())
               : training::BcTrainer::create(args.options, evaluator.get());
  if (!trainer)
    return fail(trainer.error());
  apps::printRunHeader(trainer->record(), resuming ? "resuming" : "cloning",
                       args.options.run.output);
  apps::StopOnInterrupt interrupt;
  Expected<training::BcTrainerSummary> summary = trainer->run([&](const training::BcProgress& p) {
    printProgress(p);
    return interrupt.action();
  });
  if (!summary)
    return fail(summary.error());
  printSummary(*summary);
  return 0;
}
