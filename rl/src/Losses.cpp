#include "mlgo/rl/Losses.h"

#include "mlgo/support/OptionSchema.h"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <cassert>
#include <cmath>
#include <string>

namespace mlgo::rl {

using policies::MlpPolicy;

struct RowParallelism::Impl {
  mutable tbb::task_arena arena;
  explicit Impl(size_t threads) : arena(static_cast<int>(threads)) {}
};

RowParallelism::RowParallelism(size_t threads)
    : threads_(std::max<size_t>(threads, 1)),
      impl_(threads_ > 1 ? std::make_unique<Impl>(threads_) : nullptr) {}
RowParallelism::RowParallelism(RowParallelism&&) noexcept = default;
RowParallelism& RowParallelism::operator=(RowParallelism&&) noexcept = default;
RowParallelism::~RowParallelism() = default;

void RowParallelism::forEachChunk(
    size_t rows, const std::function<void(size_t chunk, size_t begin, size_t end)>& work) const {
  const size_t count = chunks(rows);
  auto run = [&](size_t chunk) {
    size_t begin = chunk * kChunkRows;
    work(chunk, begin, std::min(rows, begin + kChunkRows));
  };
  if (!impl_ || count < 2) {
    for (size_t c = 0; c < count; ++c)
      run(c);
    return;
  }
  // One chunk per task: a chunk is tens of microseconds of forward and
  // backward passes, enough to amortise scheduling; each task writes only its
  // chunk's slots, so the result does not depend on which thread runs it.
  impl_->arena.execute([&] {
    tbb::parallel_for(tbb::blocked_range<size_t>(0, count, 1),
                      [&](const tbb::blocked_range<size_t>& range) {
                        for (size_t c = range.begin(); c != range.end(); ++c)
                          run(c);
                      });
  });
}

namespace {

// log softmax of `logits` into `out`.
void logSoftmax(std::span<const double> logits, std::span<double> out) {
  double top = *std::max_element(logits.begin(), logits.end());
  double sum = 0;
  for (double z : logits)
    sum += std::exp(z - top);
  double normaliser = top + std::log(sum);
  for (size_t i = 0; i < logits.size(); ++i)
    out[i] = logits[i] - normaliser;
}

size_t argmax(std::span<const double> values) {
  size_t best = 0;
  for (size_t i = 1; i < values.size(); ++i)
    if (values[i] > values[best])
      best = i;
  return best;
}

// Forward passes of every listed row: rows.size() × actions logits.
std::vector<double> logitsOf(const MlpPolicy& policy, const DecisionSet& data,
                             std::span<const size_t> rows, const RowParallelism& parallel) {
  const size_t actions = policy.structure()->logitCount();
  std::vector<double> logits(rows.size() * actions);
  parallel.forEachChunk(rows.size(), [&](size_t, size_t begin, size_t end) {
    for (size_t i = begin; i < end; ++i)
      policy.computeLogits(data.row(rows[i]), {logits.data() + i * actions, actions});
  });
  return logits;
}

// gradient += Σ_i (d logits_i / dθ)^T dLogits_i, chunk partials added in
// chunk order.
void backpropagate(const MlpPolicy& policy, const DecisionSet& data, std::span<const size_t> rows,
                   const std::vector<double>& dLogits, std::span<double> gradient,
                   const RowParallelism& parallel) {
  const size_t actions = policy.structure()->logitCount();
  const size_t n = policy.parameterCount();
  const size_t chunks = parallel.chunks(rows.size());
  std::vector<double> partial(chunks * n, 0.0);
  parallel.forEachChunk(rows.size(), [&](size_t chunk, size_t begin, size_t end) {
    std::span<double> out(partial.data() + chunk * n, n);
    for (size_t i = begin; i < end; ++i)
      policy.accumulateGradient(data.row(rows[i]), {dLogits.data() + i * actions, actions}, out);
  });
  for (size_t c = 0; c < chunks; ++c)
    for (size_t p = 0; p < n; ++p)
      gradient[p] += partial[c * n + p];
}

} // namespace

// ---------------------------------------------------------------------------
// Behavioural cloning

ClassificationStats crossEntropy(const MlpPolicy& policy, const DecisionSet& data,
                                 std::span<const size_t> rows, std::span<double> gradient,
                                 const RowParallelism& parallel) {
  assert(gradient.empty() || gradient.size() == policy.parameterCount());
  const size_t actions = policy.structure()->logitCount();
  std::vector<double> logits = logitsOf(policy, data, rows, parallel);
  ClassificationStats stats;
  stats.rows = rows.size();
  if (rows.empty())
    return stats;
  const double scale = 1.0 / static_cast<double>(rows.size());
  std::vector<double> logP(actions);
  std::vector<double> dLogits(gradient.empty() ? 0 : logits.size());
  double sum = 0;
  for (size_t i = 0; i < rows.size(); ++i) {
    std::span<const double> z(logits.data() + i * actions, actions);
    const auto label = static_cast<size_t>(data.actions[rows[i]]);
    assert(label < actions);
    logSoftmax(z, logP);
    const double weight = data.weights.empty() ? 1.0 : data.weights[rows[i]];
    sum -= weight * logP[label];
    size_t predicted = argmax(z);
    stats.correct += predicted == label;
    stats.weight += weight;
    stats.correctWeight += predicted == label ? weight : 0.0;
    stats.predictedPositive += predicted == 1;
    stats.labelledPositive += label == 1;
    if (!gradient.empty())
      // d(−log p_y)/dz = p − onehot(y)
      for (size_t j = 0; j < actions; ++j)
        dLogits[i * actions + j] = weight * scale * (std::exp(logP[j]) - (j == label ? 1.0 : 0.0));
  }
  stats.loss = sum * scale;
  if (!gradient.empty())
    backpropagate(policy, data, rows, dLogits, gradient, parallel);
  return stats;
}

double l2Penalty(const MlpPolicy& policy, double coefficient, std::span<double> gradient) {
  if (coefficient == 0)
    return 0;
  std::span<const double> theta = policy.parameters();
  double sum = 0;
  for (const policies::MlpStructure::Layer& layer : policy.structure()->layers())
    for (size_t i = layer.weightOffset; i < layer.weightOffset + layer.inputs * layer.outputs;
         ++i) {
      sum += theta[i] * theta[i];
      if (!gradient.empty())
        gradient[i] += 2 * coefficient * theta[i];
    }
  return coefficient * sum;
}

// ---------------------------------------------------------------------------
// PPO

std::string_view advantageNormalizationName(AdvantageNormalization mode) {
  switch (mode) {
  case AdvantageNormalization::None:
    return "none";
  case AdvantageNormalization::MiniBatch:
    return "mini-batch";
  case AdvantageNormalization::Iteration:
    return "iteration";
  }
  return "unknown";
}

std::optional<AdvantageNormalization> parseAdvantageNormalization(std::string_view name) {
  for (AdvantageNormalization mode :
       {AdvantageNormalization::None, AdvantageNormalization::MiniBatch,
        AdvantageNormalization::Iteration})
    if (advantageNormalizationName(mode) == name)
      return mode;
  return std::nullopt;
}

std::vector<double> normalizeAdvantages(std::span<const double> advantages, double epsilon) {
  std::vector<double> result(advantages.begin(), advantages.end());
  if (result.empty())
    return result;
  const double n = static_cast<double>(result.size());
  double mean = 0;
  for (double a : result)
    mean += a;
  mean /= n;
  double variance = 0;
  for (double a : result)
    variance += (a - mean) * (a - mean);
  variance /= n;
  const double scale = 1.0 / std::sqrt(variance + epsilon);
  for (double& a : result)
    a = (a - mean) * scale;
  return result;
}

double nextMovingAverage(double average, double sizeBytes, double decay) {
  return average * decay + sizeBytes * (1 - decay);
}

Status PpoLossOptions::validate(std::string_view prefix) const {
  auto field = [&](const char* name) { return std::string(prefix) + "." + name; };
  auto nonNegative = [&](const char* name, double value) -> Status {
    if (!(value >= 0) || !std::isfinite(value))
      return makeError(field(name) + ": must be finite and non-negative, got " +
                       std::to_string(value));
    return Status::ok();
  };
  for (auto [name, value] : {std::pair{"clip", clip},
                             {"entropyCoefficient", entropyCoefficient},
                             {"policyL2", policyL2},
                             {"initialKlBeta", initialKlBeta},
                             {"klTolerance", klTolerance},
                             {"klCutoffFactor", klCutoffFactor},
                             {"klCutoffCoefficient", klCutoffCoefficient}})
    if (Status s = nonNegative(name, value); !s)
      return s;
  if (clip >= 1)
    return makeError(field("clip") + ": must be below 1, got " + std::to_string(clip));
  if (klTolerance >= 1)
    return makeError(field("klTolerance") + ": must be below 1, got " +
                     std::to_string(klTolerance));
  if ((initialKlBeta > 0 || klCutoffFactor > 0) && !(klTarget > 0))
    return makeError(field("klTarget") + ": must be positive when a KL penalty is on, got " +
                     std::to_string(klTarget));
  return Status::ok();
}

PpoLossTerms ppoLoss(const MlpPolicy& policy, const DecisionSet& data, std::span<const size_t> rows,
                     std::span<const double> advantages, double klBeta,
                     const PpoLossOptions& options, std::span<double> gradient,
                     const RowParallelism& parallel) {
  assert(advantages.size() == rows.size());
  assert(gradient.empty() || gradient.size() == policy.parameterCount());
  const size_t actions = policy.structure()->logitCount();
  assert(data.oldLogDistributions.size() == data.rows() * actions);
  PpoLossTerms terms;
  terms.rows = rows.size();
  terms.l2 = l2Penalty(policy, options.policyL2, gradient);
  if (rows.empty()) {
    terms.total = terms.l2;
    return terms;
  }
  const double scale = 1.0 / static_cast<double>(rows.size());
  std::vector<double> logits = logitsOf(policy, data, rows, parallel);

  // Pass 1: per-row log-probabilities, the KL and its batch mean (the cutoff
  // penalty's gradient depends on it).
  std::vector<double> logP(logits.size());
  double klSum = 0;
  for (size_t i = 0; i < rows.size(); ++i) {
    std::span<double> lp(logP.data() + i * actions, actions);
    logSoftmax({logits.data() + i * actions, actions}, lp);
    const double* lq = data.oldLogDistributions.data() + rows[i] * actions;
    for (size_t j = 0; j < actions; ++j)
      if (std::isfinite(lq[j]))
        klSum += std::exp(lq[j]) * (lq[j] - lp[j]);
  }
  terms.meanKl = klSum * scale;
  const double cutoff = options.klCutoffFactor * options.klTarget;
  const double overCutoff = options.klCutoffFactor > 0 ? std::max(0.0, terms.meanKl - cutoff) : 0.0;
  terms.klPenalty = klBeta * terms.meanKl + options.klCutoffCoefficient * overCutoff * overCutoff;
  // d klPenalty / d KL_i, per row.
  const double klWeight = (klBeta + 2 * options.klCutoffCoefficient * overCutoff) * scale;

  // Pass 2: the surrogate, the entropy and every term's d/dlogits.
  std::vector<double> dLogits(gradient.empty() ? 0 : logits.size());
  double objectiveSum = 0, entropySum = 0, ratioSum = 0;
  size_t clipped = 0;
  for (size_t i = 0; i < rows.size(); ++i) {
    const size_t r = rows[i];
    std::span<const double> lp(logP.data() + i * actions, actions);
    const auto action = static_cast<size_t>(data.actions[r]);
    assert(action < actions);
    const double advantage = advantages[i];
    const double ratio = std::exp(lp[action] - data.logProbabilities[r]);
    const double objective = ratio * advantage;
    double surrogateGradient = 0; // d(min objective)/d log π(a)
    if (options.clip > 0) {
      const double clippedRatio = std::clamp(ratio, 1 - options.clip, 1 + options.clip);
      const double clippedObjective = clippedRatio * advantage;
      clipped += std::abs(ratio - 1) > options.clip;
      // The clipped branch is constant in θ where it is the smaller one
      // (outside the clip range); inside, both are r A.
      if (clippedObjective < objective) {
        objectiveSum += clippedObjective;
      } else {
        objectiveSum += objective;
        surrogateGradient = objective;
      }
    } else {
      objectiveSum += objective;
      surrogateGradient = objective;
    }
    ratioSum += ratio;
    double h = 0;
    for (size_t j = 0; j < actions; ++j)
      if (std::isfinite(lp[j]))
        h -= std::exp(lp[j]) * lp[j];
    entropySum += h;
    if (gradient.empty())
      continue;
    const double* lq = data.oldLogDistributions.data() + r * actions;
    for (size_t j = 0; j < actions; ++j) {
      const double p = std::exp(lp[j]);
      // −(1/B) · dObjective/dz_j, with d log π(a)/dz_j = [j = a] − p_j
      double d = -scale * surrogateGradient * ((j == action ? 1.0 : 0.0) - p);
      // −c_H (1/B) dH/dz_j, with dH/dz_j = −p_j (log p_j + H)
      if (p > 0)
        d += options.entropyCoefficient * scale * p * (lp[j] + h);
      // dKL_i/dz_j = p_j − q_j
      d += klWeight * (p - std::exp(lq[j]));
      dLogits[i * actions + j] = d;
    }
  }
  terms.policyGradient = -objectiveSum * scale;
  terms.meanEntropy = entropySum * scale;
  terms.entropy = -options.entropyCoefficient * terms.meanEntropy;
  terms.meanRatio = ratioSum * scale;
  terms.clipFraction = static_cast<double>(clipped) * scale;
  terms.total = terms.policyGradient + terms.entropy + terms.klPenalty + terms.l2;
  if (!gradient.empty())
    backpropagate(policy, data, rows, dLogits, gradient, parallel);
  return terms;
}

PolicyDrift policyDrift(const MlpPolicy& policy, const DecisionSet& data,
                        std::span<const size_t> rows, const RowParallelism& parallel) {
  const size_t actions = policy.structure()->logitCount();
  std::vector<double> logits = logitsOf(policy, data, rows, parallel);
  PolicyDrift drift;
  if (rows.empty())
    return drift;
  std::vector<double> lp(actions);
  double kl = 0, entropy = 0;
  for (size_t i = 0; i < rows.size(); ++i) {
    logSoftmax({logits.data() + i * actions, actions}, lp);
    const double* lq = data.oldLogDistributions.data() + rows[i] * actions;
    for (size_t j = 0; j < actions; ++j) {
      if (std::isfinite(lq[j]))
        kl += std::exp(lq[j]) * (lq[j] - lp[j]);
      if (std::isfinite(lp[j]))
        entropy -= std::exp(lp[j]) * lp[j];
    }
  }
  drift.meanKl = kl / static_cast<double>(rows.size());
  drift.meanEntropy = entropy / static_cast<double>(rows.size());
  return drift;
}

double adaptKlBeta(double beta, double meanKl, const PpoLossOptions& options) {
  if (options.initialKlBeta == 0)
    return 0;
  double factor = 1.0;
  if (meanKl < options.klTarget * (1 - options.klTolerance))
    factor = 1.0 / 1.5;
  else if (meanKl > options.klTarget * (1 + options.klTolerance))
    factor = 1.5;
  return std::max(beta * factor, 1e-15);
}

std::vector<double> logDistributions(const MlpPolicy& policy, const DecisionSet& data,
                                     const RowParallelism& parallel) {
  const size_t actions = policy.structure()->logitCount();
  std::vector<size_t> all(data.rows());
  for (size_t r = 0; r < all.size(); ++r)
    all[r] = r;
  std::vector<double> logits = logitsOf(policy, data, all, parallel);
  std::vector<double> result(logits.size());
  for (size_t r = 0; r < all.size(); ++r)
    logSoftmax({logits.data() + r * actions, actions}, {result.data() + r * actions, actions});
  return result;
}

const OptionSchema<PpoLossOptions>& PpoLossOptions::schema() {
  static const OptionSchema<PpoLossOptions> schema = [] {
    OptionSchema<PpoLossOptions> s;
    s.group("Loss");
    s.value(
        "clip", "Importance-ratio clipping ε (0: unclipped surrogate)",
        [](auto& o) -> auto& { return o.clip; });
    s.value(
        "entropy", "Entropy bonus coefficient",
        [](auto& o) -> auto& { return o.entropyCoefficient; });
    s.value(
        "policy-l2", "L2 coefficient on the weight matrices",
        [](auto& o) -> auto& { return o.policyL2; });
    s.value(
        "kl-beta", "Initial adaptive KL penalty coefficient (0: no adaptive penalty)",
        [](auto& o) -> auto& { return o.initialKlBeta; });
    s.value(
        "kl-target", "KL target of the adaptive penalty",
        [](auto& o) -> auto& { return o.klTarget; });
    s.value(
        "kl-tolerance", "Relative tolerance around the KL target",
        [](auto& o) -> auto& { return o.klTolerance; });
    s.value(
        "kl-cutoff-factor", "Cutoff penalty above this times the KL target (0: no cutoff penalty)",
        [](auto& o) -> auto& { return o.klCutoffFactor; });
    s.value(
        "kl-cutoff-coefficient", "Coefficient of the squared KL cutoff penalty",
        [](auto& o) -> auto& { return o.klCutoffCoefficient; });
    return s;
  }();
  return schema;
}

} // namespace mlgo::rl
