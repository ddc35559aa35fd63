// What one compilation under a policy did, decision by decision: the data
// behavioural cloning and PPO learn from and vocabularies are built from.
// Plain data: the evaluators record it, trace files store it, the trainers
// learn from it.
#pragma once

#include "mlgo/policies/TensorSpec.h"

#include <cstdint>
#include <vector>

namespace mlgo::policies {

struct Trajectory {
  // The features clang sent (its header), in order.
  std::vector<TensorSpec> featureSpecs;
  // Values per decision: every feature's elements flattened, as double.
  size_t width = 0;
  std::vector<double> observations; // decisions × width, row-major
  // The compiler's own decision at each point (-1 if the task has none).
  std::vector<int64_t> defaultDecisions;
  std::vector<int64_t> actions;
  std::vector<double> logProbabilities;
  // Under callee consistency (CalleeConsistent.h), 1 at the decisions the
  // rule answered with an earlier call's commitment: a later call of a
  // committed callee where the heuristic inlines, whose own answer changes
  // nothing (the decision search does not try them). Empty when the policy
  // has no such rule.
  std::vector<uint8_t> followsCommitment;

  size_t decisions() const { return actions.size(); }
  const double* row(size_t decision) const { return observations.data() + decision * width; }
};

} // namespace mlgo::policies
