#include "mlgo/rl/Updates.h"

#include "mlgo/support/OptionSchema.h"

#include "mlgo/rl/MiniBatches.h"
#include "mlgo/support/Random.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>

namespace mlgo::rl {

namespace {

constexpr uint64_t kShuffleTag = 0x70706f; // "ppo"

// Adam's step on the policy's own parameters.
AdamUpdate step(policies::MlpPolicy& policy, const AdamOptions& options, AdamState& adam,
                std::span<const double> gradient) {
  std::vector<double> theta(policy.parameters().begin(), policy.parameters().end());
  AdamUpdate update = adamStep(options, adam, gradient, theta);
  policy.setParameters(theta);
  return update;
}

void accumulate(PpoLossTerms& sums, const PpoLossTerms& terms) {
  sums.policyGradient += terms.policyGradient;
  sums.entropy += terms.entropy;
  sums.klPenalty += terms.klPenalty;
  sums.l2 += terms.l2;
  sums.total += terms.total;
  sums.meanRatio += terms.meanRatio;
  sums.clipFraction += terms.clipFraction;
}

} // namespace

Status PpoUpdateOptions::validate() const {
  if (Status s = loss.validate("loss"); !s)
    return s;
  if (Status s = adam.validate("adam"); !s)
    return s;
  if (minibatchSize < 1)
    return makeError("minibatchSize: must be at least 1");
  if (epochs < 1)
    return makeError("epochs: must be at least 1, got " + std::to_string(epochs));
  if (updatesPerIteration && *updatesPerIteration < 1)
    return makeError("updatesPerIteration: must be at least 1, got " +
                     std::to_string(*updatesPerIteration));
  return Status::ok();
}

PpoUpdateStats ppoUpdate(policies::MlpPolicy& policy, DecisionSet& data,
                         const PpoUpdateOptions& options, AdamState& adam, double& klBeta,
                         uint64_t seed, uint64_t iteration, const RowParallelism& parallel) {
  PpoUpdateStats stats;
  const size_t rows = data.rows();
  if (rows == 0)
    return stats;
  data.oldLogDistributions = logDistributions(policy, data, parallel);
  std::vector<size_t> all(rows);
  std::iota(all.begin(), all.end(), size_t{0});
  stats.before = policyDrift(policy, data, all, parallel);
  std::vector<double> advantages = data.rewards;
  if (options.advantageNormalization == AdvantageNormalization::Iteration)
    advantages = normalizeAdvantages(advantages);
  const int64_t batchesPerPass =
      static_cast<int64_t>((rows + options.minibatchSize - 1) / options.minibatchSize);
  const int64_t total = options.updatesPerIteration.value_or(options.epochs * batchesPerPass);
  std::vector<std::vector<size_t>> batches;
  size_t next = 0;
  uint64_t pass = 0;
  std::vector<double> gradient(policy.parameterCount());
  std::vector<double> batchAdvantages;
  for (; stats.updates < total; ++stats.updates) {
    if (next == batches.size()) {
      batches = miniBatches(permutation(rows, deriveKey({seed, iteration, pass++, kShuffleTag})),
                            options.minibatchSize);
      next = 0;
    }
    const std::vector<size_t>& batch = batches[next++];
    batchAdvantages.clear();
    for (size_t r : batch)
      batchAdvantages.push_back(advantages[r]);
    if (options.advantageNormalization == AdvantageNormalization::MiniBatch)
      batchAdvantages = normalizeAdvantages(batchAdvantages);
    std::fill(gradient.begin(), gradient.end(), 0.0);
    PpoLossTerms terms =
        ppoLoss(policy, data, batch, batchAdvantages, klBeta, options.loss, gradient, parallel);
    stats.gradientNormSum += step(policy, options.adam, adam, gradient).gradientNorm;
    accumulate(stats.sums, terms);
    // tf_agents adapts β after each train() call, on that call's batch
    // under the updated policy.
    if (options.loss.initialKlBeta > 0)
      klBeta = adaptKlBeta(klBeta, policyDrift(policy, data, batch, parallel).meanKl, options.loss);
  }
  stats.after = policyDrift(policy, data, all, parallel);
  return stats;
}

Status BcUpdateOptions::validate() const {
  if (Status s = adam.validate("adam"); !s)
    return s;
  if (minibatchSize < 1)
    return makeError("minibatchSize: must be at least 1");
  if (!(l2 >= 0) || !std::isfinite(l2))
    return makeError("l2: must be finite and non-negative, got " + std::to_string(l2));
  return Status::ok();
}

BcEpochStats bcEpoch(policies::MlpPolicy& policy, const DecisionSet& data,
                     const std::vector<size_t>& order, const BcUpdateOptions& options,
                     AdamState& adam, const RowParallelism& parallel) {
  BcEpochStats stats;
  std::vector<double> gradient(policy.parameterCount());
  for (const std::vector<size_t>& batch : miniBatches(order, options.minibatchSize)) {
    std::fill(gradient.begin(), gradient.end(), 0.0);
    ClassificationStats loss = crossEntropy(policy, data, batch, gradient, parallel);
    double penalty = l2Penalty(policy, options.l2, gradient);
    stats.gradientNormSum += step(policy, options.adam, adam, gradient).gradientNorm;
    stats.lossSum += loss.loss + penalty;
    ++stats.batches;
  }
  return stats;
}

const OptionSchema<PpoUpdateOptions>& PpoUpdateOptions::schema() {
  static const OptionSchema<PpoUpdateOptions> schema = [] {
    OptionSchema<PpoUpdateOptions> s;
    s.choice(
        "advantage-normalization",
        "Standardise advantages over each mini-batch, the iteration, or not",
        [](auto& o) -> auto& { return o.advantageNormalization; },
        {AdvantageNormalization::None, AdvantageNormalization::MiniBatch,
         AdvantageNormalization::Iteration},
        advantageNormalizationName);
    s.include(
        PpoLossOptions::schema(), [](auto& o) -> auto& { return o.loss; });
    s.group("Optimiser");
    s.include(
        AdamOptions::schema(), [](auto& o) -> auto& { return o.adam; });
    s.value(
        "minibatch-size", "Decisions per mini-batch",
        [](auto& o) -> auto& { return o.minibatchSize; });
    s.value(
        "epochs", "Passes over each iteration's decisions (with --updates-per-iteration 0)",
        [](auto& o) -> auto& { return o.epochs; });
    s.zeroUnset(
        "updates-per-iteration",
        "Exactly this many mini-batch updates per iteration, whatever the data size (0: "
        "--epochs decides)",
        [](auto& o) -> auto& { return o.updatesPerIteration; });
    return s;
  }();
  return schema;
}

const OptionSchema<BcUpdateOptions>& BcUpdateOptions::schema() {
  static const OptionSchema<BcUpdateOptions> schema = [] {
    OptionSchema<BcUpdateOptions> s;
    s.include(
        AdamOptions::schema(), [](auto& o) -> auto& { return o.adam; });
    s.value(
        "minibatch-size", "Decisions per mini-batch",
        [](auto& o) -> auto& { return o.minibatchSize; });
    s.value(
        "l2", "L2 coefficient on the weight matrices", [](auto& o) -> auto& { return o.l2; });
    return s;
  }();
  return schema;
}

} // namespace mlgo::rl
