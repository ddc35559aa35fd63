#include "mlgo/es/BlackboxOptimizer.h"
#include "mlgo/support/OptionSchema.h"

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

Population SamplingOptions::around(int64_t step, const Eigen::VectorXd& point,
                                   const Eigen::VectorXd& scale) const {
  return Population(seed, step, sampling, static_cast<size_t>(directions), evaluateCenter, point,
                    sigma * scale);
}

Status SamplingOptions::validate() const {
  if (directions < 1)
    return detail::invalidField("directions", "must be at least 1", directions);
  MLGO_ES_RETURN_IF_ERROR(detail::requirePositive("sigma", sigma));
  MLGO_ES_RETURN_IF_ERROR(detail::requireClosed("minSuccessShare", minSuccessShare, 0, 1));
  return Status::ok();
}

const OptionSchema<SamplingOptions>& SamplingOptions::schema() {
  static const OptionSchema<SamplingOptions> schema = [] {
    OptionSchema<SamplingOptions> s;
    s.choice(
        "perturbations", "Perturbation sampling", [](auto& o) -> auto& { return o.sampling; },
        {Sampling::Antithetic, Sampling::ForwardDifference}, samplingName);
    s.value(
        "directions", "Perturbation directions per step (antithetic: 2 candidates each)",
        [](auto& o) -> auto& { return o.directions; });
    s.value(
        "sigma", "Perturbation scale σ", [](auto& o) -> auto& { return o.sigma; });
    s.flag(
         "evaluate-center", "Also compile the unperturbed policy each step",
         [](auto& o) -> auto& { return o.evaluateCenter; })
        .negatable();
    s.value(
        "min-success-share",
        "Skip a step when fewer candidates than this share compiled everywhere",
        [](auto& o) -> auto& { return o.minSuccessShare; });
    return s;
  }();
  return schema;
}

} // namespace mlgo::es
