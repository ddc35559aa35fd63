// bc-train: behavioural cloning of LLVM's inlining heuristic into an MLP
// policy, from trace files (mlgo-eval run heuristic CORPUS --trace t.h5) or a
// corpus it records itself. Writes a run file (per-epoch losses and held-out
// agreement, snapshots, checkpoint; --resume continues it) and a policy file
// that es-train and ppo-train start from (--initial-policy).
#include "mlgo/results/RunFile.h"
#include "mlgo/training/BcTrainer.h"

#include "ClusterSession.h"
#include "CommonOptions.h"
#include "TrainerCommand.h"
#include "TrainerOptions.h"

#include <CLI/CLI.hpp>

#include <cstdio>
#include <iostream>

using namespace mlgo;

namespace {

struct Args : apps::TrainerArgs<training::BcTrainerOptions> {
  static constexpr const char* program = "bc-train";
  static constexpr const char* description =
      "bc-train: clone LLVM's inlining heuristic into an MLP policy (behavioural "
      "cloning), the warm start for es-train and ppo-train";
  static constexpr const char* verb = "cloning";
  static constexpr const char* missingData = "give --trace FILE (repeatable) and/or --corpus DIR";

  std::vector<std::string> traces;
  std::string corpus;
  std::string recordedTrace;
  double maxGradientNorm = 0;
};

void defineOptions(CLI::App& app, Args& args) {
  training::BcTrainerOptions& o = args.options;
  args.addConfigAndResume(app);

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
  app.add_flag("--imitate-actions", o.imitateActions,
               "Imitate the actions the traces' policies took (e.g. a trace of mlgo-eval "
               "search's flip-set policy) instead of the heuristic's decisions")
      ->group("Data");
  app.add_option("--deviation-weight", o.deviationWeight,
                 "With --imitate-actions: loss weight of decisions whose label differs from the "
                 "heuristic's (others: 1)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str()
      ->group("Data");
  app.add_flag("--outcome-weights", o.outcomeWeights,
               "Weigh each decision by the bytes its trace row's size differs from its "
               "baseline (traces of mlgo-eval search --tried: the bytes the flip saved or cost)")
      ->group("Data");
  app.add_option("--outcome-weight-floor", o.outcomeWeightFloor,
                 "With --outcome-weights: the least weight of a decision (0: flips that changed "
                 "nothing are not learned from)")
      ->capture_default_str()
      ->group("Data");
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
  return args.finishRun(app);
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

void printProgress(const Args&, const training::BcProgress& p) {
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

void printSummary(const Args&, const training::BcTrainerSummary& summary) {
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

bool compiles(const Args& args) {
  return !args.corpus.empty();
}

} // namespace

int main(int argc, char** argv) {
  apps::ClusterSession cluster(Args::program);
  if (cluster.exitCode())
    return *cluster.exitCode();
  return apps::runTrainerCommand<Args, training::BcTrainer>(argc, argv);
}
