// es-train's engine: evolution strategies on an inlining-for-size policy,
// with real compilations as the reward. Each step asks the optimiser for a
// population of weight vectors, compiles the step's sampled modules under
// every candidate (all candidates see the same modules, so both members of
// an antithetic pair are compared on equal terms), tells the rewards, and
// appends the step to the run's HDF5 file together with a checkpoint.
//
// Reproducible: for a seed and options the run file's numbers (timings
// aside) are identical at any number of workers, and a run killed at any
// point and resumed from its file reaches the same final policy bit for bit.
#pragma once

#include "mlgo/corpus/Sampler.h"
#include "mlgo/es/GradientEs.h"
#include "mlgo/es/SepCmaEs.h"
#include "mlgo/es/TrustRegion.h"
#include "mlgo/evaluators/Evaluator.h"
#include "mlgo/policies/Mlp.h"
#include "mlgo/results/RunFile.h"
#include "mlgo/support/Expected.h"

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace mlgo::training {

struct EsTrainerOptions {
  // --- data -----------------------------------------------------------------
  // Training corpus. Merge several code bases (mlgo-corpus merge): a policy
  // trained on one small corpus tends to win there and lose elsewhere.
  std::filesystem::path corpus;
  // Separate code the policy never trains on; every validationInterval steps
  // the current policy compiles all of it, and the "best" policy is chosen
  // on it. Unset: best is chosen on the training reward (noisy, optimistic).
  std::optional<std::filesystem::path> validationCorpus;
  int64_t validationInterval = 10;
  // Modules compiled per step (per candidate). More: less noise per step,
  // proportionally more compilations.
  size_t modulesPerStep = 8;
  corpus::SamplingStrategy sampling = corpus::SamplingStrategy::BucketRoundRobin;

  // --- policy ---------------------------------------------------------------
  // Start from this MLP policy file (e.g. from bc-train); unset: a random
  // MLP over clang's features with `mlp`'s architecture.
  std::optional<std::filesystem::path> initialPolicy;
  // Quantile vocabulary for a random start (a directory of .buckets). Unset:
  // built from the heuristic's decisions on the training corpus (one
  // recorded pass, as ml-compiler-opt's pipeline does offline).
  std::optional<std::filesystem::path> vocabulary;
  int vocabularyQuantiles = 1000;
  policies::MlpOptions mlp;
  // Perturb each weight in proportion to its size (|w| + 0.01), which suits a
  // pretrained start; otherwise all weights alike.
  bool scaleByWeights = false;

  // --- optimiser ------------------------------------------------------------
  es::OptimizerKind optimizer = es::OptimizerKind::GradientEs;
  es::GradientEs::Options gradientEs;
  es::TrustRegionEs::Options trustRegion;
  es::SepCmaEs::Options sepCma;

  // --- run ------------------------------------------------------------------
  int64_t steps = 100;
  // Seeds perturbations, module sampling and a random initial policy.
  uint64_t seed = 1;
  // The run's HDF5 file (rewritten atomically after every step).
  std::filesystem::path output = "results/es-run.h5";
  // Policy snapshots every this many steps (and at the end).
  int64_t snapshotInterval = 10;
  evaluators::EvaluatorOptions evaluator;
  // The effective config as TOML and flattened key → value, stored in the file.
  std::string configToml;
  std::map<std::string, std::string, std::less<>> configValues;

  Status validate() const; // names the bad field
};

// What a caller sees after every step (for the terminal progress line).
struct StepProgress {
  int64_t step = 0;
  int64_t steps = 0;
  double meanReward = 0;
  double bestReward = 0;
  size_t failedCompilations = 0;
  double evaluationsPerSecond = 0;
  double elapsedSeconds = 0;
  double etaSeconds = 0;
  bool skipped = false;
  std::optional<double> validationTotalReward;
  size_t cacheLookups = 0; // decision-sequence cache (in-process backend)
  size_t cacheHits = 0;
};

struct EsTrainerSummary {
  int64_t stepsRun = 0;   // in this invocation
  int64_t stepsTotal = 0; // including resumed ones
  uint64_t compilations = 0;
  uint64_t failedCompilations = 0;
  int64_t skippedSteps = 0;
  double seconds = 0;
  double finalMeanReward = 0;
  std::optional<double> bestValidationTotalReward;
  uint64_t cacheLookups = 0;
  uint64_t cacheHits = 0;
  double cacheSecondsSaved = 0;
  std::filesystem::path output;
};

class EsTrainer {
public:
  using ProgressCallback = std::function<void(const StepProgress&)>;

  // A new run, written to options.output.
  static Expected<EsTrainer> create(EsTrainerOptions options);
  // Continues the run in options.output from its checkpoint. The options
  // must be the run's own (es-train --resume reads them back from the
  // file's stored config); only evaluator settings such as the number of
  // workers may differ, since they do not change the numbers.
  static Expected<EsTrainer> resume(EsTrainerOptions options);

  EsTrainer(EsTrainer&&) noexcept;
  EsTrainer& operator=(EsTrainer&&) noexcept;
  ~EsTrainer();

  // Runs until options.steps steps are done. `stopAfter` limits this call to
  // that many steps (tests use it to simulate a kill).
  Expected<EsTrainerSummary> run(const ProgressCallback& progress = {},
                                 std::optional<int64_t> stopAfter = std::nullopt);

  const EsTrainerOptions& options() const;
  const results::RunRecord& record() const;

private:
  struct Impl;
  explicit EsTrainer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

} // namespace mlgo::training
