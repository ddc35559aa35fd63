// Gradient estimators: the reward gradient at x from rewards of perturbed
// points x + p_d (and x − p_d when antithetic). Displacements p_d include σ
// and the per-parameter scale; the estimate is in parameter units (∇F).
//
// Monte Carlo (Gaussian smoothing, as ml-compiler-opt's monte_carlo_gradient):
//   forward:    g = 1/(M σ²) Σ_d (f_d − f0) p_d
//   antithetic: g = 1/(2M σ²) Σ_d (f+_d − f−_d) p_d
// (the antithetic form equals ml-compiler-opt's mean over all 2M candidates
// of f_i p_i / σ²).
//
// Regression (ml-compiler-opt's sklearn_regression_gradient): fit
// p_d · g + c ≈ b_d over the directions, b_d = f_d − f0 (forward) or
// (f+_d − f−_d) / 2 (antithetic), with an intercept c as sklearn's default
// fit_intercept=True, i.e. on centred data:
//   least squares: the minimum-norm solution (numpy/sklearn lstsq);
//   ridge:         min ‖b − P g − c‖² + α ‖g‖²               (sklearn Ridge);
//   lasso:         min 1/(2M) ‖b − P g − c‖² + α ‖g‖₁        (sklearn Lasso),
//                  by cyclic coordinate descent from zero (with an active set).
// With more parameters than directions (the usual case) least squares and
// ridge are solved through the M × M Gram matrix of the directions.
#pragma once

#include "mlgo/es/Perturbations.h"
#include "mlgo/support/Expected.h"
#include "mlgo/support/OptionSchemaFwd.h"

#include <Eigen/Core>

#include <string_view>

namespace mlgo::es {

enum class GradientEstimator { MonteCarlo, LeastSquares, Ridge, Lasso };

std::string_view gradientEstimatorName(GradientEstimator estimator);
// "monte-carlo", "least-squares", "ridge", "lasso"

struct EstimatorOptions {
  GradientEstimator method = GradientEstimator::MonteCarlo;
  // α of ridge (squared L2 penalty) and lasso (L1 penalty; with the 1/(2M)
  // data term above, α is in units of shaped reward per parameter unit).
  // Larger α shrinks the estimate towards zero: less variance, more bias.
  double regularization = 0.01;
  // Lasso's coordinate descent: at most this many sweeps (over all
  // parameters or over the non-zero ones); it stops when a sweep over all of
  // them changes no coefficient by more than lassoTolerance × the largest
  // (sklearn's primary test).
  int lassoMaxSweeps = 1000;
  double lassoTolerance = 1e-4;

  Status validate() const; // errors name the field, e.g. "estimator.regularization: …"
  static const OptionSchema<EstimatorOptions>& schema(); // --estimator, --regularization
};

// The estimators' input after failures, shaping and top-k selection.
struct DirectionalSamples {
  Sampling sampling = Sampling::Antithetic;
  // n × M: column d is p_d.
  Eigen::MatrixXd displacements;
  // M shaped rewards of x + p_d.
  Eigen::VectorXd plus;
  // M shaped rewards of x − p_d (antithetic only; empty otherwise).
  Eigen::VectorXd minus;
  // Shaped f(x), the forward-difference baseline f0.
  double baseline = 0;
};

Eigen::VectorXd monteCarloGradient(const DirectionalSamples& samples, double sigma);
Eigen::VectorXd regressionGradient(const DirectionalSamples& samples,
                                   const EstimatorOptions& options);
// Dispatches on options.method (σ is used by Monte Carlo only).
Eigen::VectorXd estimateGradient(const DirectionalSamples& samples, const EstimatorOptions& options,
                                 double sigma);

} // namespace mlgo::es
