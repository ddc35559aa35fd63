// The narrow interface between a compiler's decision points and a policy:
// features of one decision in, advice out. A policy never sees clang, pipes
// or processes; the evaluator binds clang's header to the policy once per
// compilation and then calls `decide` for every decision.
#pragma once

#include "mlgo/policies/TensorSpec.h"
#include "mlgo/support/Expected.h"
#include "mlgo/support/Random.h"

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace mlgo::policies {

enum class DecisionMode {
  // The most likely action (argmax): evaluation and ES.
  Deterministic,
  // An action drawn from the policy's distribution: PPO's exploration.
  Sampling,
};

struct Decision {
  int64_t advice = 0;
  // log π(advice | features) under the mode's distribution; 0 for policies
  // that are not stochastic (the deterministic choice has probability 1).
  double logProbability = 0;
};

// Values of the features a policy reads, in the order of its inputs(): each
// input's elements flattened, converted to double.
using FeatureValues = std::span<const double>;

class Policy {
public:
  virtual ~Policy() = default;

  // A short, human-readable identity ("heuristic", "mlp[64,64] relu", …).
  virtual std::string describe() const = 0;

  // The features this policy reads, with the type and shape it expects; the
  // evaluator checks them against clang's header by name (type and shape
  // must match) and hands their values to decide() in this order.
  virtual const std::vector<TensorSpec>& inputs() const = 0;

  // Must be thread-safe: many compilations call one policy concurrently.
  // `rng` is the job's own stream; only Sampling mode draws from it.
  virtual Decision decide(FeatureValues features, DecisionMode mode, RandomStream& rng) const = 0;

  // Whether the inliner applies callee consistency to this policy's answers
  // (CalleeConsistent.h): a per-module rule on the callee's identity, which
  // no feature carries, so only the compiler side can apply it.
  virtual bool calleeConsistent() const { return false; }
};

// Checks that every input of `policy` is in `header` with the same type and
// shape, and returns, per input, the index of the header feature. The error
// names the feature and both specs.
Expected<std::vector<size_t>> bindPolicyInputs(const Policy& policy, const ChannelHeader& header);

// Built-in policies.
// Answers what the compiler's own heuristic would, read from the task's
// default-decision feature (the inliner's: plain -Oz's decisions).
std::unique_ptr<Policy> makeHeuristicEchoPolicy(std::string defaultFeature);
// Always answers `advice` (1: inline every candidate, 0: none).
std::unique_ptr<Policy> makeConstantPolicy(int64_t advice);

} // namespace mlgo::policies
