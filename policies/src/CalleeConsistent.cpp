#include "mlgo/policies/CalleeConsistent.h"

namespace mlgo::policies {

CalleeConsistentPolicy::CalleeConsistentPolicy(std::shared_ptr<const Policy> inner) {
  if (const auto* wrapped = dynamic_cast<const CalleeConsistentPolicy*>(inner.get()))
    inner = wrapped->inner_;
  inner_ = std::move(inner);
}

int64_t CalleeCommitments::apply(std::string_view callee, bool discardable, int64_t heuristic,
                                 int64_t advice) {
  if (heuristic != 1 || !discardable || callee.empty())
    return advice;
  auto entry = committed_.find(callee);
  if (entry == committed_.end()) {
    committed_.emplace(std::string(callee), advice);
    return advice;
  }
  if (entry->second == advice)
    return advice;
  ++overruled_;
  return entry->second;
}

} // namespace mlgo::policies
