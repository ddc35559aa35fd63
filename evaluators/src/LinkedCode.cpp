#include "mlgo/evaluators/LinkedCode.h"

#include <algorithm>

namespace mlgo::evaluators {

ComdatCensus::ComdatCensus(std::span<const std::vector<ComdatCode>> baselines)
    : baselines_(baselines.begin(), baselines.end()) {
  for (size_t position = 0; position < baselines_.size(); ++position)
    for (const ComdatCode& code : baselines_[position])
      holders_[code.group].push_back({static_cast<uint32_t>(position), code.bytes});
}

double ComdatCensus::linkedValue(size_t position, uint64_t bytes,
                                 std::span<const ComdatCode> comdat) const {
  static const std::vector<Holder> none;
  auto holdersOf = [&](uint64_t group) -> const std::vector<Holder>& {
    auto found = holders_.find(group);
    return found == holders_.end() ? none : found->second;
  };
  // The kept copy's holder among the others, nullptr if none holds it.
  auto firstOther = [&](const std::vector<Holder>& holders) -> const Holder* {
    for (const Holder& holder : holders)
      if (holder.position != position)
        return &holder;
    return nullptr;
  };
  double value = static_cast<double>(bytes);
  for (const ComdatCode& code : comdat) {
    value -= static_cast<double>(code.bytes);
    const std::vector<Holder>& holders = holdersOf(code.group);
    const Holder* other = firstOther(holders);
    if (!other || other->position > position) {
      // This copy is kept. It displaces the later holder's, which was kept
      // unless this module held the group at its baseline too (it was first).
      const bool heldFirst = !holders.empty() && holders.front().position == position;
      value += static_cast<double>(code.bytes);
      if (other && !heldFirst)
        value -= static_cast<double>(other->bytes);
    }
  }
  if (position < baselines_.size())
    for (const ComdatCode& held : baselines_[position]) {
      const std::vector<Holder>& holders = holdersOf(held.group);
      if (holders.front().position != position ||
          std::ranges::binary_search(comdat, held.group, {}, &ComdatCode::group))
        continue;
      // Held first and no longer: the next holder's copy is kept instead.
      if (const Holder* next = firstOther(holders))
        value += static_cast<double>(next->bytes);
    }
  return value;
}

} // namespace mlgo::evaluators
