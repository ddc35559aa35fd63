#include "mlgo/es/GradientEs.h"

#include "SampledOptionSchema.h"

#include "SampleSelection.h"
#include "Validation.h"

#include <cassert>

namespace mlgo::es {

Status GradientEs::Options::validate() const {
  MLGO_ES_RETURN_IF_ERROR(detail::prefixed("sampling", sampling.validate()));
  MLGO_ES_RETURN_IF_ERROR(detail::prefixed("shaping", shaping.validate()));
  MLGO_ES_RETURN_IF_ERROR(detail::prefixed("estimator", estimator.validate()));
  MLGO_ES_RETURN_IF_ERROR(detail::prefixed("stepRule", stepRule.validate()));
  return Status::ok();
}

GradientEs::Options GradientEs::Options::mlCompilerOpt(double sigma, Sampling sampling,
                                                       double learningRate,
                                                       std::optional<int> topDirections) {
  Options options;
  options.sampling.sampling = sampling;
  options.sampling.sigma = sigma;
  options.sampling.evaluateCenter = false; // f(x) = mean reward, as its learner passes
  options.shaping.method = FitnessShaping::ZScore;
  options.shaping.minimumStd = 1e-5;
  options.shaping.topDirections = topDirections;
  options.estimator.method = GradientEstimator::MonteCarlo;
  options.stepRule.rule = StepRule::Adam;
  options.stepRule.learningRate = learningRate;
  options.stepRule.beta1 = 0.9;
  options.stepRule.beta2 = 0.999;
  options.stepRule.epsilon = 1e-7;
  options.stepRule.adamVariant = AdamVariant::MlCompilerOpt;
  options.convention = Convention::MlCompilerOpt;
  return options;
}

StateArchive GradientEs::State::toArchive() const {
  StateArchive archive;
  setOptimizerHeader(archive, OptimizerKind::GradientEs, static_cast<size_t>(point.size()));
  archive.setInteger("step", step);
  archive.setVector("point", point);
  archive.setVector("scale", scale);
  archive.setVector("stepRule.first", stepRule.first);
  archive.setVector("stepRule.second", stepRule.second);
  archive.setInteger("stepRule.updates", stepRule.updates);
  return archive;
}

Expected<GradientEs::State> GradientEs::State::fromArchive(const StateArchive& archive) {
  Expected<OptimizerHeader> header = readOptimizerHeader(archive, OptimizerKind::GradientEs);
  if (!header)
    return header.error();
  const size_t n = header->dimension;
  State state;
  state.step = header->step;
  MLGO_ES_RETURN_IF_ERROR(readEigenVectors(archive, n,
                                           {{"point", &state.point},
                                            {"scale", &state.scale},
                                            {"stepRule.first", &state.stepRule.first},
                                            {"stepRule.second", &state.stepRule.second}}));
  Expected<int64_t> updates = archive.integer("stepRule.updates");
  if (!updates)
    return updates.error();
  state.stepRule.updates = *updates;
  return state;
}

Expected<GradientEs> GradientEs::create(Options options, Eigen::VectorXd initialPoint,
                                        std::optional<Eigen::VectorXd> scale) {
  MLGO_ES_RETURN_IF_ERROR(options.validate());
  if (initialPoint.size() == 0)
    return makeError("initialPoint: must have at least one parameter");
  const auto n = static_cast<size_t>(initialPoint.size());
  State state;
  state.scale = scale ? std::move(*scale) : Eigen::VectorXd::Ones(initialPoint.size());
  state.point = std::move(initialPoint);
  state.stepRule = StepRuleState::zeros(n);
  GradientEs es(std::move(options), State{});
  MLGO_ES_RETURN_IF_ERROR(es.setState(std::move(state)));
  return es;
}

Status GradientEs::setState(State state) {
  // The dimension is fixed by the first state (create's).
  const size_t n = state_.point.size() ? dimension() : static_cast<size_t>(state.point.size());
  MLGO_ES_RETURN_IF_ERROR(detail::checkStateVector("point", state.point, n));
  MLGO_ES_RETURN_IF_ERROR(detail::checkStateVector("scale", state.scale, n, /*positive=*/true));
  MLGO_ES_RETURN_IF_ERROR(detail::checkStateVector("stepRule.first", state.stepRule.first, n));
  MLGO_ES_RETURN_IF_ERROR(detail::checkStateVector("stepRule.second", state.stepRule.second, n));
  if (state.step < 0)
    return detail::invalidField("step", "must be non-negative", double(state.step));
  if (state.stepRule.updates < 0)
    return detail::invalidField("stepRule.updates", "must be non-negative",
                                double(state.stepRule.updates));
  state_ = std::move(state);
  return Status::ok();
}

Status GradientEs::restoreState(const StateArchive& archive) {
  return restoreOptimizerState(*this, archive);
}

Population GradientEs::ask() const {
  return options_.sampling.around(state_.step, state_.point, state_.scale);
}

namespace {

// Estimate, step rule, point update: the common end of tell and update.
void takeStep(const GradientEs::Options& options, GradientEs::State& state, StepRecord& record,
              detail::SelectedSamples& selected, Eigen::MatrixXd displacements) {
  DirectionalSamples samples;
  samples.sampling = options.sampling.sampling;
  samples.displacements = std::move(displacements);
  samples.plus = std::move(selected.plus);
  samples.minus = std::move(selected.minus);
  samples.baseline = selected.baseline;
  Eigen::VectorXd gradient = estimateGradient(samples, options.estimator, options.sampling.sigma);
  // ml-compiler-opt keeps Toaster's denominator for antithetic top-k.
  if (options.convention == Convention::MlCompilerOpt &&
      options.estimator.method == GradientEstimator::MonteCarlo &&
      samples.sampling == Sampling::Antithetic && selected.topKRemoved)
    gradient *= 2;
  record.gradientNorm = gradient.norm();
  AscentStep step = ascentStep(options.stepRule, state.stepRule, gradient, state.point);
  record.gradientClipped = step.clipped;
  record.stepNorm = step.step.norm();
  state.point += step.step;
}

} // namespace

Expected<StepRecord> GradientEs::tell(std::span<const std::optional<double>> rewards) {
  Population population = ask();
  if (rewards.size() != population.size())
    return detail::rewardCountError(population.size(), state_.step, rewards.size());
  StepRecord record;
  record.step = state_.step;
  std::optional<detail::SelectedSamples> selected = detail::selectSamples(
      options_.sampling, options_.shaping, options_.convention, rewards, record);
  if (selected) {
    const auto n = static_cast<Eigen::Index>(dimension());
    Eigen::MatrixXd displacements(n, static_cast<Eigen::Index>(selected->directions.size()));
    for (size_t k = 0; k < selected->directions.size(); ++k)
      population.displacement(
          selected->directions[k],
          {displacements.col(static_cast<Eigen::Index>(k)).data(), dimension()});
    takeStep(options_, state_, record, *selected, std::move(displacements));
  }
  ++state_.step;
  return record;
}

Expected<StepRecord> GradientEs::update(const ExplicitSamples& samples) {
  const auto& sampling = options_.sampling;
  const size_t directions = static_cast<size_t>(sampling.directions);
  const size_t perturbed = sampling.sampling == Sampling::Antithetic ? 2 * directions : directions;
  if (static_cast<size_t>(samples.displacements.rows()) != dimension() ||
      static_cast<size_t>(samples.displacements.cols()) != directions)
    return makeError("displacements: expected " + std::to_string(dimension()) + " x " +
                     std::to_string(directions) + ", got " +
                     std::to_string(samples.displacements.rows()) + " x " +
                     std::to_string(samples.displacements.cols()));
  if (samples.rewards.size() != perturbed)
    return detail::rewardCountError(perturbed, state_.step, samples.rewards.size());
  if (samples.centerReward.has_value() != sampling.evaluateCenter)
    return makeError(sampling.evaluateCenter
                         ? "centerReward: required with sampling.evaluateCenter"
                         : "centerReward: given without sampling.evaluateCenter");
  std::vector<std::optional<double>> rewards = samples.rewards;
  if (sampling.evaluateCenter)
    rewards.push_back(samples.centerReward);

  StepRecord record;
  record.step = state_.step;
  std::optional<detail::SelectedSamples> selected =
      detail::selectSamples(sampling, options_.shaping, options_.convention, rewards, record);
  if (selected) {
    Eigen::MatrixXd displacements(samples.displacements.rows(),
                                  static_cast<Eigen::Index>(selected->directions.size()));
    for (size_t k = 0; k < selected->directions.size(); ++k)
      displacements.col(static_cast<Eigen::Index>(k)) =
          samples.displacements.col(static_cast<Eigen::Index>(selected->directions[k]));
    takeStep(options_, state_, record, *selected, std::move(displacements));
  }
  ++state_.step;
  return record;
}

const OptionSchema<GradientEs::Options>& GradientEs::Options::schema() {
  static const OptionSchema<Options> schema = [] {
    OptionSchema<Options> s;
    detail::describeSampling(s);
    s.include(
        StepRuleOptions::schema(), [](auto& o) -> auto& { return o.stepRule; });
    detail::describeConvention(s);
    return s;
  }();
  return schema;
}

} // namespace mlgo::es
