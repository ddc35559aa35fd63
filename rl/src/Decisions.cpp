#include "mlgo/rl/Decisions.h"

#include <algorithm>

namespace mlgo::rl {

Expected<FeatureGather>
FeatureGather::create(const std::vector<policies::TensorSpec>& recorded,
                      const std::vector<policies::TensorSpec>& policyInputs) {
  std::vector<size_t> firstColumn;
  size_t width = 0;
  for (const policies::TensorSpec& spec : recorded) {
    firstColumn.push_back(width);
    width += spec.elementCount();
  }
  FeatureGather gather;
  gather.recordedWidth_ = width;
  for (const policies::TensorSpec& input : policyInputs) {
    auto found = std::find_if(recorded.begin(), recorded.end(),
                              [&](const policies::TensorSpec& s) { return s.name == input.name; });
    if (found == recorded.end())
      return makeError("policy input \"" + input.name + "\" is not among the recorded features");
    if (found->type != input.type || found->shape != input.shape)
      return makeError("policy input " + input.describe() + " was recorded as " +
                       found->describe());
    size_t column = firstColumn[static_cast<size_t>(found - recorded.begin())];
    for (size_t e = 0; e < input.elementCount(); ++e)
      gather.columns_.push_back(column + e);
  }
  return gather;
}

void FeatureGather::gather(const double* recordedRow, double* out) const {
  for (size_t i = 0; i < columns_.size(); ++i)
    out[i] = recordedRow[columns_[i]];
}

} // namespace mlgo::rl
