// The option groups every trainer shares, each with commented defaults and a
// validation that names the bad field ("data.corpus: …"). A trainer's own
// Options struct holds these groups beside its optimiser's settings; the
// CLIs fill each group from one shared set of flags (apps/TrainerOptions.h).
#pragma once

#include "mlgo/corpus/Sampler.h"
#include "mlgo/policies/Mlp.h"
#include "mlgo/support/Expected.h"
#include "mlgo/support/OptionSchemaFwd.h"
#include "mlgo/support/Threads.h"

#include <cstdint>
#include <filesystem>
#include <functional>
#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <utility>

namespace mlgo::training {

// The words a trainer's flags use for its step: ES steps, PPO iterations,
// BC epochs.
struct StepNames {
  std::string modulesFlag; // "modules-per-step"
  std::string stepsFlag;   // "steps"
  std::string stepsHelp;   // "Training steps"
  std::string unit;        // "step"
  std::string seedHelp;    // what the seed seeds
};

// The code a compiling trainer (es-train, ppo-train) learns from and is
// validated on.
struct CorpusOptions {
  // Training corpus. Merge several code bases (mlgo-corpus merge): a policy
  // trained on one small corpus tends to win there and lose elsewhere.
  std::filesystem::path corpus;
  // Separate code the policy never trains on; every validationInterval steps
  // the current policy compiles all of it (deterministically), and the
  // "best" policy is chosen on it. Unset: best is chosen on the training
  // reward (noisy, optimistic).
  std::optional<std::filesystem::path> validationCorpus;
  int64_t validationInterval = 10;
  // Modules compiled per step (per candidate). More: less noise per step,
  // proportionally more compilations. Clamped to the corpus size except when
  // sampling with replacement.
  size_t modulesPerStep = 8;
  corpus::SamplingStrategy sampling = corpus::SamplingStrategy::BucketRoundRobin;
  // Benchmark programs to train on in place of a corpus (docs/run-cost.md):
  // each is one job, built with the candidate through mlgo-cc and run on its
  // workload under cachegrind, rewarded by its run cost against the plain
  // build's (training::ProgramRunCostScorer). NAME is a recipe that
  // declares a benchmark, at the task's -O level; NAME-O2 names the level.
  // A job costs a build and a run (seconds to minutes), so this is for the
  // few programs where run cost, not a static score, is the point.
  std::vector<std::string> programs;
  // Programs the policy never trains on; the best policy is chosen by their
  // total run cost (with `programs` only).
  std::vector<std::string> validationPrograms;
  // The programs' workload: "full" (the measured one) or "tiny" (tests).
  std::string programWorkload = "full";
  // Check the run-cost build cache the programs share with mlgo-eval
  // run-cost: a build it would serve is made again from scratch and its
  // programs must be the cached ones byte for byte (--verify-builds there;
  // slow: every cached build twice).
  bool verifyProgramBuilds = false;

  bool trainsOnPrograms() const { return !programs.empty(); }
  Status validate() const;
  // --corpus, --validation-corpus, --validation-interval, the modules flag,
  // --module-sampling, --programs, --validation-programs, --program-workload,
  // --verify-program-builds.
  static OptionSchema<CorpusOptions> schema(const StepNames& names);
};

// Where a trainer's MLP policy starts.
struct PolicyStartOptions {
  // Start from this MLP policy file (e.g. from bc-train, as ml-compiler-opt
  // warm-starts from behavioural cloning); unset: a random MLP over clang's
  // features with `mlp`'s architecture.
  std::optional<std::filesystem::path> initialPolicy;
  // Quantile vocabulary for a random start (a directory of .buckets). Unset:
  // built from the data (the heuristic's decisions on the training corpus,
  // one recorded pass, as ml-compiler-opt's pipeline does offline).
  std::optional<std::filesystem::path> vocabulary;
  int vocabularyQuantiles = 1000;
  policies::MlpOptions mlp;

