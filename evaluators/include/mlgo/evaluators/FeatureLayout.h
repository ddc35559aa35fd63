// How one decision's observation (the feature tensors back to back, in the
// header's order, as clang's interactive channel sends them and as the
// in-process model runner holds them) is read: where each feature starts,
// which features the policy reads, and where the compiler's own decision is.
// Shared by both evaluator backends so that a policy sees identical inputs.
#pragma once

#include "mlgo/policies/Policy.h"
#include "mlgo/policies/TensorSpec.h"
#include "mlgo/policies/Trajectory.h"
#include "mlgo/support/Expected.h"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace mlgo::evaluators {

struct FeatureLayout {
  std::vector<size_t> offsets;      // per header feature, byte offset in an observation
  std::vector<size_t> policyInputs; // header indices of the policy's inputs, in its order
  std::vector<size_t> allFeatures;  // 0 … n-1: every feature, for recorded rows
  size_t policyWidth = 0;
  size_t recordWidth = 0;
  // Position of the default-decision feature in a recorded row, if any.
  std::optional<size_t> defaultInRecord;

  // Fails (naming the feature) if the policy's inputs are not in the header.
  static Expected<FeatureLayout> bind(const policies::ChannelHeader& header,
                                      const policies::Policy& policy,
                                      const std::string& defaultFeatureName);

  // The values of the features `indices` (header indices) of one observation,
  // flattened and converted to double, written to `out`.
  void gather(const policies::ChannelHeader& header, const std::byte* observation,
              const std::vector<size_t>& indices, double* out) const;

  // Appends one decision to `trajectory` (whose width is recordWidth): every
  // feature's values, the compiler's own decision, the action and its
  // log-probability.
  void record(const policies::ChannelHeader& header, const std::byte* observation,
              const policies::Decision& decision, policies::Trajectory& trajectory) const;
};

// The advice as the header's advice tensor wants it (every element = advice).
std::vector<std::byte> encodeAdvice(const policies::TensorSpec& spec, int64_t advice);

} // namespace mlgo::evaluators
