#include "SampleSelection.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <limits>
#include <numeric>
#include <sstream>

namespace mlgo::es::detail {

namespace {

bool succeeded(const std::optional<double>& reward) {
  return reward && std::isfinite(*reward);
}

void skip(StepRecord& record, std::string reason) {
  record.skipped = true;
  record.skipReason = std::move(reason);
}

} // namespace

size_t populationSize(const SamplingOptions& sampling) {
  size_t directions = static_cast<size_t>(sampling.directions);
  size_t perturbed = sampling.sampling == Sampling::Antithetic ? 2 * directions : directions;
  return perturbed + (sampling.evaluateCenter ? 1 : 0);
}

std::optional<SelectedSamples> selectSamples(const SamplingOptions& sampling,
                                             const ShapingOptions& shaping, Convention convention,
                                             std::span<const std::optional<double>> rewards,
                                             StepRecord& record) {
  const bool antithetic = sampling.sampling == Sampling::Antithetic;
  const size_t directions = static_cast<size_t>(sampling.directions);
  const size_t perturbed = antithetic ? 2 * directions : directions;
  assert(rewards.size() == populationSize(sampling));

  record.candidates = perturbed;
  record.centerEvaluated = sampling.evaluateCenter;
  if (sampling.evaluateCenter && succeeded(rewards[perturbed]))
    record.centerReward = *rewards[perturbed];

  size_t count = 0;
  double sum = 0, best = -std::numeric_limits<double>::infinity();
  for (size_t i = 0; i < perturbed; ++i)
    if (succeeded(rewards[i])) {
      ++count;
      sum += *rewards[i];
      best = std::max(best, *rewards[i]);
    }
  record.succeeded = count;
  record.meanReward = count ? sum / double(count) : std::nan("");
  record.bestReward = count ? best : std::nan("");
  record.currentValue = record.centerReward ? *record.centerReward : record.meanReward;
  if (count == 0 || double(count) < sampling.minSuccessShare * double(perturbed)) {
    std::ostringstream reason;
    reason << "only " << count << " of " << perturbed
           << " perturbed candidates succeeded (minimum share " << sampling.minSuccessShare << ")";
    skip(record, reason.str());
    return std::nullopt;
  }

  // Directions whose candidates all succeeded, and their raw rewards
  // (antithetic: interleaved f+, f−).
  std::vector<size_t> surviving;
  std::vector<double> raw;
  for (size_t d = 0; d < directions; ++d) {
    if (antithetic) {
      if (succeeded(rewards[2 * d]) && succeeded(rewards[2 * d + 1])) {
        surviving.push_back(d);
        raw.push_back(*rewards[2 * d]);
        raw.push_back(*rewards[2 * d + 1]);
      } else {
        ++record.droppedPairs;
      }
    } else if (succeeded(rewards[d])) {
      surviving.push_back(d);
      raw.push_back(*rewards[d]);
    }
  }
  if (surviving.empty()) {
    skip(record, "no antithetic pair has both members evaluated");
    return std::nullopt;
  }

  SelectedSamples selected;
  std::vector<double> shaped;
  switch (shaping.method) {
  case FitnessShaping::None:
    shaped = raw;
    selected.baseline = record.currentValue;
    break;
  case FitnessShaping::ZScore:
    if (convention == Convention::MlCompilerOpt) {
      // f(x) joins the statistics and is normalised with the rewards.
      std::vector<double> values = raw;
      values.push_back(record.currentValue);
      shaped = zScores(values, shaping.minimumStd);
      selected.baseline = shaped.back();
      shaped.pop_back();
    } else {
      double mean = std::accumulate(raw.begin(), raw.end(), 0.0) / double(raw.size());
      double squares = 0;
      for (double v : raw)
        squares += (v - mean) * (v - mean);
      double std = std::max(std::sqrt(squares / double(raw.size())), shaping.minimumStd);
      shaped = zScores(raw, shaping.minimumStd);
      selected.baseline = (record.currentValue - mean) / std;
    }
    break;
  case FitnessShaping::CentredRank:
    // Ranks have no place for an outside value: f0 is their mean, 0.
    shaped = centredRanks(raw);
    selected.baseline = 0;
    break;
  }

  std::vector<size_t> order(surviving.size());
  std::iota(order.begin(), order.end(), 0);
  if (shaping.topDirections && static_cast<size_t>(*shaping.topDirections) < surviving.size()) {
    order = topDirections(sampling.sampling, shaped, static_cast<size_t>(*shaping.topDirections));
    selected.topKRemoved = true;
  }

  const auto kept = static_cast<Eigen::Index>(order.size());
  selected.plus.resize(kept);
  if (antithetic)
    selected.minus.resize(kept);
  for (Eigen::Index k = 0; k < kept; ++k) {
    size_t s = order[static_cast<size_t>(k)];
    selected.directions.push_back(surviving[s]);
    if (antithetic) {
      selected.plus[k] = shaped[2 * s];
      selected.minus[k] = shaped[2 * s + 1];
    } else {
      selected.plus[k] = shaped[s];
    }
  }
  record.usedRewards = order.size() * (antithetic ? 2 : 1);
  return selected;
}

} // namespace mlgo::es::detail