  Status validate() const;
  // --initial-policy (when offered), --vocabulary, --vocabulary-quantiles and
  // the MLP's flags.
  static OptionSchema<PolicyStartOptions> schema(bool offerInitialPolicy);
};

// One run: how long, from which seed, into which files.
struct RunOptions {
  // Steps of the run (ES steps, PPO iterations, BC epochs).
  int64_t steps = 100;
  // A wall-clock budget for this invocation, in seconds (0: none). The step
  // expected to end past it (the time so far plus the last step's) is run as
  // the final one, so a budget-limited run ends like a complete one:
  // validated, with its final policy written. Runs with equal budgets are
  // how optimisers are compared fairly.
  double maxSeconds = 0;
  // Seeds everything random in the run: module sampling, perturbations,
  // action sampling, mini-batch orders, a random initial policy.
  uint64_t seed = 1;
  // The run's HDF5 file, rewritten atomically after every step.
  std::filesystem::path output = "results/run.h5";
  // The final policy as a policy file (for mlgo-eval and --initial-policy),
  // written when the run ends; the run file holds it too. Unset: none.
  std::optional<std::filesystem::path> policyOutput;
  // Policy snapshots every this many steps (and at the end).
  int64_t snapshotInterval = 10;
  // Threads for the update maths (BC and PPO losses); results do not depend
  // on it.
  size_t threads = hardwareThreads();
  // The effective config as TOML and flattened key → value, stored in the file.
  std::string configToml;
  std::map<std::string, std::string, std::less<>> configValues;

  // `policyFile`: the trainer writes one, so policyOutput must be set.
  Status validate(bool policyFile = false) const;
  // The steps flag, --seed, --max-seconds, -o, --policy-output (with
  // `policyFile`: unset, it is -o's path with .json), --snapshot-interval.
  static OptionSchema<RunOptions> schema(const StepNames& names, bool policyFile);
  // Where the policy file goes when not given: beside the run file.
  static std::filesystem::path policyBeside(const std::filesystem::path& output);
};

// A trainer's defaults for the shared groups.
inline CorpusOptions corpusOptions(size_t modulesPerStep) {
  CorpusOptions options;
  options.modulesPerStep = modulesPerStep;
  return options;
}
inline PolicyStartOptions policyStartOptions(policies::MlpOptions mlp) {
  PolicyStartOptions options;
  options.mlp = std::move(mlp);
  return options;
}
// The compiling trainers' start without an initial policy: a residual MLP
// around the task's default decision with a zero output layer, so the run
// starts at exactly the compiler's own decisions (reward 0) and moves away
// only where training finds a reason. A random MLP (margin 0) starts far
// below the compiler: ~+40 % larger code after two default ES steps.
// ES evaluates the argmax policy, so the margin only sets the scale σ is
// measured against (EsTrainerOptions::defaultOptimizer); PPO samples its
// actions, so the margin sets how often it leaves the compiler's decision
// while collecting: 1/(1 + e^margin), 4.7 % at 3 (at 1, 27 %: its sampled
// compiles on Lua were ~50 % larger than -Oz, at 3 7-21 %).
inline PolicyStartOptions residualStartOptions(policies::MlpOptions mlp, double margin) {
  mlp.residualMargin = margin;
  return policyStartOptions(std::move(mlp));
}
inline RunOptions runOptions(std::filesystem::path output,
                             std::optional<std::filesystem::path> policyOutput = std::nullopt) {
  RunOptions options;
  options.output = std::move(output);
  options.policyOutput = std::move(policyOutput);
  return options;
}

// "group.field: message" from a group's own "field: message".
Error inGroup(std::string_view group, const Error& error);

// The first group whose validation failed, named: validateGroups({{"data",
// data.validate()}, {"run", run.validate()}}).
Status validateGroups(std::initializer_list<std::pair<std::string_view, Status>> groups);

} // namespace mlgo::training
