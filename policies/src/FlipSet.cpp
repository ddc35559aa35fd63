#include "mlgo/policies/FlipSet.h"

#include <cmath>
#include <cstring>

namespace mlgo::policies {

Expected<FlipSetPolicy> FlipSetPolicy::create(std::vector<TensorSpec> features,
                                              std::string defaultFeature) {
  FlipSetPolicy policy;
  bool found = false;
  for (size_t i = 0, offset = 0; i < features.size(); offset += features[i++].elementCount()) {
    if (features[i].name != defaultFeature)
      continue;
    if (features[i].elementCount() != 1)
      return makeError("flip-set policy: \"" + defaultFeature + "\" must be a single value");
    policy.defaultIndex_ = i;
    policy.defaultOffset_ = offset;
    found = true;
  }
  if (!found)
    return makeError("flip-set policy: the default decision \"" + defaultFeature +
                     "\" is not among its features");
  policy.inputs_ = std::move(features);
  return policy;
}

uint64_t FlipSetPolicy::stateHash(FeatureValues features) const {
  // FNV-1a over the values' bits, then a final mix: a stable function of the
  // values (policy files store these hashes), not of the platform's
  // std::hash.
  size_t offset = 0;
  uint64_t hash = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < inputs_.size(); ++i) {
    size_t count = inputs_[i].elementCount();
    if (i != defaultIndex_)
      for (size_t e = 0; e < count; ++e) {
        double value = features[offset + e];
        if (value == 0)
          value = 0; // -0.0 and 0.0 are one state
        uint64_t bits;
        std::memcpy(&bits, &value, sizeof bits);
        for (int b = 0; b < 8; ++b) {
          hash ^= (bits >> (8 * b)) & 0xff;
          hash *= 0x100000001b3ull;
        }
      }
    offset += count;
  }
  hash ^= hash >> 33;
  hash *= 0xff51afd7ed558ccdull;
  hash ^= hash >> 33;
  return hash;
}

Decision FlipSetPolicy::decide(FeatureValues features, DecisionMode, RandomStream&) const {
  int64_t advice = std::llround(features[defaultOffset_]) != 0 ? 1 : 0;
  if (!flips_.empty() && flips_.count(stateHash(features)))
    advice = 1 - advice;
  return Decision{advice, 0.0};
}

void FlipSetPolicy::toggle(uint64_t state) {
  if (!flips_.erase(state))
    flips_.insert(state);
}

} // namespace mlgo::policies
