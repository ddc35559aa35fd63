// Adam for minimisation, in the form of TensorFlow 1's tf.train.AdamOptimizer,
// which ml-compiler-opt's behavioural cloning and PPO agents use:
//
//   g ← clip(g) (optional, by global L2 norm)
//   m ← β1 m + (1 − β1) g;   v ← β2 v + (1 − β2) g²;   t ← t + 1
//   θ ← θ − lr · √(1 − β2ᵗ) / (1 − β1ᵗ) · m / (√v + ε)
//
// ε enters outside the bias correction ("ε-hat"); Kingma & Ba's form divides by
// √v̂ + ε instead. The two differ visibly with ml-compiler-opt's ε = 3.125e-4.
#pragma once

#include "mlgo/support/Expected.h"
#include "mlgo/support/OptionSchemaFwd.h"
#include "mlgo/support/StateArchive.h"

#include <Eigen/Core>

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

namespace mlgo::rl {

struct AdamOptions {
  // Step size: Adam's steps are about this per parameter whatever the
  // gradient's scale. BC: 1e-3, PPO: 3e-5 (ml-compiler-opt's gin configs).
  double learningRate = 1e-3;
  // Decay rates of the first and second moment, in [0, 1).
  double beta1 = 0.9;
  double beta2 = 0.999;
  // > 0. ml-compiler-opt uses 3.125e-4, which damps steps on parameters with
  // tiny gradients (TensorFlow's default is 1e-8).
  double epsilon = 1e-8;
  // Clip the gradient's global L2 norm to this before the update; unset: no
  // clipping (ml-compiler-opt's gradient_clipping = None).
  std::optional<double> maxGradientNorm;

  // Errors name the field with `prefix`, e.g. "adam.learningRate: …".
  Status validate(std::string_view prefix = "adam") const;
  // --learning-rate, --beta1, --beta2, --epsilon, --max-gradient-norm.
  static const OptionSchema<AdamOptions>& schema();
};

// ml-compiler-opt's tf.train.AdamOptimizer settings in its BC and PPO gin
// configs: the given learning rate, ε = 3.125e-4, TensorFlow's β1 and β2.
AdamOptions mlCompilerOptAdam(double learningRate);

// The optimiser's memory: both moments have the parameters' size.
struct AdamState {
  Eigen::VectorXd m;
  Eigen::VectorXd v;
  int64_t t = 0; // updates taken

  static AdamState zeros(size_t dimension);

  // As named fields of a state archive ("adam_m", "adam_v", "adam_t"), and
  // back; restoring checks the sizes against `dimension`.
  void saveTo(StateArchive& archive) const;
  static Expected<AdamState> restore(const StateArchive& archive, size_t dimension);
};

struct AdamUpdate {
  double gradientNorm = 0; // before clipping
  double stepNorm = 0;
  bool clipped = false;
};

// One update of `parameters` (minimising) for `gradient`; advances `state`.
AdamUpdate adamStep(const AdamOptions& options, AdamState& state, std::span<const double> gradient,
                    std::span<double> parameters);

} // namespace mlgo::rl
