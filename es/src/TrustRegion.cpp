#include "mlgo/es/TrustRegion.h"

#include "SampledOptionSchema.h"

#include "SampleSelection.h"
#include "Validation.h"

#include <algorithm>
#include <cassert>
#include <cmath>

namespace mlgo::es {

namespace {

constexpr double kArmijo = 1e-4;
constexpr int kMaxHalvings = 30;

} // namespace

SubproblemSolution solveTrustRegionSubproblem(const TrustRegionSubproblem& problem) {
  const Eigen::Index n = problem.linear.size();
  const double radius = problem.radius;
  SubproblemSolution solution;
  solution.step = Eigen::VectorXd::Zero(n);
  Eigen::VectorXd hessianStep = Eigen::VectorXd::Zero(n); // H s, kept up to date
  for (int iteration = 1; iteration <= problem.maxIterations; ++iteration) {
    Eigen::VectorXd direction = -(hessianStep + problem.linear);
    const double squaredNorm = direction.squaredNorm();
    if (squaredNorm == 0)
      break;
    const double norm = std::sqrt(squaredNorm);
    Eigen::VectorXd hessianDirection = problem.hessianTimes(direction);
    const double curvature = direction.dot(hessianDirection);
    const double slope = -squaredNorm; // ∇m · d
    // Along d the model is exactly m(s) + α slope + ½ α² curvature.
    double alpha = curvature > 0 ? squaredNorm / curvature : 2 * radius / norm;
    bool armijo = false;
    for (int halving = 0; halving < kMaxHalvings && !armijo; ++halving) {
      if (alpha * slope + 0.5 * alpha * alpha * curvature <= kArmijo * alpha * slope)
        armijo = true;
      else
        alpha *= 0.5;
    }
    if (!armijo)
      alpha = 0.1 * radius / norm;
    Eigen::VectorXd next = solution.step + alpha * direction;
    Eigen::VectorXd hessianNext = hessianStep + alpha * hessianDirection;
    const double nextNorm = next.norm();
    if (nextNorm > radius) { // projection onto the ball is a scaling: H scales with it
      next *= radius / nextNorm;
      hessianNext *= radius / nextNorm;
    }
    const double change = (next - solution.step).norm();
    solution.step = std::move(next);
    hessianStep = std::move(hessianNext);
    solution.iterations = iteration;
    if (change < problem.tolerance)
      break;
  }
  solution.modelValue = 0.5 * solution.step.dot(hessianStep) + problem.linear.dot(solution.step);
  return solution;
}

Status TrustRegionOptions::validate() const {
  MLGO_ES_RETURN_IF_ERROR(detail::requirePositive("initialRadius", initialRadius));
  MLGO_ES_RETURN_IF_ERROR(detail::requireNonNegative("growThreshold", growThreshold));
  if (!(growFactor >= 1) || !std::isfinite(growFactor))
    return detail::invalidField("growFactor", "must be at least 1", growFactor);
  MLGO_ES_RETURN_IF_ERROR(detail::requireNonNegative("shrinkThreshold", shrinkThreshold));
  if (!(shrinkFactor > 0 && shrinkFactor <= 1))
    return detail::invalidField("shrinkFactor", "must be in (0, 1]", shrinkFactor);
  MLGO_ES_RETURN_IF_ERROR(detail::requireNonNegative("rejectThreshold", rejectThreshold));
  if (!(rejectFactor > 0 && rejectFactor <= 1))
    return detail::invalidField("rejectFactor", "must be in (0, 1]", rejectFactor);
  MLGO_ES_RETURN_IF_ERROR(detail::requirePositive("minimumRadius", minimumRadius));
  if (minimumRadius > initialRadius)
    return detail::invalidField("minimumRadius", "must not exceed initialRadius", minimumRadius);
  MLGO_ES_RETURN_IF_ERROR(detail::requirePositive("subproblemTolerance", subproblemTolerance));
  if (subproblemMaxIterations < 1)
    return detail::invalidField("subproblemMaxIterations", "must be at least 1",
                                subproblemMaxIterations);
  if (maxModelAge < 0)
    return detail::invalidField("maxModelAge", "must be non-negative", maxModelAge);
  return Status::ok();
}

Status TrustRegionEs::Options::validate() const {
  MLGO_ES_RETURN_IF_ERROR(detail::prefixed("sampling", sampling.validate()));
  MLGO_ES_RETURN_IF_ERROR(detail::prefixed("shaping", shaping.validate()));
  MLGO_ES_RETURN_IF_ERROR(detail::prefixed("estimator", estimator.validate()));
  MLGO_ES_RETURN_IF_ERROR(detail::prefixed("trustRegion", trustRegion.validate()));
  return Status::ok();
}

namespace {

std::vector<double> toDoubles(const std::vector<int64_t>& values) {
  return std::vector<double>(values.begin(), values.end()); // exact below 2^53
}

Expected<std::vector<int64_t>> toIntegers(std::string_view field,
                                          const std::vector<double>& values) {
  std::vector<int64_t> result;
  result.reserve(values.size());
  for (double v : values) {
    if (!(v >= 0 && v < 0x1.0p53) || v != std::floor(v))
      return makeError("state field \"" + std::string(field) +
                       "\": expected non-negative integers, got " + detail::formatValue(v));
    result.push_back(static_cast<int64_t>(v));
  }
  return result;
}

} // namespace

StateArchive TrustRegionEs::State::toArchive() const {
  StateArchive archive;
  setOptimizerHeader(archive, OptimizerKind::TrustRegionEs, static_cast<size_t>(point.size()));
  archive.setInteger("step", step);
  archive.setVector("point", point);
  archive.setVector("scale", scale);
  archive.setReal("radius", radius);
  archive.setInteger("hasModel", hasModel ? 1 : 0);
  archive.setInteger("returnedAfterReject", returnedAfterReject ? 1 : 0);
  archive.setVector("acceptedPoint", acceptedPoint);
  archive.setReal("acceptedValue", acceptedValue);
  archive.setReal("predictedImprovement", predictedImprovement);
  archive.setVector("modelGradient", modelGradient);
  archive.setVector("hessian.steps", toDoubles(hessianSteps));
  archive.setVector("hessian.directions", toDoubles(hessianDirections));
  archive.setVector("hessian.coefficients", hessianCoefficients);
  archive.setVector("hessian.ages", toDoubles(hessianAges));
  return archive;
}

Expected<TrustRegionEs::State> TrustRegionEs::State::fromArchive(const StateArchive& archive) {
  Expected<OptimizerHeader> header = readOptimizerHeader(archive, OptimizerKind::TrustRegionEs);
  if (!header)
    return header.error();
  const size_t n = header->dimension;
  State state;
  state.step = header->step;
  MLGO_ES_RETURN_IF_ERROR(readEigenVectors(archive, n,
                                           {{"point", &state.point},
                                            {"scale", &state.scale},
                                            {"acceptedPoint", &state.acceptedPoint},
                                            {"modelGradient", &state.modelGradient}}));
  for (auto [name, target] :
       {std::pair{"radius", &state.radius}, std::pair{"acceptedValue", &state.acceptedValue},
        std::pair{"predictedImprovement", &state.predictedImprovement}}) {
    Expected<double> value = archive.real(name);
    if (!value)
      return value.error();
    *target = *value;
  }
  for (auto [name, target] : {std::pair{"hasModel", &state.hasModel},
                              std::pair{"returnedAfterReject", &state.returnedAfterReject}}) {
    Expected<bool> value = archive.flag(name);
    if (!value)
      return value.error();
    *target = *value;
  }
  Expected<std::vector<double>> coefficients = archive.vector("hessian.coefficients");
  if (!coefficients)
    return coefficients.error();
  state.hessianCoefficients = coefficients.take();
  for (auto [name, target] : {std::pair{"hessian.steps", &state.hessianSteps},
                              std::pair{"hessian.directions", &state.hessianDirections},
                              std::pair{"hessian.ages", &state.hessianAges}}) {
    Expected<std::vector<double>> values = archive.vector(name);
    if (!values)
      return values.error();
    Expected<std::vector<int64_t>> integers = toIntegers(name, *values);
    if (!integers)
      return integers.error();
    *target = integers.take();
  }
  return state;
}

Expected<TrustRegionEs> TrustRegionEs::create(Options options, Eigen::VectorXd initialPoint,
                                              std::optional<Eigen::VectorXd> scale) {
  MLGO_ES_RETURN_IF_ERROR(options.validate());
  if (initialPoint.size() == 0)
    return makeError("initialPoint: must have at least one parameter");
  State state;
  state.scale = scale ? std::move(*scale) : Eigen::VectorXd::Ones(initialPoint.size());
  state.radius = options.trustRegion.initialRadius;
  state.acceptedPoint = initialPoint;
  state.modelGradient = Eigen::VectorXd::Zero(initialPoint.size());
  state.point = std::move(initialPoint);
  TrustRegionEs es(std::move(options), State{});
  MLGO_ES_RETURN_IF_ERROR(es.setState(std::move(state)));
  return es;
}

Status TrustRegionEs::setState(State state) {
  const size_t n = state_.point.size() ? dimension() : static_cast<size_t>(state.point.size());
  MLGO_ES_RETURN_IF_ERROR(detail::checkStateVector("point", state.point, n));
  MLGO_ES_RETURN_IF_ERROR(detail::checkStateVector("scale", state.scale, n, /*positive=*/true));
  MLGO_ES_RETURN_IF_ERROR(detail::checkStateVector("acceptedPoint", state.acceptedPoint, n));
  MLGO_ES_RETURN_IF_ERROR(detail::checkStateVector("modelGradient", state.modelGradient, n));
  if (state.step < 0)
    return detail::invalidField("step", "must be non-negative", double(state.step));
  MLGO_ES_RETURN_IF_ERROR(detail::requirePositive("radius", state.radius));
  const size_t samples = state.hessianCoefficients.size();
  if (state.hessianSteps.size() != samples || state.hessianDirections.size() != samples ||
      state.hessianAges.size() != samples)
    return makeError("hessian: steps, directions, coefficients and ages must have one value per "
                     "sample, got " +
                     std::to_string(state.hessianSteps.size()) + ", " +
                     std::to_string(state.hessianDirections.size()) + ", " +
                     std::to_string(samples) + ", " + std::to_string(state.hessianAges.size()));
  for (size_t i = 0; i < samples; ++i)
    if (state.hessianSteps[i] < 0 || state.hessianSteps[i] >= std::max<int64_t>(state.step, 1) ||
        state.hessianDirections[i] < 0 ||
        state.hessianDirections[i] >= options_.sampling.directions)
      return makeError("hessian: sample " + std::to_string(i) + " refers to step " +
                       std::to_string(state.hessianSteps[i]) + ", direction " +
                       std::to_string(state.hessianDirections[i]) +
                       ", outside the steps taken or the directions per step");
  state_ = std::move(state);
  return Status::ok();
}

Status TrustRegionEs::restoreState(const StateArchive& archive) {
  return restoreOptimizerState(*this, archive);
}

Population TrustRegionEs::ask() const {
  return options_.sampling.around(state_.step, state_.point, state_.scale);
}

namespace {

// The model's samples at the accepted point after a tell: this step's
// (Hessian coefficients (f_i − f0) / N per candidate), and after a return
// from a rejected step also the earlier ones at this point, averaged in
// (those older than maxModelAge dropped). Returns how many earlier samples
// were kept: they come first.
size_t takeModelSamples(TrustRegionEs::State& state, const TrustRegionOptions& tr,
                        const Eigen::VectorXd& gradient, double value,
                        const DirectionalSamples& samples, const std::vector<size_t>& directions,
                        bool antithetic) {
  const auto kept = static_cast<Eigen::Index>(directions.size());
  const double used = double(antithetic ? 2 * kept : kept);
  std::vector<double> coefficients(static_cast<size_t>(kept));
  for (Eigen::Index k = 0; k < kept; ++k) {
    double sum = samples.plus[k] - samples.baseline;
    if (antithetic)
      sum += samples.minus[k] - samples.baseline;
    coefficients[static_cast<size_t>(k)] = sum / used;
  }
  const double newWeight = state.returnedAfterReject ? 0.5 : 1.0;
  if (state.returnedAfterReject) {
    // Average with what was learnt at this point before the rejected step.
    state.modelGradient = 0.5 * gradient + 0.5 * state.modelGradient;
    state.acceptedValue = 0.5 * value + 0.5 * state.acceptedValue;
    size_t keptOld = 0;
    for (size_t i = 0; i < state.hessianCoefficients.size(); ++i) {
      if (state.hessianAges[i] + 1 > tr.maxModelAge)
        continue;
      state.hessianSteps[keptOld] = state.hessianSteps[i];
      state.hessianDirections[keptOld] = state.hessianDirections[i];
      state.hessianCoefficients[keptOld] = 0.5 * state.hessianCoefficients[i];
      state.hessianAges[keptOld] = state.hessianAges[i] + 1;
      ++keptOld;
    }
    state.hessianSteps.resize(keptOld);
    state.hessianDirections.resize(keptOld);
    state.hessianCoefficients.resize(keptOld);
    state.hessianAges.resize(keptOld);
    state.returnedAfterReject = false;
  } else {
    state.modelGradient = gradient;
    state.acceptedValue = value;
    state.hessianSteps.clear();
    state.hessianDirections.clear();
    state.hessianCoefficients.clear();
    state.hessianAges.clear();
  }
  const size_t oldSamples = state.hessianCoefficients.size();
  for (Eigen::Index k = 0; k < kept; ++k) {
    state.hessianSteps.push_back(state.step);
    state.hessianDirections.push_back(static_cast<int64_t>(directions[static_cast<size_t>(k)]));
    state.hessianCoefficients.push_back(newWeight * coefficients[static_cast<size_t>(k)]);
    state.hessianAges.push_back(0);
  }
  return oldSamples;
}

} // namespace

Expected<StepRecord> TrustRegionEs::tell(std::span<const std::optional<double>> rewards) {
  Population population = ask();
  if (rewards.size() != population.size())
    return detail::rewardCountError(population.size(), state_.step, rewards.size());
  const TrustRegionOptions& tr = options_.trustRegion;
  StepRecord record;
  record.step = state_.step;
  std::optional<detail::SelectedSamples> selected = detail::selectSamples(
      options_.sampling, options_.shaping, options_.convention, rewards, record);
  auto finish = [&]() {
    record.diagnostics.push_back({kRadius, state_.radius});
    ++state_.step;
    return record;
  };
  if (!selected)
    return finish();
  const double value = record.currentValue;

  // 1. Judge the step that led to this point.
  if (state_.hasModel && !state_.returnedAfterReject) {
    const bool ascent = value > state_.acceptedValue;
    const double reference = std::max(std::abs(ascent ? value : state_.acceptedValue), 1e-8);
    const double change = std::abs(value - state_.acceptedValue) / reference;
    const double ratio = (value - state_.acceptedValue) / state_.predictedImprovement;
    if (!ascent && change > tr.rejectThreshold) {
      state_.radius = std::max(state_.radius * tr.rejectFactor, tr.minimumRadius);
      record.diagnostics.push_back({kStepAccepted, 0});
      record.stepNorm = (state_.point - state_.acceptedPoint).norm();
      state_.point = state_.acceptedPoint;
      state_.returnedAfterReject = true;
      return finish();
    }
    if (!ascent && change > tr.shrinkThreshold)
      state_.radius = std::max(state_.radius * tr.shrinkFactor, tr.minimumRadius);
    else if (ascent && ratio > tr.growThreshold)
      state_.radius *= tr.growFactor;
    record.diagnostics.push_back({kStepAccepted, 1});
  }

  // 2. The model at this (now accepted) point.
  const auto n = static_cast<Eigen::Index>(dimension());
  const auto kept = static_cast<Eigen::Index>(selected->directions.size());
  const bool antithetic = options_.sampling.sampling == Sampling::Antithetic;
  DirectionalSamples samples;
  samples.sampling = options_.sampling.sampling;
  samples.displacements.resize(n, kept);
  for (Eigen::Index k = 0; k < kept; ++k)
    population.displacement(selected->directions[static_cast<size_t>(k)],
                            {samples.displacements.col(k).data(), dimension()});
  samples.plus = selected->plus;
  samples.minus = selected->minus;
  samples.baseline = selected->baseline;
  Eigen::VectorXd gradient = estimateGradient(samples, options_.estimator, options_.sampling.sigma);
  record.gradientNorm = gradient.norm();

  const size_t oldSamples =
      takeModelSamples(state_, tr, gradient, value, samples, selected->directions, antithetic);
  state_.hasModel = true;
  state_.acceptedPoint = state_.point;

  // 3. The subproblem, with H v = −1/σ⁴ Q (c ⊙ (Qᵀ v)), Q = the samples' p.
  const auto total = static_cast<Eigen::Index>(state_.hessianCoefficients.size());
  Eigen::MatrixXd q(n, total);
  const GaussianNoise& noise = population.noise();
  const Eigen::VectorXd scale = options_.sampling.sigma * state_.scale;
  for (Eigen::Index i = 0; i < static_cast<Eigen::Index>(oldSamples); ++i) {
    noise.fill(state_.hessianSteps[static_cast<size_t>(i)],
               state_.hessianDirections[static_cast<size_t>(i)], 0, {q.col(i).data(), dimension()});
    q.col(i) = q.col(i).cwiseProduct(scale);
  }
  q.rightCols(kept) = samples.displacements;
  const Eigen::Map<const Eigen::VectorXd> c(state_.hessianCoefficients.data(), total);
  const double sigma2 = options_.sampling.sigma * options_.sampling.sigma;
  const double hessianScale = -1.0 / (sigma2 * sigma2);
  TrustRegionSubproblem problem;
  problem.hessianTimes = [&](const Eigen::VectorXd& v) -> Eigen::VectorXd {
    Eigen::VectorXd projections = q.transpose() * v;
    return hessianScale * (q * c.cwiseProduct(projections));
  };
  problem.linear = -state_.modelGradient;
  problem.radius = state_.radius;
  problem.tolerance = tr.subproblemTolerance;
  problem.maxIterations = tr.subproblemMaxIterations;
  SubproblemSolution solution = solveTrustRegionSubproblem(problem);
  state_.predictedImprovement = -solution.modelValue;
  state_.point = state_.acceptedPoint + solution.step;
  record.stepNorm = solution.step.norm();
  record.diagnostics.push_back({kSubproblemIterations, static_cast<double>(solution.iterations)});
  return finish();
}

const OptionSchema<TrustRegionEs::Options>& TrustRegionEs::Options::schema() {
  static const OptionSchema<Options> schema = [] {
    OptionSchema<Options> s;
    detail::describeSampling(s);
    detail::describeConvention(s);
    s.value(
        "tr-initial-radius", "Trust region: initial radius",
        [](auto& o) -> auto& { return o.trustRegion.initialRadius; });
    s.value(
        "tr-minimum-radius", "Trust region: smallest radius",
        [](auto& o) -> auto& { return o.trustRegion.minimumRadius; });
    return s;
  }();
  return schema;
}

} // namespace mlgo::es
