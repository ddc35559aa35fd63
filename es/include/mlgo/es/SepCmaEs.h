// sep-CMA-ES (Ros & Hansen 2008): CMA-ES with a diagonal covariance matrix,
// so time and memory are linear in the number of parameters. Rewards are
// maximised.
//
// Candidate k of step t: x_k = m + σ · √c ⊙ z_k, z_k = ε(seed, t, k).
// Update with the μ best successful candidates (weights w_i ∝ ln(μ + ½) − ln i,
// Σ w = 1, μ_eff = 1/Σ w²), the standard settings of Hansen's tutorial:
//   y_w = Σ w_i √c ⊙ z_i,  m ← m + σ y_w
//   p_σ ← (1 − c_σ) p_σ + √(c_σ(2 − c_σ) μ_eff) Σ w_i z_i
//   h_σ = ‖p_σ‖ / √(1 − (1 − c_σ)^(2(t+1))) < (1.4 + 2/(n+1)) E‖N(0, I)‖
//   p_c ← (1 − c_c) p_c + h_σ √(c_c(2 − c_c) μ_eff) y_w
//   c ← (1 − c1 − cμ + (1 − h_σ) c1 c_c(2 − c_c)) c + c1 p_c² + cμ Σ w_i (√c ⊙ z_i)²
//   σ ← σ exp(c_σ/d_σ (‖p_σ‖ / E‖N(0, I)‖ − 1))
// with c1 and cμ of full CMA-ES multiplied by (n + 2)/3 (the separable
// model has n, not n², values to learn) and capped so that c1 + cμ ≤ 1.
// After each update c is rescaled to mean 1 and σ, p_c compensate: an exact
// symmetry of the algorithm that stops σ and C drifting towards overflow.
// Failed candidates are left out of the selection; the step is skipped when
// fewer than minSuccessShare of the candidates, or fewer than μ, succeeded.
#pragma once

#include "mlgo/es/BlackboxOptimizer.h"

#include <optional>

namespace mlgo::es {

class SepCmaEs final : public BlackboxOptimizer {
public:
  static constexpr OptimizerKind kKind = OptimizerKind::SepCmaEs;
  // Its diagnostic: σ after the step's update (a run-file column).
  static constexpr std::string_view kSigma = "cma_sigma";
  struct Options {
    using Optimizer = SepCmaEs;
    // Seeds every candidate: z_k = ε(seed, step, k).
    uint64_t seed = 0;
    // λ, candidates per step (unset: 4 + ⌊3 ln n⌋, the standard choice).
    // Larger populations are more robust on multimodal rewards, slower per
    // evaluation.
    std::optional<int> populationSize;
    // μ, parents per step (unset: ⌊λ/2⌋).
    std::optional<int> parents;
    // Initial global step size σ0: about a quarter of the region where the
    // optimum is expected.
    double initialSigma = 0.3;
    // Skip the step when fewer than this share of candidates succeeded.
    double minSuccessShare = 0.5;

    Status validate() const; // errors name the field, e.g. "initialSigma: …"
    void reseed(uint64_t newSeed) { seed = newSeed; }
    // --cma-sigma, --cma-population, --min-success-share.
    static const OptionSchema<Options>& schema();
  };

  struct State {
    int64_t step = 0;
    Eigen::VectorXd mean;
    double sigma = 0.3;
    // Diagonal of the covariance matrix C (mean 1 after the first step).
    Eigen::VectorXd diagonalCovariance;
    Eigen::VectorXd sigmaPath;      // p_σ
    Eigen::VectorXd covariancePath; // p_c

    StateArchive toArchive() const;
    static Expected<State> fromArchive(const StateArchive& archive);
  };

  // `initialScale` sets C's initial diagonal to its squares (default ones).
  static Expected<SepCmaEs> create(Options options, Eigen::VectorXd initialMean,
                                   std::optional<Eigen::VectorXd> initialScale = std::nullopt);

  OptimizerKind kind() const override { return kKind; }
  static std::span<const std::string_view> stepColumns() {
    static constexpr std::string_view columns[] = {kSigma};
    return columns;
  }
  size_t dimension() const override { return static_cast<size_t>(state_.mean.size()); }
  int64_t step() const override { return state_.step; }
  const Eigen::VectorXd& point() const override { return state_.mean; }

  Population ask() const override;
  Expected<StepRecord> tell(std::span<const std::optional<double>> rewards) override;

  size_t populationSize() const { return lambda_; }
  size_t parents() const { return mu_; }
  const Options& options() const { return options_; }
  const State& state() const { return state_; }
  Status setState(State state);

  StateArchive saveState() const override { return state_.toArchive(); }
  Status restoreState(const StateArchive& archive) override;

private:
  SepCmaEs(Options options, State state);

  Options options_;
  State state_;
  // Strategy parameters, derived from the options and n.
  size_t lambda_ = 0;
  size_t mu_ = 0;
  Eigen::VectorXd weights_;
  double muEff_ = 0;
  double cSigma_ = 0, dSigma_ = 0, cC_ = 0, c1_ = 0, cMu_ = 0, chiN_ = 0;
};

} // namespace mlgo::es
