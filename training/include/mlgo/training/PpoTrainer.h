// ppo-train's engine: PPO on an inlining-for-size policy with real
// compilations, as ml-compiler-opt trains its inliner.
//
// Each iteration draws modules from the corpus, compiles them with the
// current policy in SAMPLING mode (the evaluator, TBB-parallel), and records
// every decision: features, the action drawn and its log-probability. A
// module's reward is its size reward against -Oz, or against ml-compiler-opt's
// per-module moving-average baseline; every decision of the module gets that
// reward (discount 0, as ml-compiler-opt's inlining config). Advantages are
// the rewards, optionally standardised.
//
// No value function: with discount 0 a decision's return is its module's
// reward, known once the module is compiled, so there is nothing to
// bootstrap; a learned V(s) could only reduce variance, and ml-compiler-opt
// itself uses a constant-zero value network (value_pred_loss_coef = 0), with
// the moving-average baseline and advantage normalisation in its place.
//
// The policy is then updated by Adam on mini-batches of the iteration's
// decisions: the clipped surrogate objective against the recorded
// log-probabilities, an entropy bonus, L2 on the weights, and tf_agents'
// adaptive and cutoff KL penalties (β adapted after every update), as
// ml-compiler-opt's ppo_nn_agent.gin configures PPOAgent.
//
// Every iteration is appended to the run's HDF5 file with a checkpoint (Adam
// state, moving baselines, KL β). Reproducible: for a seed the run file's
// numbers (timings aside) are identical at any number of workers, and a run
// resumed from its file continues exactly as the uninterrupted run would.
#pragma once

#include "mlgo/corpus/Sampler.h"
#include "mlgo/evaluators/Evaluator.h"
#include "mlgo/policies/Mlp.h"
#include "mlgo/results/RunFile.h"
#include "mlgo/rl/Adam.h"
#include "mlgo/rl/Losses.h"
#include "mlgo/rl/Network.h"
#include "mlgo/support/Expected.h"

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>

namespace mlgo::training {

struct PpoTrainerOptions {
  // --- data -----------------------------------------------------------------
  // Training corpus (merge several code bases for a policy that generalises).
  std::filesystem::path corpus;
  // Held-out code compiled with the deterministic (argmax) policy every
  // validationInterval iterations; the best policy is chosen on it. Unset:
  // best is chosen on the training reward of the sampling policy.
  std::optional<std::filesystem::path> validationCorpus;
  int64_t validationInterval = 10;
  // Modules compiled per iteration (ml-compiler-opt's num_modules = 100);
  // clamped to the corpus size except with replacement.
  size_t modulesPerIteration = 100;
  corpus::SamplingStrategy sampling = corpus::SamplingStrategy::BucketRoundRobin;

  // --- policy ---------------------------------------------------------------
  // Start from this MLP policy file (e.g. from bc-train, as ml-compiler-opt
  // warm-starts PPO from behavioural cloning); unset: a random MLP.
  std::optional<std::filesystem::path> initialPolicy;
  // Vocabulary (.buckets directory) for a random start; unset: built from the
  // heuristic's decisions on the training corpus.
  std::optional<std::filesystem::path> vocabulary;
  int vocabularyQuantiles = 1000;
  policies::MlpOptions mlp = rl::ppoNetworkDefaults();

  // --- reward ---------------------------------------------------------------
  // ml-compiler-opt's moving_average_decay_rate (0.8 in ppo_nn_agent.gin):
  // the per-module baseline the training reward is computed against moves
  // this slowly from -Oz towards the policy's own sizes. 1: always -Oz.
  double movingAverageDecay = 0.8;
  rl::AdvantageNormalization advantageNormalization = rl::AdvantageNormalization::MiniBatch;

