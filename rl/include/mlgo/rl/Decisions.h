// Decisions as the trainers learn from them. Recorded rows (traces, the
// evaluator's trajectories) carry every feature clang sent, in its header's
// order; a policy reads a subset (the MLP drops inlining_default) in its own
// order. A FeatureGather maps one onto the other once, and a DecisionSet holds
// the gathered rows with what each trainer needs per decision.
#pragma once

#include "mlgo/policies/Policy.h"
#include "mlgo/policies/TensorSpec.h"
#include "mlgo/support/Expected.h"

#include <cstdint>
#include <span>
#include <vector>

namespace mlgo::rl {

class FeatureGather {
public:
  // `recorded`: the features of the rows (clang's header); `policyInputs`:
  // what the policy reads. Every input must be recorded with the same type
  // and shape; the error names the feature.
  static Expected<FeatureGather> create(const std::vector<policies::TensorSpec>& recorded,
                                        const std::vector<policies::TensorSpec>& policyInputs);

  size_t recordedWidth() const { return recordedWidth_; }
  // Values per gathered row: the policy's featureCount().
  size_t width() const { return columns_.size(); }
  // out[i] = recordedRow[column i]; `out` has width() values.
  void gather(const double* recordedRow, double* out) const;

private:
  size_t recordedWidth_ = 0;
  std::vector<size_t> columns_;
};

// Rows of decisions in a policy's input order, with per-row columns; each
// trainer fills the ones it uses (the others stay empty).
struct DecisionSet {
  size_t width = 0;             // values per row (the policy's featureCount())
  std::vector<double> features; // rows × width, row-major
  // BC: the label, the heuristic's own decision. PPO: the action taken.
  std::vector<int64_t> actions;
  // Index of the row's module in the trainer's module table.
  std::vector<int64_t> modules;
  // PPO: log π_old(action | row) as recorded while sampling.
  std::vector<double> logProbabilities;
  // PPO: log π_old(· | row) for every action (rows × actions), for the KL
  // penalty; recomputed from the sampling policy's weights.
  std::vector<double> oldLogDistributions;
  // PPO: the reward of the row's module (discount 0: every decision of a
  // module gets the module's reward).
  std::vector<double> rewards;
  // PPO: the heuristic's decision at the row, for agreement statistics (-1:
  // unknown).
  std::vector<int64_t> defaults;
  // BC: how much each row counts in the loss (empty: every row 1), e.g. to
  // weigh the rare decisions where a searched label differs from -Oz.
  std::vector<double> weights;

  size_t rows() const { return width == 0 ? 0 : features.size() / width; }
  policies::FeatureValues row(size_t r) const { return {features.data() + r * width, width}; }
};

} // namespace mlgo::rl
