// Internal: the concrete built-in policies, visible to the policy file so it
// can tell their kinds apart and save their settings.
#pragma once

#include "mlgo/policies/Policy.h"

namespace mlgo::policies::detail {

class HeuristicEchoPolicy final : public Policy {
public:
  explicit HeuristicEchoPolicy(std::string defaultFeature);
  std::string describe() const override { return "heuristic"; }
  const std::vector<TensorSpec>& inputs() const override { return inputs_; }
  Decision decide(FeatureValues features, DecisionMode mode, RandomStream& rng) const override;
  const std::string& defaultFeature() const { return inputs_.front().name; }

private:
  std::vector<TensorSpec> inputs_;
};

class ConstantPolicy final : public Policy {
public:
  explicit ConstantPolicy(int64_t advice) : advice_(advice) {}
  std::string describe() const override { return "constant(" + std::to_string(advice_) + ")"; }
  const std::vector<TensorSpec>& inputs() const override { return inputs_; }
  Decision decide(FeatureValues features, DecisionMode mode, RandomStream& rng) const override {
    return Decision{advice_, 0.0};
  }
  int64_t advice() const { return advice_; }

private:
  int64_t advice_;
  std::vector<TensorSpec> inputs_; // none
};

} // namespace mlgo::policies::detail
