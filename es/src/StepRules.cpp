#include "mlgo/es/StepRules.h"
#include "mlgo/support/OptionSchema.h"

#include "Validation.h"

#include <cassert>
#include <cmath>

namespace mlgo::es {

std::string_view stepRuleName(StepRule rule) {
  switch (rule) {
  case StepRule::Sgd:
    return "sgd";
  case StepRule::Momentum:
    return "momentum";
  case StepRule::Adam:
    return "adam";
  }
  return "unknown";
}

Status StepRuleOptions::validate() const {
  MLGO_ES_RETURN_IF_ERROR(detail::requirePositive("learningRate", learningRate));
  MLGO_ES_RETURN_IF_ERROR(detail::requireHalfOpen("momentum", momentum, 0, 1));
  MLGO_ES_RETURN_IF_ERROR(detail::requireHalfOpen("beta1", beta1, 0, 1));
  MLGO_ES_RETURN_IF_ERROR(detail::requireHalfOpen("beta2", beta2, 0, 1));
  MLGO_ES_RETURN_IF_ERROR(detail::requirePositive("epsilon", epsilon));
  MLGO_ES_RETURN_IF_ERROR(detail::requireNonNegative("weightDecay", weightDecay));
  if (maxGradientNorm)
    MLGO_ES_RETURN_IF_ERROR(detail::requirePositive("maxGradientNorm", *maxGradientNorm));
  return Status::ok();
}

StepRuleState StepRuleState::zeros(size_t dimension) {
  const auto n = static_cast<Eigen::Index>(dimension);
  return {Eigen::VectorXd::Zero(n), Eigen::VectorXd::Zero(n), 0};
}

AscentStep ascentStep(const StepRuleOptions& options, StepRuleState& state,
                      const Eigen::VectorXd& gradient, const Eigen::VectorXd& point) {
  assert(gradient.size() == point.size() && state.first.size() == point.size() &&
         state.second.size() == point.size());
  AscentStep result;
  Eigen::VectorXd g = gradient;
  if (options.maxGradientNorm) {
    double norm = g.norm();
    if (norm > *options.maxGradientNorm) {
      g *= *options.maxGradientNorm / norm;
      result.clipped = true;
    }
  }
  if (options.weightDecay > 0)
    g -= options.weightDecay * point;

  switch (options.rule) {
  case StepRule::Sgd:
    result.step = options.learningRate * g;
    break;
  case StepRule::Momentum:
    state.first = options.momentum * state.first + (1 - options.momentum) * g;
    result.step = options.learningRate * state.first;
    break;
  case StepRule::Adam: {
    state.first = options.beta1 * state.first + (1 - options.beta1) * g;
    state.second = options.beta2 * state.second + (1 - options.beta2) * g.cwiseProduct(g);
    ++state.updates;
    const double t = double(state.updates);
    const double firstCorrection = 1 - std::pow(options.beta1, t);
    const double secondCorrection = 1 - std::pow(options.beta2, t);
    if (options.adamVariant == AdamVariant::MlCompilerOpt) {
      const double scale = std::sqrt(secondCorrection) / firstCorrection;
      result.step =
          options.learningRate * scale *
          (state.first.array() / (state.second.array().sqrt() + options.epsilon)).matrix();
    } else {
      result.step = options.learningRate *
                    ((state.first.array() / firstCorrection) /
                     ((state.second.array() / secondCorrection).sqrt() + options.epsilon))
                        .matrix();
    }
    break;
  }
  }
  return result;
}

const OptionSchema<StepRuleOptions>& StepRuleOptions::schema() {
  static const OptionSchema<StepRuleOptions> schema = [] {
    OptionSchema<StepRuleOptions> s;
    s.choice(
        "step-rule", "Step rule", [](auto& o) -> auto& { return o.rule; },
        {StepRule::Sgd, StepRule::Momentum, StepRule::Adam}, stepRuleName);
    s.value(
        "learning-rate", "Step size", [](auto& o) -> auto& { return o.learningRate; });
    s.value(
        "momentum", "Momentum μ", [](auto& o) -> auto& { return o.momentum; });
    s.value(
        "beta1", "Adam β1", [](auto& o) -> auto& { return o.beta1; });
    s.value(
        "beta2", "Adam β2", [](auto& o) -> auto& { return o.beta2; });
    s.value(
        "epsilon", "Adam ε", [](auto& o) -> auto& { return o.epsilon; });
    s.value(
        "weight-decay", "L2 weight decay λ", [](auto& o) -> auto& { return o.weightDecay; });
    s.zeroUnset(
        "max-gradient-norm", "Clip the gradient (0: no clipping)",
        [](auto& o) -> auto& { return o.maxGradientNorm; });
    return s;
  }();
  return schema;
}

} // namespace mlgo::es
