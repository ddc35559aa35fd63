// Drives an optimiser on a test function, as an evaluator would.
#pragma once

#include "mlgo/es/BlackboxOptimizer.h"

#include <functional>
#include <optional>
#include <span>
#include <vector>

namespace mlgo::es::testing {

using Objective = std::function<double(std::span<const double>)>; // minimised

// Rewards (−objective) for every candidate of the optimiser's next population.
inline std::vector<std::optional<double>> rewardsFor(const BlackboxOptimizer& optimizer,
                                                     const Objective& objective) {
  Population population = optimizer.ask();
  std::vector<std::optional<double>> rewards(population.size());
  std::vector<double> x(population.dimension());
  for (size_t i = 0; i < population.size(); ++i) {
    population.candidate(i, x);
    rewards[i] = -objective(x);
  }
  return rewards;
}

struct RunResult {
  bool reached = false;
  size_t evaluations = 0;
  double finalValue = 0; // objective at the optimiser's point
  int steps = 0;
};

// Steps until objective(point) < target or the evaluation budget is spent.
inline RunResult minimise(BlackboxOptimizer& optimizer, const Objective& objective, double target,
                          size_t maxEvaluations) {
  RunResult result;
  while (result.evaluations < maxEvaluations) {
    std::vector<std::optional<double>> rewards = rewardsFor(optimizer, objective);
    result.evaluations += rewards.size();
    if (!optimizer.tell(rewards))
      break;
    ++result.steps;
    const Eigen::VectorXd& x = optimizer.point();
    result.finalValue = objective({x.data(), static_cast<size_t>(x.size())});
    if (result.finalValue < target) {
      result.reached = true;
      break;
    }
  }
  return result;
}

} // namespace mlgo::es::testing
