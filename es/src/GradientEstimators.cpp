#include "mlgo/es/GradientEstimators.h"
#include "mlgo/support/OptionSchema.h"

#include "Validation.h"

#include <Eigen/Cholesky>
#include <Eigen/Eigenvalues>

#include <algorithm>
#include <cassert>
#include <cmath>
#include <limits>
#include <vector>

namespace mlgo::es {

std::string_view gradientEstimatorName(GradientEstimator estimator) {
  switch (estimator) {
  case GradientEstimator::MonteCarlo:
    return "monte-carlo";
  case GradientEstimator::LeastSquares:
    return "least-squares";
  case GradientEstimator::Ridge:
    return "ridge";
  case GradientEstimator::Lasso:
    return "lasso";
  }
  return "unknown";
}

Status EstimatorOptions::validate() const {
  if (method == GradientEstimator::Ridge || method == GradientEstimator::Lasso)
    MLGO_ES_RETURN_IF_ERROR(detail::requirePositive("regularization", regularization));
  if (lassoMaxSweeps < 1)
    return detail::invalidField("lassoMaxSweeps", "must be at least 1", lassoMaxSweeps);
  MLGO_ES_RETURN_IF_ERROR(detail::requirePositive("lassoTolerance", lassoTolerance));
  return Status::ok();
}

namespace {

void checkShapes(const DirectionalSamples& samples) {
  assert(samples.plus.size() == samples.displacements.cols());
  assert(samples.sampling != Sampling::Antithetic ||
         samples.minus.size() == samples.displacements.cols());
  (void)samples;
}

// The regression targets b_d.
Eigen::VectorXd regressionTargets(const DirectionalSamples& samples) {
  if (samples.sampling == Sampling::Antithetic)
    return 0.5 * (samples.plus - samples.minus);
  return samples.plus.array() - samples.baseline;
}

// Solves the symmetric positive semi-definite system G x = rhs in the
// minimum-norm least-squares sense (eigenvalues below λmax · size · ε count
// as zero, like lstsq's default cut-off).
Eigen::VectorXd pseudoInverseSolve(const Eigen::MatrixXd& gram, const Eigen::VectorXd& rhs,
                                   Eigen::Index largerSide) {
  Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> eigen(gram);
  const Eigen::VectorXd& values = eigen.eigenvalues();
  const Eigen::MatrixXd& vectors = eigen.eigenvectors();
  double cutoff = values.size() ? values.maxCoeff() * double(largerSide) *
                                      std::numeric_limits<double>::epsilon()
                                : 0.0;
  Eigen::VectorXd projected = vectors.transpose() * rhs;
  for (Eigen::Index i = 0; i < values.size(); ++i)
    projected[i] = values[i] > cutoff ? projected[i] / values[i] : 0.0;
  return vectors * projected;
}

// Gram matrix A Aᵀ (lower triangle filled, then mirrored).
Eigen::MatrixXd gram(const Eigen::MatrixXd& a) {
  Eigen::MatrixXd g = Eigen::MatrixXd::Zero(a.rows(), a.rows());
  g.selfadjointView<Eigen::Lower>().rankUpdate(a);
  return g.selfadjointView<Eigen::Lower>();
}

Eigen::VectorXd leastSquares(const Eigen::MatrixXd& centred, const Eigen::VectorXd& targets) {
  const Eigen::Index n = centred.rows(), m = centred.cols();
  if (m <= n) // dual: g = Pc (PcᵀPc)⁺ b
    return centred * pseudoInverseSolve(gram(centred.transpose()), targets, n);
  return pseudoInverseSolve(gram(centred), centred * targets, m); // (Pc Pcᵀ)⁺ Pc b
}

Eigen::VectorXd ridge(const Eigen::MatrixXd& centred, const Eigen::VectorXd& targets,
                      double alpha) {
  const Eigen::Index n = centred.rows(), m = centred.cols();
  if (m <= n) {
    Eigen::MatrixXd g = gram(centred.transpose());
    g.diagonal().array() += alpha;
    return centred * g.ldlt().solve(targets);
  }
  Eigen::MatrixXd g = gram(centred);
  g.diagonal().array() += alpha;
  return g.ldlt().solve(centred * targets);
}

// Cyclic coordinate descent on 1/(2M) ‖b − X g‖² + α ‖g‖₁, X = Pcᵀ (M × n),
// with glmnet's active-set strategy: after a sweep over every coordinate,
// sweep only the non-zero ones until they settle, then check with a full
// sweep again. Every sweep counts towards lassoMaxSweeps.
Eigen::VectorXd lasso(const Eigen::MatrixXd& centred, const Eigen::VectorXd& targets,
                      const EstimatorOptions& options) {
  const Eigen::Index n = centred.rows(), m = centred.cols();
  const Eigen::MatrixXd x = centred.transpose(); // column j: coordinate j over the directions
  const Eigen::VectorXd columnSquares = x.colwise().squaredNorm().transpose();
  const double threshold = double(m) * options.regularization;
  Eigen::VectorXd g = Eigen::VectorXd::Zero(n);
  Eigen::VectorXd residual = targets;
  std::vector<Eigen::Index> all(static_cast<size_t>(n)), active;
  for (Eigen::Index j = 0; j < n; ++j)
    all[static_cast<size_t>(j)] = j;

  // One sweep over `coordinates`; true when it changed (almost) nothing.
  auto sweep = [&](const std::vector<Eigen::Index>& coordinates) {
    double largestChange = 0, largestCoefficient = 0;
    for (Eigen::Index j : coordinates) {
      if (columnSquares[j] == 0)
        continue;
      const double old = g[j];
      const double rho = x.col(j).dot(residual) + columnSquares[j] * old;
      const double updated = rho > threshold    ? (rho - threshold) / columnSquares[j]
                             : rho < -threshold ? (rho + threshold) / columnSquares[j]
                                                : 0.0;
      if (updated != old) {
        residual.noalias() -= (updated - old) * x.col(j);
        g[j] = updated;
      }
      largestChange = std::max(largestChange, std::abs(updated - old));
      largestCoefficient = std::max(largestCoefficient, std::abs(updated));
    }
    return largestCoefficient == 0 || largestChange <= options.lassoTolerance * largestCoefficient;
  };

  int sweeps = 0;
  while (sweeps < options.lassoMaxSweeps) {
    ++sweeps;
    if (sweep(all))
      break;
    active.clear();
    for (Eigen::Index j = 0; j < n; ++j)
      if (g[j] != 0)
        active.push_back(j);
    while (sweeps < options.lassoMaxSweeps) {
      ++sweeps;
      if (sweep(active))
        break;
    }
  }
  return g;
}

} // namespace

Eigen::VectorXd monteCarloGradient(const DirectionalSamples& samples, double sigma) {
  checkShapes(samples);
  const Eigen::Index m = samples.displacements.cols();
  if (m == 0)
    return Eigen::VectorXd::Zero(samples.displacements.rows());
  Eigen::VectorXd weights;
  if (samples.sampling == Sampling::Antithetic)
    weights = (samples.plus - samples.minus) / (2.0 * double(m) * sigma * sigma);
  else
    weights = (samples.plus.array() - samples.baseline) / (double(m) * sigma * sigma);
  return samples.displacements * weights;
}

Eigen::VectorXd regressionGradient(const DirectionalSamples& samples,
                                   const EstimatorOptions& options) {
  checkShapes(samples);
  const Eigen::Index m = samples.displacements.cols();
  if (m == 0)
    return Eigen::VectorXd::Zero(samples.displacements.rows());
  // Centring the data fits the intercept (sklearn's fit_intercept=True).
  Eigen::VectorXd targets = regressionTargets(samples);
  targets.array() -= targets.mean();
  Eigen::MatrixXd centred = samples.displacements;
  centred.colwise() -= samples.displacements.rowwise().mean();
  switch (options.method) {
  case GradientEstimator::LeastSquares:
    return leastSquares(centred, targets);
  case GradientEstimator::Ridge:
    return ridge(centred, targets, options.regularization);
  case GradientEstimator::Lasso:
    return lasso(centred, targets, options);
  case GradientEstimator::MonteCarlo:
    break;
  }
  assert(false && "regressionGradient needs a regression method");
  return Eigen::VectorXd::Zero(samples.displacements.rows());
}

Eigen::VectorXd estimateGradient(const DirectionalSamples& samples, const EstimatorOptions& options,
                                 double sigma) {
  if (options.method == GradientEstimator::MonteCarlo)
    return monteCarloGradient(samples, sigma);
  return regressionGradient(samples, options);
}

const OptionSchema<EstimatorOptions>& EstimatorOptions::schema() {
  static const OptionSchema<EstimatorOptions> schema = [] {
    OptionSchema<EstimatorOptions> s;
    s.choice(
        "estimator", "Gradient estimator", [](auto& o) -> auto& { return o.method; },
        {GradientEstimator::MonteCarlo, GradientEstimator::LeastSquares, GradientEstimator::Ridge,
         GradientEstimator::Lasso},
        gradientEstimatorName);
    s.value(
        "regularization", "Ridge/lasso penalty α",
        [](auto& o) -> auto& { return o.regularization; });
    return s;
  }();
  return schema;
}

} // namespace mlgo::es
