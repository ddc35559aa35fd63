#include "mlgo/es/FitnessShaping.h"
#include "mlgo/support/OptionSchema.h"

#include "Validation.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <numeric>

namespace mlgo::es {

std::string_view fitnessShapingName(FitnessShaping shaping) {
  switch (shaping) {
  case FitnessShaping::None:
    return "none";
  case FitnessShaping::ZScore:
    return "z-score";
  case FitnessShaping::CentredRank:
    return "centred-rank";
  }
  return "unknown";
}

Status ShapingOptions::validate() const {
  MLGO_ES_RETURN_IF_ERROR(detail::requirePositive("minimumStd", minimumStd));
  if (topDirections && *topDirections < 1)
    return detail::invalidField("topDirections", "must be at least 1 when set", *topDirections);
  return Status::ok();
}

std::vector<double> zScores(std::span<const double> values, double minimumStd) {
  if (values.empty())
    return {};
  double mean = std::accumulate(values.begin(), values.end(), 0.0) / double(values.size());
  double squares = 0;
  for (double v : values)
    squares += (v - mean) * (v - mean);
  double std = std::max(std::sqrt(squares / double(values.size())), minimumStd);
  std::vector<double> result(values.size());
  for (size_t i = 0; i < values.size(); ++i)
    result[i] = (values[i] - mean) / std;
  return result;
}

std::vector<double> centredRanks(std::span<const double> values) {
  const size_t n = values.size();
  std::vector<double> result(n, 0.0);
  if (n < 2)
    return result;
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return values[a] < values[b]; });
  for (size_t begin = 0; begin < n;) {
    size_t end = begin + 1;
    while (end < n && values[order[end]] == values[order[begin]])
      ++end;
    double rank = 0.5 * double(begin + end - 1); // mean rank of the tie group
    for (size_t k = begin; k < end; ++k)
      result[order[k]] = rank / double(n - 1) - 0.5;
    begin = end;
  }
  return result;
}

std::vector<size_t> topDirections(Sampling sampling, std::span<const double> rewards, size_t k) {
  const bool antithetic = sampling == Sampling::Antithetic;
  assert(!antithetic || rewards.size() % 2 == 0);
  const size_t directions = antithetic ? rewards.size() / 2 : rewards.size();
  std::vector<double> score(directions);
  for (size_t d = 0; d < directions; ++d)
    score[d] = antithetic ? std::max(rewards[2 * d], rewards[2 * d + 1]) : rewards[d];
  std::vector<size_t> order(directions);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return score[a] > score[b]; });
  order.resize(std::min(k, directions));
  return order;
}

const OptionSchema<ShapingOptions>& ShapingOptions::schema() {
  static const OptionSchema<ShapingOptions> schema = [] {
    OptionSchema<ShapingOptions> s;
    s.choice(
        "shaping", "Fitness shaping", [](auto& o) -> auto& { return o.method; },
        {FitnessShaping::None, FitnessShaping::ZScore, FitnessShaping::CentredRank},
        fitnessShapingName);
    s.zeroUnset(
        "top-directions", "Keep only the k best directions (0: all)",
        [](auto& o) -> auto& { return o.topDirections; });
    return s;
  }();
  return schema;
}

} // namespace mlgo::es
