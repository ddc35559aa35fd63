// ppo-train's engine: PPO on an inlining-for-size policy with real
// compilations, as ml-compiler-opt trains its inliner.
//
// Each iteration draws modules from the corpus, compiles them with the
// current policy in SAMPLING mode, and records every decision: features, the
// action drawn and its log-probability. A module's reward is its size reward
// against -Oz, or against ml-compiler-opt's per-module moving-average
// baseline; every decision of the module gets that reward (discount 0, as
// ml-compiler-opt's inlining config). Advantages are the rewards, optionally
// standardised.
//
// No value function: with discount 0 a decision's return is its module's
// reward, known once the module is compiled, so there is nothing to
// bootstrap; a learned V(s) could only reduce variance, and ml-compiler-opt
// itself uses a constant-zero value network (value_pred_loss_coef = 0), with
// the moving-average baseline and advantage normalisation in its place.
//
// The policy is then updated by rl::ppoUpdate: Adam on mini-batches of the
// iteration's decisions, the clipped surrogate objective against the
// recorded log-probabilities, an entropy bonus, L2 on the weights, and
// tf_agents' adaptive and cutoff KL penalties, as ml-compiler-opt's
// ppo_nn_agent.gin configures PPOAgent.
//
// Every iteration is a step of the TrainingLoop (run file, checkpoint with
// Adam state, moving baselines and KL β). Reproducible: for a seed the run
// file's numbers (timings aside) are identical at any number of workers, and
// a run resumed from its file continues exactly as the uninterrupted run
// would.
#pragma once

#include "mlgo/evaluators/Scorer.h"
#include "mlgo/policies/Mlp.h"
#include "mlgo/results/RunFile.h"
#include "mlgo/rl/Network.h"
#include "mlgo/rl/Updates.h"
#include "mlgo/support/Expected.h"
#include "mlgo/training/Options.h"
#include "mlgo/training/StepColumns.h"
#include "mlgo/training/Trainer.h"
#include "mlgo/training/TrainingLoop.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

namespace mlgo::training {

struct PpoTrainerOptions {
  // Modules per iteration: ml-compiler-opt's num_modules = 100.
  CorpusOptions data = corpusOptions(100);
  // ml-compiler-opt's network (rl::ppoNetworkDefaults) unless a policy file
  // (e.g. from bc-train) gives the start, as ml-compiler-opt warm-starts PPO
  // from behavioural cloning.
  PolicyStartOptions policy = residualStartOptions(rl::ppoNetworkDefaults(), 3.0);

  // ml-compiler-opt's moving_average_decay_rate (0.8 in ppo_nn_agent.gin):
  // the per-module baseline the training reward is computed against moves
  // this slowly from -Oz towards the policy's own sizes. 1: always -Oz.
  double movingAverageDecay = 0.8;
  // Loss, Adam, mini-batches and updates per iteration (ppo_nn_agent.gin).
  rl::PpoUpdateOptions update;

  // Steps are iterations (collect, then update).
  RunOptions run = runOptions("results/ppo-run.h5", "results/ppo-policy.json");

  Status validate() const; // names the bad field
  // ppo-train's flags: Data, Policy, Reward, Loss, Optimiser, Run.
  static const OptionSchema<PpoTrainerOptions>& schema();
};

// One PPO iteration, as the run file's /steps records it (ppoStepColumns()).
struct PpoIteration {
  // Of the sampling policy against -Oz over the ok modules (NaN: none).
  double rewardMean = kNoValue;
  double rewardMin = kNoValue;
  double rewardMax = kNoValue;
  double rewardTotal = kNoValue; // the task's reward of Σ measured against Σ baseline
  // Against the moving-average baselines: what the advantages are made of.
  double trainingRewardMean = kNoValue;
  CompileStats compile;
  size_t trainingDecisions = 0;
  double inlineShare = kNoValue;        // of the sampled actions
  double heuristicAgreement = kNoValue; // sampled action == the heuristic's
  rl::PpoUpdateStats update;
  double adaptiveKlBeta = 0; // after the update
  double secondsCollect = 0;
  double secondsUpdate = 0;

  // Means over the iteration's updates (NaN without updates).
  double perUpdate(double sum) const {
    return update.updates ? sum / static_cast<double>(update.updates) : kNoValue;
  }
};
const ColumnTable<PpoIteration>& ppoStepColumns();

struct PpoProgress : StepProgress {
  PpoIteration record;
  double compilationsPerSecond = 0;
};

struct PpoTrainerSummary : LoopSummary {
  std::vector<PpoIteration> iterations; // of this invocation
  CompileStats compiles;                // summed over them
  uint64_t decisions = 0;
  int64_t updates = 0;
  double finalMeanReward = 0;
};

class PpoTrainer : public Trainer<PpoTrainer, PpoTrainerOptions> {
public:
  using ProgressCallback = std::function<CallbackAction(const PpoProgress&)>;

  // Runs until the run's iterations are done (then writes the policy file),
  // `stopAfter` iterations are done in this call, or `progress` asks to stop.
  Expected<PpoTrainerSummary> run(const ProgressCallback& progress = {},
                                  std::optional<int64_t> stopAfter = std::nullopt);

private:
  friend class Trainer<PpoTrainer, PpoTrainerOptions>;
  PpoTrainer() = default;
  static std::unique_ptr<TrainingAlgorithm> makeAlgorithm(const PpoTrainerOptions& options,
                                                          evaluators::Scorer* scorer);
};

} // namespace mlgo::training
