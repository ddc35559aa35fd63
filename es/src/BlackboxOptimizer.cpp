#include "mlgo/es/BlackboxOptimizer.h"

#include "Validation.h"

namespace mlgo::es {

std::string_view conventionName(Convention convention) {
  switch (convention) {
  case Convention::Native:
    return "native";
  case Convention::MlCompilerOpt:
    return "ml-compiler-opt";
  }
  return "unknown";
}

Status SamplingOptions::validate() const {
  if (directions < 1)
    return detail::invalidField("directions", "must be at least 1", directions);
  MLGO_ES_RETURN_IF_ERROR(detail::requirePositive("sigma", sigma));
  MLGO_ES_RETURN_IF_ERROR(detail::requireClosed("minSuccessShare", minSuccessShare, 0, 1));
  return Status::ok();
}

} // namespace mlgo::es
