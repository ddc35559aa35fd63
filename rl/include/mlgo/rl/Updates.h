// One update of each learner, on decisions already collected: PPO's
// mini-batch updates of an iteration (ml-compiler-opt's ppo_nn_agent.gin
// settings) and one epoch of behavioural cloning. Pure maths on a policy, a
// DecisionSet and Adam's state; the trainers (training/) collect the data,
// record the statistics and checkpoint the state.
#pragma once

#include "mlgo/policies/Mlp.h"
#include "mlgo/rl/Adam.h"
#include "mlgo/rl/Decisions.h"
#include "mlgo/rl/Losses.h"
#include "mlgo/support/Expected.h"
#include "mlgo/support/OptionSchemaFwd.h"

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace mlgo::rl {

struct PpoUpdateOptions {
  PpoLossOptions loss;
  AdamOptions adam = mlCompilerOptAdam(3e-5);
  AdvantageNormalization advantageNormalization = AdvantageNormalization::MiniBatch;
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

  Status validate() const; // names the field
  // --advantage-normalization; the Loss and Optimiser groups.
  static const OptionSchema<PpoUpdateOptions>& schema();
};

struct PpoUpdateStats {
  int64_t updates = 0;
  PpoLossTerms sums; // summed over the updates
  double gradientNormSum = 0;
  PolicyDrift before; // over all decisions, before the first update
  PolicyDrift after;  // and after the last
};

// The iteration's updates of `policy` on `data` (actions, logProbabilities,
// rewards as advantages): fills data.oldLogDistributions from the sampling
// policy, then Adam on mini-batches, β of the adaptive KL penalty adapted
// after every update. Pass p's order is a permutation keyed by
// deriveKey({seed, iteration, p, tag}). Nothing happens without decisions.
PpoUpdateStats ppoUpdate(policies::MlpPolicy& policy, DecisionSet& data,
                         const PpoUpdateOptions& options, AdamState& adam, double& klBeta,
                         uint64_t seed, uint64_t iteration, const RowParallelism& parallel);

struct BcUpdateOptions {
  AdamOptions adam = mlCompilerOptAdam(1e-3);
  // Decisions per mini-batch (gin: batch_size = 64).
  size_t minibatchSize = 64;
  // L2 on the weight matrices: l2 · Σ w². Helps a small corpus generalise.
  double l2 = 0;

  Status validate() const;                              // names the field
  static const OptionSchema<BcUpdateOptions>& schema(); // Adam, --minibatch-size, --l2
};

struct BcEpochStats {
  size_t batches = 0;
  double lossSum = 0; // cross-entropy + L2 penalty, summed over mini-batches
  double gradientNormSum = 0;
};

// One pass over the training decisions in `order`, minimising each
// mini-batch's mean cross-entropy against data.actions (plus L2) with Adam.
BcEpochStats bcEpoch(policies::MlpPolicy& policy, const DecisionSet& data,
                     const std::vector<size_t>& order, const BcUpdateOptions& options,
                     AdamState& adam, const RowParallelism& parallel);

} // namespace mlgo::rl
