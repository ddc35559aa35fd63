// A second-order trust-region ES (ml-compiler-opt's TrustRegionOptimizer):
// a local quadratic model of the reward from the perturbed candidates, a step
// that maximises the model within a radius, and radius rules that judge the
// step by the reward found at the new point.
//
// Model at an accepted point x (minimisation form, of −F):
//   m(s) = ½ sᵀ H s − gᵀ s,
//   g = the gradient estimate (any GradientEstimator),
//   H = −1/(N σ⁴) Σ_i (f_i − f0) p_i p_iᵀ  (the "sensing-subspace" Hessian
//       estimate, over the N used candidates; antithetic pairs count twice),
// kept as (step, direction, coefficient) triples whose noise is regenerated,
// so H is never formed (n² values) and the state stays small.
//
// Each tell evaluates the candidates around the current point y with value
// F(y) (centre reward or mean reward). If y is a proposed step from the
// accepted x (value F(x)):
//   worse = F(y) ≤ F(x), change = |F(y) − F(x)| / max(|F(best of the two)|, 1e-8)
//   worse and change > rejectThreshold: reject — radius × rejectFactor, the
//     next population is around x again, and that step's samples are averaged
//     (½ old + ½ new) into x's model and value;
//   worse and change > shrinkThreshold: accept, radius × shrinkFactor;
//   better and (F(y) − F(x)) / (−m(y − x)) > growThreshold: accept, radius × growFactor;
//   otherwise accept, radius unchanged. The radius never falls below minimumRadius.
// An accepted y gets a fresh model, then the subproblem gives the next step.
//
// Subproblem: min m(s) s.t. ‖s‖ ≤ R by projected gradient descent from s = 0
// (globally optimal for this problem, Beck & Vaisbourd 2018): direction
// d = −∇m(s); step length the exact minimiser along d when dᵀHd > 0, else
// 2R/‖d‖; halved until Armijo's condition (c1 = 1e-4) holds, a fixed length of
// 0.1 R when it never does; then projection onto the ball. It stops when
// ‖s⁺ − s‖ < subproblemTolerance or after subproblemMaxIterations.
#pragma once

#include "mlgo/es/BlackboxOptimizer.h"
#include "mlgo/es/FitnessShaping.h"
#include "mlgo/es/GradientEstimators.h"

#include <functional>
#include <optional>
#include <vector>

namespace mlgo::es {

struct TrustRegionSubproblem {
  // v ↦ H v.
  std::function<Eigen::VectorXd(const Eigen::VectorXd&)> hessianTimes;
  // The model's linear term b in m(s) = ½ sᵀHs + bᵀs.
  Eigen::VectorXd linear;
  double radius = 1;
  double tolerance = 1e-3;
  int maxIterations = 10;
};

struct SubproblemSolution {
  Eigen::VectorXd step;
  double modelValue = 0; // m(step)
  int iterations = 0;
};

SubproblemSolution solveTrustRegionSubproblem(const TrustRegionSubproblem& problem);

struct TrustRegionOptions {
  // Starting radius, in parameter units (ml-compiler-opt's defaults below).
  double initialRadius = 1;
  // Grow when the step improved and the ratio of actual to predicted
  // improvement exceeds this.
  double growThreshold = 1e-4;
  double growFactor = 1.1;
  // Shrink when the step made things worse by more than this relative change.
  double shrinkThreshold = 0.1;
  double shrinkFactor = 0.9;
  // Reject (return to the accepted point) when worse by more than this.
  double rejectThreshold = 0.5;
  double rejectFactor = 0.5;
  // The radius never shrinks below this: the search never freezes.
  double minimumRadius = 0.1;
  // Subproblem solver stopping rules.
  double subproblemTolerance = 1e-3;
  int subproblemMaxIterations = 10;
  // After a rejection the model averages old and new samples; samples that
  // have been averaged this many times are dropped (their weight is 2^-k),
  // bounding the model's size through a run of rejections.
  int maxModelAge = 4;

  Status validate() const; // errors name the field, e.g. "trustRegion.growFactor: …"
};

class TrustRegionEs final : public BlackboxOptimizer {
public:
  static constexpr OptimizerKind kKind = OptimizerKind::TrustRegionEs;
  // Its diagnostics: the radius after the step's update (a run-file column),
  // whether the last step was kept (0/1), the subproblem solver's iterations.
  static constexpr std::string_view kRadius = "trust_region_radius";
  static constexpr std::string_view kStepAccepted = "step_accepted";
  static constexpr std::string_view kSubproblemIterations = "subproblem_iterations";
  struct Options {
    using Optimizer = TrustRegionEs;
    // The trust-region test needs f(x): evaluateCenter gives a measured one
    // instead of the mean of the perturbed rewards.
    SamplingOptions sampling;
    ShapingOptions shaping;
    // The model's gradient; its Hessian always comes from the same samples.
    EstimatorOptions estimator;
    TrustRegionOptions trustRegion;
    Convention convention = Convention::Native;

    // Errors name the field with its struct, e.g. "trustRegion.growFactor: …".
    Status validate() const;
    void reseed(uint64_t seed) { sampling.seed = seed; }
    // Its flags: GradientEs's but the step rule, and --tr-initial-radius,
    // --tr-minimum-radius.
    static const OptionSchema<Options>& schema();
  };

  struct State {
    int64_t step = 0;
    // The point whose neighbourhood the next population samples.
    Eigen::VectorXd point;
    Eigen::VectorXd scale;
    double radius = 1;
    // Whether a model exists (false before the first tell).
    bool hasModel = false;
    // Whether `point` is acceptedPoint again after a rejection.
    bool returnedAfterReject = false;
    Eigen::VectorXd acceptedPoint;
    double acceptedValue = 0;
    // −m(point − acceptedPoint): the improvement the model promised for the
    // step being evaluated (in shaped-reward units).
    double predictedImprovement = 0;
    // The model's reward-gradient estimate g (ascent).
    Eigen::VectorXd modelGradient;
    // The model's Hessian samples: p = σ · scale ⊙ ε(seed, step, direction),
    // H = −1/σ⁴ Σ coefficient · p pᵀ; age = times averaged since sampled.
    std::vector<int64_t> hessianSteps;
    std::vector<int64_t> hessianDirections;
    std::vector<double> hessianCoefficients;
    std::vector<int64_t> hessianAges;

    StateArchive toArchive() const;
    static Expected<State> fromArchive(const StateArchive& archive);
  };

  static Expected<TrustRegionEs> create(Options options, Eigen::VectorXd initialPoint,
                                        std::optional<Eigen::VectorXd> scale = std::nullopt);

  OptimizerKind kind() const override { return kKind; }
  static std::span<const std::string_view> stepColumns() {
    static constexpr std::string_view columns[] = {kRadius};
    return columns;
  }
  size_t dimension() const override { return static_cast<size_t>(state_.point.size()); }
  int64_t step() const override { return state_.step; }
  const Eigen::VectorXd& point() const override { return state_.point; }

  Population ask() const override;
  Expected<StepRecord> tell(std::span<const std::optional<double>> rewards) override;

  const Options& options() const { return options_; }
  const State& state() const { return state_; }
  Status setState(State state);

  StateArchive saveState() const override { return state_.toArchive(); }
  Status restoreState(const StateArchive& archive) override;

private:
  TrustRegionEs(Options options, State state)
      : options_(std::move(options)), state_(std::move(state)) {}

  Options options_;
  State state_;
};

} // namespace mlgo::es
