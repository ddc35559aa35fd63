// Callee consistency: a rule of the inliner's decision point that a policy
// file carries ("callee_consistent": true), applied where the compiler runs
// the policy (the in-process worker and the pass plugin), because it needs
// the callee's identity, which no feature gives.
//
// Why: a call site's bytes depend on the callee's other call sites. A
// discardable callee (internal or linkonce linkage) loses its body once its
// last call is inlined; declining some of its calls keeps the body and pays
// the calls as well, and single-site decisions (and single-flip labels)
// cannot see that. Under the rule, every call site of one discardable callee
// where the heuristic inlines takes the policy's answer at the first such
// site of the module: a decline there declines them all, an inline there
// inlines them all (docs/inlining-results.md §10, "Callee consistency").
// Sites where the heuristic declines keep the policy's own answer.
#pragma once

#include "mlgo/policies/Policy.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>

namespace mlgo::policies {

// Any policy with the rule; decides exactly as the policy it wraps.
class CalleeConsistentPolicy final : public Policy {
public:
  // `inner` already consistent is unwrapped: the rule is applied once.
  explicit CalleeConsistentPolicy(std::shared_ptr<const Policy> inner);

  std::string describe() const override { return inner_->describe() + " callee-consistent"; }
  const std::vector<TensorSpec>& inputs() const override { return inner_->inputs(); }
  Decision decide(FeatureValues features, DecisionMode mode, RandomStream& rng) const override {
    return inner_->decide(features, mode, rng);
  }
  bool calleeConsistent() const override { return true; }

  const Policy& inner() const { return *inner_; }

private:
  std::shared_ptr<const Policy> inner_;
};

// The rule's state for one module's compile: the answer committed for each
// discardable callee at its first site where the heuristic inlines.
class CalleeCommitments {
public:
  // The advice to take at a call site of `callee` (its name; "" for an
  // indirect or unnamed callee, never committed), given the heuristic's own
  // decision there and the policy's advice.
  int64_t apply(std::string_view callee, bool discardable, int64_t heuristic, int64_t advice);
  // Whether apply() would answer with an earlier site's commitment whatever
  // the advice: a later site of a committed callee where the heuristic inlines.
  bool follows(std::string_view callee, bool discardable, int64_t heuristic) const {
    return heuristic == 1 && discardable && !callee.empty() && committed_.count(callee) > 0;
  }

  size_t callees() const { return committed_.size(); }
  // Sites whose advice the rule changed.
  uint64_t overruled() const { return overruled_; }

private:
  // Looked up by string_view (no allocation per decision; C++ callees'
  // mangled names are long): only a callee's first site stores its name.
  struct NameHash {
    using is_transparent = void;
    size_t operator()(std::string_view name) const { return std::hash<std::string_view>{}(name); }
  };
  std::unordered_map<std::string, int64_t, NameHash, std::equal_to<>> committed_;
  uint64_t overruled_ = 0;
};

} // namespace mlgo::policies
