#include "mlgo/rl/Adam.h"

#include "mlgo/support/OptionSchema.h"

#include <cassert>
#include <cmath>
#include <string>

namespace mlgo::rl {

namespace {

constexpr const char* kMoment1 = "adam_m";
constexpr const char* kMoment2 = "adam_v";
constexpr const char* kUpdates = "adam_t";

std::string field(std::string_view prefix, const char* name) {
  return std::string(prefix) + "." + name;
}

} // namespace

Status AdamOptions::validate(std::string_view prefix) const {
  if (!(learningRate > 0) || !std::isfinite(learningRate))
    return makeError(field(prefix, "learningRate") + ": must be positive, got " +
                     std::to_string(learningRate));
  if (!(beta1 >= 0 && beta1 < 1))
    return makeError(field(prefix, "beta1") + ": must be in [0, 1), got " + std::to_string(beta1));
  if (!(beta2 >= 0 && beta2 < 1))
    return makeError(field(prefix, "beta2") + ": must be in [0, 1), got " + std::to_string(beta2));
  if (!(epsilon > 0) || !std::isfinite(epsilon))
    return makeError(field(prefix, "epsilon") + ": must be positive, got " +
                     std::to_string(epsilon));
  if (maxGradientNorm && !(*maxGradientNorm > 0))
    return makeError(field(prefix, "maxGradientNorm") + ": must be positive, got " +
                     std::to_string(*maxGradientNorm));
  return Status::ok();
}

AdamOptions mlCompilerOptAdam(double learningRate) {
  AdamOptions options;
  options.learningRate = learningRate;
  options.epsilon = 3.125e-4;
  return options;
}

AdamState AdamState::zeros(size_t dimension) {
  const auto n = static_cast<Eigen::Index>(dimension);
  return {Eigen::VectorXd::Zero(n), Eigen::VectorXd::Zero(n), 0};
}

void AdamState::saveTo(StateArchive& archive) const {
  archive.setVector(kMoment1, m);
  archive.setVector(kMoment2, v);
  archive.setInteger(kUpdates, t);
}

Expected<AdamState> AdamState::restore(const StateArchive& archive, size_t dimension) {
  Expected<std::vector<double>> m = archive.vector(kMoment1);
  Expected<std::vector<double>> v = archive.vector(kMoment2);
  Expected<int64_t> t = archive.integer(kUpdates);
  if (!m || !v || !t)
    return makeError("optimizer state: adam_m, adam_v or adam_t is missing");
  if (m->size() != dimension || v->size() != dimension)
    return makeError("optimizer state: Adam moments have " + std::to_string(m->size()) + " and " +
                     std::to_string(v->size()) + " values, the policy " +
                     std::to_string(dimension) + " parameters");
  if (*t < 0)
    return makeError("optimizer state: adam_t is negative");
  const auto n = static_cast<Eigen::Index>(dimension);
  AdamState state;
  state.m = Eigen::Map<const Eigen::VectorXd>(m->data(), n);
  state.v = Eigen::Map<const Eigen::VectorXd>(v->data(), n);
  state.t = *t;
  return state;
}

AdamUpdate adamStep(const AdamOptions& options, AdamState& state, std::span<const double> gradient,
                    std::span<double> parameters) {
  assert(gradient.size() == parameters.size());
  assert(static_cast<size_t>(state.m.size()) == parameters.size());
  const auto n = static_cast<Eigen::Index>(parameters.size());
  Eigen::Map<const Eigen::VectorXd> rawGradient(gradient.data(), n);
  Eigen::Map<Eigen::VectorXd> theta(parameters.data(), n);

  AdamUpdate update;
  update.gradientNorm = rawGradient.norm();
  double scale = 1.0;
  if (options.maxGradientNorm && update.gradientNorm > *options.maxGradientNorm) {
    scale = *options.maxGradientNorm / update.gradientNorm;
    update.clipped = true;
  }
  state.m = options.beta1 * state.m + (1 - options.beta1) * scale * rawGradient;
  state.v = options.beta2 * state.v + (1 - options.beta2) * (scale * rawGradient).cwiseAbs2();
  ++state.t;
  const double t = static_cast<double>(state.t);
  const double rate = options.learningRate * std::sqrt(1 - std::pow(options.beta2, t)) /
                      (1 - std::pow(options.beta1, t));
  Eigen::VectorXd step =
      rate * (state.m.array() / (state.v.array().sqrt() + options.epsilon)).matrix();
  theta -= step;
  update.stepNorm = step.norm();
  return update;
}

const OptionSchema<AdamOptions>& AdamOptions::schema() {
  static const OptionSchema<AdamOptions> schema = [] {
    OptionSchema<AdamOptions> s;
    s.value(
        "learning-rate", "Adam step size", [](auto& o) -> auto& { return o.learningRate; });
    s.value(
        "beta1", "Adam β1", [](auto& o) -> auto& { return o.beta1; });
    s.value(
        "beta2", "Adam β2", [](auto& o) -> auto& { return o.beta2; });
    s.value(
        "epsilon", "Adam ε (TensorFlow 1 form)", [](auto& o) -> auto& { return o.epsilon; });
    s.zeroUnset(
        "max-gradient-norm", "Clip the gradient (0: no clipping)",
        [](auto& o) -> auto& { return o.maxGradientNorm; });
    return s;
  }();
  return schema;
}

} // namespace mlgo::rl
