// Step rules: turn a reward-gradient estimate into a parameter step. All are
// ascent (rewards are maximised): the returned step is added to the point.
//
// Order of operations: the estimate is clipped to maxGradientNorm, L2 weight
// decay adds −weightDecay · x (so the decay is never clipped), then the rule:
//   SGD:      step = lr · g
//   momentum: a ← μ a + (1 − μ) g;  step = lr · a        (EMA form, ml-compiler-opt's)
//   Adam:     m ← β1 m + (1 − β1) g;  v ← β2 v + (1 − β2) g²;  t ← t + 1
//     standard (Kingma & Ba):  step = lr · m̂ / (√v̂ + ε),  m̂ = m/(1−β1ᵗ), v̂ = v/(1−β2ᵗ)
//     ml-compiler-opt:         step = lr · √(1−β2ᵗ)/(1−β1ᵗ) · m / (√v + ε)
//   (the two differ only in where ε enters).
#pragma once

#include "mlgo/support/Expected.h"
#include "mlgo/support/OptionSchemaFwd.h"

#include <Eigen/Core>

#include <cstdint>
#include <optional>
#include <string_view>

namespace mlgo::es {

enum class StepRule { Sgd, Momentum, Adam };
enum class AdamVariant { Standard, MlCompilerOpt };

std::string_view stepRuleName(StepRule rule); // "sgd", "momentum", "adam"

struct StepRuleOptions {
  StepRule rule = StepRule::Adam;
  // Step size. Adam's steps are about lr per coordinate whatever the
  // gradient's scale; SGD's scale with the gradient (and with the shaping).
  double learningRate = 0.01;
  // Momentum's μ ∈ [0, 1): larger averages more steps (smoother, slower to turn).
  double momentum = 0.9;
  // Adam's decay rates ∈ [0, 1) and ε > 0 (1e-7 in ml-compiler-opt).
  double beta1 = 0.9;
  double beta2 = 0.999;
  double epsilon = 1e-8;
  AdamVariant adamVariant = AdamVariant::Standard;
  // L2 weight decay λ ≥ 0: ascends F(x) − λ/2 ‖x‖². Keeps weights small,
  // which helps a policy generalise beyond its training modules.
  double weightDecay = 0;
  // Clip the estimate's L2 norm to this (unset: no clipping). Guards against
  // one noisy step throwing the policy far away.
  std::optional<double> maxGradientNorm;

  Status validate() const; // errors name the field, e.g. "stepRule.learningRate: …"
  static const OptionSchema<StepRuleOptions>& schema(); // --step-rule, --learning-rate, …
};

// The rule's memory. Both vectors have the parameters' size (zero at start);
// `first` is momentum's average or Adam's m, `second` Adam's v.
struct StepRuleState {
  Eigen::VectorXd first;
  Eigen::VectorXd second;
  int64_t updates = 0; // Adam's t: steps taken

  static StepRuleState zeros(size_t dimension);
};

struct AscentStep {
  Eigen::VectorXd step;
  bool clipped = false;
};

// Advances `state` and returns the step for `gradient` at `point`.
AscentStep ascentStep(const StepRuleOptions& options, StepRuleState& state,
                      const Eigen::VectorXd& gradient, const Eigen::VectorXd& point);

} // namespace mlgo::es
