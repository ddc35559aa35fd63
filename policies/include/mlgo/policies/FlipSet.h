// A policy that is the compiler's own decision except at listed decision
// states, where it takes the other action: the result of a per-module
// decision search (mlgo-eval search), written as a policy file so any
// backend can compile with it, and recorded into traces whose actions are
// the searched labels for behavioural cloning.
//
// A decision state is identified by a 64-bit hash of every feature value but
// the default decision. The features at decision k are a function of the
// module and decisions 1..k-1, so within one trajectory the hash picks out
// decision k; a state seen twice (rare: the features include node and edge
// counts that change as inlining proceeds) flips both times.
#pragma once

#include "mlgo/policies/Policy.h"

#include <cstdint>
#include <string>
#include <unordered_set>
#include <vector>

namespace mlgo::policies {

class FlipSetPolicy final : public Policy {
public:
  // `features`: every feature the policy reads (normally all of clang's
  // header), `defaultFeature` among them; a binary decision.
  static Expected<FlipSetPolicy> create(std::vector<TensorSpec> features,
                                        std::string defaultFeature);

  std::string describe() const override {
    return "flip-set(" + std::to_string(flips_.size()) + ")" +
           (calleeConsistent_ ? " callee-consistent" : "");
  }
  // Callee consistency (CalleeConsistent.h) kept on the flip set itself, so
  // that the decision search's trials, built by toggling its states, keep
  // it: toggling the state of a callee's first -Oz-inlined call then flips
  // every such call of that callee (a group trial).
  bool calleeConsistent() const override { return calleeConsistent_; }
  void setCalleeConsistent(bool consistent) { calleeConsistent_ = consistent; }
  const std::vector<TensorSpec>& inputs() const override { return inputs_; }
  Decision decide(FeatureValues features, DecisionMode mode, RandomStream& rng) const override;

  // The hash of a decision state (all values but the default's), as
  // decide() computes it; `features` in inputs() order.
  uint64_t stateHash(FeatureValues features) const;
  // Adds the state if absent, removes it if present: the decision there
  // goes back to the compiler's.
  void toggle(uint64_t state);
  bool flips(uint64_t state) const { return flips_.count(state) > 0; }
  const std::unordered_set<uint64_t>& flipSet() const { return flips_; }
  const std::string& defaultFeature() const { return inputs_[defaultIndex_].name; }
  size_t defaultFeatureIndex() const { return defaultIndex_; }

private:
  FlipSetPolicy() = default;
  std::vector<TensorSpec> inputs_;
  size_t defaultIndex_ = 0;  // among inputs_
  size_t defaultOffset_ = 0; // among the decide() values
  std::unordered_set<uint64_t> flips_;
  bool calleeConsistent_ = false;
};

} // namespace mlgo::policies
