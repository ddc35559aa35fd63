#include "mlgo/es/OptimizerState.h"

#include <string>

namespace mlgo::es {

std::string_view optimizerKindName(OptimizerKind kind) {
  switch (kind) {
  case OptimizerKind::GradientEs:
    return "gradient-es";
  case OptimizerKind::TrustRegionEs:
    return "trust-region-es";
  case OptimizerKind::SepCmaEs:
    return "sep-cma-es";
  }
  return "unknown";
}

void setOptimizerHeader(StateArchive& archive, OptimizerKind kind, size_t dimension) {
  archive.setInteger("optimizer", static_cast<int64_t>(kind));
  archive.setInteger("dimension", static_cast<int64_t>(dimension));
}

Status checkOptimizerHeader(const StateArchive& archive, OptimizerKind kind, size_t dimension) {
  Expected<int64_t> stored = archive.integer("optimizer");
  if (!stored)
    return stored.error();
  if (*stored != static_cast<int64_t>(kind))
    return stateFieldError("optimizer", "holds the state of optimizer kind " +
                                            std::to_string(*stored) + " (" +
                                            std::string(optimizerKindName(OptimizerKind(*stored))) +
                                            "), expected " + std::string(optimizerKindName(kind)));
  Expected<int64_t> storedDimension = archive.integer("dimension");
  if (!storedDimension)
    return storedDimension.error();
  if (*storedDimension != static_cast<int64_t>(dimension))
    return stateFieldError("dimension", "the state has " + std::to_string(*storedDimension) +
                                            " parameters, the optimizer " +
                                            std::to_string(dimension));
  return Status::ok();
}

Expected<OptimizerHeader> readOptimizerHeader(const StateArchive& archive, OptimizerKind kind) {
  Expected<int64_t> dimension = archive.integer("dimension");
  if (!dimension)
    return dimension.error();
  if (*dimension < 1)
    return stateFieldError("dimension", "must be at least 1");
  OptimizerHeader header;
  header.dimension = static_cast<size_t>(*dimension);
  if (Status status = checkOptimizerHeader(archive, kind, header.dimension); !status)
    return status.error();
  Expected<int64_t> step = archive.integer("step");
  if (!step)
    return step.error();
  header.step = *step;
  return header;
}

Expected<Eigen::VectorXd> eigenVector(const StateArchive& archive, std::string_view name,
                                      size_t size) {
  Expected<std::vector<double>> values = archive.vector(name, size);
  if (!values)
    return values.error();
  return Eigen::VectorXd(
      Eigen::Map<const Eigen::VectorXd>(values->data(), static_cast<Eigen::Index>(size)));
}

Status
readEigenVectors(const StateArchive& archive, size_t size,
                 std::initializer_list<std::pair<std::string_view, Eigen::VectorXd*>> fields) {
  for (auto [name, target] : fields) {
    Expected<Eigen::VectorXd> values = eigenVector(archive, name, size);
    if (!values)
      return values.error();
    *target = values.take();
  }
  return Status::ok();
}

} // namespace mlgo::es
