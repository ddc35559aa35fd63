// Gradient-based evolution strategies: estimate the reward gradient from
// perturbed candidates (Monte Carlo or regression), step with SGD, momentum
// or Adam. ml-compiler-opt's MonteCarloBlackboxOptimizer and
// SklearnRegressionBlackboxOptimizer are special cases.
//
// One step (tell):
//  1. Rewards that are missing or non-finite are failures. When fewer than
//     minSuccessShare of the perturbed candidates succeeded, the step is
//     skipped. An antithetic pair with a failed member is dropped.
//  2. f(x) is the centre's reward when evaluated (and finite), else the mean
//     of the successful perturbed rewards.
//  3. Shaping (FitnessShaping.h) of the remaining rewards; the forward
//     baseline f0 is the shaped f(x) (0 under centred ranks); top-k.
//  4. The estimator (GradientEstimators.h) on the kept directions, whose
//     noise is regenerated from (seed, step, direction).
//  5. The step rule (StepRules.h); x += step.
// A skipped step still advances the step counter, so the next population
// draws fresh noise.
#pragma once

#include "mlgo/es/BlackboxOptimizer.h"
#include "mlgo/es/FitnessShaping.h"
#include "mlgo/es/GradientEstimators.h"
#include "mlgo/es/StepRules.h"

#include <optional>
#include <vector>

namespace mlgo::es {

class GradientEs final : public BlackboxOptimizer {
public:
  static constexpr OptimizerKind kKind = OptimizerKind::GradientEs;
  struct Options {
    using Optimizer = GradientEs;
    // Seed, antithetic or forward, directions, σ, centre, failure tolerance.
    SamplingOptions sampling;
    // z-score by default: scale-free rewards, so σ and the step rule need no
    // retuning when the reward's units change.
    ShapingOptions shaping;
    // Monte Carlo by default: cheapest, unbiased for the smoothed reward.
    EstimatorOptions estimator;
    // Adam by default: per-parameter step sizes suit MLP weights.
    StepRuleOptions stepRule;
    // Native, or ml-compiler-opt's quirks (see Convention).
    Convention convention = Convention::Native;

    // Errors name the field with its struct, e.g. "sampling.sigma: must be
    // positive, got -1".
    Status validate() const;
    void reseed(uint64_t seed) { sampling.seed = seed; }
    // Its flags (sampling, shaping, estimator, step rule, --convention).
    static const OptionSchema<Options>& schema();

    // ml-compiler-opt's MonteCarloBlackboxOptimizer with its Adam (β1 0.9,
    // β2 0.999, ε 1e-7) and reward normalisation: the given σ, sampling,
    // learning rate and top-k, everything else as there.
    static Options mlCompilerOpt(double sigma, Sampling sampling, double learningRate,
                                 std::optional<int> topDirections = std::nullopt);
  };

  // Everything that changes from step to step, plus the fixed scale vector.
  struct State {
    int64_t step = 0;
    Eigen::VectorXd point;
    // Per-parameter perturbation scale (ones, or pretrainedScale(w)).
    Eigen::VectorXd scale;
    StepRuleState stepRule;

    StateArchive toArchive() const;
    static Expected<State> fromArchive(const StateArchive& archive);
  };

  // Samples given explicitly instead of generated: ml-compiler-opt's run_step
  // inputs. `displacements` is n × D (column d = p_d, σ and scale included);
  // rewards are per candidate as tell's (antithetic: interleaved x + p_d,
  // x − p_d); centerReward is required iff sampling.evaluateCenter.
  struct ExplicitSamples {
    Eigen::MatrixXd displacements;
    std::vector<std::optional<double>> rewards;
    std::optional<double> centerReward;
  };

  // Validates the options; `scale` defaults to ones.
  static Expected<GradientEs> create(Options options, Eigen::VectorXd initialPoint,
                                     std::optional<Eigen::VectorXd> scale = std::nullopt);

  OptimizerKind kind() const override { return kKind; }
  // No diagnostics of its own.
  static std::span<const std::string_view> stepColumns() { return {}; }
  size_t dimension() const override { return static_cast<size_t>(state_.point.size()); }
  int64_t step() const override { return state_.step; }
  const Eigen::VectorXd& point() const override { return state_.point; }

  Population ask() const override;
  Expected<StepRecord> tell(std::span<const std::optional<double>> rewards) override;
  // One step from explicit samples (the same pipeline as tell).
  Expected<StepRecord> update(const ExplicitSamples& samples);

  const Options& options() const { return options_; }
  const State& state() const { return state_; }
  // Errors name the mismatched field (sizes must match dimension()).
  Status setState(State state);

  StateArchive saveState() const override { return state_.toArchive(); }
  Status restoreState(const StateArchive& archive) override;

private:
  GradientEs(Options options, State state)
      : options_(std::move(options)), state_(std::move(state)) {}

  Options options_;
  State state_;
};

} // namespace mlgo::es
