#include "mlgo/policies/Policy.h"

#include "BuiltinPolicies.h"
#include "TensorSpecInternal.h"

#include <cassert>
#include <cmath>

namespace mlgo::policies {

namespace detail {

HeuristicEchoPolicy::HeuristicEchoPolicy(std::string defaultFeature) {
  inputs_.push_back(TensorSpec{std::move(defaultFeature), TensorType::Int64, {1}, 0});
}

Decision HeuristicEchoPolicy::decide(FeatureValues features, DecisionMode mode,
                                     RandomStream& rng) const {
  assert(features.size() == 1);
  // The value came from an int64 tensor, so the conversion back is exact for
  // every advice the heuristic gives (0 or 1).
  return Decision{static_cast<int64_t>(std::llround(features[0])), 0.0};
}

} // namespace detail

Expected<std::vector<size_t>> bindPolicyInputs(const Policy& policy, const ChannelHeader& header) {
  std::vector<size_t> indices;
  indices.reserve(policy.inputs().size());
  for (const TensorSpec& input : policy.inputs()) {
    int index = header.findFeature(input.name);
    if (index < 0)
      return makeError("policy feature \"" + input.name + "\" (" + detail::typeAndShape(input) +
                       ") is missing from clang's header");
    const TensorSpec& sent = header.features[static_cast<size_t>(index)];
    if (sent.type != input.type || sent.shape != input.shape)
      return makeError("policy feature \"" + input.name + "\" is " + detail::typeAndShape(input) +
                       " but clang sends " + detail::typeAndShape(sent));
    indices.push_back(static_cast<size_t>(index));
  }
  return indices;
}

std::unique_ptr<Policy> makeHeuristicEchoPolicy(std::string defaultFeature) {
  return std::make_unique<detail::HeuristicEchoPolicy>(std::move(defaultFeature));
}

std::unique_ptr<Policy> makeConstantPolicy(int64_t advice) {
  return std::make_unique<detail::ConstantPolicy>(advice);
}

} // namespace mlgo::policies
