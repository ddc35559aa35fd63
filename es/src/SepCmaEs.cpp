#include "mlgo/es/SepCmaEs.h"
#include "mlgo/support/OptionSchema.h"

#include "Validation.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <sstream>

namespace mlgo::es {

Status SepCmaEs::Options::validate() const {
  if (populationSize && *populationSize < 2)
    return detail::invalidField("populationSize", "must be at least 2 when set", *populationSize);
  if (parents) {
    int lambda = populationSize.value_or(2);
    if (*parents < 1)
      return detail::invalidField("parents", "must be at least 1 when set", *parents);
    if (populationSize && *parents > lambda)
      return detail::invalidField("parents", "must not exceed populationSize", *parents);
  }
  MLGO_ES_RETURN_IF_ERROR(detail::requirePositive("initialSigma", initialSigma));
  MLGO_ES_RETURN_IF_ERROR(detail::requireClosed("minSuccessShare", minSuccessShare, 0, 1));
  return Status::ok();
}

StateArchive SepCmaEs::State::toArchive() const {
  StateArchive archive;
  setOptimizerHeader(archive, OptimizerKind::SepCmaEs, static_cast<size_t>(mean.size()));
  archive.setInteger("step", step);
  archive.setVector("mean", mean);
  archive.setReal("sigma", sigma);
  archive.setVector("diagonalCovariance", diagonalCovariance);
  archive.setVector("sigmaPath", sigmaPath);
  archive.setVector("covariancePath", covariancePath);
  return archive;
}

Expected<SepCmaEs::State> SepCmaEs::State::fromArchive(const StateArchive& archive) {
  Expected<OptimizerHeader> header = readOptimizerHeader(archive, OptimizerKind::SepCmaEs);
  if (!header)
    return header.error();
  const size_t n = header->dimension;
  State state;
  state.step = header->step;
  Expected<double> sigma = archive.real("sigma");
  if (!sigma)
    return sigma.error();
  state.sigma = *sigma;
  MLGO_ES_RETURN_IF_ERROR(readEigenVectors(archive, n,
                                           {{"mean", &state.mean},
                                            {"diagonalCovariance", &state.diagonalCovariance},
                                            {"sigmaPath", &state.sigmaPath},
                                            {"covariancePath", &state.covariancePath}}));
  return state;
}

SepCmaEs::SepCmaEs(Options options, State state)
    : options_(std::move(options)), state_(std::move(state)) {
  const double n = double(state_.mean.size());
  lambda_ = options_.populationSize ? static_cast<size_t>(*options_.populationSize)
                                    : 4 + static_cast<size_t>(std::floor(3 * std::log(n)));
  mu_ = options_.parents ? static_cast<size_t>(*options_.parents) : lambda_ / 2;
  weights_.resize(static_cast<Eigen::Index>(mu_));
  for (size_t i = 0; i < mu_; ++i)
    weights_[static_cast<Eigen::Index>(i)] = std::log(double(mu_) + 0.5) - std::log(double(i + 1));
  weights_ /= weights_.sum();
  muEff_ = 1.0 / weights_.squaredNorm();
  cSigma_ = (muEff_ + 2) / (n + muEff_ + 5);
  dSigma_ = 1 + 2 * std::max(0.0, std::sqrt((muEff_ - 1) / (n + 1)) - 1) + cSigma_;
  cC_ = (4 + muEff_ / n) / (n + 4 + 2 * muEff_ / n);
  double c1 = 2 / ((n + 1.3) * (n + 1.3) + muEff_);
  double cMu = std::min(1 - c1, 2 * (muEff_ - 2 + 1 / muEff_) / ((n + 2) * (n + 2) + muEff_));
  // The separable model learns n values, not n²: faster rates (Ros & Hansen).
  const double separable = (n + 2) / 3;
  c1 *= separable;
  cMu *= separable;
  if (c1 + cMu > 1) {
    const double shrink = 1 / (c1 + cMu);
    c1 *= shrink;
    cMu *= shrink;
  }
  c1_ = c1;
  cMu_ = cMu;
  chiN_ = std::sqrt(n) * (1 - 1 / (4 * n) + 1 / (21 * n * n));
}

Expected<SepCmaEs> SepCmaEs::create(Options options, Eigen::VectorXd initialMean,
                                    std::optional<Eigen::VectorXd> initialScale) {
  MLGO_ES_RETURN_IF_ERROR(options.validate());
  if (initialMean.size() == 0)
    return makeError("initialMean: must have at least one parameter");
  const Eigen::Index n = initialMean.size();
  if (initialScale)
    MLGO_ES_RETURN_IF_ERROR(detail::checkStateVector("initialScale", *initialScale,
                                                     static_cast<size_t>(n), /*positive=*/true));
  State state;
  state.sigma = options.initialSigma;
  state.diagonalCovariance =
      initialScale ? Eigen::VectorXd(initialScale->cwiseAbs2()) : Eigen::VectorXd::Ones(n);
  state.sigmaPath = Eigen::VectorXd::Zero(n);
  state.covariancePath = Eigen::VectorXd::Zero(n);
  state.mean = std::move(initialMean);
  if (!options.populationSize && options.parents) {
    size_t lambda = 4 + static_cast<size_t>(std::floor(3 * std::log(double(n))));
    if (static_cast<size_t>(*options.parents) > lambda)
      return detail::invalidField(
          "parents", "must not exceed the default populationSize " + std::to_string(lambda),
          *options.parents);
  }
  State initial = state;
  SepCmaEs es(std::move(options), std::move(initial));
  MLGO_ES_RETURN_IF_ERROR(es.setState(std::move(state)));
  return es;
}

Status SepCmaEs::setState(State state) {
  const size_t n = dimension();
  MLGO_ES_RETURN_IF_ERROR(detail::checkStateVector("mean", state.mean, n));
  MLGO_ES_RETURN_IF_ERROR(detail::checkStateVector("diagonalCovariance", state.diagonalCovariance,
                                                   n, /*positive=*/true));
  MLGO_ES_RETURN_IF_ERROR(detail::checkStateVector("sigmaPath", state.sigmaPath, n));
  MLGO_ES_RETURN_IF_ERROR(detail::checkStateVector("covariancePath", state.covariancePath, n));
  MLGO_ES_RETURN_IF_ERROR(detail::requirePositive("sigma", state.sigma));
  if (state.step < 0)
    return detail::invalidField("step", "must be non-negative", double(state.step));
  state_ = std::move(state);
  return Status::ok();
}

Status SepCmaEs::restoreState(const StateArchive& archive) {
  return restoreOptimizerState(*this, archive);
}

Population SepCmaEs::ask() const {
  return Population(options_.seed, state_.step, Sampling::ForwardDifference, lambda_,
                    /*withCenter=*/false, state_.mean,
                    state_.sigma * state_.diagonalCovariance.cwiseSqrt());
}

Expected<StepRecord> SepCmaEs::tell(std::span<const std::optional<double>> rewards) {
  if (rewards.size() != lambda_)
    return detail::rewardCountError(lambda_, state_.step, rewards.size());
  StepRecord record;
  record.step = state_.step;
  record.candidates = lambda_;
  record.gradientNorm = std::nan("");

  std::vector<size_t> succeeded;
  for (size_t i = 0; i < lambda_; ++i)
    if (rewards[i] && std::isfinite(*rewards[i]))
      succeeded.push_back(i);
  record.succeeded = succeeded.size();
  if (!succeeded.empty()) {
    double sum = 0, best = -std::numeric_limits<double>::infinity();
    for (size_t i : succeeded) {
      sum += *rewards[i];
      best = std::max(best, *rewards[i]);
    }
    record.meanReward = sum / double(succeeded.size());
    record.bestReward = best;
  } else {
    record.meanReward = record.bestReward = std::nan("");
  }
  record.currentValue = record.meanReward;
  auto finish = [&]() {
    record.diagnostics.push_back({kSigma, state_.sigma});
    ++state_.step;
    return record;
  };
  if (succeeded.size() < mu_ ||
      double(succeeded.size()) < options_.minSuccessShare * double(lambda_)) {
    std::ostringstream reason;
    reason << "only " << succeeded.size() << " of " << lambda_
           << " candidates succeeded (minimum share " << options_.minSuccessShare << ", " << mu_
           << " parents)";
    record.skipped = true;
    record.skipReason = reason.str();
    return finish();
  }
  // Best first; ties keep the lower index.
  std::stable_sort(succeeded.begin(), succeeded.end(),
                   [&](size_t a, size_t b) { return *rewards[a] > *rewards[b]; });
  record.usedRewards = mu_;

  const Eigen::Index n = static_cast<Eigen::Index>(dimension());
  const Eigen::VectorXd sqrtC = state_.diagonalCovariance.cwiseSqrt();
  GaussianNoise noise(options_.seed);
  Eigen::VectorXd z(n), zWeighted = Eigen::VectorXd::Zero(n),
                        yWeightedSquares = Eigen::VectorXd::Zero(n);
  for (size_t i = 0; i < mu_; ++i) {
    const double w = weights_[static_cast<Eigen::Index>(i)];
    noise.fill(state_.step, static_cast<int64_t>(succeeded[i]), 0,
               {z.data(), static_cast<size_t>(n)});
    zWeighted += w * z;
    yWeightedSquares += w * (sqrtC.cwiseProduct(z)).cwiseAbs2();
  }
  const Eigen::VectorXd yWeighted = sqrtC.cwiseProduct(zWeighted);
  const Eigen::VectorXd meanStep = state_.sigma * yWeighted;
  state_.mean += meanStep;
  record.stepNorm = meanStep.norm();

  state_.sigmaPath =
      (1 - cSigma_) * state_.sigmaPath + std::sqrt(cSigma_ * (2 - cSigma_) * muEff_) * zWeighted;
  const double generations = double(state_.step + 1);
  const double pathNorm = state_.sigmaPath.norm();
  const bool hSigma = pathNorm / std::sqrt(1 - std::pow(1 - cSigma_, 2 * generations)) <
                      (1.4 + 2 / (double(n) + 1)) * chiN_;
  state_.covariancePath = (1 - cC_) * state_.covariancePath +
                          (hSigma ? std::sqrt(cC_ * (2 - cC_) * muEff_) : 0.0) * yWeighted;
  const double keep = 1 - c1_ - cMu_ + (hSigma ? 0.0 : c1_ * cC_ * (2 - cC_));
  state_.diagonalCovariance = keep * state_.diagonalCovariance +
                              c1_ * state_.covariancePath.cwiseAbs2() + cMu_ * yWeightedSquares;
  state_.sigma *= std::exp((cSigma_ / dSigma_) * (pathNorm / chiN_ - 1));
  // C's overall scale and σ trade off exactly (C → k²C, p_c → k p_c, σ → σ/k
  // samples and updates the same), and on non-separable rewards they drift
  // apart without bound (σ ~ 1e58 after 50k evaluations on Rosenbrock).
  // Keeping mean(c) = 1 removes the drift without changing the search.
  const double drift = state_.diagonalCovariance.mean();
  state_.diagonalCovariance /= drift;
  state_.covariancePath /= std::sqrt(drift);
  state_.sigma *= std::sqrt(drift);
  return finish();
}

const OptionSchema<SepCmaEs::Options>& SepCmaEs::Options::schema() {
  static const OptionSchema<Options> schema = [] {
    OptionSchema<Options> s;
    s.value(
        "min-success-share",
        "Skip a step when fewer candidates than this share compiled everywhere",
        [](auto& o) -> auto& { return o.minSuccessShare; });
    s.value(
        "cma-sigma", "sep-CMA-ES: initial σ", [](auto& o) -> auto& { return o.initialSigma; });
    s.zeroUnset(
        "cma-population", "sep-CMA-ES: candidates per step (0: 4 + 3 ln n)",
        [](auto& o) -> auto& { return o.populationSize; });
    return s;
  }();
  return schema;
}

} // namespace mlgo::es
