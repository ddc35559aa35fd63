// The losses BC and PPO minimise, with their gradients through the MLP's
// backward pass, and the PPO pieces around them (advantages, the adaptive KL
// coefficient, ml-compiler-opt's moving-average reward baseline).
//
// Every loss is a mean over the given rows. Rows are processed in fixed
// chunks of RowParallelism::kChunkRows, chunks possibly in parallel, and the
// chunks' partial gradients are added in chunk order: the result is the same
// bit for bit at any number of threads.
#pragma once

#include "mlgo/policies/Mlp.h"
#include "mlgo/rl/Decisions.h"
#include "mlgo/support/Expected.h"
#include "mlgo/support/OptionSchemaFwd.h"

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

namespace mlgo::rl {

class RowParallelism {
public:
  static constexpr size_t kChunkRows = 64;

  explicit RowParallelism(size_t threads = 1);
  RowParallelism(RowParallelism&&) noexcept;
  RowParallelism& operator=(RowParallelism&&) noexcept;
  ~RowParallelism();

  size_t threads() const { return threads_; }
  size_t chunks(size_t rows) const { return (rows + kChunkRows - 1) / kChunkRows; }
  // Calls work(chunk, begin, end) for every chunk [begin, end) of [0, rows),
  // on up to threads() threads. `work` must only write its chunk's data.
  void forEachChunk(size_t rows,
                    const std::function<void(size_t chunk, size_t begin, size_t end)>& work) const;

private:
  struct Impl;
  size_t threads_ = 1;
  std::unique_ptr<Impl> impl_;
};

// --- behavioural cloning ----------------------------------------------------

struct ClassificationStats {
  double loss = 0; // mean cross-entropy, in nats
  size_t rows = 0;
  size_t correct = 0;           // argmax (ties: lower action, as decide()) == label
  size_t predictedPositive = 0; // argmax == 1 (inline)
  size_t labelledPositive = 0;  // label == 1
  double weight = 0;            // sum of the rows' weights (1 each without weights)
  double correctWeight = 0;     // of the rows predicted right

  double accuracy() const { return rows ? double(correct) / double(rows) : 0.0; }
  // The share of the weight decided right: with bytes as weights, the share
  // of the bytes at stake that the policy's decisions get.
  double weightedAccuracy() const { return weight > 0 ? correctWeight / weight : 0.0; }
};

// Mean over `rows` of −log π(actions[r] | row r): the cross-entropy against
// the labels in data.actions, each row times data.weights[r] when there are
// weights. With a non-empty `gradient` (the policy's
// parameterCount()), adds d(mean loss)/dθ to it.
ClassificationStats crossEntropy(const policies::MlpPolicy& policy, const DecisionSet& data,
                                 std::span<const size_t> rows, std::span<double> gradient,
                                 const RowParallelism& parallel);

// coefficient · Σ w² over the weight matrices (not the biases), as tf_agents'
// policy_l2_reg on the network's kernels; adds 2 · coefficient · w to
// `gradient` if it is non-empty. Returns the penalty.
double l2Penalty(const policies::MlpPolicy& policy, double coefficient, std::span<double> gradient);

// --- PPO --------------------------------------------------------------------

// Where advantages are standardised to mean 0, variance 1.
enum class AdvantageNormalization {
  None,
  // Over each mini-batch: tf_agents normalises over every train() call's
  // batch, and ml-compiler-opt calls train() once per mini-batch.
  MiniBatch,
  // Over all decisions of the iteration, once.
  Iteration,
};
std::string_view advantageNormalizationName(AdvantageNormalization mode); // "none", …
std::optional<AdvantageNormalization> parseAdvantageNormalization(std::string_view name);

// tf_agents' _normalize_advantages: (a − mean) / √(var + ε), with the
// population variance.
std::vector<double> normalizeAdvantages(std::span<const double> advantages, double epsilon = 1e-8);

// ml-compiler-opt's moving-average baseline (compilation_runner.py): per
// module it starts at the -Oz size, a compile is rewarded by the task's
// reward against it (ml-compiler-opt's 1 − (size + δ) / (average + δ)), and
// then average ← decay · average + (1 − decay) · size. decay = 1 keeps the
// -Oz baseline: the reward reported everywhere else.
double nextMovingAverage(double average, double sizeBytes, double decay);

struct PpoLossOptions {
  // ε of the clipped surrogate min(r A, clip(r, 1 − ε, 1 + ε) A); 0: the
  // unclipped r A (tf_agents' importance_ratio_clipping).
  double clip = 0.2;
  // Weight of the entropy bonus: the loss has −entropyCoefficient · mean H.
  double entropyCoefficient = 0.003;
  // L2 on the weight matrices (policy_l2_reg): policyL2 · Σ w².
  double policyL2 = 1e-6;
  // Adaptive KL penalty β · mean KL(π_old ‖ π), β adapted after every update
  // towards klTarget (×1.5 above target · (1 + klTolerance), ÷1.5 below
  // target · (1 − klTolerance)). initialKlBeta = 0 switches it off.
  double initialKlBeta = 1.0;
  double klTarget = 0.01;
  double klTolerance = 0.3;
  // Fixed cutoff penalty klCutoffCoefficient · max(0, mean KL − klCutoffFactor ·
  // klTarget)²; klCutoffFactor = 0 switches it off.
  double klCutoffFactor = 2.0;
  double klCutoffCoefficient = 1000.0;

  Status validate(std::string_view prefix = "loss") const; // names the field
  static const OptionSchema<PpoLossOptions>& schema();     // --clip, --entropy, --kl-*, …
};

struct PpoLossTerms {
  double policyGradient = 0; // −mean min(r A, clip(r) A)
  double entropy = 0;        // −entropyCoefficient · mean H
  double klPenalty = 0;      // β · mean KL + cutoff penalty
  double l2 = 0;
  double total = 0;
  double meanEntropy = 0;  // nats
  double meanKl = 0;       // KL(π_old ‖ π), nats
  double meanRatio = 0;    // importance ratio π / π_old of the taken action
  double clipFraction = 0; // share of rows with |r − 1| > clip
  size_t rows = 0;
};

// The PPO loss over `rows` of `data` (actions, logProbabilities,
// oldLogDistributions), with `advantages[i]` the advantage of rows[i] and
// `klBeta` the current adaptive KL coefficient. With a non-empty `gradient`,
// adds dTotal/dθ to it.
PpoLossTerms ppoLoss(const policies::MlpPolicy& policy, const DecisionSet& data,
                     std::span<const size_t> rows, std::span<const double> advantages,
                     double klBeta, const PpoLossOptions& options, std::span<double> gradient,
                     const RowParallelism& parallel);

// Mean KL(π_old ‖ π) and mean entropy of π over `rows`.
struct PolicyDrift {
  double meanKl = 0;
  double meanEntropy = 0;
};
PolicyDrift policyDrift(const policies::MlpPolicy& policy, const DecisionSet& data,
                        std::span<const size_t> rows, const RowParallelism& parallel);

// tf_agents' update_adaptive_kl_beta: β · 1.5 if meanKl > target · (1 + tol),
// β / 1.5 if below target · (1 − tol), at least 1e-15; 0 stays 0 (off).
double adaptKlBeta(double beta, double meanKl, const PpoLossOptions& options);

// log π(· | row) for every row of `data` (rows × actions): PPO's
// oldLogDistributions, computed from the sampling policy.
std::vector<double> logDistributions(const policies::MlpPolicy& policy, const DecisionSet& data,
                                     const RowParallelism& parallel);

} // namespace mlgo::rl
