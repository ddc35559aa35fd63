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

// Every flag is BcTrainerOptions::schema()'s, plus the evaluator's (for
// --corpus, which records the heuristic's decisions first).
struct Args : apps::TrainerArgs<training::BcTrainerOptions> {
  static constexpr const char* program = "bc-train";
  static constexpr const char* description =
      "bc-train: clone LLVM's inlining heuristic into an MLP policy (behavioural "
      "cloning), the warm start for es-train and ppo-train";
  static constexpr const char* verb = "cloning";
  static constexpr const char* missingData = "give --trace FILE (repeatable) and/or --corpus DIR";
};

bool hasData(const Args& args) {
  return !args.options.traces.empty() || args.options.corpus;
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
  return args.options.corpus.has_value();
}

} // namespace

int main(int argc, char** argv) {
  apps::ClusterSession cluster(Args::program);
  if (cluster.exitCode())
    return *cluster.exitCode();
  return apps::runTrainerCommand<Args, training::BcTrainer>(argc, argv);
}
