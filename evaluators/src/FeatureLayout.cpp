#include "mlgo/evaluators/FeatureLayout.h"

#include <cstring>

namespace mlgo::evaluators {

Expected<FeatureLayout> FeatureLayout::bind(const policies::ChannelHeader& header,
                                            const policies::Policy& policy,
                                            const std::string& defaultFeatureName) {
  FeatureLayout layout;
  size_t offset = 0;
  for (size_t i = 0; i < header.features.size(); ++i) {
    const policies::TensorSpec& spec = header.features[i];
    layout.offsets.push_back(offset);
    layout.allFeatures.push_back(i);
    offset += spec.byteSize();
    layout.recordWidth += spec.elementCount();
  }
  Expected<std::vector<size_t>> inputs = policies::bindPolicyInputs(policy, header);
  if (!inputs)
    return inputs.error();
  layout.policyInputs = inputs.take();
  for (size_t index : layout.policyInputs)
    layout.policyWidth += header.features[index].elementCount();
  if (int index = defaultFeatureName.empty() ? -1 : header.findFeature(defaultFeatureName);
      index >= 0) {
    size_t flat = 0;
    for (int i = 0; i < index; ++i)
      flat += header.features[static_cast<size_t>(i)].elementCount();
    layout.defaultInRecord = flat;
  }
  return layout;
}

void FeatureLayout::gather(const policies::ChannelHeader& header, const std::byte* observation,
                           const std::vector<size_t>& indices, double* out) const {
  for (size_t index : indices) {
    const policies::TensorSpec& spec = header.features[index];
    const std::byte* data = observation + offsets[index];
    for (size_t e = 0, n = spec.elementCount(); e < n; ++e)
      *out++ = policies::tensorElementAsDouble(spec.type, data, e);
  }
}

void FeatureLayout::record(const policies::ChannelHeader& header, const std::byte* observation,
                           const policies::Decision& decision,
                           policies::Trajectory& trajectory) const {
  size_t row = trajectory.observations.size();
  trajectory.observations.resize(row + trajectory.width);
  gather(header, observation, allFeatures, trajectory.observations.data() + row);
  trajectory.defaultDecisions.push_back(
      defaultInRecord ? static_cast<int64_t>(trajectory.observations[row + *defaultInRecord]) : -1);
  trajectory.actions.push_back(decision.advice);
  trajectory.logProbabilities.push_back(decision.logProbability);
}

// The advice as the header's advice tensor wants it.
std::vector<std::byte> encodeAdvice(const policies::TensorSpec& spec, int64_t advice) {
  std::vector<std::byte> bytes(spec.byteSize());
  auto put = [&](auto value) {
    for (size_t e = 0; e < spec.elementCount(); ++e)
      std::memcpy(bytes.data() + e * sizeof value, &value, sizeof value);
  };
  using policies::TensorType;
  switch (spec.type) {
  case TensorType::Float:
    put(static_cast<float>(advice));
    break;
  case TensorType::Double:
    put(static_cast<double>(advice));
    break;
  case TensorType::Int8:
    put(static_cast<int8_t>(advice));
    break;
  case TensorType::UInt8:
    put(static_cast<uint8_t>(advice));
    break;
  case TensorType::Int16:
    put(static_cast<int16_t>(advice));
    break;
  case TensorType::UInt16:
    put(static_cast<uint16_t>(advice));
    break;
  case TensorType::Int32:
    put(static_cast<int32_t>(advice));
    break;
  case TensorType::UInt32:
    put(static_cast<uint32_t>(advice));
    break;
  case TensorType::Int64:
    put(static_cast<int64_t>(advice));
    break;
  case TensorType::UInt64:
    put(static_cast<uint64_t>(advice));
    break;
  }
  return bytes;
}

} // namespace mlgo::evaluators
