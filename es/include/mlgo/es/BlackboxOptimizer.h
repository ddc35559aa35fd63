// The ask/tell interface every ES optimiser implements, and what one step
// reports. The optimiser never evaluates anything: the caller (the parallel
// evaluator, an MPI rank, a test feeding made-up rewards) asks for a
// population, scores its candidates however it likes, and tells the rewards:
//
//   GradientEs es = GradientEs::create(options, initialWeights).take();
//   while (…) {
//     Population population = es.ask();          // cheap: nothing materialised
//     std::vector<std::optional<double>> rewards(population.size());
//     parallel for i: rewards[i] = evaluate(population.candidate(i));  // nullopt: failed
//     Expected<StepRecord> record = es.tell(rewards);   // one deterministic update
//     checkpoint(es.saveState());                       // StateArchive
//   }
//   // resume: create with the same options, then restoreState(archive).
//
// ask() is a pure function of the state, so every MPI rank that holds the same
// state asks the same population and, told the same rewards, takes the same
// step. Rewards are maximised.
#pragma once

#include "mlgo/es/OptimizerState.h"
#include "mlgo/es/Perturbations.h"
#include "mlgo/support/Expected.h"
#include "mlgo/support/OptionSchemaFwd.h"

#include <Eigen/Core>

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace mlgo::es {

// Reference behaviour for the quirks where ES implementations differ.
enum class Convention {
  // mlgo-es's own: z-scores over the rewards only; top-k antithetic
  // estimates average over the kept pairs.
  Native,
  // ml-compiler-opt's MonteCarloBlackboxOptimizer: z-scores over the rewards
  // with f(x) appended (and f0 = the normalised f(x)); top-k antithetic
  // estimates are doubled. Use with AdamVariant::MlCompilerOpt and ε = 1e-7
  // to carry its hyperparameters over (GradientEs::Options::mlCompilerOpt).
  MlCompilerOpt,
};

std::string_view conventionName(Convention convention); // "native", "ml-compiler-opt"

// How the gradient-based optimisers sample candidates around the point.
struct SamplingOptions {
  // Seeds every perturbation: candidate noise is ε(seed, step, direction).
  uint64_t seed = 0;
  Sampling sampling = Sampling::Antithetic;
  // Directions per step. Antithetic sampling evaluates two candidates per
  // direction. More directions: less gradient noise, more compilations.
  int directions = 50;
  // σ: candidates are x ± σ · scale ⊙ ε. Too small drowns the reward change
  // in measurement noise (code size changes in steps); too large blurs it.
  double sigma = 0.1;
  // Also evaluate the unperturbed point, as the last candidate; its reward is
  // f(x) (the forward-difference baseline, the trust-region test). Without
  // it, f(x) is the mean of the perturbed rewards (ml-compiler-opt's learner).
  bool evaluateCenter = false;
  // Skip the step (no update, recorded) when fewer than this share of the
  // perturbed candidates returned a finite reward.
  double minSuccessShare = 0.5;

  Status validate() const; // errors name the field, e.g. "sampling.sigma: …"
  // A step's candidates around `point`, each coordinate perturbed by σ times
  // its `scale`.
  Population around(int64_t step, const Eigen::VectorXd& point, const Eigen::VectorXd& scale) const;
  // Its flags: --perturbations, --directions, --sigma, --evaluate-center,
  // --min-success-share (the seed is the run's).
  static const OptionSchema<SamplingOptions>& schema();
};

// One of an optimiser's own values about its step (flags as 0/1).
struct StepDiagnostic {
  std::string_view name; // the optimiser's, static
  double value = 0;
};

// One step, as Ceres' per-iteration summary: what results/ writes per step.
struct StepRecord {
  int64_t step = 0;        // the step this record closes (before the increment)
  size_t candidates = 0;   // perturbed candidates asked (the centre aside)
  size_t succeeded = 0;    // of those, with a finite reward
  size_t droppedPairs = 0; // antithetic pairs dropped for a failed member
  size_t usedRewards = 0;  // rewards that entered the estimate (after top-k)
  bool centerEvaluated = false;
  std::optional<double> centerReward; // unset when not evaluated or failed
  double currentValue = 0;            // f(x) as used: centre reward, else mean reward
  double meanReward = 0;              // over the succeeded perturbed candidates
  double bestReward = 0;
  bool skipped = false; // no update this step; skipReason says why
  std::string skipReason;
  double gradientNorm = 0; // of the estimate, before clipping (NaN for CMA-ES)
  bool gradientClipped = false;
  double stepNorm = 0; // ‖x_new − x‖ (CMA-ES: of the mean)
  // What the optimiser reports beyond the above, by names it defines (the
  // trust region's radius, CMA-ES's σ); its stepColumns() say which of them
  // run files record (Optimizers.h).
  std::vector<StepDiagnostic> diagnostics;
  std::optional<double> diagnostic(std::string_view name) const {
    for (const StepDiagnostic& d : diagnostics)
      if (d.name == name)
        return d.value;
    return std::nullopt;
  }
};

class BlackboxOptimizer {
public:
  virtual ~BlackboxOptimizer() = default;

  virtual OptimizerKind kind() const = 0;
  virtual size_t dimension() const = 0;
  // Steps told so far (skipped ones included): the next population's step.
  virtual int64_t step() const = 0;
  // The current solution: the ES point, or CMA-ES's mean.
  virtual const Eigen::VectorXd& point() const = 0;

  // This step's candidates. Pure: asking twice gives the same population.
  virtual Population ask() const = 0;
  // One reward per candidate of ask(), in order; nullopt or non-finite marks a
  // failed evaluation. An Error only for a wrong number of rewards.
  virtual Expected<StepRecord> tell(std::span<const std::optional<double>> rewards) = 0;

  virtual StateArchive saveState() const = 0;
  // Errors name the missing or mismatched field; the state is unchanged then.
  virtual Status restoreState(const StateArchive& archive) = 0;
};

} // namespace mlgo::es