  // --- loss and optimiser (ppo_nn_agent.gin) --------------------------------
  rl::PpoLossOptions loss;
  rl::AdamOptions adam = rl::mlCompilerOptAdam(3e-5);
  // Decisions per mini-batch (gin: batch_size 256 sequences × 16 steps).
  size_t minibatchSize = 4096;
  // Exactly this many mini-batch updates per iteration (gin: num_iterations
  // = 300), passing over the decisions as often as that takes, each pass in
  // a fresh seeded order. ml-compiler-opt collects far more decisions per
  // iteration than a small corpus gives, so 300 updates can mean hundreds of
  // passes here (the clipping and KL penalties keep the policy close to the
  // sampling one). Unset: `epochs` passes instead.
  std::optional<int64_t> updatesPerIteration = 300;
  // Passes over the iteration's decisions when updatesPerIteration is unset.
  int64_t epochs = 4;

  // --- run ------------------------------------------------------------------
  int64_t iterations = 100;
  // Seeds module sampling, action sampling, mini-batch order and a random
  // initial policy.
  uint64_t seed = 1;
  std::filesystem::path output = "results/ppo-run.h5";
  // The final policy as a policy file (for mlgo-eval, es-train
  // --initial-policy), written when the run ends; the run file holds it too.
  std::filesystem::path policyOutput = "results/ppo-policy.json";
  // Policy snapshots every this many iterations (and at the end).
  int64_t snapshotInterval = 10;
  evaluators::EvaluatorOptions evaluator;
  // The effective config as TOML and flattened, stored in the run file.
  std::string configToml;
  std::map<std::string, std::string, std::less<>> configValues;

  Status validate() const; // names the bad field
};

// What a caller sees after every iteration.
struct PpoProgress {
  int64_t iteration = 0; // 0-based
  int64_t iterations = 0;
  double meanReward = 0; // of the sampling policy against -Oz, over ok modules
  size_t failedCompilations = 0;
  size_t decisions = 0;
  int64_t updates = 0;
  double loss = 0;    // mean total loss over the iteration's updates
  double entropy = 0; // mean policy entropy after the update (nats)
  double kl = 0;      // mean KL(π_old ‖ π_new) over the iteration's decisions
  double klBeta = 0;
  double compilationsPerSecond = 0;
  double elapsedSeconds = 0;
  double etaSeconds = 0;
  std::optional<double> validationTotalReward;
};

struct PpoTrainerSummary {
  int64_t iterationsRun = 0;   // in this invocation
  int64_t iterationsTotal = 0; // including resumed ones
  uint64_t compilations = 0;
  uint64_t failedCompilations = 0;
  uint64_t decisions = 0;
  int64_t updates = 0;
  double seconds = 0;
  double finalMeanReward = 0;
  std::optional<double> bestValidationTotalReward;
  std::filesystem::path output;
  std::optional<std::filesystem::path> policyOutput; // written when the run ended
};

class PpoTrainer {
public:
  using ProgressCallback = std::function<void(const PpoProgress&)>;

  // A new run, written to options.output.
  static Expected<PpoTrainer> create(PpoTrainerOptions options);
  // Continues the run in options.output from its checkpoint. The options must
  // be the run's own (ppo-train --resume reads them back from the file); only
  // evaluator settings such as the number of workers may differ.
  static Expected<PpoTrainer> resume(PpoTrainerOptions options);

  PpoTrainer(PpoTrainer&&) noexcept;
  PpoTrainer& operator=(PpoTrainer&&) noexcept;
  ~PpoTrainer();

  // Runs until options.iterations are done, then writes options.policyOutput;
  // `stopAfter` limits this call to that many iterations (tests use it to
  // simulate a kill).
  Expected<PpoTrainerSummary> run(const ProgressCallback& progress = {},
                                  std::optional<int64_t> stopAfter = std::nullopt);

  const PpoTrainerOptions& options() const;
  const results::RunRecord& record() const;
  // The current policy.
  const policies::MlpPolicy& policy() const;

private:
  struct Impl;
  explicit PpoTrainer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

} // namespace mlgo::training
