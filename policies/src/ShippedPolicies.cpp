// The source tree's configs/policies, in one small file only: the path
// differs between clones, and every file carrying it would miss ccache.
#include "mlgo/policies/PolicyLocation.h"

namespace mlgo::policies {

std::filesystem::path shippedPolicyDirectory() {
  return MLGO_SHIPPED_POLICIES;
}

} // namespace mlgo::policies
